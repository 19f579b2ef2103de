import Dispatch
import FoundationEssentials
import Synchronization

/// What happened to one file of a batch; a line of `--progress json` and of `--report`.
///
/// `BatchOutcome` is a `Sendable` value type.
public struct BatchOutcome: Sendable, Codable, Equatable {
  /// How the file's work ended.
  public enum Status: String, Sendable, Codable {
    /// The work was done.
    case done
    /// Already up to date: nothing to do (a re-run after an interruption).
    case skipped
    /// The work failed; ``BatchOutcome/error`` says why.
    case failed
  }

  /// The input file (for a library's asset, its path in the library).
  public var file: String
  /// The asset, for an item of a library or a space.
  public var id: String?
  /// The edit's version after the work (0: the original), for an edit or a revert.
  public var version: Int?
  /// How the file's work ended.
  public var status: Status
  /// The file written, when there is one.
  public var output: String?
  /// How long the work took, in milliseconds (`BatchRunner` sets it).
  public var ms: Double
  /// What went wrong, for a failed file.
  public var error: String?
  /// The content hash of the source the work used (for an edit, its original), if known.
  public var sourceSHA256: String?
  /// The content hash of the file written, if known.
  public var resultSHA256: String?
  /// The error itself, for a failed file (``error`` is its text); not in JSON.
  public var failure: DarkroomError?
  /// The edit's adjustment data, for an edit; not in JSON.
  public var adjustment: AdjustmentData?
  /// What a revert did; not in JSON.
  public var reverted: RevertOutcome?
  /// What a render made (its bytes are where ``output`` says); not in JSON.
  public var rendition: RenditionSummary?

  /// An outcome; `BatchRunner.run(_:work:progress:)` fills in ``ms``.
  public init(
    file: String, status: Status, output: String? = nil, ms: Double = 0, error: String? = nil,
    sourceSHA256: String? = nil, resultSHA256: String? = nil, failure: DarkroomError? = nil
  ) {
    self.file = file
    self.status = status
    self.output = output
    self.ms = ms
    self.error = error
    self.sourceSHA256 = sourceSHA256
    self.resultSHA256 = resultSHA256
    self.failure = failure
  }

  private enum CodingKeys: String, CodingKey {
    case file, id, version, status, output, ms, error, sourceSHA256, resultSHA256
  }
}

/// What a render made: the rendition without its bytes.
public struct RenditionSummary: Sendable, Equatable {
  public var width: Int
  public var height: Int
  public var format: ImageFormat
  public var bytes: Int
  /// Whether it came from the cache.
  public var cached: Bool
}

/// Counts so far, for progress displays and the final summary.
///
/// `BatchCounts` is a `Sendable` value type.
public struct BatchCounts: Sendable, Codable, Equatable {
  /// How many files the batch has.
  public var total: Int
  /// Files whose work was done.
  public var done = 0
  /// Files that were already up to date.
  public var skipped = 0
  /// Files whose work failed.
  public var failed = 0
  /// Files not started because the batch was stopped (Ctrl-C or --fail-fast).
  public var notStarted = 0
  /// Seconds since the batch started.
  public var seconds = 0.0

  /// Files finished so far, whatever their status.
  public var finished: Int { done + skipped + failed }

  /// Nothing done yet of `total` files.
  public init(total: Int) { self.total = total }
}

/// Runs one piece of work per file on `jobs` threads, in input order of starting, and
/// reports each outcome as it comes. Memory stays flat: nothing of a finished file is kept
/// but its outcome. `stop()` (Ctrl-C) lets running files finish and starts no more.
///
/// ```swift
/// let editor = Editor()
/// let graph = try FilterGraph.parse(spec: "mono")
/// let runner = BatchRunner(jobs: 4)
/// let counts = runner.run(
///   inputs,
///   work: { input in
///     do {
///       let result = try editor.edit(
///         input.path, with: graph, mode: .replace, skipIfCurrent: true)
///       return BatchOutcome(file: input.path, status: result.skipped ? .skipped : .done)
///     } catch {
///       return BatchOutcome(file: input.path, status: .failed, error: "\(error)")
///     }
///   },
///   progress: { outcome, counts in print("\(counts.finished)/\(counts.total)", outcome.file) })
/// ```
///
/// A `BatchRunner` is `Sendable`: ``stop()`` may be called from any thread, such as a signal
/// handler's queue, while ``run(_:work:progress:)`` blocks another.
package final class BatchRunner: Sendable {
  /// How many files run at once (at least 1).
  package let jobs: Int
  /// Whether the first failure stops the batch, as ``stop()`` does.
  package let failFast: Bool
  private let stopped = Atomic<Bool>(false)

  /// A runner of `jobs` files at a time (at least 1) that, with `failFast`, stops at the
  /// first failure.
  package init(jobs: Int, failFast: Bool = false) {
    self.jobs = max(1, jobs)
    self.failFast = failFast
  }

  /// Starts no more files; files already running finish (their writes are atomic).
  package func stop() {
    stopped.store(true, ordering: .relaxed)
  }

  /// Whether the batch was stopped, by ``stop()`` or by a failure with ``failFast``.
  package var isStopped: Bool { stopped.load(ordering: .relaxed) }

  /// glibc raises its mmap threshold after large blocks are freed, so later multi-megabyte
  /// buffers (a file's bytes, an encoded image) come from the heap and fragment it, and it
  /// gives threads arenas of their own: a batch's peak memory then creeps up with the number
  /// of files (1.15x from 20 to 100 files here). A fixed threshold and one arena per job keep
  /// it flat (1.03x). Call once, early, in a process that runs batches.
  package static func keepMemoryFlat(jobs: Int) {
    Vips.tuneMalloc(arenas: max(2, jobs))
  }

  /// Runs `work` on every input, ``jobs`` at a time, and returns the counts once every file
  /// that started has finished.
  ///
  /// `work` is called on up to ``jobs`` threads at once, and reports a failure as a `.failed`
  /// outcome rather than throwing. `progress` is called once per finished file, one call at a
  /// time, in the order files finish. This call blocks its thread until the batch ends; files
  /// not started because of ``stop()`` are counted in ``BatchCounts/notStarted``.
  package func run<Item: Sendable>(
    _ inputs: [Item], work: @escaping @Sendable (Item) -> BatchOutcome,
    progress: @escaping @Sendable (BatchOutcome, BatchCounts) -> Void
  ) -> BatchCounts {
    let start = ContinuousClock.now
    let state = Locked((next: 0, counts: BatchCounts(total: inputs.count)))
    let failFast = self.failFast
    // Threads of its own, not Dispatch's pool, which short work shares (OwnThreads).
    OwnThreads.perform(min(jobs, max(1, inputs.count))) { _ in
      while true {
        let index: Int? = state.withLock { s in
          guard !self.isStopped, s.next < inputs.count else { return nil }
          defer { s.next += 1 }
          return s.next
        }
        guard let index else { return }
        let began = ContinuousClock.now
        var outcome = work(inputs[index])
        outcome.ms = Self.milliseconds(ContinuousClock.now - began)
        state.withLock { s in
          switch outcome.status {
          case .done: s.counts.done += 1
          case .skipped: s.counts.skipped += 1
          case .failed: s.counts.failed += 1
          }
          s.counts.seconds = Self.milliseconds(ContinuousClock.now - start) / 1000
          progress(outcome, s.counts)
        }
        if failFast && outcome.status == .failed { self.stop() }
      }
    }
    return state.withLock { s in
      s.counts.notStarted = inputs.count - s.next
      s.counts.seconds = Self.milliseconds(ContinuousClock.now - start) / 1000
      return s.counts
    }
  }

  static func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return (Double(seconds) * 1000 + Double(attoseconds) / 1e15).rounded(toPlaces: 1)
  }
}

extension Double {
  func rounded(toPlaces places: Int) -> Double {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    return (self * scale).rounded() / scale
  }
}
