import Dispatch
import FoundationEssentials

/// What `darkroom apply` asks for: one filter graph over many files, edited in place or
/// written to a mirror tree under `output`.
public struct ApplyRequest: Sendable {
  /// The files, with the paths their outputs keep under `output`.
  public var inputs: [BatchInput]
  public var graph: FilterGraph
  /// A folder for the results (a library of its own); nil edits the files in place.
  public var output: String?
  /// Redo files that already carry this edit (by default they are skipped).
  public var redo = false
  /// Files at once.
  public var jobs = 1
  /// Stop at the first failure (running files still finish).
  public var failFast = false
  /// The edit's renderer settings (limits, quality).
  public var editor = Editor()
  /// Worker processes for the pixel work, so that a decoder that crashes or hangs costs one
  /// file; nil renders in this process.
  public var workers: WorkerPool.Configuration?
  /// libvips threads per file in this process (default: cores divided by jobs).
  public var vipsThreads: Int?

  public init(inputs: [BatchInput], graph: FilterGraph) {
    self.inputs = inputs
    self.graph = graph
  }
}

/// One file's outcome, or the end of the batch, as ``ApplyJob/events()`` reports them.
public enum BatchEvent: Sendable {
  case file(BatchOutcome, BatchCounts)
  case finished(BatchCounts)
}

/// A batch of edits under way: the engine's side of `darkroom apply` (and of the server's
/// batch jobs). It owns the batch's worker processes, runs the files `jobs` at a time, and
/// reports each outcome as it comes, through a callback or as an `AsyncSequence`:
///
/// ```swift
/// var request = ApplyRequest(inputs: BatchInputs.collect(["photos"]).inputs,
///                            graph: try FilterGraph.parse(spec: "noir"))
/// request.jobs = 2
/// let job = try ApplyJob(request)
/// for await event in job.events() {
///   if case .file(let outcome, let counts) = event {
///     print("\(counts.finished)/\(counts.total)", outcome.file, outcome.status)
///   }
/// }
/// ```
///
/// ``stop()`` starts no more files; ``abandon()`` also kills the workers of files in flight
/// (their outputs were never renamed into place). Re-running the same request skips what is
/// done, so a stopped batch resumes.
public final class ApplyJob: Sendable {
  public let request: ApplyRequest
  private let runner: BatchRunner
  private let pool: WorkerPool?

  /// Prepares the batch: the output library's folder, the process's memory and thread
  /// settings, the worker processes.
  ///
  /// - Throws: `io` when the output folder cannot be made; `engine` when libvips' threads
  ///   cannot be set.
  public init(_ request: ApplyRequest) throws(DarkroomError) {
    self.request = request
    if let output = request.output {
      do {
        try FileManager.default.createDirectory(
          atPath: output + "/" + Library.folderName, withIntermediateDirectories: true)
      } catch {
        throw DarkroomError(.io, file: output, "cannot create the output library: \(error)")
      }
    }
    // Only batches: single renders are faster with glibc's adaptive threshold.
    BatchRunner.keepMemoryFlat(jobs: request.jobs)
    if let configuration = request.workers {
      pool = WorkerPool(configuration)
    } else {
      // In process, libvips' threads are shared between the jobs; workers get their share
      // through their configuration (and this process may never start libvips).
      try BatchRunner.shareCores(jobs: request.jobs, threadsPerImage: request.vipsThreads)
      pool = nil
    }
    runner = BatchRunner(jobs: request.jobs, failFast: request.failFast)
  }

  deinit { pool?.shutDown() }

  /// Starts no more files; those running finish.
  public func stop() { runner.stop() }

  /// Kills the workers of files in flight: they fail as abandoned, and no file starts after.
  public func abandon() {
    runner.stop()
    pool?.abandon()
  }

  /// Runs the batch to its end (or until stopped), calling `progress` after each file, on
  /// the thread that finished it, one call at a time. Returns the counts.
  @discardableResult
  public func run(progress: @escaping @Sendable (BatchOutcome, BatchCounts) -> Void = { _, _ in })
    -> BatchCounts
  {
    var editor = request.editor
    editor.renderer.workers = pool
    let (graph, output, redo) = (request.graph, request.output, request.redo)
    return runner.run(
      request.inputs,
      work: { [editor] input in
        let destination = output.map { $0 + "/" + input.relativePath }
        do throws(DarkroomError) {
          let result = try editor.edit(
            input.path, with: graph, mode: .replace, writingTo: destination,
            skipIfCurrent: !redo)
          return BatchOutcome(
            file: input.path, status: result.skipped ? .skipped : .done,
            output: destination ?? input.path,
            sourceSHA256: result.adjustment.original.sha256,
            resultSHA256: result.adjustment.result.sha256, failure: nil)
        } catch {
          return BatchOutcome(
            file: input.path, status: .failed, error: error.description, failure: error)
        }
      }, progress: progress)
  }

  /// Runs the batch on a thread of its own, as an asynchronous sequence of outcomes that
  /// ends with ``BatchEvent/finished(_:)``.
  public func events() -> AsyncStream<BatchEvent> {
    AsyncStream { continuation in
      DispatchQueue(label: "darkroom.apply").async { [self] in
        let counts = run { outcome, counts in continuation.yield(.file(outcome, counts)) }
        continuation.yield(.finished(counts))
        continuation.finish()
      }
    }
  }
}
