import CVipsShim
import Dispatch

/// Stops libvips pipelines that run past their deadline: no single file can hang a batch.
/// libvips checks an image's kill flag as it computes regions, so setting it from this
/// watchdog's timer makes the encode fail soon after, with its memory released as usual.
final class Watchdog: Sendable {
  static let shared = Watchdog()

  private struct Watched {
    let image: VipsImage
    let deadline: ContinuousClock.Instant
    var killed = false
  }

  private let watched = Locked<[ObjectIdentifier: Watched]>([:])
  private let timer = Locked<DispatchSourceTimer?>(nil)

  /// A render's time limit: how long, from when.
  struct Limit: Sendable {
    var start: ContinuousClock.Instant
    var limit: Duration
  }

  /// The time limit of the render under way on this thread (``Renderer``'s `timeLimit`,
  /// from its start), which every image it computes into memory keeps
  /// (``VipsImage/inMemory()``): a filter's pass reads its input there, and the first one
  /// of a graph also decodes the photo. nil outside a render, or for one with no limit.
  @TaskLocal static var current: Limit?

  /// `body` with ``current`` set to `limit` after `start` (nil `limit`: left as it is).
  static func keeping<T>(
    _ limit: Duration?, from start: ContinuousClock.Instant,
    _ body: () throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    guard let limit else { return try body() }
    let result = $current.withValue(Limit(start: start, limit: limit)) {
      Result { () throws(DarkroomError) in try body() }
    }
    return try result.get()
  }

  /// Runs `body` (which pulls `image`'s pixels), killing it once the render's time limit
  /// (``current``, from the render's start: every pull of a render counts toward the same
  /// limit) has passed; outside a render, or with no limit, it only runs it.
  func guarding<T>(_ image: VipsImage, _ body: () throws(DarkroomError) -> T)
    throws(DarkroomError) -> T
  {
    guard let current = Self.current else { return try body() }
    let (start, limit) = (current.start, current.limit)
    // (A limit already spent starts nothing more.)
    guard ContinuousClock.now < start + limit else {
      throw DarkroomError.timedOut(image.source, after: limit)
    }
    let key = ObjectIdentifier(image)
    watched.withLock { $0[key] = Watched(image: image, deadline: start + limit) }
    startTimer()
    defer { _ = watched.withLock { $0.removeValue(forKey: key) } }
    do {
      return try body()
    } catch {
      if watched.withLock({ $0[key]?.killed ?? false }) {
        throw DarkroomError.timedOut(image.source, after: limit)
      }
      throw error
    }
  }

  private func startTimer() {
    timer.withLock { timer in
      guard timer == nil else { return }
      let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
      source.schedule(deadline: .now() + .milliseconds(20), repeating: .milliseconds(20))
      source.setEventHandler { [self] in killExpired() }
      source.resume()
      timer = source
    }
  }

  private func killExpired() {
    let now = ContinuousClock.now
    watched.withLock { entries in
      for (key, entry) in entries where !entry.killed && entry.deadline < now {
        entry.image.kill()
        entries[key]?.killed = true
      }
    }
  }
}

extension VipsImage {
  /// Asks libvips to abandon computing this image.
  func kill() {
    dr_kill(pointer)
  }
}
