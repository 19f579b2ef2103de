import Darkroom

/// A login to the gallery: what it may do, and the token its state-changing requests
/// must carry (CSRF).
public struct Session: Sendable {
  public let id: String
  public let access: Access
  public let csrfToken: String
  var expires: ContinuousClock.Instant
  /// The end no use extends: ``Sessions/absoluteLifetime`` after the login.
  let ends: ContinuousClock.Instant
}

/// The gallery's sessions, in memory: a restart logs everyone out. A session may hold an
/// unlocked encrypted space: its keys live here and nowhere else, and are zeroed when the
/// session locks it, logs out or expires, when the space has been idle for `spaceIdle`,
/// and when the server stops.
final class Sessions: Sendable {
  private let sessions = Locked<[String: Session]>([:])
  private let spaces = Locked<[String: UnlockedSpace]>([:])
  /// A session lasts this long after its last use...
  static let lifetime: Duration = .seconds(12 * 3600)
  /// ...and no longer than this after its login, however often it is used.
  static let absoluteLifetime: Duration = .seconds(7 * 24 * 3600)
  /// An unlocked space is locked after this long without a request that uses it.
  let spaceIdle: Duration

  struct UnlockedSpace {
    let space: Space
    var lastUse: ContinuousClock.Instant
  }

  init(spaceIdle: Duration = .seconds(15 * 60)) {
    self.spaceIdle = spaceIdle
  }

  func create(_ access: Access, at now: ContinuousClock.Instant = .now) -> Session {
    let session = Session(
      id: Tokens.random() + Tokens.random(), access: access, csrfToken: Tokens.random(),
      expires: now + Self.lifetime, ends: now + Self.absoluteLifetime)
    sessions.withLock { sessions in
      // Expired sessions go when new ones come.
      sessions = sessions.filter { $0.value.expires > now }
      sessions[session.id] = session
    }
    return session
  }

  /// The live session `id`, its lifetime renewed (never past its absolute end); nil if
  /// there is none.
  func session(_ id: String, at now: ContinuousClock.Instant = .now) -> Session? {
    sessions.withLock { sessions in
      guard var session = sessions[id], session.expires > now else { return nil }
      session.expires = min(now + Self.lifetime, session.ends)
      sessions[id] = session
      return session
    }
  }

  /// Ends session `id`, locking its space.
  func end(_ id: String) {
    _ = sessions.withLock { $0.removeValue(forKey: id) }
    lock(id)
  }

  // MARK: Unlocked spaces

  /// Gives session `id` an unlocked space (locking the one it had). A session that ended
  /// while the password was being tried gets nothing: the space is locked at once.
  func unlock(_ space: Space, for id: String, at now: ContinuousClock.Instant = .now) {
    guard sessions.withLock({ $0[id] != nil }) else { return space.close() }
    let previous = spaces.withLock { spaces in
      spaces.updateValue(UnlockedSpace(space: space, lastUse: now), forKey: id)
    }
    if let previous, previous.space !== space { previous.space.close() }
  }

  /// Session `id`'s unlocked space, its idle time reset; nil when it has none, or when it
  /// has been idle too long (it is locked then).
  func space(for id: String, at now: ContinuousClock.Instant = .now) -> Space? {
    let (space, idle) = spaces.withLock { spaces -> (Space?, Space?) in
      guard var unlocked = spaces[id] else { return (nil, nil) }
      guard now - unlocked.lastUse <= spaceIdle else {
        spaces[id] = nil
        return (nil, unlocked.space)
      }
      unlocked.lastUse = now
      spaces[id] = unlocked
      return (unlocked.space, nil)
    }
    idle?.close()
    return space
  }

  /// Locks session `id`'s space, if it has one.
  func lock(_ id: String) {
    spaces.withLock { $0.removeValue(forKey: id) }?.space.close()
  }

  /// Locks the spaces idle for longer than `spaceIdle` and those of sessions that ended or
  /// expired, and forgets expired sessions. Returns how many spaces it locked.
  @discardableResult
  func sweep(at now: ContinuousClock.Instant = .now) -> Int {
    let live = sessions.withLock { sessions in
      sessions = sessions.filter { $0.value.expires > now }
      return Set(sessions.keys)
    }
    let locked = spaces.withLock { spaces in
      let gone = spaces.filter { !live.contains($0.key) || now - $0.value.lastUse > spaceIdle }
      for id in gone.keys { spaces[id] = nil }
      return gone.values.map(\.space)
    }
    for space in locked { space.close() }
    return locked.count
  }

  /// Locks every space (the server is stopping).
  func lockAll() {
    let all = spaces.withLock { spaces in
      defer { spaces = [:] }
      return spaces.values.map(\.space)
    }
    for space in all { space.close() }
  }

  /// How many sessions hold an unlocked space.
  var unlockedCount: Int { spaces.withLock { $0.count } }
}

/// A token bucket per client: `rate` failed guesses a second sustained, `burst` at once.
/// Asked (``wait(_:)``) before a guess is checked; a failed guess takes a token.
final class RateLimiter: Sendable {
  private struct Bucket {
    var tokens: Double
    var last: ContinuousClock.Instant
  }
  private let buckets = Locked<[String: Bucket]>([:])
  let rate: Double
  let burst: Double

  init(rate: Double, burst: Double) {
    self.rate = rate
    self.burst = max(1, burst)
  }

  /// Seconds until `client` has a token again; nil if it has one now. Takes nothing: asked
  /// before a guess is checked, so that past the limit no guess is checked at all.
  func wait(_ client: String) -> Int? {
    guard rate > 0 else { return nil }
    return buckets.withLock { buckets in
      let bucket = refilled(buckets[client], at: .now)
      return bucket.tokens >= 1 ? nil : max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
    }
  }

  /// Takes one token for `client` (a request): nil if it had one, else the seconds until
  /// the next one.
  func admit(_ client: String) -> Int? {
    guard rate > 0 else { return nil }
    return buckets.withLock { buckets in
      var bucket = refilled(buckets[client], at: .now)
      defer { buckets[client] = bucket }
      guard bucket.tokens >= 1 else {
        return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
      }
      bucket.tokens -= 1
      if buckets.count > 10_000 { buckets = buckets.filter { $0.value.tokens < burst } }
      return nil
    }
  }

  /// Takes one token from `client` (a failed guess), if it has one.
  func take(_ client: String) {
    guard rate > 0 else { return }
    buckets.withLock { buckets in
      var bucket = refilled(buckets[client], at: .now)
      bucket.tokens = max(0, bucket.tokens - 1)
      if buckets.count > 10_000 { buckets = buckets.filter { $0.value.tokens < burst } }
      buckets[client] = bucket
    }
  }

  private func refilled(_ bucket: Bucket?, at now: ContinuousClock.Instant) -> Bucket {
    guard var bucket else { return Bucket(tokens: burst, last: now) }
    let elapsed = now - bucket.last
    let seconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    bucket.tokens = min(burst, bucket.tokens + seconds * rate)
    bucket.last = now
    return bucket
  }
}
