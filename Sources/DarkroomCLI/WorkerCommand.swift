import ArgumentParser
import Darkroom
import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

/// `darkroom worker`: a worker process of the pool (see `WorkerPool`). Hidden: it speaks a
/// binary protocol on its standard input and output, and is started by darkroom itself.
struct WorkerCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "worker", abstract: "Serve pixel work for a darkroom process (internal).",
    shouldDisplay: false)

  func run() throws {
    Glibc.exit(Worker.serve())
  }
}

/// The time limit of a command that works on one file in this process: past it, the process
/// ends with that file's one error line. The in-process watchdog stops pixel work; this also
/// covers what it cannot stop (a loader stuck in a header), as a worker's deadline does.
enum ProcessDeadline {
  static func arm(file: String, limit: Duration?) {
    guard let limit else { return }
    let line = Array("darkroom: \(DarkroomError.timedOut(file, after: limit))\n".utf8)
    // The watchdog gets the first chance (its error removes temporaries as usual).
    let grace = 500_000_000
    DispatchQueue.global().asyncAfter(
      deadline: .now() + .nanoseconds(limit.nanoseconds + grace)
    ) {
      writeAll(STDERR_FILENO, line)
      _exit(1)
    }
  }
}
