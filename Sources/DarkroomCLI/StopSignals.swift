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

/// Runs a library job as every command of many items does: SIGTERM or Ctrl-C stop it as
/// ``StopSignals`` says, and one file worked on in this process runs under a deadline that
/// covers every stage. `progress` gets each outcome (on the job's threads, one call at a
/// time). Throws `WorkFailed` when the job cannot start (which is reported).
func runJob(
  _ request: JobRequest, grace: Double, command: String,
  progress: @escaping @Sendable (BatchOutcome, BatchCounts) -> Void
) throws -> JobEnd {
  let job: LibraryJob
  do {
    job = try LibraryJob(request)
  } catch {
    reportError(error)
    throw WorkFailed()
  }
  if job.count == 1, case .files(let inputs) = request.items, let only = inputs.first {
    ProcessDeadline.arm(file: only.path, limit: request.settings.timeLimit)
  }
  let signals = StopSignals.install(
    grace: grace, stop: { job.stop() }, abandon: { job.abandon() })
  let counts = job.run(progress: progress)
  if counts.notStarted > 0, signals.status != nil, command != "apply" {  // apply sums up
    printError("\(command): stopped with \(counts.notStarted) not started\n")
  }
  return JobEnd(counts: counts, signal: signals.status)
}

/// How a command's job ended: its counts, and the status a stop signal asks for.
struct JobEnd {
  var counts: BatchCounts
  var signal: Int32?

  /// Throws `WorkFailed`: with the signal's status after one, else with 1 when an item
  /// failed or `failed` says something else did.
  func check(failed: Bool = false) throws {
    if let signal { throw WorkFailed(status: signal) }
    if counts.failed > 0 || failed { throw WorkFailed() }
  }
}

/// Set once by a signal handler, read by the loop over files.
final class StopFlag: Sendable {
  private let value = Locked(false)
  func set() { value.withLock { $0 = true } }
  var isSet: Bool { value.withLock { $0 } }
}
