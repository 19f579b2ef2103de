import Dispatch
import FoundationEssentials

/// The one way a representation of a library's asset is made and served, PhotoKit's
/// `PHImageManager` for a library: renditions served lately are answered from memory, then
/// from the library's disk cache (`RenditionCache`), and only then rendered, once per
/// rendition however many ask at the same time, through a bounded queue (at most
/// `Settings.renders` at once, `Settings.waiting` more wait; past that a request fails
/// with ``DarkroomError/Kind/busy`` instead of the queue growing without end).
///
/// ```swift
/// let images = Images(library)
/// let screen = try await images.image(of: try library.asset(id), RenditionSpec(.fullscreen))
/// // or, with the library's shared one:
/// let thumb = try await library.image(for: id, RenditionSpec(.thumbnail))
/// ```
///
/// The command line, the server and the Swift API all come here; the server only adds HTTP
/// (validators, `304`, versioned URLs).
public final class Images: Sendable {
  /// How an ``Images`` renders and how much it keeps.
  public struct Settings: Sendable {
    /// How cache misses are rendered: limits and workers.
    package var pixels = PixelSettings()
    /// Bytes of renditions kept in memory (0: none).
    public var memoryBytes = 64 << 20
    /// Renders at once.
    package var renders = ProcessorCount.value
    /// Renders that may wait for a turn.
    package var waiting = 64
    /// Told of each render started, refused, and the queue's depth (a server's metrics).
    package var observer = Observer()

    public init() {}
  }

  /// Callbacks for metrics; each may be called from any thread.
  package struct Observer: Sendable {
    package var renderStarted: @Sendable () -> Void = {}
    package var renderRefused: @Sendable () -> Void = {}
    package var queueDepth: @Sendable (Int) -> Void = { _ in }
    package init() {}
  }

  public let library: Library
  public let settings: Settings
  private let cache: RenditionCache
  private let memory: RenditionMemory
  private let queue: RenderQueue

  public init(_ library: Library, settings: Settings = Settings()) {
    self.library = library
    self.settings = settings
    cache = RenditionCache(folder: library.cacheFolder)
    memory = RenditionMemory(budget: settings.memoryBytes)
    queue = RenderQueue(
      slots: settings.renders, bound: settings.waiting, observer: settings.observer)
  }

  /// A validator that changes whenever the bytes of `asset`'s rendition for `spec` would:
  /// its content hash and every input of the spec (an HTTP `ETag`).
  package static func tag(_ asset: Asset, _ spec: RenditionSpec) -> String {
    Representations.tag(content: asset.contentHash, spec.showing(asset))
  }

  /// What memory holds under `key`: a tag, or another name it was kept as (``image(of:_:alsoKeepAs:)``).
  package func remembered(_ key: String) -> (rendition: Rendition, tag: String)? {
    memory.rendition(key)
  }

  /// `asset`'s representation for `spec`: from memory, from the disk cache, or rendered.
  /// `alsoKeepAs` names it in memory a second way (a server's versioned URL).
  ///
  /// - Throws: `busy` when the queue is full; what the renderer throws.
  public func image(of asset: Asset, _ spec: RenditionSpec, alsoKeepAs key: String? = nil)
    async throws(DarkroomError) -> Rendition
  {
    try await library.storage.image(of: asset, spec, alsoKeepAs: key, in: self)
  }

  /// `asset` of `library` for `spec`: this one's, or a space's served beside it (a server's
  /// session's), through the same bounded queue; a space's is never kept in memory.
  package func image(of asset: Asset, _ spec: RenditionSpec, in library: Library)
    async throws(DarkroomError) -> Rendition
  {
    try await library.storage.image(of: asset, spec, alsoKeepAs: nil, in: self)
  }

  /// A space's (`library` over `space`): its renditions are cached in it, sealed, and none
  /// is kept in memory here, where it would outlive the space's lock (`alsoKeepAs` is of no
  /// use without memory).
  func sealedImage(_ asset: Asset, _ spec: RenditionSpec, of library: Library, _ space: Space)
    async throws(DarkroomError) -> Rendition
  {
    let pixels = settings.pixels
    let key =
      "\(ObjectIdentifier(space).hashValue) \(asset.adjustmentVersion) \(Self.tag(asset, spec))"
    return try await queue.rendition(key) { () throws(DarkroomError) in
      try library.render(asset.id, spec, settings: pixels)
    }
  }

  /// A folder's: from memory, from the disk cache, or rendered from the catalogued file
  /// (`spec` as ``RenditionSpec/showing(_:)`` makes it).
  func imageOfFile(_ asset: Asset, _ spec: RenditionSpec, alsoKeepAs key: String?)
    async throws(DarkroomError) -> Rendition
  {
    let tag = Self.tag(asset, spec)
    if let remembered = memory.rendition(tag) {
      if let key { memory.keep(remembered.rendition, as: key, tag: tag) }
      return remembered.rendition
    }
    // Opened and checked once: what is looked up, derived and hashed below is this file,
    // whatever happens to its name meanwhile.
    let file = try library.openFile(of: asset, exactly: false)
    return try await OpenedFiles.with(file, name: library.path(of: asset)) {
      path async throws(DarkroomError) in
      try await image(of: asset, at: path, spec, alsoKeepAs: key)
    }
  }

  private func image(
    of asset: Asset, at path: String, _ spec: RenditionSpec, alsoKeepAs key: String?
  ) async throws(DarkroomError) -> Rendition {
    let tag = Self.tag(asset, spec)
    let (cache, library, pixels) = (cache, library, settings.pixels)
    let rendition: Rendition
    if let cached = Representations(cache: cache).cachedRendition(ofFile: path, spec) {
      rendition = cached
    } else {
      // A thumbnail smaller than one the cache has (made in the background for another
      // screen) is made from that one.
      let format = spec.format ?? ImageFormat(sourceFormat: asset.format)
      let browserSized = format.map { RenditionSpec.browserFormats.contains($0) } ?? false
      rendition = try await queue.rendition(tag) { () throws(DarkroomError) in
        FaultInjection.waitAtRenderGate()
        if browserSized, let format,
          let derived = Representations(renderer: Renderer(pixels), cache: cache)
            .thumbnailFromLarger(ofFile: path, spec, format: format)
        {
          return derived
        }
        return try library.render(asset.id, spec, settings: pixels)
      }
    }
    // Kept in memory under the tag only if made from the content the tag names (a file
    // changed since the catalog read it must not file new pixels under the old tag).
    if cache.rememberedContentHash(ofFile: path)?.hex == asset.contentHash {
      memory.keep(rendition, as: tag, tag: tag)
      if let key { memory.keep(rendition, as: key, tag: tag) }
    }
    return rendition
  }

  /// The folder of the disk cache it serves from.
  package var cacheFolder: URL { cache.folder }

  /// Where `asset`'s rendition for `spec` is in the disk cache, relative to the cache's
  /// folder (`objects/ab/<hash>/<name>`), without reading it; nil when it is not there. What
  /// a server hands to its front server to send (nginx's `X-Accel-Redirect`).
  package func cachedFile(of asset: Asset, _ spec: RenditionSpec) -> String? {
    guard library.keeps(.renditionFiles), let content = ContentHash(hex: asset.contentHash),
      let entry = cache.lookup(source: content, key: Representations.key(spec.showing(asset)))
    else { return nil }
    let folder = cache.folder.path + "/"
    guard entry.path.hasPrefix(folder) else { return nil }
    return String(entry.path.dropFirst(folder.count))
  }

  /// The largest rendition of `asset` in the disk cache that fits `spec`'s box, in the same
  /// representation and format, without rendering: something to show at once while the
  /// exact one renders (PhotoKit's opportunistic delivery).
  package func cachedPreview(of asset: Asset, _ spec: RenditionSpec) -> Rendition? {
    guard let file = try? library.openFile(of: asset, exactly: false) else { return nil }
    return try? OpenedFiles.with(file, name: library.path(of: asset)) {
      path throws(DarkroomError) in
      Representations(cache: cache).cachedPreview(of: .file(path), spec.showing(asset))
    }
  }

  /// Renders what is not cached yet of these assets, in the background (a grid about to
  /// scroll into view). Returns when all are made; a failure is left for the real request.
  public func prefetch(_ ids: [AssetID], _ spec: RenditionSpec) async {
    await withTaskGroup(of: Void.self) { group in
      for id in ids {
        group.addTask {
          guard let asset = try? self.library.asset(id) else { return }
          _ = try? await self.image(of: asset, spec)
        }
      }
    }
  }

  /// Other renders (a preview, a space's) through the same bounded queue, one at a time per
  /// `key`.
  ///
  /// - Throws: `busy` when the queue is full; what `work` throws.
  package func render(
    _ key: String, _ work: @escaping @Sendable () throws(DarkroomError) -> Rendition
  ) async throws(DarkroomError) -> Rendition {
    try await queue.rendition(key, work)
  }

  /// Renders running or waiting.
  package var queueDepth: Int { queue.depth }

  /// The library's shared one, made with default settings on first use.
  static func shared(_ library: Library) -> Images {
    shared.withLock { open in
      if let images = open[library.rootPath] { return images }
      let images = Images(library)
      open[library.rootPath] = images
      return images
    }
  }
  private static let shared = Locked<[String: Images]>([:])
}

extension Library {
  /// An asset's representation, through the library's shared ``Images``: from memory, the
  /// disk cache, or rendered (once, however many ask).
  ///
  /// - Throws: `notFound` for an unknown id; `busy`; what the renderer throws.
  public func image(for id: AssetID, _ spec: RenditionSpec) async throws(DarkroomError)
    -> Rendition
  {
    try await storage.image(for: id, spec)
  }
}

extension RenditionSpec {
  /// The spec for a library's asset: the edit it shows is the one the catalog read for it
  /// (from its sidecars and its own XMP, at its scan), unless it is hidden or given. No file
  /// is read: the catalog's row names it.
  func showing(_ asset: Asset) -> RenditionSpec {
    guard case .besideFile = foreignEdit else { return self }
    var spec = self
    spec.foreignEdit = .settings(asset.foreignSettings)
    return spec
  }
}

/// Renditions served most recently, by tag (and by any other name they were kept as): a tag
/// names the source's content and every input of the spec, so what it maps to never goes
/// stale, and a hit costs no file system or catalog call. Bounded by bytes; the least
/// recently used go first.
final class RenditionMemory: Sendable {
  private struct State {
    var entries: [String: (rendition: Rendition, tag: String, used: UInt64)] = [:]
    var bytes = 0
    var clock: UInt64 = 0
  }
  private let state = Locked(State())
  let budget: Int

  init(budget: Int) { self.budget = budget }

  func rendition(_ key: String) -> (rendition: Rendition, tag: String)? {
    state.withLock { state in
      guard var entry = state.entries[key] else { return nil }
      state.clock += 1
      entry.used = state.clock
      state.entries[key] = entry
      return (entry.rendition, entry.tag)
    }
  }

  func keep(_ rendition: Rendition, as key: String, tag: String) {
    // Large renditions (full-size originals) are left to the disk cache.
    guard rendition.bytes.count <= budget / 16 else { return }
    state.withLock { state in
      state.clock += 1
      if let old = state.entries.updateValue((rendition, tag, state.clock), forKey: key) {
        state.bytes -= old.rendition.bytes.count
      }
      state.bytes += rendition.bytes.count
      guard state.bytes > budget else { return }
      // Over budget: the least recently used quarter goes (sorting is paid once a while).
      let oldest = state.entries.sorted { $0.value.used < $1.value.used }
      for (key, value) in oldest.prefix(max(1, oldest.count / 4)) {
        state.entries[key] = nil
        state.bytes -= value.rendition.bytes.count
      }
    }
  }
}

/// Renders, bounded: at most `slots` run at once (off the caller's threads), at most `bound`
/// more wait. Requests for a rendition already being made wait for that render.
final class RenderQueue: Sendable {
  private struct State {
    var running = 0
    var waiting: [CheckedContinuation<Void, Never>] = []
    var inFlight: [String: Task<Rendition, any Error>] = [:]
  }
  private let state = Locked(State())
  let slots: Int
  let bound: Int
  let observer: Images.Observer

  init(slots: Int, bound: Int, observer: Images.Observer) {
    self.slots = max(1, slots)
    self.bound = max(0, bound)
    self.observer = observer
  }

  func rendition(
    _ key: String, _ work: @escaping @Sendable () throws(DarkroomError) -> Rendition
  ) async throws(DarkroomError) -> Rendition {
    let task = try state.withLock { state throws(DarkroomError) -> Task<Rendition, any Error> in
      if let task = state.inFlight[key] { return task }
      guard state.inFlight.count < slots + bound else {
        observer.renderRefused()
        throw DarkroomError(.busy, "\(state.inFlight.count) renders are queued: retry")
      }
      let task = Task<Rendition, any Error> {
        await self.acquire()
        defer { self.release(key) }
        self.observer.renderStarted()
        return try await offThread(work)
      }
      state.inFlight[key] = task
      observer.queueDepth(state.inFlight.count)
      return task
    }
    do {
      return try await task.value
    } catch let error as DarkroomError {
      throw error
    } catch {
      throw DarkroomError(.engine, "the render was cancelled")
    }
  }

  var depth: Int { state.withLock { $0.inFlight.count } }

  private func acquire() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.running < slots {
          state.running += 1
          return true
        }
        state.waiting.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  private func release(_ key: String) {
    let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
      state.inFlight[key] = nil
      observer.queueDepth(state.inFlight.count)
      if state.waiting.isEmpty {
        state.running -= 1
        return nil
      }
      return state.waiting.removeFirst()
    }
    next?.resume()
  }
}

/// Runs blocking engine work (a render, a catalog write, an edit) on a Dispatch thread, so
/// that the caller's threads (a server's event loops, Swift's cooperative pool) stay free.
package func offThread<T: Sendable>(
  _ work: @escaping @Sendable () throws(DarkroomError) -> T
) async throws(DarkroomError) -> T {
  try await resultOffThread(work).get()
}

/// ``offThread(_:)`` of long work that stops the way its task does: `stop` fires when the
/// calling task is cancelled, and `work` asks it where it can stop.
package func offThread<T: Sendable>(
  stoppable work: @escaping @Sendable (_ stop: StopSignal) throws(DarkroomError) -> T
) async throws(DarkroomError) -> T {
  let stop = StopSignal()
  let result = await withTaskCancellationHandler {
    await resultOffThread { () throws(DarkroomError) in try work(stop) }
  } onCancel: {
    stop.fire()
  }
  return try result.get()
}

private func resultOffThread<T: Sendable>(
  _ work: @escaping @Sendable () throws(DarkroomError) -> T
) async -> Result<T, DarkroomError> {
  await withCheckedContinuation {
    (continuation: CheckedContinuation<Result<T, DarkroomError>, Never>) in
    DispatchQueue.global().async {
      continuation.resume(returning: Result { () throws(DarkroomError) in try work() })
    }
  }
}
