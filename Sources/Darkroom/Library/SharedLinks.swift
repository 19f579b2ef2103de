import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A link that shows one album to whoever has it, read-only, as Google Photos and Immich
/// share albums: an unguessable token (256 random bits) in the address, an optional expiry,
/// password (kept as its Argon2id hash) and permission to download the originals, revocable,
/// counting its visits. The library keeps links in `.darkroom/shares.json`, and only the
/// token's SHA-256: the file does not open anything. `SharedLink` is a `Sendable` value.
package struct SharedLink: Sendable, Codable, Equatable {
  /// A short package handle (12 hex digits) that names the link to its owner (to list and
  /// revoke it), not to a visitor: it opens nothing.
  package var id: String
  /// The album it shows (``AlbumRef``'s text: a title, `folder:PATH`, `smart:NAME`).
  package var album: String
  /// When it was made, and when it stops working (nil: never), seconds since 1970.
  package var created: Double
  package var expires: Double?
  /// Whether a visitor may download the originals.
  package var allowsDownload: Bool
  /// How many times its page was opened.
  package var views: Int
  var tokenHash: String
  var passwordHash: String?

  /// Whether a visitor must give a password.
  package var hasPassword: Bool { passwordHash != nil }

  /// Whether it has expired at `now` (seconds since 1970).
  package func hasExpired(at now: Double = Double(AssetID.nowMilliseconds()) / 1000) -> Bool {
    expires.map { now >= $0 } ?? false
  }

  enum CodingKeys: String, CodingKey {
    case id, album, created, expires, allowsDownload, views, tokenHash, passwordHash
  }

  /// What a visitor who gave the password keeps (a cookie), for `token`: a digest of the
  /// token and the password's hash, which only the library holds; nil for a link without a
  /// password. It changes when the link is made again, and opens nothing once revoked.
  package func pass(token: String) -> String? {
    passwordHash.map { ContentHash.of(text: "darkroom-share\n" + token + "\n" + $0).hex }
  }
}

/// A new link and its token: the token is shown once (the library keeps only its hash).
package struct NewSharedLink: Sendable, Equatable {
  package var link: SharedLink
  /// 43 characters of base64url (256 bits): the address is `/s/TOKEN`.
  package var token: String
}

extension Library {
  var sharesFile: String { metadataFolder.appendingPathComponent("shares.json").path }

  /// Makes a link that shows `album` (a title, `folder:PATH` or `smart:NAME`).
  ///
  /// - Parameters:
  ///   - expires: When it stops working (seconds since 1970), or nil for never.
  ///   - password: One a visitor must give (1 to 1024 bytes), or nil for none.
  ///   - allowsDownload: Whether a visitor may download the originals.
  /// - Throws: `notFound` for an album the library does not have; `invalidArgument` for the
  ///   trash (never shared), an expiry in the past or an empty password; `io`.
  package func share(
    album: String, expires: Double? = nil, password: String? = nil, allowsDownload: Bool = false
  ) throws(DarkroomError) -> NewSharedLink {
    try require(.sharedLinks)
    let ref = AlbumRef(album)
    if ref == .smart(.trash) {
      throw DarkroomError(.invalidArgument, "the trash is never shared")
    }
    _ = try self.album(ref.text)
    let now = Double(AssetID.nowMilliseconds()) / 1000
    if let expires, expires <= now {
      throw DarkroomError(.invalidArgument, "a link's expiry must be in the future")
    }
    if let password, password.isEmpty || password.utf8.count > 1024 {
      throw DarkroomError(.invalidArgument, "a link's password is 1 to 1024 bytes")
    }
    let token = Self.base64url(Sodium.random(32))
    var passwordHash: String?
    if let password {
      guard let hash = Sodium.passwordHash(password) else {
        throw DarkroomError(.engine, "libsodium could not hash the password")
      }
      passwordHash = hash
    }
    let link = SharedLink(
      id: Sodium.random(6).map { String(format: "%02x", $0) }.joined(), album: ref.text,
      created: now, expires: expires, allowsDownload: allowsDownload, views: 0,
      tokenHash: ContentHash.of(text: token).hex, passwordHash: passwordHash)
    try changingLinks { links in links.append(link) }
    return NewSharedLink(link: link, token: token)
  }

  /// The library's links, the newest first; only those of `album` when it is given.
  package func sharedLinks(album: String? = nil) throws(DarkroomError) -> [SharedLink] {
    guard keeps(.sharedLinks) else { return [] }
    let links = try readLinks().sorted { ($0.created, $0.id) > ($1.created, $1.id) }
    guard let album else { return links }
    let ref = AlbumRef(album).text
    return links.filter { $0.album == ref }
  }

  /// Revokes the link `id`: its address opens nothing from now on.
  ///
  /// - Throws: `notFound` when there is no such link.
  package func revokeSharedLink(_ id: String) throws(DarkroomError) {
    var found = false
    try changingLinks { links in
      found = links.contains { $0.id == id }
      links.removeAll { $0.id == id }
    }
    if !found { throw DarkroomError(.notFound, "no shared link \(id.prefix(40))") }
  }

  /// The link `token` opens, counting a visit when `visit` is set.
  ///
  /// - Throws: `notFound` for a token no link has, a revoked link, or one that expired (the
  ///   same words for all: a visitor learns nothing of which).
  package func sharedLink(token: String, visit: Bool = false) throws(DarkroomError)
    -> SharedLink
  {
    let gone = DarkroomError(.notFound, "this shared link does not exist, was revoked or expired")
    guard keeps(.sharedLinks), token.utf8.count == 43, !token.contains("/") else { throw gone }
    let hash = ContentHash.of(text: token).hex
    var found: SharedLink?
    if visit {
      // (A count of visits is not worth a sync to the disk.)
      try changingLinks(durable: false) { links in
        guard let index = links.firstIndex(where: { $0.tokenHash == hash }),
          !links[index].hasExpired()
        else { return }
        links[index].views += 1
        found = links[index]
      }
    } else {
      found = try readLinks().first { $0.tokenHash == hash && !$0.hasExpired() }
    }
    guard let found else { throw gone }
    return found
  }

  /// Whether `password` is the link's.
  package func sharedLink(_ link: SharedLink, accepts password: String) -> Bool {
    guard let hash = link.passwordHash else { return true }
    return Sodium.verify(password, hash: hash)
  }

  /// The query of what a link shows: its album, as its owner sees it (nothing trashed or
  /// hidden), newest first.
  package func sharedQuery(_ link: SharedLink) throws(DarkroomError) -> AssetQuery {
    var query = try AssetQuery(parameters: [("album", link.album)])
    if case .user = AlbumRef(link.album) {} else { query.sort = .dateDescending }
    return query
  }

  /// The asset `id` when the link's album holds it; otherwise `notFound`, as for an id
  /// that does not exist (a visitor learns nothing of other assets).
  package func sharedAsset(_ id: AssetID, of link: SharedLink) throws(DarkroomError) -> Asset {
    var query = try sharedQuery(link)
    query.only = id
    guard let asset = try assets(matching: query, offset: 0, limit: 1).first else {
      throw DarkroomError(.notFound, "no such photo in this album")
    }
    return asset
  }

  /// A user album renamed (its links follow it) or deleted (its links go): a link never shows
  /// another album that comes to have its title.
  func albumChanged(_ title: String, renamedTo newTitle: String?) {
    guard keeps(.sharedLinks), FileManager.default.fileExists(atPath: sharesFile) else { return }
    let ref = AlbumRef.user(title).text
    try? changingLinks { links in
      if let newTitle {
        for index in links.indices where links[index].album == ref {
          links[index].album = AlbumRef.user(newTitle).text
        }
      } else {
        links.removeAll { $0.album == ref }
      }
    }
  }

  // MARK: The file

  private func readLinks() throws(DarkroomError) -> [SharedLink] {
    guard FileManager.default.fileExists(atPath: sharesFile) else { return [] }
    let bytes = try InputFile.readAll(sharesFile)
    do {
      return try JSONDecoder().decode([SharedLink].self, from: Data(bytes))
    } catch {
      // The server's own file, not a visitor's mistake: `io` (logged, never shown).
      throw DarkroomError(.io, file: sharesFile, "not a list of shared links: \(error)")
    }
  }

  /// Reads, changes and writes the links under the library's lock for them (other
  /// processes serving the library take it too).
  func changingLinks(durable: Bool = true, _ change: (inout [SharedLink]) -> Void)
    throws(DarkroomError)
  {
    try Folders.create(metadataFolder.path)
    let lockPath = metadataFolder.appendingPathComponent("shares.lock").path
    let fd = Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw AtomicFile.writeError(lockPath, errno) }
    defer { Glibc.close(fd) }
    guard FileLock.lock(fd, key: 0, wait: true) == 0 else {
      throw AtomicFile.writeError(lockPath, errno)
    }
    var links = try readLinks()
    change(&links)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
    let bytes: [UInt8]
    do {
      bytes = Array(try encoder.encode(links))
    } catch {
      throw DarkroomError(.engine, "the shared links could not be written: \(error)")
    }
    try AtomicFile.write(bytes, to: sharesFile, durable: durable, mode: 0o600)
  }

  private static let base64urlAlphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  /// `bytes` in base64url without padding (RFC 4648, section 5).
  static func base64url(_ bytes: [UInt8]) -> String {
    let alphabet = base64urlAlphabet
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count * 4 + 2) / 3)
    var index = 0
    while index < bytes.count {
      let count = min(3, bytes.count - index)
      var group = UInt32(bytes[index]) << 16
      if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
      if count > 2 { group |= UInt32(bytes[index + 2]) }
      for digit in 0...count { out.append(alphabet[Int(group >> (18 - 6 * digit)) & 63]) }
      index += 3
    }
    return String(decoding: out, as: UTF8.self)
  }
}
