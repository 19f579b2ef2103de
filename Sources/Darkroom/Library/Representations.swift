import Dispatch
import Glibc

/// Where the renderer and the rendition cache meet: a representation is rendered only when
/// first asked for, then served from the cache until the source's content or edit changes.
///
/// ```swift
/// let cache = RenditionCache(folder: Library.cacheFolder(for: "IMG_0001.jpg"))
/// let representations = Representations(cache: cache)
/// var spec = RenditionSpec(.thumbnail)
/// spec.size = 512
/// let thumbnail = try representations.rendition(of: .file("IMG_0001.jpg"), spec)
/// print(thumbnail.fromCache)  // false the first time, true after
/// ```
///
/// Calls are synchronous: a miss renders on the calling thread (``ImageManager`` is the
/// asynchronous API). `Representations` is a `Sendable` value type; any number of threads
/// and processes may use one cache at once, and concurrent requests for the same rendition
/// render it once (the others wait for it, then read it from the cache).
package struct Representations: Sendable {
  /// The renderer that makes the renditions the cache lacks.
  package var renderer: Renderer
  /// nil renders every time (`--no-cache`).
  package var cache: RenditionCache?

  /// Renditions made by `renderer` and kept in `cache` (nil: every request renders).
  package init(renderer: Renderer = Renderer(), cache: RenditionCache?) {
    self.renderer = renderer
    self.cache = cache
  }

  /// The cache key of a spec: every input that changes bytes (its ``RenditionSpec/canonical``
  /// form, which names the foreign edit it shows, and the renderer's version).
  static func key(_ spec: RenditionSpec) -> String {
    let material = "\(spec.canonical);render=\(Renderer.renderVersion)"
    return String(ContentHash.of(text: material).hex.prefix(20))
  }

  /// `spec` with the edit it shows resolved for `source`: the settings in the sidecars
  /// beside a file (what a worker, handed only the file, cannot read), so that they are part
  /// of the cache key.
  static func resolved(_ spec: RenditionSpec, for source: ImageSource) -> RenditionSpec {
    guard case .besideFile = spec.foreignEdit else { return spec }
    var resolved = spec
    if case .file(let path) = source {
      resolved.foreignEdit = .settings(ForeignSettings.besideFile(path))
    } else {
      resolved.foreignEdit = .settings(nil)
    }
    return resolved
  }

  /// The content hash of a source (memoised by the cache for files).
  ///
  /// - Throws: A ``DarkroomError`` about a file that cannot be read, as
  ///   ``ContentHash/of(file:)`` throws.
  package func contentHash(_ source: ImageSource) throws(DarkroomError) -> ContentHash {
    switch source {
    case .data(let bytes, _): return ContentHash.of(bytes: bytes)
    case .file(let path):
      if let cache { return try cache.contentHash(ofFile: path) }
      return try ContentHash.of(file: path)
    }
  }

  /// A representation of `source`, from the cache when it is there.
  ///
  /// A miss renders and stores the rendition under the hash of exactly the bytes rendered, so
  /// a file written meanwhile never files new pixels under its old content. A `full` rendition
  /// that keeps metadata, in the source's own format, is the original bytes, never cached.
  /// ``Rendition/fromCache`` tells a hit from a render.
  ///
  /// - Throws: A ``DarkroomError`` about the source, as ``Renderer/render(_:_:)`` throws. A
  ///   cache that cannot be written is not an error: the rendition is returned uncached.
  package func rendition(of source: ImageSource, _ spec: RenditionSpec) throws(DarkroomError)
    -> Rendition
  {
    let spec = Self.resolved(spec, for: source)
    let edit = spec.editLabel
    guard let cache else { return try renderer.render(source, spec) }
    if spec.representation == .full && spec.metadata == .keep, try !Self.isVideo(source) {
      // Usually the original bytes themselves: nothing worth caching.
      let metadata = try AssetMetadata.read(source)
      if ImageFormat(sourceFormat: metadata.format) == renderer.outputFormat(spec, metadata),
        renderer.shownEdit(spec, metadata) == nil
      {
        return try renderer.render(source, spec, metadata: metadata)
      }
    }
    let key = Self.key(spec)
    guard case .file(let path) = source else {
      let content = try contentHash(source)
      if let hit = cached(cache, content, key) { return hit }
      return try rendering(cache, lockedAs: content, key) { () throws(DarkroomError) in
        try render(source, spec, cache, content, key, edit)
      }
    }
    // A file the cache knows (its identity unchanged since it was hashed) is served from its
    // hash alone; anything else is read once, and that one read is hashed and rendered.
    guard let known = cache.rememberedContentHash(ofFile: path) else {
      return try renderOneRead(path, spec, cache, key, edit)
    }
    if let hit = cached(cache, known, key) { return hit }
    return try rendering(cache, lockedAs: known, key) { () throws(DarkroomError) in
      try renderOneRead(path, spec, cache, key, edit)
    }
  }

  /// Runs `body` holding the entry's lock, across processes, unless another process stored
  /// the entry while this one waited for it.
  private func rendering(
    _ cache: RenditionCache, lockedAs content: ContentHash, _ key: String,
    _ body: () throws(DarkroomError) -> Rendition
  ) throws(DarkroomError) -> Rendition {
    do {
      return try cache.withLock(source: content, key: key) {
        if let hit = cached(cache, content, key) { return hit }
        return try body()
      }
    } catch let error as DarkroomError {
      throw error
    } catch {
      throw DarkroomError(.io, file: nil, "\(error)")
    }
  }

  private func render(
    _ source: ImageSource, _ spec: RenditionSpec, _ cache: RenditionCache,
    _ content: ContentHash, _ key: String, _ edit: String
  ) throws(DarkroomError) -> Rendition {
    let rendition = try renderer.render(source, spec)
    store(rendition, cache, content, key, spec, edit)
    return rendition
  }

  /// Renders a file and stores the rendition under the hash of exactly the bytes rendered:
  /// a write to the file meanwhile (an edit in another process, a sync tool) can never file
  /// new pixels under the old content's hash. The hash is computed on another core while
  /// libvips decodes.
  private func renderOneRead(
    _ path: String, _ spec: RenditionSpec, _ cache: RenditionCache, _ key: String, _ edit: String
  ) throws(DarkroomError) -> Rendition {
    var identity = try FileIdentity(path: path)
    // Files up to `Renderer.oneReadLimit` are read into memory once, then hashed and
    // decoded from the same bytes; larger ones are decoded from the file, and stored only if
    // it did not change meanwhile.
    // A video is read by FFmpeg as far as it needs, never into memory whole.
    let video = try Self.isVideo(.file(path))
    guard identity.size <= Renderer.oneReadLimit, !video else {
      let content = try cache.contentHash(ofFile: path)
      FaultInjection.reached("after-source-hash", file: path)
      let rendition = try renderer.render(.file(path), spec)
      // Any write since the hash changed the file's ctime (or its inode).
      guard (try? FileIdentity(path: path)) == identity else { return rendition }
      return kept(rendition, cache, content, key, spec, edit)
    }
    if renderer.workers == nil { Vips.startInBackground() }
    // A JPEG shown smaller is decoded from the file as it is read (libjpeg scales it on the
    // way) while another core hashes the file: the photo is never held whole in memory
    // (10 MB less at peak for a 24 MP photo, and 6% faster: Benchmarks/README.md). What is
    // rendered is filed under that hash only if the file did not change meanwhile.
    if renderer.workers == nil, spec.representation != .full,
      let metadata = try? AssetMetadata.read(.file(path)), metadata.format == "jpeg"
    {
      let hashing = Background { () throws(DarkroomError) in try ContentHash.of(file: path) }
      FaultInjection.reached("after-source-hash", file: path)
      let rendered = Result { () throws(DarkroomError) in
        try renderer.render(.file(path), spec, metadata: metadata)
      }
      let content = try hashing.wait()
      switch rendered {
      case .success(let rendition):
        guard cache.remember(content, ofFile: path, readAs: identity) else { return rendition }
        return kept(rendition, cache, content, key, spec, edit)
      case .failure(let error):
        // Replaced while it was decoded (an edit renames its result over the file): libvips'
        // header and load saw two files. The file as it is now is read once, whole, below.
        let now = try FileIdentity(path: path)
        guard now != identity else { throw error }
        identity = now
      }
    }
    let bytes = try InputFile.readAll(path)
    let hashing = Background { () throws(DarkroomError) in ContentHash.of(bytes: bytes) }
    FaultInjection.reached("after-source-hash", file: path)
    let rendered = Result { () throws(DarkroomError) in
      try renderer.render(.data(bytes, name: path), spec)
    }
    let content = try hashing.wait()
    cache.remember(content, ofFile: path, readAs: identity)
    return kept(try rendered.get(), cache, content, key, spec, edit)
  }

  /// Whether the first bytes of `source` say it is a video (MP4, MOV).
  static func isVideo(_ source: ImageSource) throws(DarkroomError) -> Bool {
    switch source {
    case .file(let path):
      return try VideoHeader.recognises(InputFile(path))
    case .data(let bytes, _):
      return VideoHeader.recognises(bytes.prefix(64))
    }
  }

  /// What another process stored under the entry meanwhile, else `rendition`, stored.
  private func kept(
    _ rendition: Rendition, _ cache: RenditionCache, _ content: ContentHash, _ key: String,
    _ spec: RenditionSpec, _ edit: String
  ) -> Rendition {
    if let hit = cached(cache, content, key) { return hit }
    store(rendition, cache, content, key, spec, edit)
    return rendition
  }

  /// Keeps a rendition in the cache. The cache is an optimisation: a cache that cannot be
  /// written (read-only, full) costs the next request a render, never this one its result.
  private func store(
    _ rendition: Rendition, _ cache: RenditionCache, _ content: ContentHash, _ key: String,
    _ spec: RenditionSpec, _ edit: String
  ) {
    _ = try? cache.store(
      source: content, key: key, kind: spec.representation.rawValue, edit: edit,
      bytes: rendition.bytes, fileExtension: rendition.format.fileExtension,
      width: rendition.width, height: rendition.height)
  }

  /// The cached rendition of a file for `spec`, without rendering anything: nil when the
  /// cache lacks it, or does not know the file's current content (it changed since it was
  /// last hashed). What a server answers from before it queues a render.
  package func cachedRendition(ofFile path: String, _ spec: RenditionSpec) -> Rendition? {
    guard let cache, let known = cache.rememberedContentHash(ofFile: path) else { return nil }
    return cached(cache, known, Self.key(Self.resolved(spec, for: .file(path))))
  }

  /// A thumbnail made from a larger one of the same content in the cache, not from the
  /// original, and kept: the gallery asks for a size by screen (a phone's, a laptop's), and
  /// one made in the background serves every smaller one in a few milliseconds instead of
  /// a decode of the original. nil when the cache holds none, or for other representations.
  /// `format` is the output's (what the spec's own render would write).
  package func thumbnailFromLarger(ofFile path: String, _ spec: RenditionSpec, format: ImageFormat)
    -> Rendition?
  {
    let spec = Self.resolved(spec, for: .file(path))
    guard let cache, spec.representation == .thumbnail || spec.representation == .aspectThumbnail,
      spec.targetWidth == spec.targetHeight, spec.format == nil || spec.format == format,
      let content = cache.rememberedContentHash(ofFile: path)
    else { return nil }
    // Only from one that shows the same edit, which is in its pixels already.
    let candidates = cache.entries(of: content).filter {
      $0.kind == spec.representation.rawValue && $0.edit == spec.editLabel
        && $0.fileExtension == format.fileExtension && max($0.width, $0.height) > spec.size
        && max($0.width, $0.height) <= 4096
    }
    guard let source = candidates.min(by: { $0.width * $0.height < $1.width * $1.height }),
      let larger = Self.rendition(source, in: cache)
    else { return nil }
    var exact = spec
    exact.format = format
    exact.foreignEdit = .hidden
    FaultInjection.reached("thumbnail-from-larger", file: path)
    guard let rendition = try? renderer.render(.data(larger.bytes, name: path), exact) else {
      return nil
    }
    store(rendition, cache, content, Self.key(spec), spec, spec.editLabel)
    return rendition
  }

  /// A validator that changes whenever a rendition's bytes would: the source's content hash
  /// (hex) and every input of the spec. Used as an HTTP `ETag`.
  package static func tag(content: String, _ spec: RenditionSpec) -> String {
    "\(content.prefix(16))-\(key(spec))"
  }

  /// The largest cached rendition of `source` in the same representation and format that
  /// is no larger than the box: something to show while the exact one renders.
  package func cachedPreview(of source: ImageSource, _ spec: RenditionSpec) -> Rendition? {
    let spec = Self.resolved(spec, for: source)
    guard let cache, let content = try? contentHash(source) else { return nil }
    // The box of the spec's own representation: a fullscreen rendition fits the screen turned
    // either way (which way depends on the photo, unknown without reading its header).
    let long = max(spec.screenWidth, spec.screenHeight)
    let box =
      spec.representation == .fullscreen ? (long, long) : (spec.targetWidth, spec.targetHeight)
    let candidates = cache.entries(of: content).filter {
      $0.kind == spec.representation.rawValue && $0.edit == spec.editLabel
        && (spec.format == nil || $0.fileExtension == spec.format?.fileExtension)
        && $0.width <= box.0 && $0.height <= box.1
    }
    guard let best = candidates.max(by: { $0.width * $0.height < $1.width * $1.height }) else {
      return nil
    }
    return Self.rendition(best, in: cache)
  }

  private func cached(_ cache: RenditionCache, _ content: ContentHash, _ key: String)
    -> Rendition?
  {
    cache.lookup(source: content, key: key).flatMap { Self.rendition($0, in: cache) }
  }

  /// A cache entry as a rendition; nil if it cannot be read (or names no format).
  private static func rendition(_ entry: RenditionCache.Entry, in cache: RenditionCache)
    -> Rendition?
  {
    guard let format = ImageFormat(fileExtension: entry.fileExtension),
      let bytes = cache.read(entry)
    else { return nil }
    var rendition = Rendition(
      bytes: bytes, format: format, width: entry.width, height: entry.height)
    rendition.fromCache = true
    return rendition
  }
}

/// Work started on a global queue, whose result is waited for once.
private final class Background<Value: Sendable>: @unchecked Sendable {
  private var result: Result<Value, DarkroomError>?
  private let done = DispatchSemaphore(value: 0)

  init(_ work: @escaping @Sendable () throws(DarkroomError) -> Value) {
    DispatchQueue.global().async {
      self.result = Result(catching: work)
      self.done.signal()
    }
  }

  /// The semaphore orders the write of `result` before this read.
  func wait() throws(DarkroomError) -> Value {
    done.wait()
    guard let result else { throw DarkroomError(.engine, "background work ended without a result") }
    return try result.get()
  }
}

extension Library {
  /// Renders a representation of a photo: the one call behind `darkroom render` (and the
  /// server's representation requests). For an edited file, `fromOriginal` renders its
  /// stored original instead of the edit; `cache` (nil: none) keeps and serves renditions.
  ///
  /// - Throws: A ``DarkroomError`` naming the source, as ``Representations`` and
  ///   ``Editor/originalSource(_:)`` throw.
  package static func render(
    _ source: ImageSource, _ spec: RenditionSpec, fromOriginal: Bool = false,
    renderer: Renderer = Renderer(), cache: RenditionCache?
  ) throws(DarkroomError) -> Rendition {
    var (source, spec) = (source, spec)
    if fromOriginal {
      // The file's own pixels: no other program's edit either.
      spec.foreignEdit = .hidden
      if case .file(let path) = source, let original = try Editor().originalSource(path) {
        source = original
      }
    }
    return try Representations(renderer: renderer, cache: cache).rendition(of: source, spec)
  }

  /// Renders a representation of one of this library's assets, cached in the library.
  ///
  /// - Throws: `notFound` for an id the catalog does not know; what
  ///   ``render(_:_:fromOriginal:renderer:cache:)`` throws (`unsupportedFormat` for a video:
  ///   its representations are not made yet).
  package func render(
    _ id: AssetID, _ spec: RenditionSpec, settings: PixelSettings = PixelSettings()
  ) throws(DarkroomError) -> Rendition {
    try storage.render(id, spec, settings: settings)
  }

  /// ``render(_:_:settings:)`` of a folder's file, cached in `.darkroom/cache`.
  func renderFile(_ id: AssetID, _ spec: RenditionSpec, settings: PixelSettings)
    throws(DarkroomError) -> Rendition
  {
    let asset = try asset(id)
    var settings = settings
    if let damage = asset.damage {
      // A damaged photo whose header was read (one cut short) is shown as far as it
      // decodes, grey below: the catalog, the gallery and `list --damaged` say what is
      // wrong. One of which nothing was read is refused as the scan found it.
      guard asset.isShowable else {
        throw DarkroomError(damage.kind, file: path(of: asset), damage.detail)
      }
      settings.failOn = .none
    }
    do {
      // A full representation may be the file's own bytes: it must be the catalogued file.
      return try withOpenedPath(of: asset, exactly: spec.representation == .full) {
        [settings] path throws(DarkroomError) in
        try Self.render(
          .file(path), spec.showing(asset), renderer: Renderer(settings),
          cache: RenditionCache(folder: cacheFolder))
      }
    } catch
      where asset.damage == nil && asset.mediaType == .photo && settings.failOn != .warning
      && Self.decoderBlames(error, format: asset.format)
    {
      recordDamage(of: asset, error)
      throw error
    }
  }

  /// Whether a render's error is the decoder's verdict on the file's data (garbage past a
  /// header that read well, a JPEG XL that libjxl refuses), not on the machine, a setting or
  /// a policy: `corrupt` or `truncated`, of a format decoded here (a camera RAW's errors
  /// include cameras newer than LibRaw), and not about memory, reading, a missing plugin or
  /// an unsupported feature. (A render at `--fail-on warning` marks nothing: its warnings
  /// are not damage.)
  static func decoderBlames(_ error: DarkroomError, format: String) -> Bool {
    guard error.kind == .corrupt || error.kind == .truncated else { return false }
    guard ["jpeg", "png", "webp", "gif", "tiff", "jxl", "heif", "avif"].contains(format)
    else { return false }
    let message = error.message.lowercased()
    return !["memory", "read error", "i/o", "plugin", "unsupported", "not a known file format"]
      .contains { message.contains($0) }
  }

  /// Marks a photo the scan read whole damaged, as the scan marks one whose header is bad,
  /// once a render finds its data bad: it joins Problems (`smart:problems`, `list
  /// --damaged`) and `check`'s findings, and is shown from then on as far as it decodes.
  /// Only while the file is exactly the catalogued one (device, inode, size and time), and
  /// by one conditional write (``Catalog/markDamaged(_:ifStill:)``): a move, a trash or a
  /// rescan meanwhile is never undone. A failure to record is left unsaid: the caller has
  /// the render's own error to give.
  func recordDamage(of asset: Asset, _ error: DarkroomError) {
    guard let file = try? Beneath.openFile(asset.path, in: rootPath) else { return }
    var info = stat()
    guard fstat(file.descriptor, &info) == 0 else { return }
    let opened = FileIdentity(info)
    let was = asset.identity
    guard
      (opened.device, opened.inode, opened.size, opened.modified)
        == (was.device, was.inode, was.size, was.modified)
    else { return }
    let damage = AssetDamage(kind: error.kind, detail: error.message, video: false)
    _ = try? catalogCall { try $0.markDamaged(damage, ifStill: asset) }
  }
}
