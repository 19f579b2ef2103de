import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Non-destructive editing of files in place, as PhotoKit's content editing: the original
/// goes into the library's store before the rendered result replaces the file, every edit
/// renders from the original (no generation loss), and `revert` restores the original bytes.
///
/// ```swift
/// let editor = Editor()
/// let graph = try FilterGraph.parse(specs: ["noir", "crop aspect=4:5"])
/// let edit = try editor.edit("IMG_0001.jpg", with: graph)
/// print(edit.adjustment.version)  // 1
/// try editor.revert("IMG_0001.jpg")   // byte for byte
/// ```
///
/// A file outside any ``Library`` gets one beside it on its first edit. `Editor` is a
/// `Sendable` value type. Edits and reverts of one file, from any threads or processes, take
/// turns under a lock for that file in its library; other files go ahead at once.
package struct Editor: Sendable {
  /// The renderer edits use, with its limits.
  package var renderer: Renderer
  /// Encoder quality of edited results (JPEG, WebP, AVIF, HEIC); nil: each source's own
  /// (see ``PixelSettings/quality``).
  package var quality: Int?
  /// Encoder effort of edited HEIC and AVIF results; nil: each format's
  /// ``ImageFormat/editEffort(pixels:)``.
  package var effort: Int?
  /// Told the seconds of a video encoded and in all as an edit of a video goes; false
  /// stops it (nothing is written).
  package var videoProgress: (@Sendable (_ done: Double, _ total: Double) -> Bool)?
  /// Asked before a video's edit keeps its original, and at each of its encode's progress
  /// reports: false stops it there ("stopped"), and no new version is written.
  package var keepEncoding: @Sendable () -> Bool = { true }
  /// The store of the library a path is in (with `creating`: else the store a first edit
  /// makes), as whoever made the editor says: a ``Library`` gives its own, and the editor
  /// of loose files is given the walk up from each (`Editor()`, in Library/). An editor
  /// never looks a library up by path itself.
  typealias StoreLookup = @Sendable (_ path: String, _ creating: Bool) -> OriginalStore?
  let stores: StoreLookup

  /// An editor that works to `settings`, keeping originals where `stores` says.
  init(_ settings: PixelSettings, stores: @escaping StoreLookup) {
    renderer = Renderer(settings)
    quality = settings.quality
    effort = settings.effort
    self.stores = stores
  }

  private func store(for path: String, creating: Bool = false) -> OriginalStore? {
    stores(path, creating)
  }

  package typealias Mode = EditMode
  package typealias RevertOutcome = Darkroom.RevertOutcome
  package typealias EditHistory = Darkroom.EditHistory

  /// What an edit produced. `EditResult` is a `Sendable` value type.
  package struct EditResult: Sendable {
    /// The edit's adjustment data, as the library stores it.
    package var adjustment: AdjustmentData
    /// The folder of the library that keeps the original and the adjustment data (the one
    /// holding `.darkroom/`).
    package var libraryRoot: URL
    /// The file already carried this edit, and was left alone (`skipIfCurrent`).
    package var skipped = false
    /// The file the result is in: the file edited, the output asked for, or, for a camera
    /// RAW, its `NAME-Edit.jpg` (``rawResultPath(_:)``).
    package var output = ""
    /// The asset that holds the result, for an edit of a library's asset by id: the asset
    /// itself, or, for a camera RAW's, its `NAME-Edit.jpg`'s (catalogued as its own).
    package var asset: AssetID?
  }

  /// Edits `path` in place, or, with `output`, writes the edit of `path` there (the output's
  /// library keeps `path`'s bytes as its original). The destination is either left as it was
  /// or replaced whole; the original is in the store before that.
  ///
  /// With `source`, `path`'s bytes are read from there (an ``OpenedFiles`` alias of the
  /// file as it was opened and checked), while `path` names the file everywhere else.
  ///
  /// With `skipIfCurrent`, a destination that already carries exactly this edit of the same
  /// source is left alone (checked under the file's lock, so two batches over the same files
  /// do the work once).
  ///
  /// - Throws: A ``DarkroomError`` about the file, with the destination left as it was:
  ///   `notFound`, `isDirectory`, `unreadable` or `empty` when `path` cannot be read;
  ///   `notFound` or `corrupt` when the library's copy of the original is lost or damaged;
  ///   `unsupportedFormat` for a source in a format Darkroom does not write; `invalidArgument`
  ///   for a stored graph this build cannot render; what ``Renderer`` throws; `io` when the
  ///   store or the destination cannot be written.
  @discardableResult
  package func edit(
    _ path: String, with graph: FilterGraph, mode: Mode = .append, writingTo output: String? = nil,
    readingFrom source: String? = nil, skipIfCurrent: Bool = false
  ) throws(DarkroomError) -> EditResult {
    // A camera RAW is kept as the camera wrote it: its edit is a JPEG beside it (or where
    // `output` says), whose original the RAW is.
    let raw = Self.isRAW(path)
    let destination = raw ? Self.rawResultPath(output ?? path) : output ?? path
    var result = try edit(
      path, graph, mode, writingTo: output, to: destination, reading: source ?? path, raw: raw,
      skipIfCurrent: skipIfCurrent)
    result.output = destination
    return result
  }

  private func edit(
    _ path: String, _ graph: FilterGraph, _ mode: Mode, writingTo output: String?,
    to destination: String, reading source: String, raw: Bool, skipIfCurrent: Bool
  ) throws(DarkroomError) -> EditResult {
    // A result written elsewhere goes to the library there.
    guard let store = store(for: destination, creating: true) else {
      throw DarkroomError(
        .invalidArgument, file: destination, "is in no library to keep its original")
    }
    return try store.withLock(for: destination) { () throws(DarkroomError) in
      Self.removeAbandonedTemporaries(of: destination)
      if !raw, let file = try? InputFile(source), (try? VideoHeader.recognises(file)) == true {
        if skipIfCurrent, mode == .replace || output != nil,
          let hash = try? ContentHash.of(file: destination),
          let data = try? store.adjustment(forResult: hash), data.graph.nodes == graph.nodes
        {
          return EditResult(adjustment: data, libraryRoot: store.root, skipped: true)
        }
        return try editVideo(
          path, graph, mode, writingTo: output, to: destination, reading: source, store: store,
          progress: { [videoProgress, keepEncoding] done, total in
            (videoProgress?(done, total) ?? true) && keepEncoding()
          })
      }
      // In place, .append adds filters to what the file carries: "current" would compare
      // the whole stored graph with only the new filters, so only .replace can skip.
      if skipIfCurrent, mode != .foreign, mode == .replace || output != nil,
        let current = currentEdit(path, graph: graph, writingTo: raw ? destination : output)
      {
        return EditResult(adjustment: current, libraryRoot: store.root, skipped: true)
      }
      let current = try InputFile.readAll(source)
      let currentHash = ContentHash.of(bytes: current)
      // Writing elsewhere, the input is the base; in place, an edited file's edit goes on,
      // and so does a RAW's, in the file beside it.
      let previous: AdjustmentData?
      if raw {
        // (A file there that is not its edit is refused either way.)
        let there = try rawEdit(at: destination, of: currentHash, path, store)
        previous = output == nil ? there : nil
      } else {
        previous = output == nil ? try store.adjustment(forResult: currentHash) : nil
      }
      let originalBytes: [UInt8]
      let originalHash: ContentHash
      if let previous, let hash = ContentHash(hex: previous.original.sha256) {
        originalHash = hash
        originalBytes = try store.original(hash, for: path)
      } else {
        originalHash = currentHash
        originalBytes = current
      }
      // A RAW's edit edited in place (NAME-Edit.jpg) goes on from the RAW, as a RAW's edit.
      let rawOriginal = raw || previous?.original.format == "raw"
      let source = previous.map { Self.originalName(of: path, $0.original) } ?? path
      let metadata = try AssetMetadata.read(.data(originalBytes, name: source))
      let nodes =
        switch mode {
        case .append: (previous?.graph.nodes ?? []) + graph.nodes
        case .replace: graph.nodes
        case .foreign: try Self.foreignGraph(metadata, sidecarsOf: source, file: path).nodes
        }
      // Auto becomes the filters it chooses for this original, so the data is explicit.
      let fullGraph = try renderer.resolvingAuto(
        FilterGraph(nodes: nodes), of: .data(originalBytes, name: source))
      // Another program's edit is known only now: a file that carries it already is skipped.
      if mode == .foreign, skipIfCurrent,
        let done = currentEdit(path, graph: fullGraph, writingTo: raw ? destination : output)
      {
        return EditResult(adjustment: done, libraryRoot: store.root, skipped: true)
      }
      guard let format = rawOriginal ? ImageFormat.jpeg : ImageFormat(sourceFormat: metadata.format)
      else {
        throw DarkroomError(
          .unsupportedFormat, file: path,
          "cannot write \(metadata.format): edits keep the source's format")
      }
      var adjustment = AdjustmentData(
        graph: fullGraph,
        original: .init(
          sha256: originalHash.hex, byteSize: originalBytes.count, format: metadata.format,
          fileName: previous?.original.fileName ?? FilePath(path).name),
        result: Self.plannedResult(
          format, original: originalBytes, metadata: metadata, asked: (quality, effort)),
        version: (previous?.version ?? 0) + 1, previous: previous?.result.sha256,
        created: Self.now())
      let rendered = try renderer.renderEdit(
        .data(originalBytes, name: source), metadata: metadata,
        recipe: adjustment.recipe(for: path, original: metadata))
      let resultHash = ContentHash.of(bytes: rendered)
      adjustment.result.sha256 = resultHash.hex

      // The order is what makes a crash at any point safe: original, then adjustment data,
      // then the file, each durable before the next.
      try store.keepOriginal(
        originalBytes, hash: originalHash, copyingFrom: previous == nil || raw ? source : nil)
      FaultInjection.point("after-original")
      try store.saveAdjustment(adjustment, forResult: resultHash)
      FaultInjection.point("after-adjustment")
      if output != nil {
        try Folders.create(
          FilePath(destination).parent.isEmpty ? "." : FilePath(destination).parent)
      }
      // The result keeps the mode and owner of the file it replaces, or of its source for a
      // new output elsewhere.
      let attributes = FileAttributes(destination) ?? FileAttributes(path)
      try AtomicFile.write(
        rendered, to: destination, durable: true, mode: attributes?.mode ?? 0o644,
        owner: attributes?.owner, faultPoint: "before-replace")
      FaultInjection.point("after-replace")
      return EditResult(adjustment: adjustment, libraryRoot: store.root)
    }
  }

  /// The formats of videos' originals (``VideoHeader/format``).
  static let videoFormats: Set<String> = ["mp4", "mov", "m4v", "3gp"]

  /// Whether the file at `path` is a camera RAW (by its first bytes and name).
  static func isRAW(_ path: String) -> Bool {
    guard let file = try? InputFile(path),
      let head = try? file.read(at: 0, count: min(32, file.size))
    else { return false }
    return TrustedFormats.sniff(head[...], name: path) == "raw"
  }

  /// Where the edit of the camera RAW at `path` goes: `NAME-Edit.jpg` beside it (Lightroom's
  /// name for an edit of a RAW made elsewhere; `NAME.jpg` is often the camera's own JPEG).
  package static func rawResultPath(_ path: String) -> String {
    (FilePath(path).splitExtension?.base ?? path) + "-Edit." + ImageFormat.jpeg.fileExtension
  }

  /// The edit of the RAW whose content is `raw` that the file at `destination` is (nil when
  /// there is no file there yet).
  ///
  /// - Throws: `invalidArgument` naming `destination` when a file is there that is not
  ///   Darkroom's edit of this RAW: it is never replaced.
  private func rawEdit(
    at destination: String, of raw: ContentHash, _ path: String, _ store: OriginalStore
  ) throws(DarkroomError) -> AdjustmentData? {
    // Anything there (an empty or unreadable file, a link, a folder) must be the edit.
    var status = stat()
    guard lstat(destination, &status) == 0 else { return nil }
    guard status.st_mode & S_IFMT == S_IFREG, status.st_size > 0,
      let hash = try? ContentHash.of(file: destination),
      let data = try store.adjustment(forResult: hash), data.original.sha256 == raw.hex
    else {
      throw DarkroomError(
        .invalidArgument, file: destination,
        "is there and is not Darkroom's edit of \(FilePath(path).name): not replaced")
    }
    return data
  }

  private func currentEdit(_ path: String, graph: FilterGraph, writingTo output: String?)
    -> AdjustmentData?
  {
    let destination = output ?? path
    guard let store = store(for: destination),
      let hash = try? ContentHash.of(file: destination),
      let data = try? store.adjustment(forResult: hash),
      data.graph.nodes == graph.nodes,
      let format = ImageFormat(rawValue: data.result.format),
      let own = Self.ownSettings(of: data.original, in: store, sized: format.takesEffort),
      data.result.quality == quality ?? own.quality,
      data.result.effort == Self.effort(effort, for: format, pixels: own.pixels)
    else { return nil }
    guard output != nil else { return data }
    return (try? ContentHash.of(file: path))?.hex == data.original.sha256 ? data : nil
  }

  /// The effort an edit of `pixels` pixels in `format` is written at: `asked`, else the
  /// format's for its size (``ImageFormat/editEffort(pixels:)``); nil for a format without
  /// efforts.
  static func effort(_ asked: Int?, for format: ImageFormat, pixels: Int) -> Int? {
    format.editEffort(pixels: pixels).map { asked ?? $0 }
  }

  /// What an edit of `original` (whose header is `metadata`) will be written as, before its
  /// hash is known: the format, and the quality and effort (those `asked`, else the
  /// original's own quality and the effort for its size) that every door (an editor, a
  /// space) writes.
  static func plannedResult(
    _ format: ImageFormat, original: [UInt8], metadata: AssetMetadata,
    asked: (quality: Int?, effort: Int?)
  ) -> AdjustmentData.Result {
    .init(
      sha256: "", format: format.rawValue,
      quality: quality(asked.quality, of: original, format: metadata.format),
      effort: effort(asked.effort, for: format, pixels: metadata.width * metadata.height))
  }

  /// The quality an edit of the stored original `original` is written at when none is
  /// asked for, and (`sized`: for a result whose effort follows it) the original's size (its
  /// header is read again: an edit written at another quality or effort is not current).
  private static func ownSettings(
    of original: AdjustmentData.Original, in store: OriginalStore, sized: Bool
  ) -> (quality: Int, pixels: Int)? {
    guard let hash = ContentHash(hex: original.sha256),
      let file = try? InputFile(store.originalPath(hash)),
      // A JPEG's tables are in its first bytes; a HEIC's first slice may be anywhere.
      let head = try? file.read(
        at: 0,
        count: min(file.size, ["heif", "avif"].contains(original.format) ? 256 << 20 : 1 << 20))
    else { return nil }
    let pixels =
      sized
      ? (try? AssetMetadata.read(.data(head, name: original.fileName))).map { $0.width * $0.height }
      : 0
    guard let pixels else { return nil }
    return (quality(nil, of: head, format: original.format), pixels)
  }

  /// The quality an edit of `original` is written at: `asked`, else the original's own (a
  /// JPEG's, from its tables; a HEIC's or AVIF's, from its first slice's or frame's
  /// quantiser), else ``PixelSettings/defaultQuality``. The original, not the
  /// file being replaced: every version of an edit renders from it, at the same quality.
  static func quality(_ asked: Int?, of original: [UInt8], format: String) -> Int {
    if let asked { return asked }
    if format == "jpeg", let own = JPEGQuality.estimate(original) { return own }
    if format == "heif", let own = HEVCQuality.estimate(original) { return own }
    if format == "avif", let own = AV1Quality.estimate(original) { return own }
    return PixelSettings.defaultQuality
  }

  /// Renders `graph` on `source` as an edit would, without touching any file or library:
  /// the encoded result in the source's format, with no metadata (no adjustment data, no
  /// EXIF: a preview is shown and dropped).
  ///
  /// - Throws: A ``DarkroomError`` about the source: what ``AssetMetadata/read(_:)`` and
  ///   ``Renderer`` throw; `unsupportedFormat` for a format Darkroom does not write.
  package func preview(_ source: ImageSource, graph: FilterGraph) throws(DarkroomError) -> [UInt8] {
    let metadata = try AssetMetadata.read(source)
    guard let format = ImageFormat(sourceFormat: metadata.format) else {
      throw DarkroomError(.unsupportedFormat, file: source.name, "cannot write \(metadata.format)")
    }
    let adjustment = AdjustmentData(
      graph: try renderer.resolvingAuto(graph, of: source),
      original: .init(
        sha256: "", byteSize: metadata.byteSize, format: metadata.format, fileName: source.name),
      result: .init(
        sha256: "", format: format.rawValue, quality: quality ?? PixelSettings.defaultQuality,
        effort: Self.effort(effort, for: format, pixels: metadata.width * metadata.height)),
      version: 1,
      previous: nil, created: Self.now())
    var recipe = try adjustment.recipe(for: source.name, original: metadata)
    recipe.xmp = []
    return try renderer.renderEdit(source, metadata: metadata, recipe: recipe)
  }

  /// Restores the original bytes of an edited file (or version `version`, where 0 is the
  /// original). Works after the file was renamed or moved inside its library: the file's
  /// content identifies its edit. Versions after the current one (left by an earlier
  /// `revert --to`) can be restored too, until a new edit branches off, as in darktable's
  /// history stack.
  ///
  /// - Throws: A ``DarkroomError`` about the file, with nothing changed: `notFound`,
  ///   `isDirectory`, `unreadable` or `empty` when `path` cannot be read; `invalidArgument`
  ///   for a version that does not exist; `notFound` or `corrupt` when the original or a
  ///   version's adjustment data is lost or damaged; `engine` when the version asked for no
  ///   longer renders to the bytes it had; `io` when the file cannot be written.
  @discardableResult
  package func revert(_ path: String, to version: Int? = nil) throws(DarkroomError) -> RevertOutcome
  {
    if let version, version < 0 {
      throw DarkroomError(
        .invalidArgument, file: path, "version takes 0 (the original) or more; not \(version)")
    }
    _ = try InputFile(path)  // a missing or unreadable file is an error, not "not edited"
    guard let store = store(for: path) else { return .notEdited }
    return try store.withLock(for: path) { () throws(DarkroomError) in
      Self.removeAbandonedTemporaries(of: path)
      let target = version ?? 0
      // Going back needs only the chain behind the file; going forward, the versions after it.
      var history = try editHistory(path, store: store, later: false)
      if target > history.current || history.versions.isEmpty {
        history = try editHistory(path, store: store)
      }
      guard let last = history.versions.last else { return .notEdited }
      guard target >= 0, target <= last.version else {
        throw DarkroomError(
          .invalidArgument, file: path,
          "no version \(target): versions are 0 (the original) to \(last.version)")
      }
      if target == history.current { return .alreadyAtVersion(target) }
      guard let originalHash = ContentHash(hex: last.original.sha256) else {
        throw DarkroomError(.corrupt, file: path, "adjustment data names no valid original hash")
      }
      if target == 0, last.original.format == "raw" {
        // A RAW's edit is a file of its own beside the RAW, which is the original: back to
        // the original is without it (its versions stay in the library). Only that file,
        // with its RAW there: a copy elsewhere, or one whose RAW went, is the user's.
        let raw = Self.originalName(of: path, last.original)
        guard Self.rawResultPath(raw) == path,
          (try? InputFile(raw))?.size == last.original.byteSize,
          (try? ContentHash.of(file: raw)) == originalHash
        else {
          throw DarkroomError(
            .invalidArgument, file: path,
            "is the edit of the RAW \(last.original.fileName), which is not beside it as NAME-Edit.jpg's original: revert --to 0 removes only a RAW's edit beside its RAW; nothing was changed"
          )
        }
        guard unlink(path) == 0 else {
          throw DarkroomError(
            .io, file: path, "cannot be removed: \(String(cString: strerror(errno)))")
        }
        AtomicFile.syncFolder(FilePath(path).parent.isEmpty ? "." : FilePath(path).parent)
        return .restoredOriginal(sha256: originalHash.hex)
      }
      if Self.videoFormats.contains(last.original.format) {
        return try revertVideo(path, to: target, last: last, history: history, store: store)
      }
      let original = try store.original(originalHash, for: path)
      let source = Self.originalName(of: path, last.original)
      let bytes: [UInt8]
      let outcome: RevertOutcome
      if target == 0 {
        bytes = original
        outcome = .restoredOriginal(sha256: originalHash.hex)
      } else {
        guard let wanted = history.versions.first(where: { $0.version == target }) else {
          throw DarkroomError(
            .notFound, file: path, "version \(target)'s adjustment data is missing from the library"
          )
        }
        let metadata = try AssetMetadata.read(.data(original, name: source))
        bytes = try renderer.renderEdit(
          .data(original, name: source), metadata: metadata,
          recipe: wanted.recipe(for: path, original: metadata))
        guard ContentHash.of(bytes: bytes).hex == wanted.result.sha256 else {
          throw DarkroomError(
            .engine, file: path,
            "version \(target) renders to different bytes with this libvips than when it was made; revert to the original (version 0) instead. Nothing was changed"
          )
        }
        outcome = .restoredVersion(target, sha256: wanted.result.sha256)
      }
      let attributes = FileAttributes(path)
      try AtomicFile.write(
        bytes, to: path, durable: true, mode: attributes?.mode ?? 0o644, owner: attributes?.owner)
      return outcome
    }
  }

  /// The current adjustment data of `path`, or nil for a file that is not an edit.
  ///
  /// - Throws: A ``DarkroomError`` when `path` cannot be read, or when its adjustment data in
  ///   the library is not valid JSON (`invalidArgument`).
  package func adjustments(_ path: String) throws(DarkroomError) -> AdjustmentData? {
    _ = try InputFile(path)
    guard let store = store(for: path) else { return nil }
    return try store.adjustment(forResult: ContentHash.of(file: path))
  }

  /// Every version of `path`'s edit, oldest first (empty for a file that is not an edit).
  ///
  /// - Throws: A ``DarkroomError``, as ``adjustments(_:)`` does.
  package func history(_ path: String) throws(DarkroomError) -> [AdjustmentData] {
    try editHistory(path).versions
  }

  /// Every version of `path`'s edit and the current one (no versions for a file that was
  /// never edited).
  ///
  /// - Throws: A ``DarkroomError``, as ``adjustments(_:)`` does.
  package func editHistory(_ path: String) throws(DarkroomError) -> EditHistory {
    _ = try InputFile(path)
    guard let store = store(for: path) else { return EditHistory(versions: [], current: 0) }
    return try editHistory(path, store: store)
  }

  /// `later`: also the versions after the current one, which costs reading every adjustment
  /// document of the library (a revert to an earlier version does without).
  private func editHistory(_ path: String, store: OriginalStore, later: Bool = true)
    throws(DarkroomError) -> EditHistory
  {
    let hash = try ContentHash.of(file: path)
    var chain: [AdjustmentData] = []
    let original: String
    if let current = try store.adjustment(forResult: hash) {
      chain = [current]
      while let previous = chain.last?.previous, chain.count <= current.version {
        guard let hash = ContentHash(hex: previous),
          let data = try store.adjustment(forResult: hash)
        else { break }
        chain.append(data)
      }
      chain.reverse()
      original = current.original.sha256
    } else if store.hasOriginal(hash) {
      original = hash.hex  // reverted to the original: its edits may lie ahead
    } else {
      return EditHistory(versions: [], current: 0)
    }
    let current = chain.last?.version ?? 0
    guard later else { return EditHistory(versions: chain, current: current) }
    return EditHistory(
      versions: chain + laterVersions(after: chain.last, original: original, store: store),
      current: current)
  }

  /// The versions after `head` (nil: the original): at each step the edit last made from the
  /// version before, so a new edit after a revert branches off and the old line drops.
  private func laterVersions(after head: AdjustmentData?, original: String, store: OriginalStore)
    -> [AdjustmentData]
  {
    let all = store.allAdjustments().filter { $0.original.sha256 == original }
    var later: [AdjustmentData] = []
    var parent = head?.result.sha256
    var version = head?.version ?? 0
    while let next = all.last(where: { $0.version == version + 1 && $0.previous == parent }) {
      later.append(next)
      parent = next.result.sha256
      version += 1
    }
    return later
  }

  /// The original behind an edited file, for `render --original`: its bytes, named so that
  /// they are read as what they are (a RAW's edit, `NAME-Edit.jpg`, by its RAW's name); nil if
  /// not edited.
  ///
  /// - Throws: A ``DarkroomError`` when `path` cannot be read, or `notFound` or `corrupt` when
  ///   the library's copy of the original is lost or damaged.
  package func originalSource(_ path: String) throws(DarkroomError) -> ImageSource? {
    _ = try InputFile(path)
    guard let store = store(for: path) else { return nil }
    guard let current = try store.adjustment(forResult: ContentHash.of(file: path)),
      let hash = ContentHash(hex: current.original.sha256)
    else { return nil }
    // A video's original is read where it is kept (it may be gigabytes), checked first.
    if Self.videoFormats.contains(current.original.format) {
      return .file(try store.checkedOriginal(hash, for: path).path)
    }
    return .data(
      try store.original(hash, for: path), name: Self.originalName(of: path, current.original))
  }

  /// The name an edited file's original is read by: the file's own, or, for a RAW's edit
  /// (a RAW that starts as a TIFF is told from one by its name), the RAW's beside it.
  static func originalName(of path: String, _ original: AdjustmentData.Original) -> String {
    guard original.format == "raw" else { return path }
    let folder = FilePath(path).parent
    return folder.isEmpty ? original.fileName : folder + "/" + original.fileName
  }

  /// What an edit killed before its rename left beside the file.
  private static func removeAbandonedTemporaries(of path: String) {
    let url = URL(fileURLWithPath: path)
    AtomicFile.removeAbandonedTemporaries(
      of: url.lastPathComponent, in: url.deletingLastPathComponent().path)
  }

  /// The graph of the edit another program left in `metadata` (the original's) or the
  /// sidecars beside `sidecarsOf` (nil: none, as in a space), which win.
  ///
  /// - Throws: `invalidArgument` naming `file` when there is none, when its pixels already
  ///   are its result (`crs:AlreadyApplied`), or when nothing in it is rendered.
  static func foreignGraph(_ metadata: AssetMetadata, sidecarsOf path: String?, file: String)
    throws(DarkroomError) -> FilterGraph
  {
    var metadata = metadata
    if let path { metadata.applySidecars(of: path) }
    guard let edit = metadata.foreignEdit else {
      throw DarkroomError(
        .invalidArgument, file: file,
        "has no Lightroom or darktable edit in its XMP or a sidecar to take over")
    }
    if edit.alreadyApplied {
      throw DarkroomError(
        .invalidArgument, file: file,
        "its \(edit.programName) edit (\(edit.source)) is already applied to its pixels (crs:AlreadyApplied): nothing to take over"
      )
    }
    guard !edit.graph.nodes.isEmpty else {
      throw DarkroomError(
        .invalidArgument, file: file,
        "its \(edit.programName) edit (\(edit.source)) has nothing Darkroom renders (not understood: \(edit.ignored.joined(separator: ", ")))"
      )
    }
    return edit.graph
  }

  static func now() -> String {
    Date().formatted(.iso8601)
  }
}

/// How new filters combine with a file's current edit.
public enum EditMode: Sendable {
  /// New filters go after the current edit's.
  case append
  /// New filters replace the current edit's.
  case replace
  /// The edit another program left in the original's XMP or the file's sidecars
  /// (`AssetMetadata.foreignEdit`) replaces the current edit; the filters given are not
  /// used (`edit --from-xmp`).
  case foreign
}

/// What a revert did. `RevertOutcome` is a `Sendable` value type.
public enum RevertOutcome: Sendable, Equatable {
  /// The original's bytes were written back; `sha256` is their content hash.
  case restoredOriginal(sha256: String)
  /// That version was rendered again from the original and written; `sha256` is its content
  /// hash.
  case restoredVersion(Int, sha256: String)
  /// The file is not an edit Darkroom knows: nothing was changed.
  case notEdited
  /// The file already is the version asked for: nothing was changed.
  case alreadyAtVersion(Int)
}

/// The versions of a file's edit and which one the file is now. `EditHistory` is a
/// `Sendable` value type.
public struct EditHistory: Sendable, Equatable {
  /// Every version, oldest first: those up to the current one, then any later ones that
  /// an earlier `revert --to` stepped back from.
  public var versions: [AdjustmentData]
  /// The version the file holds now: 0 for the original.
  public var current: Int
}
