import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A space's pixels, made by the library as a folder's are: its representations, kept in the
/// space sealed under keyed names, and its edits of photos and videos, through the space's own
/// workers (``Space/ownRenderer(_:)``). The space keeps the keys and the objects these read
/// and write (its slots); what a rendition or an edit is, is decided here.
extension Library {
  /// A representation of a space's asset as it looks now (`fromOriginal`: of its original,
  /// its own pixels), kept in the space as an object whose name is a keyed hash of what it
  /// depends on (`cached: false` neither reads nor writes it).
  ///
  /// - Throws: "the space is locked" when it is; `notFound` for an unknown id; what the
  ///   renderer throws.
  func renderSealed(
    _ id: AssetID, in space: Space, _ spec: RenditionSpec, settings: PixelSettings,
    cached useCache: Bool = true, fromOriginal: Bool = false
  ) throws(DarkroomError) -> Rendition {
    let asset = try sealed(id, in: space)
    return try space.using { () throws(DarkroomError) in
      try Self.renderSealed(
        asset, in: space, spec, settings: settings, cached: useCache, fromOriginal: fromOriginal)
    }
  }

  /// ``renderSealed(_:in:_:settings:cached:fromOriginal:)`` of `asset` as given (the row
  /// it was read as), the space's keys held.
  static func renderSealed(
    _ asset: SpaceAsset, in space: Space, _ spec: RenditionSpec, settings: PixelSettings,
    cached useCache: Bool, fromOriginal: Bool
  ) throws(DarkroomError) -> Rendition {
    var spec = spec
    if fromOriginal { spec.foreignEdit = .hidden }
    let shown = fromOriginal ? nil : asset.rendered
    let name = space.keyedName([
      Array("rendition".utf8), Array(asset.identity.utf8), Array((shown ?? "").utf8),
      Array(spec.canonical.utf8), littleEndianBytes(UInt64(Renderer.renderVersion)),
    ])
    if useCache, let cached = space.kept(name, label: asset.name), cached.count > 8 {
      let width = Int(readLittleEndian(cached, 0, 4))
      let height = Int(readLittleEndian(cached, 4, 4))
      let format = spec.format ?? ImageFormat(sourceFormat: asset.format) ?? .jpeg
      var rendition = Rendition(
        bytes: Array(cached[8...]), format: format, width: width, height: height)
      rendition.fromCache = true
      return rendition
    }
    let renderer = space.ownRenderer(Renderer(settings))
    let rendition: Rendition
    if asset.isVideo {
      // FFmpeg reads as far as it needs, from a file in memory (here, or in a worker).
      rendition = try space.withDecryptedFile(shown ?? asset.original, of: asset) {
        file throws(DarkroomError) in
        try OpenedFiles.with(file, name: asset.name) { alias throws(DarkroomError) in
          try renderer.render(.file(alias), spec)
        }
      }
    } else {
      let source = try space.reader(shown ?? asset.original, of: asset).readAll()
      rendition = try renderer.render(.data(source, name: asset.name), spec)
    }
    guard useCache else { return rendition }
    // Its size before it, so that a kept rendition is answered without a decode.
    try space.keep(
      littleEndianBytes(UInt64(rendition.width), 4) + littleEndianBytes(UInt64(rendition.height), 4)
        + rendition.bytes, as: name)
    return rendition
  }

  /// Applies `graph` to a space's asset's original as a new edit (with `append`, after its
  /// current edit's filters): the adjustment data and the full-size result are new objects,
  /// and the previous edit's are removed once the space's catalog names the new ones. A
  /// video's encode stops when the space locks, or when `keepEncoding` says false.
  ///
  /// - Returns: the asset, edited.
  func makeSealedEdit(
    _ asset: SpaceAsset, in space: Space, graph: FilterGraph, append: Bool,
    settings: PixelSettings, keepEncoding: @escaping @Sendable () -> Bool = { true }
  ) throws(DarkroomError) -> SpaceAsset {
    if asset.isVideo {
      return try editSealedVideo(
        asset, in: space, graph: graph, append: append, settings: settings,
        keepEncoding: keepEncoding)
    }
    return try space.withWriteLock { () throws(DarkroomError) in
      let asset = try space.asset(asset.id)
      let original = try space.original(asset)
      let metadata = try space.readMetadata(.data(original, name: asset.name))
      let format = ImageFormat(sourceFormat: metadata.format) ?? .jpeg
      var history = try space.history(asset)
      var graph = graph
      if append, let last = history.last {
        graph = FilterGraph(nodes: last.graph.nodes + graph.nodes)
      }
      // Auto becomes the filters it chooses for this original, as an edit of a file's does
      // (Editor.edit): the stored data is explicit.
      let renderer = space.ownRenderer(Renderer(settings))
      graph = try renderer.resolvingAuto(graph, of: .data(original, name: asset.name))
      let data = AdjustmentData(
        graph: graph,
        original: .init(
          sha256: asset.identity, byteSize: asset.byteSize, format: asset.format,
          fileName: asset.name),
        result: Editor.plannedResult(
          format, original: original, metadata: metadata,
          asked: (settings.quality, settings.effort)),
        version: asset.editVersion + 1, previous: nil, created: Editor.now())
      let result = try renderer.renderEdit(
        .data(original, name: asset.name), metadata: metadata,
        recipe: data.recipe(for: asset.name, original: metadata))
      history.append(data)
      // The result's size, for the asset's row: read from its header, as a scan reads an
      // edited file's.
      let written = try space.readMetadata(.data(result, name: asset.name))
      return try space.commitEdit(
        asset, history: history, size: (written.displayWidth, written.displayHeight)
      ) { rendered throws(DarkroomError) in
        try space.writeObject(rendered, result)
      }
    }
  }

  /// ``makeSealedEdit(_:in:graph:append:settings:keepEncoding:)`` of a video: its frames through the graph as
  /// a folder's video's are (``Editor/renderVideo(_:from:header:name:into:with:progress:)``),
  /// from its original decrypted into memory into a file in memory, then sealed.
  private func editSealedVideo(
    _ asset: SpaceAsset, in space: Space, graph: FilterGraph, append: Bool,
    settings: PixelSettings, keepEncoding: @escaping @Sendable () -> Bool
  ) throws(DarkroomError) -> SpaceAsset {
    // The encode runs outside the folder's write lock (minutes, for a long video, when every
    // space of the folder would wait); its result is committed under it if the asset's edit
    // is still the one it started from.
    try space.reload()
    let asset = try space.asset(asset.id)
    // (Stopped before it began: nothing decrypted.)
    guard keepEncoding() else { throw DarkroomError.stopped(asset.name) }
    return try space.withDecryptedFile(asset.original, of: asset) {
      original throws(DarkroomError) in
      guard let header = try VideoHeader.describe(original, name: asset.name) else {
        throw DarkroomError(.corrupt, file: asset.name, "its original is not a video")
      }
      var history = try space.history(asset)
      var graph = graph
      if append, let last = history.last {
        graph = FilterGraph(nodes: last.graph.nodes + graph.nodes)
      }
      var data = Editor.videoAdjustment(
        graph,
        original: .init(
          sha256: asset.identity, byteSize: asset.byteSize, format: header.format,
          fileName: asset.name),
        version: asset.editVersion + 1, previous: nil)
      let fd = try MemoryFile.create("darkroom-edit", file: asset.name)
      defer { Glibc.close(fd) }
      // A lock stops the encode at its next progress report.
      let hash = try Editor.renderVideo(
        data, from: original, header: header, name: asset.name, into: fd,
        with: space.ownRenderer(Renderer(settings)),
        progress: { _, _ in !space.isClosed && keepEncoding() })
      data.result.sha256 = hash.hex
      history.append(data)
      // Darkroom's own encode, read here: the frames' size a crop or a turn gave it.
      guard let written = try VideoHeader.describe(path: "/proc/self/fd/\(fd)") else {
        throw DarkroomError(.engine, file: asset.name, "its edit's encode is not a video")
      }
      return try space.withWriteLock { () throws(DarkroomError) in
        let current = try space.asset(asset.id)
        guard current.editVersion == asset.editVersion, current.adjustments == asset.adjustments
        else {
          throw DarkroomError(
            .conflict, file: asset.name,
            "was edited meanwhile (by another process): nothing was changed; edit it again")
        }
        return try space.commitEdit(
          current, history: history, size: (written.displayWidth, written.displayHeight)
        ) { rendered throws(DarkroomError) in
          try space.seal(memoryFile: fd, as: rendered, label: asset.name)
        }
      }
    }
  }
}
