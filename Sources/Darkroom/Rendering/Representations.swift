import Dispatch

/// Where the renderer and the rendition cache meet: a representation is rendered only when
/// first asked for, then served from the cache until the source's content or edit changes.
public struct Representations: Sendable {
  public var renderer: Renderer
  /// nil renders every time (`--no-cache`).
  public var cache: RenditionCache?

  public init(renderer: Renderer = Renderer(), cache: RenditionCache?) {
    self.renderer = renderer
    self.cache = cache
  }

  /// The cache key of a spec for the current edit state: every input that changes bytes.
  static func key(_ spec: RenditionSpec, edit: String) -> String {
    let material = "\(spec.canonical);edit=\(edit);render=\(Renderer.renderVersion)"
    return String(ContentHash.of(text: material).hex.prefix(20))
  }

  /// The content hash of a source (memoised by the cache for files).
  public func contentHash(_ source: ImageSource) throws(DarkroomError) -> ContentHash {
    switch source {
    case .data(let bytes, _): return ContentHash.of(bytes: bytes)
    case .file(let path):
      if let cache { return try cache.contentHash(ofFile: path) }
      return try ContentHash.of(file: path)
    }
  }

  /// A representation of `source`, from the cache when it is there.
  public func rendition(of source: ImageSource, _ spec: RenditionSpec) throws(DarkroomError)
    -> Rendition
  {
    let edit = "original"
    guard let cache else { return try renderer.render(source, spec) }
    if spec.representation == .full && spec.metadata == .keep {
      // Usually the original bytes themselves: nothing worth caching.
      let metadata = try AssetMetadata.read(source)
      if ImageFormat(sourceFormat: metadata.format) == renderer.outputFormat(spec, metadata) {
        return try renderer.render(source, spec, metadata: metadata)
      }
    }
    let key = Self.key(spec, edit: edit)
    if case .file(let path) = source, cache.rememberedContentHash(ofFile: path) == nil {
      return try renderWhileHashing(path, spec, key: key, edit: edit, cache: cache)
    }
    let content = try contentHash(source)
    if let hit = cached(cache, content, key) { return hit }
    do {
      return try cache.withLock(source: content, key: key) {
        // Another process may have rendered it while this one waited for the lock.
        if let hit = cached(cache, content, key) { return hit }
        let rendition = try renderer.render(source, spec)
        try store(rendition, cache, content, key, spec, edit)
        return rendition
      }
    } catch let error as DarkroomError {
      throw error
    } catch {
      throw DarkroomError(.io, file: source.name, "\(error)")
    }
  }

  /// A file the cache has not seen (or that changed) is almost always a miss: hash it on
  /// another core while libvips renders, instead of first hashing and then rendering.
  /// Concurrent first requests for the same new file may then each render it; each gets
  /// correct bytes, and the cache keeps one entry.
  private func renderWhileHashing(
    _ path: String, _ spec: RenditionSpec, key: String, edit: String, cache: RenditionCache
  ) throws(DarkroomError) -> Rendition {
    let hashing = Background { () throws(DarkroomError) in try cache.contentHash(ofFile: path) }
    let rendered = Result { () throws(DarkroomError) in try renderer.render(.file(path), spec) }
    let content = try hashing.wait()
    let rendition = try rendered.get()
    if let hit = cached(cache, content, key) { return hit }
    try store(rendition, cache, content, key, spec, edit)
    return rendition
  }

  private func store(
    _ rendition: Rendition, _ cache: RenditionCache, _ content: ContentHash, _ key: String,
    _ spec: RenditionSpec, _ edit: String
  ) throws(DarkroomError) {
    try cache.store(
      source: content, key: key, representation: spec.representation, edit: edit,
      bytes: rendition.bytes, format: rendition.format, width: rendition.width,
      height: rendition.height)
  }

  /// The largest cached rendition of `source` in the same representation and format that
  /// is no larger than the box: something to show while the exact one renders.
  public func cachedPreview(of source: ImageSource, _ spec: RenditionSpec) -> Rendition? {
    guard let cache, let content = try? contentHash(source) else { return nil }
    let box = (spec.targetWidth, spec.targetHeight)
    let candidates = cache.entries(of: content).filter {
      $0.representation == spec.representation && $0.edit == "original"
        && (spec.format == nil || $0.format == spec.format) && $0.width <= box.0
        && $0.height <= box.1
    }
    guard let best = candidates.max(by: { $0.width * $0.height < $1.width * $1.height }),
      let bytes = cache.read(best)
    else { return nil }
    var rendition = Rendition(
      bytes: bytes, format: best.format, width: best.width, height: best.height)
    rendition.fromCache = true
    return rendition
  }

  private func cached(_ cache: RenditionCache, _ content: ContentHash, _ key: String)
    -> Rendition?
  {
    guard let entry = cache.lookup(source: content, key: key), let bytes = cache.read(entry)
    else { return nil }
    var rendition = Rendition(
      bytes: bytes, format: entry.format, width: entry.width, height: entry.height)
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
