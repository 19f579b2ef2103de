import Dispatch
import FoundationEssentials
import Logging

/// What a ``LibraryJob`` works on.
public enum JobItems: Sendable {
  /// Files by path, each known under an output folder by its ``BatchInput/relativePath``.
  /// The catalog of the library each file is in (if it has one) is kept up to date.
  case files([BatchInput])
  /// A library's assets, by id (``JobRequest/library`` names the library).
  case assets([AssetID])
  /// Every asset a query matches when the job is made.
  case query(AssetQuery)
}

/// What a ``LibraryJob`` does to each item.
public enum JobAction: Sendable {
  /// Renders the graph as the item's edit: after its current edit's filters (`.append`) or
  /// instead of them (`.replace`).
  case edit(FilterGraph, mode: EditMode)
  /// Restores the original, or an earlier version of the edit.
  case revert(to: Int?)
  /// Moves the item to its library's trash.
  case trash
  /// Puts a trashed item back where it was.
  case restore
  /// Makes a representation and hands it to `RenderStep.deliver`.
  case render(RenderStep)

  /// The action's name, as the server's API spells it.
  public var name: String {
    switch self {
    case .edit: "apply"
    case .revert: "revert"
    case .trash: "trash"
    case .restore: "restore"
    case .render: "render"
    }
  }
}

/// How a job's render action renders, and where each rendition goes.
public struct RenderStep: Sendable {
  public var spec: RenditionSpec
  /// Render an edited file's original instead of its result.
  public var fromOriginal = false
  /// Whether renditions are looked up in and kept in a cache.
  public var useCache = true
  /// The cache's folder (nil: the item's library's, else ``Library/cacheFolder(for:)``) and
  /// bound.
  package var cache = CacheSettings()
  /// The bytes of the item whose path is `-` (what a command read from standard input).
  package var standardInput: [UInt8]?
  /// Writes one rendition where it belongs and returns that place (nil: nowhere a path
  /// names, such as standard output). Called on the job's threads, one item at a time per
  /// thread.
  package var deliver: @Sendable (JobItem, Rendition) throws(DarkroomError) -> String?

  public init(
    _ spec: RenditionSpec,
    deliver: @escaping @Sendable (JobItem, Rendition) throws(DarkroomError) -> String?
  ) {
    self.spec = spec
    self.deliver = deliver
  }
}

/// One item as a job's render delivers it.
public struct JobItem: Sendable {
  /// The file's path (`-`: standard input); for a space's asset, its name.
  public var path: String
  /// Its path under an output folder: below the folder it was found in, or in its library.
  public var relativePath: String
  /// The asset's id, for an item of a library or a space.
  public var id: String?
}

/// Which worker processes do a job's pixel work.
package enum JobWorkers: Sendable {
  /// The editor's renderer as it is given (its workers, or this process).
  case given
  /// When the job has several items, workers of its own made like ``Containment``'s (if
  /// this process set any); one item is done as `given`.
  case contained
  /// Workers of its own made like ``Containment``'s, however many items it has (this
  /// process works on none of them).
  case isolated
  /// Workers of its own, started with this configuration.
  case own(WorkerPool.Configuration)
}

/// What a ``LibraryJob`` does.
public struct JobRequest: Sendable {
  public var items: JobItems
  public var action: JobAction
  /// The library that `assets` and `query` items are in.
  public var library: Library?
  /// For an edit of files: a folder for the results (a library of its own, mirroring the
  /// files' relative paths); nil edits the files in place.
  package var output: String?
  /// Skip items that already carry this edit of the same source (a re-run after a stop).
  package var skipCurrent = false
  /// Items worked on at once.
  public var jobs = 1
  /// Keeps the job in the library's catalog under this id: its items, each one's outcome,
  /// and how it ended, so that it can be read after a restart (``Library/jobRecord(_:)``)
  /// and resumed (``Library/resumeJob(_:)``). Only jobs over a library's assets (by id or
  /// query) are kept; not renders, nor edits that append (a resume could not tell whether
  /// the edit in flight at a crash landed). Jobs are kept a month, and the last thousand.
  package var recordID: String?
  /// Stop at the first failure (running items still finish).
  public var failFast = false
  /// The pixel work's limits, edit quality and workers.
  package var settings = PixelSettings()
  package var workers = JobWorkers.given
  /// libvips threads per item in this process (default: cores divided by jobs).
  package var vipsThreads: Int?
  /// Edits also write their result's XMP sidecar for Lightroom beside it
  /// (``Library/writeLightroomSidecar(ofFile:)``); not in a space, which writes nothing in
  /// the clear.
  package var writeXMP = false
  /// Told, as a video's edit goes, how far its encode has got (every frame in this process,
  /// every 8th from a worker); nil: not told. Called on the item's thread.
  public var videoProgress: (@Sendable (EncodeProgress) -> Void)?
  /// Asked before a video's edit begins and at each progress report of its encode: false
  /// stops it there (the item fails, "stopped", and no new version is written). What an
  /// `async` edit's cancellation says.
  package var keepEncoding: @Sendable () -> Bool = { true }

  public init(_ action: JobAction, on items: JobItems, in library: Library? = nil) {
    self.action = action
    self.items = items
    self.library = library
  }
}

/// How far the encode of a video a job edits has got (``JobRequest/videoProgress``).
/// `EncodeProgress` is a `Sendable` value type.
public struct EncodeProgress: Sendable, Equatable {
  /// The item as its outcome names it (``BatchOutcome/file``: a library asset's path in the
  /// library, or the file as given) and its asset id, if it is one.
  public var file: String
  public var id: AssetID?
  /// Seconds of the video encoded, and its length in seconds.
  public var done: Double
  public var total: Double

  public init(file: String, id: AssetID?, done: Double, total: Double) {
    (self.file, self.id, self.done, self.total) = (file, id, done, total)
  }

  /// The share encoded, 0 to 1.
  public var fraction: Double { total > 0 ? min(1, max(0, done / total)) : 0 }

  /// `done` and `total` to a tenth of a second, as people are told them.
  public var tenths: (done: Double, total: Double) {
    ((done * 10).rounded() / 10, (total * 10).rounded() / 10)
  }
}

/// One item's outcome, or the end of the job, as ``LibraryJob/events()`` delivers them.
public enum JobEvent: Sendable {
  case item(BatchOutcome, BatchCounts)
  case finished(BatchCounts)
}

/// The one way Darkroom works on many items: every command and request that edits, reverts,
/// trashes, restores or renders more than one thing (and the single edits and reverts too)
/// runs one of these. It owns the worker processes, runs `jobs` items at a time, keeps each
/// changed file's catalog row true as it goes (no rescan afterwards), and reports each
/// outcome through a callback or as an `AsyncSequence`:
///
/// ```swift
/// var request = JobRequest(.edit(noir, mode: .replace), on: .query(query), in: library)
/// request.jobs = 2
/// let job = try LibraryJob(request)
/// for await event in job.events() {
///   if case .item(let outcome, let counts) = event {
///     print("\(counts.finished)/\(counts.total)", outcome.file, outcome.status)
///   }
/// }
/// ```
///
/// ``stop()`` starts no more items; `abandon()` also kills the workers of items in flight
/// (their outputs were never renamed into place). Re-running an edit with
/// `JobRequest.skipCurrent` skips what is done, so a stopped job resumes.
public final class LibraryJob: Sendable {
  public let request: JobRequest
  private let references: [Reference]
  private let runner: BatchRunner
  private let pool: WorkerPool?

  /// The files a job of `items` runs at once (`jobs` at most) and each one's libvips
  /// threads (`threads`, or the cores shared among the files at once, never among more:
  /// one file gets every core).
  package static func sharing(jobs: Int, items: Int, threads: Int?) -> (
    running: Int, threads: Int
  ) {
    let running = max(1, min(jobs, items))
    return (running, threads ?? ProcessorCount.share(among: running))
  }

  /// An item before it is looked at.
  fileprivate enum Reference: Sendable {
    case file(BatchInput)
    case asset(AssetID)
  }

  /// Prepares the job: its items (a query is run now), the output folder, the process's
  /// memory and thread settings, the worker processes.
  ///
  /// - Throws: `invalidArgument` for library items without a library; `io` when the output
  ///   folder cannot be made; `engine` when libvips' threads cannot be set; what the catalog
  ///   throws for a query.
  public init(_ request: JobRequest) throws(DarkroomError) {
    self.request = request
    switch request.items {
    case .files(let inputs): references = inputs.map(Reference.file)
    case .assets(let ids):
      guard request.library != nil else { throw Self.noLibrary }
      references = AssetID.unique(ids).map(Reference.asset)  // one named twice is one item
    case .query(let query):
      guard let library = request.library else { throw Self.noLibrary }
      references = try library.assetIDs(matching: query).map(Reference.asset)
    }
    if let output = request.output {
      do {
        try FileManager.default.createDirectory(
          atPath: output + "/" + Library.folderName, withIntermediateDirectories: true)
      } catch {
        throw DarkroomError(.io, file: output, "cannot create the output library: \(error)")
      }
    }
    let several = references.count > 1
    let (running, threads) = Self.sharing(
      jobs: request.jobs, items: references.count, threads: request.vipsThreads)
    if several, case .edit = request.action {
      // Only batches: single renders are faster with glibc's adaptive threshold.
      BatchRunner.keepMemoryFlat(jobs: running)
    }
    var configuration: WorkerPool.Configuration?
    switch request.workers {
    case .given: configuration = nil
    case .contained: configuration = several ? Containment.configuration : nil
    case .isolated: configuration = Containment.configuration
    case .own(let own): configuration = own
    }
    if var configuration {
      if case .own = request.workers {
      } else {
        configuration.idleWorkers = running
        configuration.vipsThreads = threads
      }
      pool = WorkerPool(configuration)
    } else {
      if several, request.settings.workers == nil {
        // In process, libvips' threads are shared between the jobs; workers get their share
        // through their configuration (and this process may never start libvips).
        try Vips.setConcurrency(threads)
      }
      pool = nil
    }
    runner = BatchRunner(jobs: request.jobs, failFast: request.failFast)
  }

  private static let noLibrary = DarkroomError(
    .invalidArgument, "a job over assets needs the library they are in")

  deinit { pool?.shutDown() }

  /// How many items the job has.
  public var count: Int { references.count }

  /// The job's items that are a library's assets, in order.
  private var assetIDs: [AssetID] {
    references.compactMap { if case .asset(let id) = $0 { id } else { nil } }
  }

  /// Runs a job of one item on this thread and returns its outcome: what a single edit,
  /// revert or render by a face is (``Library/edit(_:with:mode:settings:)`` is one).
  ///
  /// - Throws: the item's failure; what ``init(_:)`` throws.
  package static func one(_ request: JobRequest) throws(DarkroomError) -> BatchOutcome {
    let outcome = Locked<BatchOutcome?>(nil)
    let job = try LibraryJob(request)
    guard job.count == 1 else {
      throw DarkroomError(.invalidArgument, "a job of one item has \(job.count)")
    }
    job.run { result, _ in outcome.withLock { $0 = result } }
    guard let result = outcome.withLock({ $0 }) else {
      throw DarkroomError(.engine, "the job ended without an outcome")
    }
    if let failure = result.failure { throw failure }
    return result
  }

  /// Starts no more items; those running finish.
  public func stop() { runner.stop() }

  /// Kills the workers of items in flight: they fail as abandoned, and no item starts after.
  package func abandon() {
    runner.stop()
    pool?.abandon()
  }

  /// Whether the job was stopped (by ``stop()``, or at a failure with `failFast`).
  public var isStopped: Bool { runner.isStopped }

  /// Runs the job to its end (or until stopped), calling `progress` after each item, on the
  /// thread that finished it, one call at a time. Returns the counts.
  @discardableResult
  package func run(progress: @escaping @Sendable (BatchOutcome, BatchCounts) -> Void = { _, _ in })
    -> BatchCounts
  {
    let log = JobLog(request, ids: assetIDs)
    let (logger, name) = (request.library?.logger ?? Library.silent, request.action.name)
    let reported: @Sendable (BatchOutcome, BatchCounts) -> Void = { outcome, counts in
      log?.item(outcome)  // first: a client told of the outcome finds it recorded
      if let failure = outcome.failure { logger.warning("\(name): \(failure)") }
      progress(outcome, counts)
    }
    let counts: BatchCounts
    switch (request.action, request.library) {
    case (.trash, let library?), (.restore, let library?):
      counts = move(in: library, progress: reported)
    default:
      var settings = request.settings
      if let pool { settings.workers = pool }
      let context = ItemWork(request: request, settings: settings)
      counts = runner.run(references, work: { context.perform($0) }, progress: reported)
    }
    log?.end(stopped: counts.notStarted > 0)
    if references.count > 1 || request.recordID != nil {
      var metadata: Logger.Metadata = [:]
      if let id = request.recordID { metadata["job"] = "\(id)" }
      logger.info(
        "\(name) of \(counts.total): \(counts.done) done, \(counts.skipped) already so, \(counts.failed) failed, \(counts.notStarted) not started, in \(counts.seconds) s",
        metadata: metadata)
    }
    return counts
  }

  /// The job as an asynchronous sequence of outcomes that ends with
  /// ``JobEvent/finished(_:)``: it starts, on a thread of its own, when the sequence is first
  /// asked for an event. Cancelling the task that iterates it stops the job (as ``stop()``
  /// does): the items in flight finish, and the sequence still ends with the final counts.
  public func events() -> JobEvents {
    let buffer = JobEvents.Buffer { buffer in
      OwnThreads.start { [self] in
        let counts = run { outcome, counts in buffer.yield(.item(outcome, counts)) }
        buffer.yield(.finished(counts))
        buffer.finish()
      }
    }
    return JobEvents(buffer: buffer, job: self)
  }

  // MARK: The work on one item

  /// What every item's work shares.
  struct ItemWork: Sendable {
    let request: JobRequest
    let settings: PixelSettings
    /// For files: each file's nearest library's store (the CLI's files may be anywhere).
    var fileEditor: Editor { Editor(settings) }

    fileprivate func perform(_ reference: Reference) -> BatchOutcome {
      FaultInjection.waitAtJobGate()
      var outcome = BatchOutcome(file: "", status: .done)
      do throws(DarkroomError) {
        // What the item changes and its catalog's update, one for readers: a render by id
        // between the two waits for the catalog (FileLease.keepingLeases) instead of finding
        // a file the catalog does not know yet.
        try FileLease.keepingLeases { () throws(DarkroomError) in
          switch reference {
          case .file(let input):
            outcome.file = input.path
            try onFile(input, &outcome)
          case .asset(let id):
            outcome.id = id.rawValue
            guard let library = request.library else { throw LibraryJob.noLibrary }
            try library.storage.perform(id, by: self, &outcome)
          }
        }
      } catch {
        outcome.status = .failed
        outcome.error = error.description
        outcome.failure = error
      }
      return outcome
    }

    private func onFile(_ input: BatchInput, _ outcome: inout BatchOutcome) throws(DarkroomError) {
      let item = JobItem(path: input.path, relativePath: input.relativePath)
      switch request.action {
      case .edit(let graph, let mode):
        let destination = request.output.map { $0 + "/" + input.relativePath }
        try edit(input.path, graph, mode, writingTo: destination, by: fileEditor, &outcome)
        Library.recatalog(file: outcome.output ?? destination ?? input.path)
      case .revert(let version):
        try revert(input.path, to: version, by: fileEditor, &outcome)
        if outcome.reverted != .notEdited { Library.recatalog(file: input.path) }
      case .render(let step):
        let source: ImageSource =
          input.path == "-" ? .data(step.standardInput ?? [], name: "-") : .file(input.path)
        let library = input.path == "-" ? nil : Library.containing(input.path)
        try render(source, item, step, library: library, &outcome)
      case .trash, .restore:
        throw DarkroomError(
          .invalidArgument, file: input.path, "only a library's assets go to the trash")
      }
    }

    /// An asset of a folder's library: its catalogued file.
    func onAsset(_ id: AssetID, in library: Library, _ outcome: inout BatchOutcome)
      throws(DarkroomError)
    {
      let asset = try library.asset(id)
      outcome.file = asset.path
      switch request.action {
      case .edit(let graph, let mode):
        let path = try library.editablePath(asset)
        // Read through the descriptor opened and checked as the catalogued file: a swap of
        // its name meanwhile cannot bring another file's bytes into the edit.
        try library.withOpenedPath(of: asset) { opened throws(DarkroomError) in
          try edit(
            path, graph, mode, writingTo: nil, reading: opened,
            by: library.editor(of: path, settings), &outcome)
        }
        // (A RAW's edit is a new file beside it, catalogued as an asset of its own.)
        library.recatalogAfterChange(outcome.output ?? path)
      case .revert(let version):
        let path = try library.editablePath(asset)
        try revert(path, to: version, by: library.editor(of: path, settings), &outcome)
        if outcome.reverted != .notEdited { library.recatalogAfterChange(path) }
      case .render(let step):
        // Opened and checked once (a full representation may be the file's own bytes: it
        // must be the catalogued file), then rendered through that descriptor only.
        let item = JobItem(path: library.path(of: asset), relativePath: asset.path, id: id.rawValue)
        try library.withOpenedPath(of: asset, exactly: step.spec.representation == .full) {
          path throws(DarkroomError) in
          try render(.file(path), item, step, library: library, &outcome)
        }
      case .trash: try library.trash([id])
      case .restore: try library.restore([id])
      }
    }

    /// An asset of a library over a space: the same actions, on sealed objects.
    func onSealedAsset(
      _ id: AssetID, in library: Library, _ space: Space, _ outcome: inout BatchOutcome
    ) throws(DarkroomError) {
      let asset = try library.sealed(id, in: space)
      outcome.file = asset.name
      switch request.action {
      case .edit(let graph, let mode):
        try library.editSealed(
          id, in: space, graph, mode, settings, keepEncoding: request.keepEncoding, &outcome)
      case .revert(let version): try library.revertSealed(id, in: space, to: version, &outcome)
      case .trash, .restore:
        throw DarkroomError(.engine, file: asset.name, "trash and restore are moved in chunks")
      case .render(let step):
        let rendition = try library.renderSealed(
          id, in: space, step.spec, settings: settings, cached: step.useCache,
          fromOriginal: step.fromOriginal)
        let item = JobItem(path: asset.name, relativePath: asset.name, id: id.rawValue)
        outcome.output = try step.deliver(item, rendition)
        outcome.rendition = RenditionSummary(rendition)
      }
    }

    private func edit(
      _ path: String, _ graph: FilterGraph, _ mode: EditMode, writingTo destination: String?,
      reading source: String? = nil, by editor: Editor, _ outcome: inout BatchOutcome
    ) throws(DarkroomError) {
      var editor = editor
      if let told = request.videoProgress {
        let (file, id) = (outcome.file, outcome.id.flatMap { AssetID($0) })
        editor.videoProgress = { done, total in
          told(EncodeProgress(file: file, id: id, done: done, total: total))
          return true
        }
      }
      editor.keepEncoding = request.keepEncoding
      let result = try editor.edit(
        path, with: graph, mode: mode, writingTo: destination, readingFrom: source,
        skipIfCurrent: request.skipCurrent)
      outcome.status = result.skipped ? .skipped : .done
      outcome.output = result.output
      outcome.version = result.adjustment.version
      outcome.adjustment = result.adjustment
      outcome.sourceSHA256 = result.adjustment.original.sha256
      outcome.resultSHA256 = result.adjustment.result.sha256
      if request.writeXMP { _ = try Library.writeLightroomSidecar(ofFile: result.output) }
    }

    private func revert(
      _ path: String, to version: Int?, by editor: Editor, _ outcome: inout BatchOutcome
    ) throws(DarkroomError) {
      let reverted = try editor.revert(path, to: version)
      outcome.reverted = reverted
      outcome.output = path
      switch reverted {
      case .restoredOriginal(let sha256): (outcome.version, outcome.resultSHA256) = (0, sha256)
      case .restoredVersion(let n, let sha256):
        (outcome.version, outcome.resultSHA256) = (n, sha256)
      case .alreadyAtVersion(let n): (outcome.version, outcome.status) = (n, .skipped)
      case .notEdited: outcome.status = .skipped
      }
    }

    private func render(
      _ source: ImageSource, _ item: JobItem, _ step: RenderStep, library: Library?,
      _ outcome: inout BatchOutcome
    ) throws(DarkroomError) {
      var cache: RenditionCache?
      if step.useCache {
        var settings = step.cache
        settings.folder = settings.folder ?? library?.cacheFolder
        cache = settings.cache(for: item.path == "-" ? nil : item.path)
      }
      let rendition = try Library.render(
        source, step.spec, fromOriginal: step.fromOriginal, renderer: Renderer(settings),
        cache: cache)
      outcome.output = try step.deliver(item, rendition)
      outcome.rendition = RenditionSummary(rendition)
    }
  }

  // MARK: Trash and restore

  /// Trash and restore move files in chunks: each folder is made durable once a chunk.
  /// `stop()` is heeded between chunks.
  private func move(
    in library: Library, progress: @Sendable (BatchOutcome, BatchCounts) -> Void
  ) -> BatchCounts {
    let started = ContinuousClock.now
    let trashing: Bool = if case .trash = request.action { true } else { false }
    var counts = BatchCounts(total: references.count)
    let ids = assetIDs
    // `asset` as the move left it (trash and restore return it), read again only if not.
    func report(_ id: AssetID, _ asset: Asset?, _ error: DarkroomError?) {
      let asset = asset ?? (try? library.asset(id))
      var outcome = BatchOutcome(
        file: asset.map { $0.trashedFrom ?? $0.path } ?? "", status: error == nil ? .done : .failed,
        error: error?.description, failure: error)
      outcome.id = id.rawValue
      if error == nil { counts.done += 1 } else { counts.failed += 1 }
      counts.seconds = BatchRunner.milliseconds(ContinuousClock.now - started) / 1000
      progress(outcome, counts)
      if error != nil && request.failFast { runner.stop() }
    }
    func move(_ ids: [AssetID]) throws(DarkroomError) -> [Asset] {
      trashing ? try library.trash(ids) : try library.restore(ids)
    }
    var start = 0
    while start < ids.count, !runner.isStopped {
      let chunk = Array(ids[start..<min(ids.count, start + 100)])
      start += chunk.count
      do throws(DarkroomError) {
        for (id, asset) in zip(chunk, try move(chunk)) { report(id, asset, nil) }
      } catch {
        // One of them failed: the others are done one at a time, to tell which.
        for id in chunk {
          do throws(DarkroomError) {
            let asset = try library.asset(id)
            report(id, (asset.trashedAt != nil) == trashing ? asset : try move([id]).first, nil)
          } catch {
            report(id, nil, error)
          }
        }
      }
    }
    counts.notStarted = ids.count - start
    counts.seconds = BatchRunner.milliseconds(ContinuousClock.now - started) / 1000
    return counts
  }
}

extension RenditionSummary {
  init(_ rendition: Rendition) {
    self.init(
      width: rendition.width, height: rendition.height, format: rendition.format,
      bytes: rendition.bytes.count, cached: rendition.fromCache)
  }
}

/// A job's outcomes as they come, ending with ``JobEvent/finished(_:)``. Unlike an
/// `AsyncStream`, a cancelled consumer is not cut off: cancelling stops the job, and the
/// sequence goes on to its final counts.
public struct JobEvents: AsyncSequence, Sendable {
  public typealias Element = JobEvent
  fileprivate let buffer: Buffer
  fileprivate let job: LibraryJob

  public func makeAsyncIterator() -> Iterator { Iterator(buffer: buffer, job: job) }

  public struct Iterator: AsyncIteratorProtocol {
    fileprivate let buffer: Buffer
    fileprivate let job: LibraryJob

    public mutating func next() async -> JobEvent? {
      let (buffer, job) = (buffer, job)
      // Cancelled already: the job is stopped before it starts.
      return await withTaskCancellationHandler {
        buffer.startOnce()
        return await buffer.next()
      } onCancel: {
        job.stop()
      }
    }
  }

  /// Events not yet taken, and the consumer waiting for one.
  fileprivate final class Buffer: Sendable {
    private struct State {
      var events: [JobEvent] = []
      var finished = false
      var started = false
      var waiting: CheckedContinuation<JobEvent?, Never>?
    }
    private let state = Locked(State())
    private let start: @Sendable (Buffer) -> Void

    init(start: @escaping @Sendable (Buffer) -> Void) { self.start = start }

    func startOnce() {
      let first = state.withLock { state in
        defer { state.started = true }
        return !state.started
      }
      if first { start(self) }
    }

    func yield(_ event: JobEvent) {
      let waiting = state.withLock { state -> CheckedContinuation<JobEvent?, Never>? in
        if let waiting = state.waiting {
          state.waiting = nil
          return waiting
        }
        state.events.append(event)
        return nil
      }
      waiting?.resume(returning: event)
    }

    func finish() {
      let waiting = state.withLock { state -> CheckedContinuation<JobEvent?, Never>? in
        state.finished = true
        defer { state.waiting = nil }
        return state.waiting
      }
      waiting?.resume(returning: nil)
    }

    func next() async -> JobEvent? {
      await withCheckedContinuation { continuation in
        let answer = state.withLock { state -> JobEvent?? in
          if !state.events.isEmpty { return .some(state.events.removeFirst()) }
          if state.finished { return .some(nil) }
          state.waiting = continuation
          return nil
        }
        if let answer { continuation.resume(returning: answer) }
      }
    }
  }
}
