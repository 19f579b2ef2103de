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

/// A pool of this program's own workers, `jobs` of them kept ready, sharing the cores
/// (`vipsThreads` each, or the cores divided by the jobs).
func workerPool(jobs: Int, vipsThreads: Int? = nil) -> WorkerPool {
  WorkerPool(workerConfiguration(jobs: jobs, vipsThreads: vipsThreads))
}

/// Workers that run this binary's `worker` command, `jobs` kept idle, each with its share of
/// libvips threads.
func workerConfiguration(jobs: Int, vipsThreads: Int? = nil) -> WorkerPool.Configuration {
  var configuration = WorkerPool.Configuration(executable: currentExecutable())
  configuration.idleWorkers = max(1, jobs)
  configuration.vipsThreads = vipsThreads ?? max(1, ProcessorCount.value / max(1, jobs))
  return configuration
}

/// The running binary, by /proc/self/exe (argv[0] may be a bare name found on PATH).
private func currentExecutable() -> String {
  var buffer = [CChar](repeating: 0, count: 4096)
  let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  guard length > 0 else { return CommandLine.arguments[0] }
  return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The time limit of a command that works on one file in this process: past it, the process
/// ends with that file's one error line. The in-process watchdog stops pixel work; this also
/// covers what it cannot stop (a loader stuck in a header), as a worker's deadline does.
enum ProcessDeadline {
  static func arm(file: String, limit: Duration?) {
    guard let limit else { return }
    let line = Array("darkroom: \(DarkroomError.timedOut(file, after: limit))\n".utf8)
    let nanoseconds =
      limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
    // The watchdog gets the first chance (its error removes temporaries as usual).
    let grace = 500_000_000
    DispatchQueue.global().asyncAfter(
      deadline: .now() + .nanoseconds(Int(clamping: nanoseconds) + grace)
    ) {
      writeAll(STDERR_FILENO, line)
      _exit(1)
    }
  }
}
