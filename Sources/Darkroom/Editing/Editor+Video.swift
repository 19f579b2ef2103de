import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Edits of videos, as PhotoKit's: the same adjustment data as a photo's, the original kept in
/// the library's store, the result (H.264 and AAC, in the file's own container) in the file's
/// place. Every frame goes through the graph on the same libvips route as a photo (a preset
/// looks the same on both; a grey graph runs its table on the luma plane: ``VideoTranscode``);
/// `trim` keeps a part in time. Videos are streamed, never read whole.
extension Editor {
  /// The x264 constant rate factor of edited videos (a video's `result.quality`).
  static let videoQuality = 20
  /// x264's threads for edits: fixed, so that every machine writes the same bytes.
  static let videoThreads = 4

  /// The container an edit of a video in `format` is written in: its own (`mov`), else MP4.
  static func videoContainer(_ format: String) -> String { format == "mov" ? "mov" : "mp4" }

  /// The adjustment data of version `version` of a video's edit, `graph` on `original`:
  /// its result H.264 at ``videoQuality`` in the original's own container (its hash is set
  /// once it is rendered).
  static func videoAdjustment(
    _ graph: FilterGraph, original: AdjustmentData.Original, version: Int, previous: String?
  ) -> AdjustmentData {
    AdjustmentData(
      graph: graph, original: original,
      result: .init(
        sha256: "", format: videoContainer(original.format), quality: videoQuality),
      version: version, previous: previous, created: now())
  }

  /// Whether an edit of `graph` in `mode` can be made of a video too: every filter but
  /// `auto` (which looks at one photo) means the same on each frame, and a video carries no
  /// other program's edit. What a batch over folders asks (``Library/takesVideos(_:mode:)``)
  /// before it takes their videos.
  static func takesVideos(_ graph: FilterGraph, mode: Mode) -> Bool {
    mode != .foreign && !graph.nodes.contains { $0.op == AutoFilter.name }
  }

  /// The graph's frame filters and the part of the video its trims keep.
  ///
  /// - Throws: `invalidArgument` for `auto` (it looks at one photo; a video's adjustments
  ///   are chosen).
  static func videoPlan(_ graph: FilterGraph, file: String) throws(DarkroomError) -> (
    frames: FilterGraph?, start: Double, end: Double
  ) {
    var frames: [FilterNode] = []
    var trims: [FilterArguments] = []
    for node in graph.nodes {
      switch node.op {
      case TrimFilter.name: trims.append(FilterArguments(values: node.params))
      case AutoFilter.name:
        throw DarkroomError(
          .invalidArgument, file: file,
          "auto looks at a photo: on a video, give the adjustments (tone, balance, ...)")
      default: frames.append(node)
      }
    }
    let kept = TrimFilter.kept(trims)
    return (frames.isEmpty ? nil : FilterGraph(nodes: frames), kept.start, kept.end)
  }

  /// The edit of the video `source` (`header` read from it): see ``edit(_:with:mode:writingTo:readingFrom:skipIfCurrent:)``.
  /// Runs under the destination's lock.
  func editVideo(
    _ path: String, _ graph: FilterGraph, _ mode: Mode, writingTo output: String?,
    to destination: String, reading source: String, store: OriginalStore,
    progress: @escaping @Sendable (_ done: Double, _ total: Double) -> Bool
  ) throws(DarkroomError) -> EditResult {
    guard mode != .foreign else {
      throw DarkroomError(
        .invalidArgument, file: path, "a video carries no other program's edit to render")
    }
    let currentHash = try ContentHash.of(file: source)
    let previous = output == nil ? try store.adjustment(forResult: currentHash) : nil
    // An edit of an edit goes on from the original in the store (checked); a first edit's
    // original is the file, kept in the store before anything replaces it.
    let stored = previous.flatMap { ContentHash(hex: $0.original.sha256) }
    let originalHash = stored ?? currentHash
    let original: InputFile
    if let stored {
      original = try store.checkedOriginal(stored, for: path)
    } else {
      original = try InputFile(source)
    }
    guard let header = try VideoHeader.describe(original, name: path) else {
      throw DarkroomError(.unsupportedFormat, file: path, "its original is not a video")
    }
    // (Asked before anything is kept: an edit stopped before it began copies nothing.)
    guard keepEncoding() else { throw DarkroomError.stopped(path) }
    if stored == nil { try store.keepOriginal(copying: source, hash: currentHash, for: path) }
    FaultInjection.point("after-original")
    let nodes = mode == .append ? (previous?.graph.nodes ?? []) + graph.nodes : graph.nodes
    let fullGraph = FilterGraph(nodes: nodes)
    var adjustment = Self.videoAdjustment(
      fullGraph,
      original: .init(
        sha256: originalHash.hex, byteSize: original.size, format: header.format,
        fileName: previous?.original.fileName ?? FilePath(path).name),
      version: (previous?.version ?? 0) + 1, previous: previous?.result.sha256)
    if output != nil {
      try Folders.create(FilePath(destination).parent.isEmpty ? "." : FilePath(destination).parent)
    }
    let attributes = FileAttributes(destination) ?? FileAttributes(path)
    try AtomicFile.writing(
      to: destination, durable: true, mode: attributes?.mode ?? 0o644, owner: attributes?.owner,
      faultPoint: "before-replace"
    ) { fd, _ throws(DarkroomError) in
      let hash = try renderVideo(
        adjustment, from: original, header: header, name: path, into: fd, progress: progress)
      adjustment.result.sha256 = hash.hex
      try store.saveAdjustment(adjustment, forResult: hash)
      FaultInjection.point("after-adjustment")
    }
    FaultInjection.point("after-replace")
    return EditResult(adjustment: adjustment, libraryRoot: store.root)
  }

  /// Renders `adjustment` of the video `original` into `fd` (empty), and returns the hash of
  /// what was written.
  func renderVideo(
    _ adjustment: AdjustmentData, from original: InputFile, header: VideoHeader, name: String,
    into fd: Int32, progress: @escaping @Sendable (Double, Double) -> Bool
  ) throws(DarkroomError) -> ContentHash {
    try Self.renderVideo(
      adjustment, from: original, header: header, name: name, into: fd, with: renderer,
      progress: progress)
  }

  /// ``renderVideo(_:from:header:name:into:progress:)`` with `renderer` (a space's edit
  /// renders with the space's own workers).
  static func renderVideo(
    _ adjustment: AdjustmentData, from original: InputFile, header: VideoHeader, name: String,
    into fd: Int32, with renderer: Renderer,
    progress: @escaping @Sendable (Double, Double) -> Bool
  ) throws(DarkroomError) -> ContentHash {
    let plan = try Self.videoPlan(adjustment.graph, file: name)
    var settings = TranscodeSettings(maxPixels: 0)
    (settings.start, settings.end) = (plan.start, plan.end)
    settings.rotation = header.rotation
    settings.crf = adjustment.result.quality
    settings.preset = "medium"
    settings.threads = Self.videoThreads
    settings.container = adjustment.result.format
    _ = try renderer.transcode(
      .file(original), name: name, into: fd, settings, graph: plan.frames, progress: progress)
    return try ContentHash.of(descriptor: fd, name: name)
  }

  /// Reverts the video at `path` to `target` (0: the original), under its lock: the
  /// original copied back, or version `target` rendered again (its bytes must be the same).
  func revertVideo(
    _ path: String, to target: Int, last: AdjustmentData, history: EditHistory,
    store: OriginalStore
  ) throws(DarkroomError) -> RevertOutcome {
    guard let originalHash = ContentHash(hex: last.original.sha256) else {
      throw DarkroomError(.corrupt, file: path, "adjustment data names no valid original hash")
    }
    let original = try store.checkedOriginal(originalHash, for: path)
    let attributes = FileAttributes(path)
    if target == 0 {
      try AtomicFile.writing(
        to: path, durable: true, mode: attributes?.mode ?? 0o644, owner: attributes?.owner
      ) { fd, _ throws(DarkroomError) in try original.copy(to: fd, name: path) }
      return .restoredOriginal(sha256: originalHash.hex)
    }
    guard let wanted = history.versions.first(where: { $0.version == target }) else {
      throw DarkroomError(
        .notFound, file: path, "version \(target)'s adjustment data is missing from the library")
    }
    guard let header = try VideoHeader.describe(original, name: path) else {
      throw DarkroomError(.corrupt, file: path, "its original is not a video")
    }
    try AtomicFile.writing(
      to: path, durable: true, mode: attributes?.mode ?? 0o644, owner: attributes?.owner
    ) { fd, _ throws(DarkroomError) in
      let hash = try renderVideo(
        wanted, from: original, header: header, name: path, into: fd, progress: { _, _ in true })
      guard hash.hex == wanted.result.sha256 else {
        throw DarkroomError(
          .engine, file: path,
          "version \(target) renders to different bytes with this build (its route, FFmpeg or x264) than when it was made; revert to the original (version 0) instead. Nothing was changed"
        )
      }
    }
    return .restoredVersion(target, sha256: wanted.result.sha256)
  }
}

extension OriginalStore {
  /// Keeps the file at `source` (whose content hash is `hash`) as an original, copied a
  /// block at a time (shared blocks where the file system can), durably; the copy's hash is
  /// checked before it is kept. An entry already sound is kept as it is.
  func keepOriginal(copying source: String, hash: ContentHash, for file: String)
    throws(DarkroomError)
  {
    try Folders.create(originalsFolder)
    let path = originalPath(hash)
    if isSound(path, hash: hash) { return }
    let input = try InputFile(source)
    try AtomicFile.writing(to: path, durable: true, mode: 0o444) { fd, _ throws(DarkroomError) in
      try input.copy(to: fd, name: file)
      guard try ContentHash.of(descriptor: fd, name: file) == hash else {
        throw DarkroomError(
          .conflict, file: file, "changed while its original was kept; nothing was changed")
      }
    }
  }

  /// The original of `hash`, open, its content checked.
  func checkedOriginal(_ hash: ContentHash, for file: String) throws(DarkroomError) -> InputFile {
    guard let original = try? InputFile(originalPath(hash)) else { throw lost(hash, for: file) }
    guard (try? ContentHash.of(open: original)) == hash else { throw damaged(for: file) }
    return original
  }
}

extension InputFile {
  /// Copies the whole file to `fd` (at its position), 4 MiB at a time.
  func copy(to fd: Int32, name: String) throws(DarkroomError) {
    var offset = 0
    while offset < size {
      let chunk = try read(at: offset, count: min(4 << 20, size - offset))
      guard !chunk.isEmpty else { break }
      guard chunk.withUnsafeBytes({ AtomicFile.writeAll(fd, $0) }) else {
        throw AtomicFile.writeError(name, errno)
      }
      offset += chunk.count
    }
  }
}
