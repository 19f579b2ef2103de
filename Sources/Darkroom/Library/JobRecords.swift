import FoundationEssentials
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A job over a library's assets as its catalog remembers it: a job whose
/// ``JobRequest/recordID`` is set is written down as it starts, after each item, and as it
/// ends, so that after a restart a finished job still answers and one whose process died
/// says so and can be resumed (``Library/resumeJob(_:)``). `JobRecord` is a `Sendable` value
/// type.
package struct JobRecord: Sendable, Equatable {
  /// How the job stands.
  package enum State: String, Sendable, Codable {
    /// Its process is working on it.
    case running
    /// Every item was worked on.
    case finished
    /// It was stopped before the end (a stop, or a failure with `failFast`).
    case stopped
    /// Its process ended before the job did (killed, or the machine went down).
    case interrupted
  }

  package var id: String
  /// apply, revert, trash or restore.
  package var action: String
  package var state: State
  /// Its assets.
  package var total: Int
  /// Assets it ended well (done, or already so).
  package var done: Int
  /// Assets it failed, with why, in the order they failed.
  package var failures: [StoredJob.Failure]
  package var started: Date
  package var ended: Date?

  /// Whether ``Library/resumeJob(_:)`` has anything to do: the job ended early.
  package var canResume: Bool { state == .stopped || state == .interrupted }

  /// A new job id: 32 random hex digits.
  package static func newID() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<4).map { _ in
      let hex = String(generator.next() as UInt32, radix: 16)
      return String(repeating: "0", count: 8 - hex.count) + hex
    }.joined()
  }
}

extension JobRecord {
  /// What `library`'s catalog keeps of a job, with a `running` job whose process is gone
  /// read as `interrupted`.
  init(_ stored: StoredJob, in library: Library) {
    var state = State(rawValue: stored.state) ?? .interrupted
    if state == .running, !JobLease.isRunning(stored, in: library) { state = .interrupted }
    self.init(
      id: stored.id, action: stored.name, state: state, total: stored.ids.count,
      done: stored.done.count, failures: stored.failures,
      started: Date(timeIntervalSince1970: stored.started),
      ended: stored.ended.map { Date(timeIntervalSince1970: $0) })
  }
}

extension Library {
  /// The job recorded under `id`; nil for an id the catalog does not know.
  ///
  /// - Throws: what the catalog throws.
  package func jobRecord(_ id: String) throws(DarkroomError) -> JobRecord? {
    try catalogCall({ try $0.job(id) }).map { JobRecord($0, in: self) }
  }

  /// A request that finishes a stopped or interrupted job: the same action, under the same
  /// id, over the assets it has not ended well (those that failed are tried again), skipping
  /// any that already carry the edit (the item in flight when the process died may have).
  /// Set its settings and `jobs`, then run it as a ``LibraryJob``.
  ///
  /// - Throws: `notFound` for an unknown id; `invalidArgument` for a job that is running or
  ///   finished.
  package func resumeJob(_ id: String) throws(DarkroomError) -> JobRequest {
    guard let stored = try catalogCall({ try $0.job(id) }) else {
      throw DarkroomError(.notFound, "no such job: \(id.prefix(64))")
    }
    let record = JobRecord(stored, in: self)
    guard record.canResume else {
      throw DarkroomError(
        .invalidArgument,
        "the job is \(record.state.rawValue): only a stopped or interrupted one resumes")
    }
    guard let (action, quality) = JobLog.decode(stored.action) else {
      throw DarkroomError(
        .corrupt, file: catalogLocation, "job \(id.prefix(64)): its action cannot be read")
    }
    // Taken in one write: of two processes that found it interrupted, one resumes it.
    let owner = ProcessStamp.current.description
    guard
      try catalogCall({ try $0.claimJob(id, state: stored.state, owner: stored.owner, by: owner) })
    else {
      throw DarkroomError(.invalidArgument, "the job is running: another process resumed it first")
    }
    var request = JobRequest(
      action, on: .assets(stored.ids.filter { !stored.done.contains($0) }), in: self)
    request.recordID = id
    request.skipCurrent = true
    if let quality { request.settings.quality = quality }
    return request
  }
}

/// Writes a recorded job's progress to its library's catalog. A write that fails is not the
/// job's failure: the work goes on, and the record says less.
struct JobLog: Sendable {
  let id: String
  let library: Library
  private let header: StoredJob
  /// Held while this process runs the job: what tells another machine that it does.
  private let lease: JobLease?

  /// The action as stored: what ``Library/resumeJob(_:)`` reads back.
  private struct Code: Codable {
    var action: String
    var graph: FilterGraph?
    var append: Bool?
    var version: Int?
    /// An edit's encoder quality: a resume writes what the job began with.
    var quality: Int?
    /// An edit that takes over each item's own edit from another program (`from-xmp`).
    var foreign: Bool?
  }

  /// Starts the record of `request`'s job over `ids`, or takes over the one it resumes; nil
  /// for a job that is not recorded (no ``JobRequest/recordID``, no library, or a render).
  init?(_ request: JobRequest, ids: @autoclosure () -> [AssetID]) {
    guard let id = request.recordID, let library = request.library, library.keeps(.jobRecords),
      let action = Self.encode(request.action, quality: request.settings.quality)
    else { return nil }
    (self.id, self.library) = (id, library)
    lease = JobLease(id, in: library)  // before the record says who runs it
    let now = Date().timeIntervalSince1970
    header = StoredJob(
      id: id, name: request.action.name, action: action, ids: ids(),
      state: JobRecord.State.running.rawValue, owner: ProcessStamp.current.description,
      started: now, ended: nil)
    // Jobs are kept a month, and the last thousand however old.
    write { try $0.forgetJobs(endedBefore: now - 30 * 86_400, keeping: 1000) }
    JobLease.sweep(library)
    write { [header] in try $0.saveJob(header) }
  }

  func item(_ outcome: BatchOutcome) {
    guard let raw = outcome.id, let asset = AssetID(raw) else { return }
    write {
      try $0.recordJobItem(
        id, asset, error: outcome.status == .failed ? outcome.error ?? "failed" : nil)
    }
  }

  func end(stopped: Bool) {
    var ended = header
    ended.state = (stopped ? JobRecord.State.stopped : .finished).rawValue
    ended.ended = Date().timeIntervalSince1970
    write { [ended] in try $0.saveJob(ended) }
    lease?.release()
  }

  /// A write to the record; one that fails is logged, and the job goes on.
  private func write(_ body: (any Catalog) throws -> Void) {
    do {
      try library.catalogCall(body)
    } catch {
      library.logger.warning("job \(id): its record in the catalog could not be written: \(error)")
    }
  }

  /// The action as stored; nil for one that is not recorded: a render, and an edit that
  /// appends (after a crash, a resume could not tell whether the edit in flight landed, and
  /// appending it again would apply it twice).
  static func encode(_ action: JobAction, quality: Int?) -> String? {
    let code: Code
    switch action {
    case .edit(let graph, let mode):
      guard mode != .append else { return nil }
      code = Code(
        action: "edit", graph: graph, append: false, quality: quality,
        foreign: mode == .foreign ? true : nil)
    case .revert(let version): code = Code(action: "revert", version: version)
    case .trash: code = Code(action: "trash")
    case .restore: code = Code(action: "restore")
    case .render: return nil
    }
    return (try? JSONEncoder().encode(code)).map { String(decoding: $0, as: UTF8.self) }
  }

  static func decode(_ text: String) -> (JobAction, quality: Int?)? {
    guard let code = try? JSONDecoder().decode(Code.self, from: Data(text.utf8)) else { return nil }
    switch code.action {
    case "edit":
      guard let graph = code.graph, code.append != true else { return nil }
      return (.edit(graph, mode: code.foreign == true ? .foreign : .replace), code.quality)
    case "revert": return (.revert(to: code.version), nil)
    case "trash": return (.trash, nil)
    case "restore": return (.restore, nil)
    default: return nil
    }
  }
}

/// The lease (``FileLease``) of a recorded job, `.darkroom/jobs/ID.lease`, held by the
/// process that runs it from its start to its end, and dropped by the kernel (or the file
/// server) if that process dies first. A job's record names its owner by pid
/// (``ProcessStamp``), which tells a process on the same machine, in the same boot, whether
/// the owner runs; any other (another server sharing the library) asks the lease.
final class JobLease: Sendable {
  private let fd: Int32
  private let path: String
  private let released = Atomic<Bool>(false)

  /// The lease's path; nil for an id that is not a plain name.
  static func path(_ id: String, in library: Library) -> String? {
    guard !id.isEmpty, id.count <= 64, id.utf8.allSatisfy({ isalnum(Int32($0)) != 0 }) else {
      return nil
    }
    return folder(library) + "/" + id + ".lease"
  }

  /// Takes job `id`'s lease; nil where it cannot be (a read-only library: the pid is all
  /// there is then).
  init?(_ id: String, in library: Library) {
    guard let path = Self.path(id, in: library) else { return nil }
    mkdir(Self.folder(library), 0o755)
    // A sweep (``sweep(_:)``) may remove the file between its opening and its lock: the
    // lease is taken again on the file the path names.
    for _ in 0..<10 {
      let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
      guard fd >= 0 else { return nil }
      // Held: by a sweep for an instant (it removes the file), or by another process (a
      // resume that raced a process still ending): tried again briefly, then the job goes
      // on without a lease rather than wait.
      guard FileLease.flockFile(fd, LOCK_EX | LOCK_NB) == 0 else {
        close(fd)
        usleep(1000)
        continue
      }
      var held = stat()
      var named = stat()
      if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_ino == named.st_ino,
        held.st_dev == named.st_dev
      {
        (self.fd, self.path) = (fd, path)
        return
      }
      close(fd)
    }
    return nil
  }

  static func folder(_ library: Library) -> String {
    library.rootPath + "/" + Library.folderName + "/jobs"
  }

  /// Removes the leases nobody holds: those of jobs whose process died and that were never
  /// resumed (a resume takes the lease again). Returns how many it removed.
  @discardableResult
  static func sweep(_ library: Library) -> Int {
    let folder = folder(library)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    var removed = 0
    for name in names where name.hasSuffix(".lease") {
      let fd = open(folder + "/" + name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
      guard fd >= 0 else { continue }
      // Taken, so that nobody takes it while it goes; a lease being taken anew finds its
      // file gone and makes another (``init(_:in:)``).
      if FileLease.flockFile(fd, LOCK_EX | LOCK_NB) == 0, unlink(folder + "/" + name) == 0 {
        removed += 1
      }
      close(fd)
    }
    return removed
  }

  /// Ends the lease: the job ended.
  func release() {
    guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
    unlink(path)
    close(fd)
  }

  deinit { release() }

  /// Whether the process that `stored` names as its owner still runs it: its pid says so
  /// (this machine, this boot), or its lease does (another machine, or a container with
  /// pids of its own on this one).
  static func isRunning(_ stored: StoredJob, in library: Library) -> Bool {
    if let owner = ProcessStamp(stored.owner), owner.boot == ProcessStamp.thisBoot,
      owner.isRunning
    {
      return true
    }
    guard let path = path(stored.id, in: library) else { return false }
    return FileLease.isHeld(path) == true
  }
}
