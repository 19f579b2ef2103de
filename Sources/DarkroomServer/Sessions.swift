import Crypto
import Darkroom
import Foundation

/// A login to the gallery: what it may do, and the token its state-changing requests
/// must carry (CSRF).
package struct Session: Sendable {
  package let id: String
  package let access: Access
  package let csrfToken: String
  var expires: ContinuousClock.Instant
  /// The end no use extends: ``Sessions/absoluteLifetime`` after the login.
  let ends: ContinuousClock.Instant
  /// When its file (``SessionStore``) was last told of a use.
  var touched: ContinuousClock.Instant
  /// It has a file (``SessionStore``): other processes know it, and its file's removal by
  /// one of them ends it here too. False where the file could not be written (a full disk):
  /// the session is then this process's alone.
  var shared = false
}

/// The gallery's sessions, in memory, and in the library's ``SessionStore`` when it has one
/// (every `serve` process over the library knows a session any of them made, a restart
/// logs nobody out, and a logout through one process ends the session in all). A session
/// may hold an unlocked encrypted space: its keys live in this process's memory and nowhere
/// else, and are zeroed when the session locks it or logs out, when the space has been idle
/// for `spaceIdle` or the session's lifetime (the space locks itself:
/// ``Space/lockWhenIdle(after:atLatest:whenLocked:)``), at the session's absolute end, and
/// when the server stops (another process asks for the password again).
final class Sessions: Sendable {
  private let sessions = Locked<[String: Session]>([:])
  private let spaces = Locked<[String: Space]>([:])
  private let store: SessionStore?
  /// A session lasts this long after its last use...
  static let lifetime = SessionStore.lifetime
  /// ...and no longer than this after its login, however often it is used.
  static let absoluteLifetime: Duration = .seconds(7 * 24 * 3600)
  /// An unlocked space is locked after this long without a request that uses it.
  let spaceIdle: Duration

  init(spaceIdle: Duration = .seconds(15 * 60), store: SessionStore? = nil) {
    self.spaceIdle = spaceIdle
    self.store = store
  }

  /// A session id: the label of the token that logged in (``SessionStore/label(ofToken:)``),
  /// then 64 random hex digits.
  static let idLength = SessionStore.idLength

  /// A new session of `token`'s, which gives `access`. A token keeps at most
  /// ``SessionStore/perToken`` sessions: past that its least recently used one ends.
  func create(_ access: Access, token: String, at now: ContinuousClock.Instant = .now) -> Session {
    let label = SessionStore.label(ofToken: token)
    var session = Session(
      id: label + Tokens.random() + Tokens.random(), access: access, csrfToken: Tokens.random(),
      expires: now + Self.lifetime, ends: now + Self.absoluteLifetime, touched: now)
    session.shared =
      store?.save(id: session.id, access: access.rawValue, csrfToken: session.csrfToken) ?? false
    let ended = sessions.withLock { [session] sessions -> [String] in
      // Expired sessions go when new ones come, and so do the token's oldest past its cap.
      sessions = sessions.filter { $0.value.expires > now }
      let mine = sessions.values.filter { $0.id.hasPrefix(label) }
      let over = mine.count - SessionStore.perToken + 1
      let oldest = over > 0 ? mine.sorted { $0.expires < $1.expires }.prefix(over).map(\.id) : []
      for id in oldest { sessions[id] = nil }
      sessions[session.id] = session
      return oldest
    }
    for id in ended { lock(id) }
    return session
  }

  /// The live session `id`, its lifetime renewed (never past its absolute end); nil if
  /// there is none.
  func session(_ id: String, at now: ContinuousClock.Instant = .now) -> Session? {
    var touch = false
    let found = sessions.withLock { sessions -> Session? in
      guard var session = sessions[id], session.expires > now else { return nil }
      session.expires = min(now + Self.lifetime, session.ends)
      if now - session.touched > SessionStore.touchInterval {
        (session.touched, touch) = (now, true)
      }
      sessions[id] = session
      return session
    }
    if let found {
      // Ended through another process (its file is gone): ended here too.
      if found.shared, let store, !store.holds(id) {
        end(id)
        return nil
      }
      if touch { store?.touch(id) }
      return found
    }
    // Made by another process (or before a restart): taken from its file.
    guard let stored = store?.load(id), let access = Access(rawValue: stored.access) else {
      return nil
    }
    let wall = Date().timeIntervalSince1970
    let (idle, age) = (wall - stored.lastUse, wall - stored.login)
    guard idle < Self.lifetime.wholeSeconds, age < Self.absoluteLifetime.wholeSeconds else {
      return nil
    }
    let ends = now + .seconds(Self.absoluteLifetime.wholeSeconds - age)
    var session = Session(
      id: id, access: access, csrfToken: stored.csrfToken,
      expires: min(now + Self.lifetime, ends), ends: ends, touched: now)
    session.shared = true
    sessions.withLock { $0[id] = session }
    store?.touch(id)
    return session
  }

  /// Ends session `id`, locking its space.
  func end(_ id: String) {
    _ = sessions.withLock { $0.removeValue(forKey: id) }
    store?.remove(id)
    lock(id)
  }

  // MARK: Unlocked spaces

  /// Gives session `id` an unlocked space (locking the one it had). A session that ended
  /// while the password was being tried gets nothing: the space is locked at once. The space
  /// locks itself after `spaceIdle` without use (no longer than the session's own idle
  /// lifetime), and at the session's absolute end.
  func unlock(_ space: Space, for id: String) {
    guard let ends = sessions.withLock({ $0[id]?.ends }) else { return space.close() }
    // (Both weakly: the space keeps its timer, and the timer this.)
    space.lockWhenIdle(after: min(spaceIdle, Self.lifetime), atLatest: ends) {
      [weak self, weak space] in
      if let space { self?.forget(space, of: id) }
    }
    let previous = spaces.withLock { $0.updateValue(space, forKey: id) }
    if let previous, previous !== space { previous.close() }
    // Ended meanwhile (a logout between the check above and the insert): locked now.
    if sessions.withLock({ $0[id] == nil }) { lock(id) }
  }

  /// Forgets session `id`'s space if it is still `space` (it locked itself).
  private func forget(_ space: Space, of id: String) {
    spaces.withLock { spaces in
      if spaces[id] === space { spaces[id] = nil }
    }
  }

  /// Session `id`'s unlocked space, marked used at `now`; nil when it has none, or when the
  /// space has locked itself or is due to (it is locked then).
  func space(for id: String, at now: ContinuousClock.Instant = .now) -> Space? {
    guard let space = spaces.withLock({ $0[id] }) else { return nil }
    guard !space.lockIfIdle(at: now) else {
      forget(space, of: id)
      return nil
    }
    space.touch(at: now)
    return space
  }

  /// Locks session `id`'s space, if it has one.
  func lock(_ id: String) {
    spaces.withLock { $0.removeValue(forKey: id) }?.close()
  }

  /// Locks every space (the server is stopping).
  func lockAll() {
    let all = spaces.withLock { spaces in
      defer { spaces = [:] }
      return Array(spaces.values)
    }
    for space in all { space.close() }
  }

  /// How many sessions hold a space, locked or not (for tests: a space that locked itself
  /// is forgotten at once).
  var heldSpaces: Int { spaces.withLock { $0.count } }

  /// How many sessions hold a space that is still unlocked.
  var unlockedCount: Int { spaces.withLock { $0.values.count { !$0.isClosed } } }
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

  /// Whether `client` has spent a token that it has not earned back yet.
  func hasTaken(_ client: String) -> Bool {
    guard rate > 0 else { return false }
    return buckets.withLock { buckets in
      buckets[client].map { refilled($0, at: .now).tokens < burst } ?? false
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
