import Darkroom
import Dispatch
import Foundation
import Synchronization

/// A batch over many assets that the server runs for a client: its progress is kept, so
/// any number of clients can follow it (server-sent events) or ask for it, during or after.
final class Job: Sendable {
  /// What a client sees of a job.
  struct Status: Codable, Sendable {
    var id: String
    var action: String
    var total: Int
    var done = 0
    var failed = 0
    var finished = false
    /// The assets that failed, and why.
    var failures: [JobOutcome] = []
  }

  /// One step of a job's progress, as an event stream carries it.
  enum Event: Sendable {
    case progress(Status, JobOutcome?)
    case finished(Status)
  }

  let id: String
  let library: Library
  private let state: Locked<(status: Status, listeners: [Int: AsyncStream<Event>.Continuation])>
  private let nextListener = Atomic<Int>(0)

  init(action: String, total: Int, library: Library) {
    self.library = library
    id = Tokens.random()
    state = Locked((Status(id: id, action: action, total: total), [:]))
  }

  var status: Status { state.withLock { $0.status } }

  /// The job's events from now on, starting with where it is.
  func events() -> AsyncStream<Event> {
    let key = nextListener.add(1, ordering: .relaxed).newValue
    return AsyncStream { continuation in
      let status = state.withLock { state -> Status in
        if !state.status.finished { state.listeners[key] = continuation }
        return state.status
      }
      if status.finished {
        continuation.yield(.finished(status))
        continuation.finish()
      } else {
        continuation.yield(.progress(status, nil))
      }
      continuation.onTermination = { [weak self] _ in
        _ = self?.state.withLock { $0.listeners.removeValue(forKey: key) }
      }
    }
  }

  func record(_ outcome: JobOutcome, _ counts: BatchCounts) {
    let (status, listeners) = state.withLock { state in
      state.status.done = counts.done + counts.skipped
      state.status.failed = counts.failed
      if outcome.status == .failed {
        var failure = outcome
        failure.error = failure.error.map { ErrorMiddleware.scrub($0, library: library) }
        state.status.failures.append(failure)
      }
      return (state.status, Array(state.listeners.values))
    }
    for listener in listeners { listener.yield(.progress(status, outcome)) }
  }

  func finish(_ counts: BatchCounts) {
    let (status, listeners) = state.withLock { state in
      state.status.done = counts.done + counts.skipped
      state.status.failed = counts.failed
      state.status.finished = true
      let listeners = Array(state.listeners.values)
      state.listeners = [:]
      return (state.status, listeners)
    }
    for listener in listeners {
      listener.yield(.finished(status))
      listener.finish()
    }
  }
}

/// The server's jobs: started, followed, and waited for at shutdown.
final class Jobs: Sendable {
  private let jobs = Locked<[String: Job]>([:])
  private let running = Locked<[String: Task<Void, Never>]>([:])
  let library: Library
  let pixels: PixelSettings
  let concurrency: Int

  init(library: Library, pixels: PixelSettings, concurrency: Int) {
    self.library = library
    self.pixels = pixels
    self.concurrency = concurrency
  }

  func job(_ id: String) -> Job? { jobs.withLock { $0[id] } }

  /// Starts a library job on its own thread and returns the server's record of it at once.
  func start(_ action: JobAction, on ids: [AssetID]) -> Job {
    var request = JobRequest(action, on: .assets(ids), in: library)
    request.jobs = concurrency
    request.settings = pixels
    let job = Job(action: action.name, total: ids.count, library: library)
    jobs.withLock { jobs in
      // Finished jobs are kept for a while, so a client can read how one ended.
      if jobs.count > 1000 { jobs = jobs.filter { !$0.value.status.finished } }
      jobs[job.id] = job
    }
    let task = Task.detached { [request] in
      let counts = try? await blocking { () throws(DarkroomError) in
        try LibraryJob(request).run { outcome, counts in job.record(JobOutcome(outcome), counts) }
      }
      job.finish(counts ?? BatchCounts(total: ids.count))
      _ = self.running.withLock { $0.removeValue(forKey: job.id) }
    }
    running.withLock { $0[job.id] = task }
    return job
  }

  /// Waits for every running job to end (a graceful stop).
  func waitForAll() async {
    for task in running.withLock({ Array($0.values) }) { await task.value }
  }
}

/// Blocking engine work (catalog writes, edits, file moves) off the server's threads.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws(DarkroomError) -> T)
  async throws -> T
{
  try await offThread(work)
}
