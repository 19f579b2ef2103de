import Crypto
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// The gallery's sessions as files in a library's `.darkroom/sessions/`, one for each
/// session: its access, CSRF token and login time (wall clock) and an HMAC-SHA256 over them
/// and the file's name, with the key in `.darkroom/session.key` (32 random bytes, 0600).
/// Every `serve` process over the library (on this machine or another sharing it) reads the
/// same files: behind a load balancer, a request may land on any of them. The file's
/// modification time is the session's last use, told at most every ``touchInterval``.
///
/// A file is a session only when this library's key signed it: one planted, edited, renamed
/// or copied from another library is none. A file is named `TOKEN-SESSION`: the first 16
/// hex digits of the SHA-256 of the token that logged in, then the SHA-256 of the session's
/// id (a listing names no session); a token keeps at most ``perToken`` sessions, the least
/// recently used going first.
package struct SessionStore: Sendable {
  package let folder: String
  private let key: SymmetricKey
  /// A session lasts this long after its last use (its file is removed after it).
  package static let lifetime: Duration = .seconds(12 * 3600)
  /// A use is written to the file at most this often: the idle lifetime is 12 hours.
  package static let touchInterval: Duration = .seconds(60)
  /// The sessions one token keeps at most (files, and in each process's memory).
  package static let perToken = 256
  /// A session id: the label of the token that logged in (``label(ofToken:)``), then 64 hex
  /// digits.
  package static let idLength = 80
  /// How far ahead of this machine's clock a login time may be (another machine's clock).
  static let clockSkew = 60.0

  package struct Stored {
    /// What the session may do, as the server names it (`read`, `write`).
    package var access: String
    package var csrfToken: String
    package var login: Double
    package var lastUse: Double
  }

  /// The store of `library`; nil where its `.darkroom/` cannot be written (sessions are
  /// then this process's alone).
  ///
  /// - Throws: `invalidArgument` naming the folder or key when either exists but is not
  ///   this user's alone (another owner, a group or other permission, a link).
  package static func open(library: Library) throws(DarkroomError) -> SessionStore? {
    let metadata = library.metadataFolder.path
    let folder = metadata + "/sessions"
    if mkdir(folder, 0o700) != 0, errno != EEXIST { return nil }
    try privateEntry(folder, directory: true)
    let keyPath = metadata + "/session.key"
    guard let key = try sessionKey(keyPath) else { return nil }
    return SessionStore(folder: folder, key: key)
  }

  private static func privateEntry(_ path: String, directory: Bool) throws(DarkroomError) {
    try PrivateKeyFile.checkPrivate(
      path, directory: directory,
      what: directory ? "the gallery's sessions folder" : "the gallery's session key",
      remedy: keyRemedy)
  }

  private static let keyRemedy = "the server makes another (every session ends)"

  /// The library's session key, made on first use; nil where it cannot be written.
  private static func sessionKey(_ path: String) throws(DarkroomError) -> SymmetricKey? {
    try PrivateKeyFile.open(path, what: "the gallery's session key", remedy: keyRemedy)
      .map { SymmetricKey(data: $0) }
  }

  /// The label of `token` in session ids and file names: 16 hex digits of its SHA-256.
  package static func label(ofToken token: String) -> String {
    String(ContentHash.of(text: token).hex.prefix(16))
  }

  /// The file of session `id` (its token's label, then the SHA-256 of the id); nil for an id
  /// that is not of a session's form.
  private func path(_ id: String) -> String? {
    guard id.utf8.count == Self.idLength,
      id.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
    else { return nil }
    return folder + "/" + id.prefix(16) + "-" + ContentHash.of(text: id).hex
  }

  /// The seal of a session file: an HMAC of its name (not its folder) and its body.
  private func seal(_ path: String, _ body: String) -> String {
    let name = path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...]
    let code = HMAC<SHA256>.authenticationCode(for: Array((name + "\n" + body).utf8), using: key)
    return Data(code).map { String(format: "%02x", $0) }.joined()
  }

  /// Writes session `id`'s file, after making room for it; false if it could not be written.
  package func save(id: String, access: String, csrfToken: String) -> Bool {
    guard let path = path(id) else { return false }
    makeRoom(token: String(id.prefix(16)))
    let body = "\(access)\n\(csrfToken)\n\(Date().timeIntervalSince1970)"
    let text = body + "\n" + seal(path, body) + "\n"
    return (try? AtomicFile.write(Array(text.utf8), to: path, mode: 0o600, sweep: false)) != nil
  }

  /// Whether session `id` has a file (it has not ended).
  package func holds(_ id: String) -> Bool { path(id).map { Glibc.access($0, F_OK) == 0 } ?? false }

  /// Session `id` from its file: nil unless the file is a regular file of this user's with
  /// one link, sealed by this library's key for this very name, with a login time that is
  /// not in the future.
  package func load(_ id: String) -> Stored? {
    guard let path = path(id) else { return nil }
    let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    defer { Glibc.close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 4096,
      info.st_uid == geteuid(), info.st_nlink == 1
    else { return nil }
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
    guard read(fd, &bytes, bytes.count) == bytes.count else { return nil }
    let lines = String(decoding: bytes, as: UTF8.self).split(
      separator: "\n", omittingEmptySubsequences: false)
    guard lines.count == 5, lines[4].isEmpty,
      Secrets.equal(String(lines[3]), seal(path, lines[0..<3].joined(separator: "\n"))),
      let login = Double(lines[2]),
      login <= Date().timeIntervalSince1970 + Self.clockSkew
    else { return nil }
    return Stored(
      access: String(lines[0]), csrfToken: String(lines[1]), login: login,
      lastUse: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
  }

  package func touch(_ id: String) {
    if let path = path(id) { utimensat(AT_FDCWD, path, nil, 0) }
  }

  package func remove(_ id: String) {
    if let path = path(id) { unlink(path) }
  }

  /// Removes the files of sessions idle past their lifetime, and of `token`'s least recently
  /// used sessions beyond ``perToken`` less one (the one about to be made).
  package func makeRoom(token: String) {
    let oldest = Date().timeIntervalSince1970 - Self.lifetime.wholeSeconds
    var mine: [(name: String, used: Double)] = []
    for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
      var info = stat()
      guard lstat(folder + "/" + name, &info) == 0 else { continue }
      let used = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
      if used < oldest {
        unlink(folder + "/" + name)
      } else if name.hasPrefix(token + "-") {
        mine.append((name, used))
      }
    }
    guard mine.count >= Self.perToken else { return }
    for file in mine.sorted(by: { $0.used < $1.used }).prefix(mine.count - Self.perToken + 1) {
      unlink(folder + "/" + file.name)
    }
  }
}
