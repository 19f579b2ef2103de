import FoundationEssentials

/// Representations of assets for apps and services, in the spirit of PhotoKit's
/// `PHCachingImageManager`: ask for an asset at a target size and content mode, get the
/// cached rendition at once when there is one, and prewarm many assets in the background.
///
/// ```swift
/// let manager = ImageManager(cache: RenditionCache(folder: cacheURL))
/// let image = try await manager.image(
///   for: "IMG_0001.jpg", targetSize: .init(512, 512), contentMode: .fill)
/// for try await image in manager.requestImage(
///   for: "IMG_0002.jpg", targetSize: .init(1920, 1080), contentMode: .fit,
///   delivery: .opportunistic)
/// {
///   show(image)  // a cached smaller rendition first, if any, then the exact one
/// }
/// await manager.startCaching(for: paths, targetSize: .init(256, 256), contentMode: .fill)
/// ```
///
/// `.fill` asks for a ``Representation/thumbnail`` of exactly the target size, `.fit` for an
/// ``Representation/aspectThumbnail`` inside it. As an actor, one manager can be shared by
/// every task of an app; renders run on detached tasks, off the actor, at most
/// `maxConcurrentRenders` at a time.
public actor ImageManager {
  /// A size to ask for, in pixels. `TargetSize` is a `Sendable` value type.
  public struct TargetSize: Sendable, Hashable {
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int
    /// A target of `width` x `height` pixels (requests treat a side below 1 as 1).
    public init(_ width: Int, _ height: Int) {
      self.width = width
      self.height = height
    }
  }

  /// How an image is fitted to the target size.
  public enum ContentMode: Sendable, Hashable {
    /// The whole image, aspect kept, inside the target size; never upscaled.
    case fit
    /// Exactly the target size: scaled to cover it, then centre-cropped.
    case fill
  }

  /// What a request delivers, and when.
  public enum Delivery: Sendable {
    /// Only the exact rendition.
    case exact
    /// A cached smaller rendition first, when there is one, then the exact one.
    case opportunistic
  }

  private let representations: Representations
  private let maxConcurrentRenders: Int
  private var inFlight: [RequestKey: Task<Rendition, Error>] = [:]
  private var caching: [RequestKey: Task<Void, Never>] = [:]
  private var running = 0
  private var waiting: [CheckedContinuation<Void, Never>] = []

  private struct RequestKey: Hashable {
    var path: String
    var spec: RenditionSpec
  }

  /// A manager that keeps renditions in `cache` (nil: every request renders).
  ///
  /// - Parameters:
  ///   - cache: The rendition cache, or nil.
  ///   - renderer: The renderer for cache misses, with its limits.
  ///   - maxConcurrentRenders: How many renders may run at once (at least 1); by default
  ///     `ProcessInfo.processInfo.activeProcessorCount`.
  public init(
    cache: RenditionCache?, renderer: Renderer = Renderer(),
    maxConcurrentRenders: Int = ProcessInfo.processInfo.activeProcessorCount
  ) {
    representations = Representations(renderer: renderer, cache: cache)
    self.maxConcurrentRenders = max(1, maxConcurrentRenders)
  }

  /// The spec an API request maps to.
  public static func spec(
    targetSize: TargetSize, contentMode: ContentMode, format: ImageFormat? = nil
  ) -> RenditionSpec {
    var spec = RenditionSpec(contentMode == .fill ? .thumbnail : .aspectThumbnail)
    spec.targetWidth = max(1, targetSize.width)
    spec.targetHeight = max(1, targetSize.height)
    spec.format = format
    return spec
  }

  /// The exact rendition; concurrent requests for the same one share a single render.
  ///
  /// - Throws: The ``DarkroomError`` of the render, as ``Representations/rendition(of:_:)``
  ///   throws it.
  public func image(
    for path: String, targetSize: TargetSize, contentMode: ContentMode, format: ImageFormat? = nil
  ) async throws -> Rendition {
    try await rendition(
      RequestKey(
        path: path,
        spec: Self.spec(targetSize: targetSize, contentMode: contentMode, format: format)))
  }

  /// Renditions as they become available (see `Delivery`).
  ///
  /// The stream ends after the exact rendition, or with the render's ``DarkroomError``.
  /// Ending the iteration early cancels the request; a render already running still
  /// finishes, and is cached.
  public nonisolated func requestImage(
    for path: String, targetSize: TargetSize, contentMode: ContentMode,
    format: ImageFormat? = nil, delivery: Delivery = .exact
  ) -> AsyncThrowingStream<Rendition, Error> {
    let spec = Self.spec(targetSize: targetSize, contentMode: contentMode, format: format)
    return AsyncThrowingStream { continuation in
      let task = Task {
        do {
          if delivery == .opportunistic,
            let preview = representations.cachedPreview(of: .file(path), spec),
            preview.width < spec.targetWidth || preview.height < spec.targetHeight
          {
            continuation.yield(preview)
          }
          continuation.yield(try await self.rendition(RequestKey(path: path, spec: spec)))
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// Renders and caches these assets in the background, at most `maxConcurrentRenders` at
  /// a time, so later requests are cache hits. Failures are left for the real request.
  public func startCaching(for paths: [String], targetSize: TargetSize, contentMode: ContentMode) {
    let spec = Self.spec(targetSize: targetSize, contentMode: contentMode)
    for path in paths {
      let key = RequestKey(path: path, spec: spec)
      guard caching[key] == nil else { continue }
      caching[key] = Task { [weak self] in
        guard let self, !Task.isCancelled else { return }
        _ = try? await self.rendition(key)
        await self.finishedCaching(key)
      }
    }
  }

  /// Cancels background caching of these assets (renders already running finish).
  public func stopCaching(for paths: [String], targetSize: TargetSize, contentMode: ContentMode) {
    let spec = Self.spec(targetSize: targetSize, contentMode: contentMode)
    for path in paths {
      caching.removeValue(forKey: RequestKey(path: path, spec: spec))?.cancel()
    }
  }

  /// Cancels all background caching (renders already running finish).
  public func stopCachingAll() {
    for task in caching.values { task.cancel() }
    caching.removeAll()
  }

  /// Waits until every background caching task has ended.
  public func waitForCaching() async {
    while let task = caching.values.first {
      await task.value
    }
  }

  private func finishedCaching(_ key: RequestKey) {
    caching[key] = nil
  }

  private func rendition(_ key: RequestKey) async throws -> Rendition {
    if let task = inFlight[key] { return try await task.value }
    let representations = self.representations
    // Detached: a render blocks its thread for its whole run, and must not run on this actor.
    let task = Task.detached {
      await self.acquireSlot()
      defer { Task { await self.releaseSlot() } }
      try Task.checkCancellation()
      return try representations.rendition(of: .file(key.path), key.spec)
    }
    inFlight[key] = task
    defer { inFlight[key] = nil }
    return try await task.value
  }

  private func acquireSlot() async {
    if running < maxConcurrentRenders {
      running += 1
      return
    }
    await withCheckedContinuation { waiting.append($0) }
  }

  private func releaseSlot() {
    if waiting.isEmpty {
      running -= 1
    } else {
      waiting.removeFirst().resume()
    }
  }
}
