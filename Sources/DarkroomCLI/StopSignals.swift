import ArgumentParser
import Darkroom
import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

/// How a command of many files stops when asked: SIGTERM (a job runner) or a first Ctrl-C
/// starts no more files and gives those in flight `grace` to finish; then what is left is
/// abandoned (its workers killed; its outputs were never renamed into place). A second
/// Ctrl-C abandons at once. The command then prints its summary and exits 143 (SIGTERM) or
/// 130 (SIGINT), as a shell reports a process those signals ended.
final class StopSignals: @unchecked Sendable {
  private let queue = DispatchQueue(label: "darkroom.stop-signals")
  private var sources: [DispatchSourceSignal] = []
  // Only touched on `queue`, and read after the work is over.
  private var received: Int32?
  private var abandoned = false
  /// Whether the first signal is announced on standard error (not for a command whose
  /// normal end it is, such as `watch`).
  private var announce = true
  /// Whether the process is ended 2 s after the work was abandoned, if it has not ended by
  /// then (not for commands that stop between batches of their own, such as `scan`).
  private var cutOff = true

  /// The exit status the signal asks for (143 or 130), once one arrived.
  var status: Int32? { queue.sync { received.map { 128 + $0 } } }

  /// Installs the handlers: `stop` when a signal first arrives, `abandon` after `grace`
  /// (or at a second signal).
  static func install(
    grace: Double, announce: Bool = true, cutOff: Bool = true,
    stop: @escaping @Sendable () -> Void, abandon: @escaping @Sendable () -> Void
  ) -> StopSignals {
    let signals = StopSignals()
    signals.announce = announce
    signals.cutOff = cutOff
    for number in [SIGINT, SIGTERM] {
      signal(number, SIG_IGN)  // delivered to the dispatch source instead
      let source = DispatchSource.makeSignalSource(signal: number, queue: signals.queue)
      // The source lives as long as the process; its handler may hold it.
      source.setEventHandler { [unowned signals, source] in
        // Signals that arrive together are delivered as one event that counts them.
        for _ in 0..<max(1, Int(source.data)) {
          signals.receive(number, grace: grace, stop: stop, abandon: abandon)
        }
      }
      source.resume()
      signals.sources.append(source)
    }
    return signals
  }

  private func receive(
    _ number: Int32, grace: Double, stop: @escaping @Sendable () -> Void,
    abandon: @escaping @Sendable () -> Void
  ) {
    guard received == nil else {
      abandonOnce(abandon)  // a second signal: no more waiting
      return
    }
    received = number
    let name = number == SIGTERM ? "SIGTERM" : "SIGINT"
    let again = number == SIGINT ? "; Ctrl-C again to abandon them now" : ""
    if announce {
      printError(
        "darkroom: \(name): starting no more files; those running get \(fixed(grace, 0)) s to finish\(again)\n"
      )
    }
    stop()
    queue.asyncAfter(deadline: .now() + grace) { [unowned self] in abandonOnce(abandon) }
  }

  private func abandonOnce(_ abandon: @Sendable () -> Void) {
    guard !abandoned else { return }
    abandoned = true
    abandon()
    // Headers being read in workers are abandoned too.
    Containment.abandon()
    // What is abandoned ends at once; a thread stuck inside a library call in this process
    // does not hold the stop: 2 s on, the process ends with the signal's status. Outputs are
    // renamed into place whole or not at all, so nothing half-written is left under a name.
    guard cutOff else { return }
    let status = 128 + (received ?? SIGTERM)
    queue.asyncAfter(deadline: .now() + 2) {
      printError("darkroom: stopped: work still running was cut off\n")
      finish(status)
    }
  }
}

/// `--grace`, shared by the commands of many files.
struct GraceOption: ParsableArguments {
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Seconds files in flight get to finish after SIGTERM or Ctrl-C.", valueName: "seconds"))
  var grace: Double = 10

  func validate() throws {
    guard grace >= 0, grace.isFinite else {
      throw ValidationError(
        "Expected a number of seconds, 0 or more, for --grace but received \(grace)")
    }
  }
}

/// Set once by a signal handler, read by the loop over files.
final class StopFlag: @unchecked Sendable {
  private let queue = DispatchQueue(label: "darkroom.flag")
  private var value = false
  func set() { queue.sync { value = true } }
  var isSet: Bool { queue.sync { value } }
}

/// The loop of `render` and `edit` over their files. Several files: each file's pixel work in
/// a worker process (`body` gets `renderer` with its workers set), so that a decoder that crashes or hangs costs
/// that file alone, and SIGTERM or Ctrl-C stop the loop as `StopSignals` says. One file: in
/// this process, under a deadline that covers every stage. Each failure is reported; returns
/// whether any file failed, or throws `WorkFailed` with 143 or 130 after a signal.
func eachFile<Item>(
  _ items: [Item], command: String, name: (Item) -> String, renderer: Renderer,
  grace: Double, _ body: (Item, Renderer) throws -> Void
) throws -> Bool {
  let pool = items.count > 1 ? workerPool(jobs: 1) : nil
  defer { pool?.shutDown() }
  var renderer = renderer
  renderer.workers = pool
  if pool == nil, let only = items.first {
    ProcessDeadline.arm(file: name(only), limit: renderer.timeLimit)
  }
  let stopping = StopFlag()
  let signals = pool.map { pool in
    StopSignals.install(grace: grace, stop: { stopping.set() }, abandon: { pool.abandon() })
  }
  var failed = false
  for (index, item) in items.enumerated() {
    if stopping.isSet {
      printError("\(command): stopped with \(items.count - index) not started\n")
      break
    }
    do {
      try body(item, renderer)
    } catch {
      failed = true
      reportError(error)
    }
  }
  if let status = signals?.status { throw WorkFailed(status: status) }
  return failed
}
