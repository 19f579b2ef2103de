#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Edits, reverts and history of a library's assets by id: what the server calls, where the
/// command line names files. Each keeps the catalog up to date.
extension Library {
  /// Edits an asset in place (see ``Editor/edit(_:with:mode:writingTo:skipIfCurrent:)``),
  /// and reads it into the catalog again: a ``LibraryJob`` of one asset.
  ///
  /// - Throws: `notFound` for an unknown id or an asset offline; `conflict` for one in the
  ///   trash; what the editor throws.
  @discardableResult
  package func editBlocking(
    _ id: AssetID, with graph: FilterGraph, mode: EditMode = .append,
    settings: PixelSettings = PixelSettings(),
    keepEncoding: @escaping @Sendable () -> Bool = { true }
  ) throws(DarkroomError) -> Editor.EditResult {
    let outcome = try one(.edit(graph, mode: mode), id, settings, keepEncoding: keepEncoding)
    guard let adjustment = outcome.adjustment else {
      throw DarkroomError(.engine, file: outcome.file, "the edit left no adjustment data")
    }
    var result = Editor.EditResult(
      adjustment: adjustment, libraryRoot: root, skipped: outcome.status == .skipped)
    result.output = outcome.output ?? outcome.file
    result.asset = storage.resultAsset(of: id, output: result.output)
    return result
  }

  /// Reverts an asset to its original, or to an earlier `version` of its edit (see
  /// ``Editor/revert(_:to:)``), and reads it into the catalog again: a ``LibraryJob`` of one
  /// asset.
  ///
  /// - Throws: as ``edit(_:with:mode:settings:)``.
  @discardableResult
  package func revertBlocking(
    _ id: AssetID, to version: Int? = nil, settings: PixelSettings = PixelSettings()
  ) throws(DarkroomError) -> RevertOutcome {
    try one(.revert(to: version), id, settings).reverted ?? .notEdited
  }

  /// Runs `action` on one asset, in this process (or the settings' workers).
  private func one(
    _ action: JobAction, _ id: AssetID, _ settings: PixelSettings,
    keepEncoding: @escaping @Sendable () -> Bool = { true }
  ) throws(DarkroomError) -> BatchOutcome {
    var request = JobRequest(action, on: .assets([id]), in: self)
    request.settings = settings
    request.keepEncoding = keepEncoding
    return try LibraryJob.one(request)
  }

  /// Whether an edit of `graph` in `mode` can be made of a video too (every filter but
  /// `auto` means the same on each frame; a video carries no other program's edit): whether
  /// a batch over folders takes their videos (``BatchInputs/collect(_:videos:)``).
  package static func takesVideos(_ graph: FilterGraph, mode: EditMode) -> Bool {
    Editor.takesVideos(graph, mode: mode)
  }

  /// The edit history of a file, by path, in whatever library holds it (empty for a file
  /// that is not an edit).
  ///
  /// - Throws: what ``Editor/editHistory(_:)`` throws.
  package static func editHistory(ofFile path: String) throws(DarkroomError) -> EditHistory {
    try Editor().editHistory(path)
  }

  /// The adjustment data of an edited file, by path; nil for a file that is not an edit.
  ///
  /// - Throws: what ``Editor/adjustments(_:)`` throws.
  package static func adjustments(ofFile path: String) throws(DarkroomError) -> AdjustmentData? {
    try Editor().adjustments(path)
  }

  /// The edit of a file, by path, as an XMP sidecar Lightroom reads, with Darkroom's exact
  /// adjustment data in it (``ForeignEdit/sidecar(for:adjustmentData:width:height:)``; crops
  /// placed on its original's upright size); nil for a file that is not an edit.
  ///
  /// - Throws: what ``Editor/adjustments(_:)`` and reading the original throw.
  package static func lightroomSidecar(ofFile path: String) throws(DarkroomError) -> [UInt8]? {
    let editor = Editor()
    guard let data = try editor.adjustments(path), let original = try editor.originalSource(path)
    else { return nil }
    let metadata = try AssetMetadata.read(original)
    return ForeignEdit.sidecar(
      for: data.graph, adjustmentData: data.canonicalJSON, width: metadata.displayWidth,
      height: metadata.displayHeight)
  }

  /// Writes the edit of the file at `path` as an XMP sidecar beside it, under Lightroom's
  /// name (`NAME.xmp`), whole and atomically (``lightroomSidecar(ofFile:)``). A sidecar
  /// already there is replaced only if Darkroom wrote it: one of Lightroom's, or of the
  /// user's, keeps its keywords and ratings.
  ///
  /// - Returns: the sidecar's path; nil for a file that is not an edit.
  /// - Throws: `invalidArgument` naming the sidecar when one Darkroom did not write is there;
  ///   what reading the edit and writing throw.
  package static func writeLightroomSidecar(ofFile path: String) throws(DarkroomError) -> String? {
    guard let bytes = try lightroomSidecar(ofFile: path) else { return nil }
    let sidecar = (FilePath(path).splitExtension?.base ?? path) + ".xmp"
    var status = stat()
    if lstat(sidecar, &status) == 0 {
      let existing = try InputFile(sidecar).read(at: 0, count: 4096)
      guard String(decoding: existing, as: UTF8.self).contains("x:xmptk=\"Darkroom\"") else {
        throw DarkroomError(
          .invalidArgument, file: sidecar, "is not a sidecar Darkroom wrote: not replaced")
      }
    }
    try AtomicFile.write(bytes, to: sidecar)
    return sidecar
  }

  /// An asset's edit history: every version, and which one the file is now.
  ///
  /// - Throws: `notFound` for an unknown id; what ``Editor/editHistory(_:)`` throws.
  package func editHistory(_ id: AssetID) throws(DarkroomError) -> EditHistory {
    try storage.history(of: id)
  }

  /// ``editHistory(_:)`` of a folder's file: its editor's, by the file's path.
  func fileHistory(_ id: AssetID) throws(DarkroomError) -> EditHistory {
    let path = path(of: try asset(id))
    return try editor(of: path).editHistory(path)
  }

  /// A preview of `graph` applied to an asset's original (its edit left out), fitting
  /// `spec`'s screen, written nowhere: what an editor shows while its sliders move. The graph
  /// is applied to the original's cached fullscreen rendition, so a preview costs a small
  /// decode, not a full-size one (crops are in proportions, tone is per pixel: both commute
  /// with the resize; pixel crops are scaled); it is JPEG, encoded twice, so only a preview.
  ///
  /// - Throws: `notFound` for an unknown id; what the renderer throws.
  package func preview(
    _ id: AssetID, graph: FilterGraph, _ spec: RenditionSpec,
    settings: PixelSettings = PixelSettings()
  ) throws(DarkroomError) -> Rendition {
    // A video's preview is its poster through the frame filters: a trim changes no pixel.
    let frames = FilterGraph(
      nodes: graph.nodes.filter { $0.op != TrimFilter.name }, description: graph.description)
    return try onScreen(id, graph: frames, spec, settings: settings) {
      screen, scaled, name throws(DarkroomError) in
      // (A preview writes nothing: its editor keeps no original anywhere.)
      var editor = Editor(settings) { _, _ in nil }
      editor.renderer = storage.renderer(settings)
      editor.quality = spec.quality
      let bytes = try editor.preview(.data(screen.bytes, name: name), graph: scaled)
      let metadata = try AssetMetadata.read(.data(bytes, name: name))
      return Rendition(bytes: bytes, format: .jpeg, width: metadata.width, height: metadata.height)
    }
  }

  /// The filters Auto chooses for an asset's original after `graph` (what an editor's panel
  /// holds), explicit, as an edit with `auto` at its end would store them; empty when the
  /// photo needs nothing. Looked at small, from the original's cached screen rendition.
  ///
  /// - Throws: `notFound` for an unknown id; what the renderer throws.
  package func autoFilters(
    _ id: AssetID, after graph: FilterGraph, settings: PixelSettings = PixelSettings()
  ) throws(DarkroomError) -> [FilterNode] {
    try onScreen(id, graph: graph, RenditionSpec(.fullscreen), settings: settings) {
      screen, scaled, name throws(DarkroomError) in
      let auto = try FilterNode(AutoFilter.name)
      let resolved = try storage.renderer(settings).resolvingAuto(
        FilterGraph(nodes: scaled.nodes + [auto]), of: .data(screen.bytes, name: name))
      return Array(resolved.nodes.dropFirst(scaled.nodes.count))
    }
  }

  /// `body` given the asset's original (its edit left out) as its cached rendition fitting
  /// `spec`'s screen (JPEG, no metadata, no other program's edit), `graph` scaled to it
  /// (pixel crops and radii name the original's pixels), and the name errors give it.
  private func onScreen<T>(
    _ id: AssetID, graph: FilterGraph, _ spec: RenditionSpec, settings: PixelSettings,
    _ body: (Rendition, FilterGraph, String) throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    let asset = try asset(id)
    var base = spec
    base.representation = .fullscreen
    base.format = .jpeg
    base.metadata = .strip
    base.foreignEdit = .hidden  // an edit renders the original's own pixels
    let (screen, width, name) = try storage.original(asset, base, settings: settings)
    let scaled = try graph.scalingPixels(by: Double(screen.width) / Double(max(1, width)))
    return try body(screen, scaled, name)
  }

  /// ``AssetStorage/original(_:_:settings:)`` of a folder's file: its kept original where an
  /// edit replaced it, else the file, opened and checked once and read through that
  /// descriptor alone; its rendition kept in the library's cache.
  func fileOriginal(_ asset: Asset, _ spec: RenditionSpec, settings: PixelSettings)
    throws(DarkroomError) -> (rendition: Rendition, displayWidth: Int)
  {
    try withOpenedPath(of: asset) { opened throws(DarkroomError) in
      let path = path(of: asset)
      let source = try editor(of: path).originalSource(path) ?? .file(opened)
      let screen = try Representations(
        renderer: Renderer(settings), cache: RenditionCache(folder: cacheFolder)
      ).rendition(of: source, spec)
      // A video's screen rendition is its poster; its frames are the header's size.
      if case .file(let file) = source, let video = try VideoHeader.describe(path: file) {
        return (screen, video.displayWidth)
      }
      return (screen, try AssetMetadata.read(source).displayWidth)
    }
  }

  /// The change log after `sequence`, oldest first, at most `limit` entries: what a client
  /// that saw `sequence` has missed (see ``CatalogChange``).
  package func changes(since sequence: Int64, limit: Int = 1000) throws(DarkroomError)
    -> [CatalogChange]
  {
    try catalogCall { try $0.changes(since: sequence, limit: limit) }
  }

  /// The change log from after `sequence` (nil: from now), in batches of at most `batch`,
  /// oldest first. With `follow`, it goes on after catching up: it waits for the next
  /// commit (at once for this process's; PostgreSQL's NOTIFY for any other's) or for
  /// `interval`, and yields an empty batch after a wait that brought nothing, so a reader can
  /// say it is still there. It ends when the task is cancelled (or, without `follow`, once
  /// caught up), and throws a catalog's failure.
  package func changeFeed(
    since sequence: Int64? = nil, follow: Bool = true, batch: Int = 500,
    interval: Duration = .milliseconds(250)
  ) throws(DarkroomError) -> AsyncThrowingStream<[CatalogChange], any Error> {
    let made = catalogWaiter()
    let start: Int64
    if let sequence { start = sequence } else { start = try lastChange() }
    let library = self
    return .produced { continuation in
      var (waiter, cursor) = (made, start)
      var waited = false
      while !Task.isCancelled {
        let changes = try library.changes(since: cursor, limit: batch)
        if let last = changes.last {
          cursor = last.sequence
          continuation.yield(changes)
        } else if waited {
          continuation.yield([])
        }
        waited = false
        if changes.count == batch { continue }
        if !follow { break }
        try await waiter.wait(atMost: interval)
        waited = true
      }
    }
  }

  /// The change log's latest sequence number (0 before any change).
  package func lastChange() throws(DarkroomError) -> Int64 {
    try catalogCall { try $0.lastChange() }
  }

  /// Every id a query matches, in its order (no paging): what a batch over "all of these"
  /// works on.
  package func assetIDs(matching query: AssetQuery) throws(DarkroomError) -> [AssetID] {
    try catalogCall { try $0.ids(query) }
  }

  /// The assets before and after `id` in `query`'s order (an album's, a shared link's): a
  /// photo page's previous and next; nil at either end, both nil when `id` is not in it.
  package func neighbours(of id: AssetID, in query: AssetQuery) throws(DarkroomError)
    -> (previous: AssetID?, next: AssetID?)
  {
    // Ids only: a 50,000-id list is 1.3 MB.
    let ids = try assetIDs(matching: query)
    guard let index = ids.firstIndex(of: id) else { return (nil, nil) }
    return (index > 0 ? ids[index - 1] : nil, index + 1 < ids.count ? ids[index + 1] : nil)
  }

  /// An asset's file, for an edit or a revert: not through a link, not in the trash, not
  /// offline.
  func editablePath(_ asset: Asset) throws(DarkroomError) -> String {
    let path = try checkedPath(of: asset)  // no link leads an edit out of the library
    if asset.trashedAt != nil {
      throw DarkroomError(.conflict, file: path, "is in the trash: restore it first")
    }
    if asset.isOffline {
      throw DarkroomError(.notFound, file: path, "is offline: its folder is out of reach")
    }
    return path
  }
}
