import FoundationEssentials
import Logging

/// The library as an app uses it: `async` calls by asset id, each run off the caller's
/// threads (Swift's cooperative pool stays free while libvips and SQLite work). They are the
/// same calls the command line and the server make, through the same ``LibraryJob``.
///
/// ```swift
/// let library = try Library.open(at: "/srv/photos")
/// _ = try await library.scan()
/// let newest = try await library.fetch(AssetQuery())
/// let id = try newest.asset(at: 0).id
/// let screen = try await library.image(for: id, RenditionSpec(.fullscreen))
/// try await library.edit(id, with: try FilterGraph.parse(spec: "noir"))
/// print(try await library.history(of: id).versions.count)
/// try await library.revert(id)
/// ```
extension Library {
  /// The library whose `.darkroom/` folder is in `root`.
  ///
  /// - Throws: `notFound` when `root` holds no library (``create(at:)`` makes one).
  public static func open(at root: String, logger: Logger = Library.silent)
    throws(DarkroomError) -> Library
  {
    var library = Library(root: URL(fileURLWithPath: root))
    library.logger = logger
    var isFolder = false
    guard
      FileManager.default.fileExists(atPath: library.metadataFolder.path, isDirectory: &isFolder),
      isFolder
    else {
      throw DarkroomError(.notFound, file: root, "is not a library: it has no \(folderName) folder")
    }
    return library
  }

  /// Brings the catalog up to date with the files (see `scan(_:options:progress:)`).
  /// Cancelling the task that awaits it stops it between batches, as `options.shouldStop`
  /// does: what was written stays, the summary says `stopped`, and a scan goes on from there.
  public func scan(options: ScanOptions = ScanOptions()) async throws(DarkroomError)
    -> ScanSummary
  {
    try await offThread(stoppable: { stop throws(DarkroomError) in
      var stoppable = options
      stoppable.shouldStop = { [asked = options.shouldStop] in stop.fired || asked() }
      return try self.scanBlocking(nil, options: stoppable)
    })
  }

  /// The assets `query` matches, in its order (PhotoKit's `fetchAssets(with:)`): a snapshot
  /// of their ids that loads its ``Asset``s a page at a time, read off the caller's thread.
  /// ``assets(matching:)`` is the same call for a caller with no concurrency.
  ///
  /// - Throws: what the catalog throws; "the space is locked" for a locked space.
  public func fetch(_ query: AssetQuery = AssetQuery()) async throws(DarkroomError)
    -> AssetFetchResult
  {
    try await offThread { () throws(DarkroomError) in try self.assets(matching: query) }
  }

  /// The asset `id` names, read off the caller's thread (``asset(_:)`` for a caller with no
  /// concurrency).
  ///
  /// - Throws: `notFound` for an id the library does not have.
  public func fetch(_ id: AssetID) async throws(DarkroomError) -> Asset {
    try await offThread { () throws(DarkroomError) in try self.asset(id) }
  }

  /// Edits an asset in place and updates its catalog row (see
  /// `edit(_:with:mode:settings:)`). Cancelling the task that awaits it stops a video's
  /// edit before it begins or at its encode's next progress report: the call throws
  /// "stopped", and no new version is written. (A photo's edit takes seconds: it ends.)
  @discardableResult
  public func edit(_ id: AssetID, with graph: FilterGraph, mode: EditMode = .append)
    async throws(DarkroomError) -> AdjustmentData
  {
    try await offThread(stoppable: { stop throws(DarkroomError) in
      try self.editBlocking(id, with: graph, mode: mode) { !stop.fired }.adjustment
    })
  }

  /// Restores an asset's original, or a version of its edit.
  @discardableResult
  public func revert(_ id: AssetID, to version: Int? = nil) async throws(DarkroomError)
    -> RevertOutcome
  {
    try await offThread { () throws(DarkroomError) in
      try self.revertBlocking(id, to: version)
    }
  }

  /// An asset's edit history: every version, and which one its file is now.
  public func history(of id: AssetID) async throws(DarkroomError) -> EditHistory {
    try await offThread { () throws(DarkroomError) in try self.editHistory(id) }
  }

  /// A job that renders `graph` as the edit of every asset `items` names (replacing their
  /// edits), `jobs` at a time. Run it with ``LibraryJob/events()``: ``LibraryJob/stop()``,
  /// or cancelling the task that reads them, stops the job, and the last event still has the
  /// final counts.
  public func apply(_ graph: FilterGraph, to items: JobItems, jobs: Int = 1)
    throws(DarkroomError) -> LibraryJob
  {
    var request = JobRequest(.edit(graph, mode: .replace), on: items, in: self)
    request.jobs = jobs
    request.recordID = JobRecord.newID()
    request.workers = .contained
    return try LibraryJob(request)
  }
}
