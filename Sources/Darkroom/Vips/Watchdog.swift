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

  /// Runs `body` (which pulls `image`'s pixels), killing it `limit` after `start` (a render
  /// that pulls pixels twice gives both the same start).
  func guarding<T>(
    _ image: VipsImage, limit: Duration?, from start: ContinuousClock.Instant = .now,
    _ body: () throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    guard let limit else { return try body() }
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
