import Dispatch
import Foundation
import Synchronization

/// A batch over many assets run for clients (the server's API, its gallery): its progress is
/// kept, so any number of them can follow it (``events()``) or ask for it, during or after.
/// The library's catalog keeps it too (``JobRequest/recordID``), so a restarted process still
/// answers for it, and resumes one that the last process left unfinished; one that another
/// process runs is followed in the catalog.
package final class Job: Sendable {
  /// What a client sees of a job.
  package struct Status: Codable, Sendable {
    package var id: String
    package var action: String
    package var total: Int
    package var done = 0
    package var failed = 0
    /// The job makes no more progress (`state` says why).
    package var finished = false
    /// running, finished, stopped (ended early) or interrupted (its server stopped first).
    package var state = JobRecord.State.running
    /// The assets that failed, and why.
    package var failures: [JobOutcome] = []
    /// The videos being encoded now, and how far each has got (absent when none is).
    package var encoding: [Encoding]?
  }

  /// A video of the job being encoded: its asset, its path in the library, and seconds
  /// encoded of its length.
  package struct Encoding: Codable, Sendable, Equatable {
    package var id: String?
    package var file: String
    package var encoded: Double
    package var duration: Double

    init(_ progress: EncodeProgress) {
      (id, file) = (progress.id?.rawValue, progress.file)
      (encoded, duration) = progress.tenths
    }
    var percent: Int { duration > 0 ? Int(100 * min(1, encoded / duration)) : 0 }
  }

  /// One step of a job's progress, as an event stream carries it.
  package enum Event: Sendable {
    case progress(Status, JobOutcome?)
    case finished(Status)
  }

  package let id: String
  package let library: Library
  /// Assets done before this process took the job on (a resumed job).
  private let doneBefore: Int
  /// Read from the catalog: another process runs it, and its progress is followed there.
  private let fromCatalog: Bool
  /// How often, at least, a job another process runs is read again from the catalog for its
  /// events.
  static let catalogPoll: Duration = .milliseconds(250)
  private let state: Locked<(status: Status, listeners: [Int: AsyncStream<Event>.Continuation])>
  private let nextListener = Atomic<Int>(0)

  init(id: String, action: String, total: Int, doneBefore: Int = 0, library: Library) {
    (self.id, self.library, self.doneBefore, fromCatalog) = (id, library, doneBefore, false)
    state = Locked((Status(id: id, action: action, total: total, done: doneBefore), [:]))
  }

  /// A job another process runs or ran, as the catalog recorded it.
  init(_ record: JobRecord, library: Library) {
    (id, self.library, doneBefore, fromCatalog) = (record.id, library, record.done, true)
    state = Locked((Self.status(record, library: library), [:]))
  }

  /// What a client sees of a job the catalog recorded.
  static func status(_ record: JobRecord, library: Library) -> Status {
    var status = Status(
      id: record.id, action: record.action, total: record.total, done: record.done,
      failed: record.failures.count, finished: record.state != .running, state: record.state)
    status.failures = record.failures.map {
      JobOutcome(
        id: $0.id.rawValue, status: .failed,
        error: library.scrubbed($0.error))
    }
    return status
  }

  package var status: Status { state.withLock { $0.status } }

  /// The job's events from now on, starting with where it is.
  package func events() -> AsyncStream<Event> {
    let key = nextListener.add(1, ordering: .relaxed).newValue
    return AsyncStream { continuation in
      // Where it is, told under the lock that the job's steps are told under: nothing newer
      // comes before it.
      let status = state.withLock { state -> Status in
        if !state.status.finished {
          state.listeners[key] = continuation
          continuation.yield(.progress(state.status, nil))
        }
        return state.status
      }
      if status.finished {
        continuation.yield(.finished(status))
        continuation.finish()
        return
      }
      // Another process runs it (a server behind the same balancer): its progress is
      // followed in the catalog, which that process writes after each item.
      let follower = fromCatalog ? Task { await self.follow(from: status, key: key) } : nil
      continuation.onTermination = { [weak self] _ in
        follower?.cancel()
        _ = self?.state.withLock { $0.listeners.removeValue(forKey: key) }
      }
    }
  }

  /// Reads the job again from the catalog until it ends, telling listener `key` of each
  /// step (and of new failures, one outcome each).
  private func follow(from start: Status, key: Int) async {
    var last = start
    // (Woken by a commit, at once in this process and by PostgreSQL's NOTIFY in another.)
    var waiter = library.catalogWaiter()
    while !Task.isCancelled {
      try? await waiter.wait(atMost: Self.catalogPoll)
      guard !Task.isCancelled,
        let listener = state.withLock({ $0.listeners[key] }),
        let record = try? await offThread({ [library, id] () throws(DarkroomError) in
          try library.jobRecord(id)
        })
      else { continue }
      let status = Self.status(record, library: library)
      state.withLock { $0.status = status }
      if status.finished {
        state.withLock { _ = $0.listeners.removeValue(forKey: key) }
        listener.yield(.finished(status))
        listener.finish()
        return
      }
      guard status.done != last.done || status.failed != last.failed else { continue }
      for failure in status.failures.dropFirst(last.failures.count) {
        listener.yield(.progress(status, failure))
      }
      if status.failures.count == last.failures.count { listener.yield(.progress(status, nil)) }
      last = status
    }
  }

  /// A video's encode got further: its listeners are told at each whole percent. (Told
  /// under the lock, as `record` tells: encodes run on their items' threads beside the
  /// job's, and a listener must never get an older status after a newer one.)
  func encoding(_ progress: EncodeProgress) {
    let entry = Encoding(progress)
    state.withLock { state in
      var list = state.status.encoding ?? []
      if let index = list.firstIndex(where: { $0.id == entry.id && $0.file == entry.file }) {
        guard list[index].percent != entry.percent else { return }
        list[index] = entry
      } else {
        list.append(entry)
      }
      state.status.encoding = list
      for listener in state.listeners.values { listener.yield(.progress(state.status, nil)) }
    }
  }

  func record(_ outcome: JobOutcome, _ counts: BatchCounts) {
    state.withLock { state in
      state.status.done = doneBefore + counts.done + counts.skipped
      state.status.failed = counts.failed
      // Its encode, if it was a video's, is over.
      if let list = state.status.encoding {
        let left = list.filter { $0.id != outcome.id }
        state.status.encoding = left.isEmpty ? nil : left
      }
      if outcome.status == .failed {
        var failure = outcome
        failure.error = failure.error.map { library.scrubbed($0) }
        state.status.failures.append(failure)
      }
      for listener in state.listeners.values { listener.yield(.progress(state.status, outcome)) }
    }
  }

  func finish(_ counts: BatchCounts) {
    let listeners = state.withLock { state in
      state.status.done = doneBefore + counts.done + counts.skipped
      state.status.failed = counts.failed
      state.status.finished = true
      state.status.encoding = nil
      state.status.state = counts.notStarted > 0 ? .stopped : .finished
      for listener in state.listeners.values { listener.yield(.finished(state.status)) }
      defer { state.listeners = [:] }
      return Array(state.listeners.values)
    }
    // Ended outside the lock: ending runs each stream's onTermination, which takes it.
    for listener in listeners { listener.finish() }
  }
}

/// A process's jobs over a library: started, looked up (this process's, else the catalog's),
/// resumed, and waited for at shutdown.
package final class Jobs: Sendable {
  private let jobs = Locked<[String: Job]>([:])
  private let running = Locked<[String: Task<Void, Never>]>([:])
  private let resuming = Locked(())
  let library: Library
  let pixels: PixelSettings
  let concurrency: Int

  package init(library: Library, pixels: PixelSettings, concurrency: Int) {
    self.library = library
    self.pixels = pixels
    self.concurrency = concurrency
  }

  /// A job this process runs or ran, else one the catalog recorded; nil for neither.
  package func job(_ id: String) throws(DarkroomError) -> Job? {
    if let job = jobs.withLock({ $0[id] }) { return job }
    guard id.count == 32, id.allSatisfy(\.isHexDigit) else { return nil }
    return try library.jobRecord(id).map { Job($0, library: library) }
  }

  /// Starts a library job on its own thread and returns this process's record of it at once.
  package func start(_ action: JobAction, on ids: [AssetID]) -> Job {
    let id = JobRecord.newID()
    let ids = AssetID.unique(ids)  // as the job takes them: its total is theirs
    var request = JobRequest(action, on: .assets(ids), in: library)
    request.recordID = id
    request.settings = pixels
    return start(request, Job(id: id, action: action.name, total: ids.count, library: library))
  }

  /// Finishes a job that was stopped or that a process before this one left unfinished.
  ///
  /// - Throws: `notFound`; `invalidArgument` for a job running or finished (the route has
  ///   answered 409 for those it saw; these are the ones that started since).
  package func resume(_ found: Job) throws(DarkroomError) -> Job {
    let id = found.id
    // One resume at a time in this process; the catalog's claim settles it between processes.
    return try resuming.withLock { _ throws(DarkroomError) in
      guard jobs.withLock({ $0[id]?.status.finished }) != false else {
        throw DarkroomError(
          .invalidArgument, "the job is running: only a stopped or interrupted one resumes")
      }
      var request = try library.resumeJob(id)
      let quality = request.settings.quality  // the job's own
      request.settings = pixels
      request.settings.quality = quality
      // Its items are those not yet done well: the rest were done before.
      let total = found.status.total
      let left = if case .assets(let ids) = request.items { ids.count } else { total }
      let job = Job(
        id: id, action: found.status.action, total: total, doneBefore: total - left,
        library: library)
      return start(request, job)
    }
  }

  private func start(_ request: JobRequest, _ job: Job) -> Job {
    var request = request
    request.jobs = concurrency
    request.videoProgress = { job.encoding($0) }
    jobs.withLock { jobs in
      // Finished jobs are kept for a while, so a client can read how one ended.
      if jobs.count > 1000 { jobs = jobs.filter { !$0.value.status.finished } }
      jobs[job.id] = job
    }
    let task = Task.detached { [request] in
      // On a thread of its own: on Dispatch's pool it held a thread for its whole length,
      // and the server's requests queued behind it (OwnThreads).
      let counts = await OwnThreads.run { () -> BatchCounts? in
        try? LibraryJob(request).run { outcome, counts in job.record(JobOutcome(outcome), counts) }
      }
      // A job that could not start (its query, its workers) left every item undone.
      var unstarted = BatchCounts(total: job.status.total)
      unstarted.notStarted = unstarted.total
      job.finish(counts ?? unstarted)
      _ = self.running.withLock { $0.removeValue(forKey: job.id) }
    }
    running.withLock { $0[job.id] = task }
    return job
  }

  /// Waits for every running job to end (a graceful stop).
  package func waitForAll() async {
    for task in running.withLock({ Array($0.values) }) { await task.value }
  }
}

/// What happened to one asset of a job.
package struct JobOutcome: Codable, Sendable, Equatable {
  package var id: String
  /// done or failed (an asset that already carried the edit is done).
  package var status: BatchOutcome.Status
  package var error: String?

  package init(_ outcome: BatchOutcome) {
    id = outcome.id ?? ""
    status = outcome.status == .skipped ? .done : outcome.status
    error = outcome.error
  }

  package init(id: String, status: BatchOutcome.Status, error: String?) {
    (self.id, self.status, self.error) = (id, status, error)
  }
}

extension Library {
  /// A message with the library's place on this machine taken out: clients know files by
  /// their paths in the library.
  package func scrubbed(_ message: String) -> String {
    message.replacingOccurrences(of: " at \(rootPath)", with: "")
      .replacingOccurrences(of: rootPath + "/", with: "")
      .replacingOccurrences(of: rootPath, with: "the library")
  }
}
