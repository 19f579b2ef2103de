import Darkroom
import Foundation

/// A login to the gallery: what it may do, and the token its state-changing requests
/// must carry (CSRF).
public struct Session: Sendable {
  public let id: String
  public let access: Access
  public let csrfToken: String
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
/// else, and are zeroed when the session locks it, logs out or expires, when the space has
/// been idle for `spaceIdle`, and when the server stops (another process asks for the
/// password again).
final class Sessions: Sendable {
  private let sessions = Locked<[String: Session]>([:])
  private let spaces = Locked<[String: UnlockedSpace]>([:])
  private let store: SessionStore?
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

  init(spaceIdle: Duration = .seconds(15 * 60), store: SessionStore? = nil) {
    self.spaceIdle = spaceIdle
    self.store = store
  }

  func create(_ access: Access, at now: ContinuousClock.Instant = .now) -> Session {
    var session = Session(
      id: Tokens.random() + Tokens.random(), access: access, csrfToken: Tokens.random(),
      expires: now + Self.lifetime, ends: now + Self.absoluteLifetime, touched: now)
    store?.sweep()
    session.shared = store?.save(session) ?? false
    sessions.withLock { [session] sessions in
      // Expired sessions go when new ones come.
      sessions = sessions.filter { $0.value.expires > now }
      sessions[session.id] = session
    }
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
    guard let stored = store?.load(id) else { return nil }
    let wall = Date().timeIntervalSince1970
    let (idle, age) = (wall - stored.lastUse, wall - stored.login)
    guard idle < Self.lifetime.wholeSeconds, age < Self.absoluteLifetime.wholeSeconds else {
      return nil
    }
    let ends = now + .seconds(Self.absoluteLifetime.wholeSeconds - age)
    var session = Session(
      id: id, access: stored.access, csrfToken: stored.csrfToken,
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

/// The gallery's sessions as files in a library's `.darkroom/sessions/` (0700), one for
/// each session (0600), named by the SHA-256 of its id (a listing names no session): its
/// access, CSRF token and login time (wall clock); the file's modification time is its last
/// use, told at most every ``touchInterval``. Every `serve` process over the library (on
/// this machine or another sharing it) reads the same files: behind a load balancer, a
/// request may land on any of them.
struct SessionStore: Sendable {
  let folder: String
  /// A use is written to the file at most this often: the idle lifetime is 12 hours.
  static let touchInterval: Duration = .seconds(60)

  struct Stored {
    var access: Access
    var csrfToken: String
    var login: Double
    var lastUse: Double
  }

  /// The store of `library`; nil where its `.darkroom/` cannot be written (sessions are
  /// then this process's alone).
  init?(library: Library) {
    folder = library.metadataFolder.path + "/sessions"
    mkdir(folder, 0o700)
    var info = stat()
    guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
      Glibc.access(folder, W_OK) == 0
    else { return nil }
  }

  private func path(_ id: String) -> String { folder + "/" + ContentHash.of(text: id).hex }

  /// Writes session `session`'s file; false if it could not be written.
  func save(_ session: Session) -> Bool {
    let text = "\(session.access.rawValue)\n\(session.csrfToken)\n\(Date().timeIntervalSince1970)\n"
    return
      (try? AtomicFile.write(Array(text.utf8), to: path(session.id), mode: 0o600, sweep: false))
      != nil
  }

  /// Whether session `id` has a file (it has not ended).
  func holds(_ id: String) -> Bool { Glibc.access(path(id), F_OK) == 0 }

  func load(_ id: String) -> Stored? {
    let path = path(id)
    var info = stat()
    guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 4096,
      let data = FileManager.default.contents(atPath: path)
    else { return nil }
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
    guard lines.count == 3, let access = Access(rawValue: String(lines[0])),
      let login = Double(lines[2])
    else { return nil }
    return Stored(
      access: access, csrfToken: String(lines[1]), login: login,
      lastUse: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
  }

  func touch(_ id: String) { utimensat(AT_FDCWD, path(id), nil, 0) }

  func remove(_ id: String) { unlink(path(id)) }

  /// Removes the files of sessions idle past their lifetime.
  func sweep() {
    let oldest = Date().timeIntervalSince1970 - Sessions.lifetime.wholeSeconds
    for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
      var info = stat()
      guard lstat(folder + "/" + name, &info) == 0, Double(info.st_mtim.tv_sec) < oldest
      else { continue }
      unlink(folder + "/" + name)
    }
  }
}

extension Duration {
  /// Whole seconds, as a `Double`.
  fileprivate var wholeSeconds: Double { Double(components.seconds) }
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
