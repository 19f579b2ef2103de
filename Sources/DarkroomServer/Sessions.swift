import Synchronization

/// A login to the gallery: what it may do, and the token its state-changing requests
/// must carry (CSRF).
public struct Session: Sendable {
  public let id: String
  public let access: Access
  public let csrfToken: String
  var expires: ContinuousClock.Instant
}

/// The gallery's sessions, in memory: a restart logs everyone out.
final class Sessions: Sendable {
  private let sessions = Mutex<[String: Session]>([:])
  /// A session lasts this long after its last use.
  static let lifetime: Duration = .seconds(12 * 3600)

  func create(_ access: Access) -> Session {
    let session = Session(
      id: Tokens.random() + Tokens.random(), access: access, csrfToken: Tokens.random(),
      expires: .now + Self.lifetime)
    sessions.withLock { sessions in
      // Expired sessions go when new ones come.
      let now = ContinuousClock.now
      sessions = sessions.filter { $0.value.expires > now }
      sessions[session.id] = session
    }
    return session
  }

  /// The live session `id`, its lifetime renewed; nil if there is none.
  func session(_ id: String) -> Session? {
    sessions.withLock { sessions in
      guard var session = sessions[id], session.expires > .now else { return nil }
      session.expires = .now + Self.lifetime
      sessions[id] = session
      return session
    }
  }

  func end(_ id: String) {
    _ = sessions.withLock { $0.removeValue(forKey: id) }
  }
}

/// A token bucket per client: `rate` requests a second sustained, `burst` at once.
final class RateLimiter: Sendable {
  private struct Bucket {
    var tokens: Double
    var last: ContinuousClock.Instant
  }
  private let buckets = Mutex<[String: Bucket]>([:])
  let rate: Double
  let burst: Double

  init(rate: Double, burst: Double) {
    self.rate = rate
    self.burst = max(1, burst)
  }

  /// Takes one token for `client`: nil if allowed, else the seconds until the next one.
  func take(_ client: String) -> Int? {
    guard rate > 0 else { return nil }
    let now = ContinuousClock.now
    return buckets.withLock { buckets in
      var bucket = buckets[client] ?? Bucket(tokens: burst, last: now)
      let elapsed = now - bucket.last
      let seconds =
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      bucket.tokens = min(burst, bucket.tokens + seconds * rate)
      bucket.last = now
      if buckets.count > 10_000 { buckets = buckets.filter { $0.value.tokens < burst } }
      guard bucket.tokens >= 1 else {
        buckets[client] = bucket
        return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
      }
      bucket.tokens -= 1
      buckets[client] = bucket
      return nil
    }
  }
}
