import Crypto
import Foundation
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// A library with a session store, and what a test needs to forge its files.
private struct StoredSessions {
  let folder: TemporaryFolder
  let library: Library
  let store: SessionStore

  init() throws {
    folder = try TemporaryFolder()
    library = try Library.create(at: folder.path)
    store = try #require(try SessionStore.open(library: library))
  }

  var sessionsFolder: String { store.folder }
  var files: [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: sessionsFolder).sorted()) ?? []
  }

  /// A file for session `id` written as the server writes one, sealed with `key` (this
  /// library's own when nil), with `login` as its login time.
  func forge(
    _ id: String, access: Access = .write, login: Double, key: [UInt8]? = nil
  ) throws {
    let key = try key ?? readWholeFile(library.metadataFolder.path + "/session.key")
    let name = id.prefix(16) + "-" + ContentHash.of(text: id).hex
    let body = "\(access.rawValue)\ncsrf-token-0123456789abcdef\n\(login)"
    let code = HMAC<SHA256>.authenticationCode(
      for: Array((name + "\n" + body).utf8), using: SymmetricKey(data: key))
    let seal = Data(code).map { String(format: "%02x", $0) }.joined()
    try AtomicFile.write(
      Array((body + "\n" + seal + "\n").utf8), to: sessionsFolder + "/" + name, mode: 0o600)
  }
}

@Suite("Gallery sessions: the server's own files", .timeLimit(.minutes(5)), .offThePool)
struct SessionStoreTests {
  static let token = "write-token-0123456789"
  static let label = SessionStore.label(ofToken: token)

  @Test(
    "planted, edited, copied, linked, foreign-owned and future-dated session files grant nothing; the server's own does"
  )
  func onlyTheServersOwnFiles() throws {
    let a = try StoredSessions()
    let made = Sessions(store: a.store).create(.write, token: Self.token)
    #expect(made.id.count == 80 && made.id.hasPrefix(Self.label))
    // Another process over the same library takes it from its file: the control.
    #expect(Sessions(store: a.store).session(made.id)?.access == .write)

    // Copied into another library, under the same name: that library's key did not seal it.
    let b = try StoredSessions()
    let name = try #require(a.files.first)
    try FileManager.default.copyItem(
      atPath: a.sessionsFolder + "/" + name, toPath: b.sessionsFolder + "/" + name)
    #expect(Sessions(store: b.store).session(made.id) == nil)

    // Planted: a cookie of the attacker's choosing, a file with a made-up seal.
    let chosen = Self.label + String(repeating: "ab", count: 32)
    let planted = Self.label + "-" + ContentHash.of(text: chosen).hex
    try AtomicFile.write(
      Array(
        "write\ncsrf\n\(Date().timeIntervalSince1970)\n\(String(repeating: "0", count: 64))\n".utf8),
      to: a.sessionsFolder + "/" + planted, mode: 0o600)
    #expect(Sessions(store: a.store).session(chosen) == nil)
    // Sealed with another key (another library's, or a guess): nothing.
    try a.forge(chosen, login: Date().timeIntervalSince1970, key: Array(repeating: 7, count: 32))
    #expect(Sessions(store: a.store).session(chosen) == nil)

    // Sealed with this library's key: a session now (the forging is right)...
    let now = Date().timeIntervalSince1970
    try a.forge(chosen, login: now)
    #expect(Sessions(store: a.store).session(chosen)?.access == .write)
    // ...but not with a login time in the future: it would never expire.
    try a.forge(chosen, login: now + 3600)
    #expect(Sessions(store: a.store).session(chosen) == nil)

    // A read session edited into a write one: its seal no longer matches.
    let reader = Sessions(store: a.store).create(.read, token: Self.token)
    let readerFile =
      a.sessionsFolder + "/" + reader.id.prefix(16) + "-"
      + ContentHash.of(text: reader.id).hex
    let text = String(decoding: try readWholeFile(readerFile), as: UTF8.self)
    #expect(text.hasPrefix("read\n"))
    try AtomicFile.write(
      Array(("write" + text.dropFirst(4)).utf8), to: readerFile, mode: 0o600)
    #expect(Sessions(store: a.store).session(reader.id) == nil)

    // The server's own file behind a symbolic link, or with a second hard link: nothing.
    try a.forge(chosen, login: now)
    let path = a.sessionsFolder + "/" + planted
    let elsewhere = a.folder.file("elsewhere")
    #expect(rename(path, elsewhere) == 0 && symlink(elsewhere, path) == 0)
    #expect(Sessions(store: a.store).session(chosen) == nil)
    #expect(unlink(path) == 0 && link(elsewhere, path) == 0)
    #expect(Sessions(store: a.store).session(chosen) == nil)
    #expect(unlink(elsewhere) == 0)
    #expect(Sessions(store: a.store).session(chosen)?.access == .write, "one link again")

    // Owned by another user (where this test may give it away).
    if geteuid() == 0 {
      #expect(chown(path, 65534, 65534) == 0)
      #expect(Sessions(store: a.store).session(chosen) == nil)
    }
  }

  @Test("a sessions folder or key that others may use or that another user owns is refused by name")
  func folderAndKeyArePrivate() throws {
    let folder = try TemporaryFolder()
    let library = try Library.create(at: folder.path)
    let sessions = library.metadataFolder.path + "/sessions"
    let key = library.metadataFolder.path + "/session.key"
    #expect(try SessionStore.open(library: library) != nil)
    var info = stat()
    #expect(stat(sessions, &info) == 0 && info.st_mode & 0o7777 == 0o700)
    #expect(stat(key, &info) == 0 && info.st_mode & 0o7777 == 0o600 && info.st_size == 32)
    let keyBytes = try readWholeFile(key)
    #expect(try SessionStore.open(library: library) != nil, "a second server takes the same key")
    #expect(try readWholeFile(key) == keyBytes)

    func refusal() -> String? {
      do {
        _ = try SessionStore.open(library: library)
        return nil
      } catch { return "\(error)" }
    }
    #expect(chmod(sessions, 0o777) == 0)
    #expect(
      refusal()
        == "\(sessions): refused as the gallery's sessions folder: others may use it (mode 777): make it this user's alone (chmod 700)"
    )
    #expect(chmod(sessions, 0o700) == 0)
    #expect(chmod(key, 0o644) == 0)
    #expect(
      refusal()
        == "\(key): refused as the gallery's session key: others may use it (mode 644): remove it, and the server makes another (every session ends)"
    )
    #expect(chmod(key, 0o600) == 0)
    if geteuid() == 0 {
      #expect(chown(sessions, 65534, 65534) == 0)
      #expect(
        refusal()
          == "\(sessions): refused as the gallery's sessions folder: it belongs to uid 65534, not to this server's uid 0"
      )
      #expect(chown(sessions, 0, 0) == 0)
    }
    #expect(rmdir(sessions) == 0 && symlink(folder.path, sessions) == 0)
    #expect(
      refusal()
        == "\(sessions): refused as the gallery's sessions folder: it is not a folder (a link or another kind)"
    )
  }

  @Test(
    "10,000 logins of one token leave at most 256 files: its newest live, its oldest end, another token's stay"
  )
  func sessionsAreCapped() throws {
    let stored = try StoredSessions()
    let sessions = Sessions(store: stored.store)
    let other = sessions.create(.read, token: "read-token-0123456789")
    var made: [String] = []
    for _ in 0..<10_000 { made.append(sessions.create(.write, token: Self.token).id) }
    let files = stored.files
    #expect(files.count == SessionStore.perToken + 1)
    #expect(files.filter { $0.hasPrefix(Self.label + "-") }.count == SessionStore.perToken)
    let fresh = Sessions(store: stored.store)
    #expect(fresh.session(made.last!)?.access == .write)
    #expect(fresh.session(made[made.count - SessionStore.perToken])?.access == .write)
    #expect(fresh.session(made[made.count - SessionStore.perToken - 1]) == nil)
    #expect(fresh.session(made[0]) == nil)
    #expect(sessions.session(made[0]) == nil, "in the process that made it too")
    #expect(fresh.session(other.id)?.access == .read)
  }
}
