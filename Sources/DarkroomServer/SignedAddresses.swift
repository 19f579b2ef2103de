import Darkroom
import Foundation
import Hummingbird

/// `serve --signed-renditions`: the listings' assets carry signatures of their grid and viewer
/// renditions (``RenditionSigner``), and a request that carries one needs no login.
struct SignedAddresses: Sendable {
  let library: Library
  let signer: RenditionSigner
  /// How long an address handed out lives at least, in seconds.
  let lifetime: Int
  /// When each asset was last found in the library and not in the trash: looked up again
  /// after ``liveFor`` seconds (a catalog read cost three quarters of a cached thumbnail's
  /// time), so a photo trashed stops answering within that (a front server keeps an answer
  /// a minute more).
  private let seenLive = Locked<[AssetID: Double]>([:])
  static let liveFor = 10.0

  init(library: Library, signer: RenditionSigner, lifetime: Int) {
    (self.library, self.signer, self.lifetime) = (library, signer, lifetime)
  }

  /// The signatures of `asset`'s signable renditions, valid from now for ``lifetime``.
  func signatures(_ asset: Asset, now: Double = Date().timeIntervalSince1970) -> APISignatures {
    let expires = RenditionSigner.expiry(lifetime: lifetime, now: now)
    let version = asset.version
    var signatures = APISignatures(expires: expires, signatures: [:])
    for representation in RenditionSigner.representations {
      signatures.signatures[representation.rawValue] = signer.signature(
        id: asset.id, version: version, representation: representation, expires: expires)
    }
    return signatures
  }

  /// Whether `request` carries a signature (`sig`): such a request is let in by it alone.
  static func isSigned(_ request: Request) -> Bool {
    // Most requests have no `sig=` anywhere: no parse of their query (and no Foundation
    // search: its bytes are looked at for an `s` followed by `ig=`).
    guard let query = request.uri.query, Self.mayHaveSignature(query.utf8) else { return false }
    return FormQuery(query)["sig"] != nil
  }

  private static func mayHaveSignature(_ bytes: String.UTF8View) -> Bool {
    var rest = bytes[...]
    while let s = rest.firstIndex(of: UInt8(ascii: "s")) {
      rest = rest[rest.index(after: s)...]
      if rest.starts(with: "ig=".utf8) { return true }
    }
    return false
  }

  /// How long a front server (nginx) may keep a signed answer, at most: it keeps what this
  /// server checked, under its whole address, and answers repeats without asking.
  static let frontCacheSeconds = 60

  /// `response` to a signed request as caches may keep it: a browser or CDN no longer than
  /// the address lives (`max-age`), nginx at most ``frontCacheSeconds`` and never past that
  /// (`X-Accel-Expires`, which nginx reads and does not pass on; 0 for an answer not to be
  /// kept, such as an old version's address answered with the new pixels).
  static func kept(
    _ response: Response, _ request: Request, now: Double = Date().timeIntervalSince1970
  ) -> Response {
    var response = response
    guard response.status == .ok || response.status == .notModified else { return response }
    guard response.headers[.cacheControl]?.hasSuffix("immutable") == true,
      let expires = request.query["e"].flatMap({ Int($0) })
    else {
      response.headers[.accelExpires] = "0"
      return response
    }
    let left = max(0, min(31_536_000, expires - Int(now)))
    // A front server may answer with these headers for up to a minute more: a browser's
    // copy still ends by the expiry.
    let browser = left > frontCacheSeconds ? left - frontCacheSeconds : 0
    response.headers[.cacheControl] = "public, max-age=\(browser), immutable"
    response.headers[.accelExpires] = String(min(left, frontCacheSeconds))
    return response
  }

  /// Checks a signed request: a GET or HEAD of `/api/assets/ID/REP` with `v`, `e` and `sig`
  /// that this library signed, not yet expired.
  ///
  /// - Throws: 403 saying what is wrong (never which byte of the signature).
  func check(_ request: Request, now: Double = Date().timeIntervalSince1970) throws {
    func refuse(_ message: String) -> APIError { APIError(.forbidden, "signature", message) }
    guard request.method == .get || request.method == .head else {
      throw refuse("a signed address only reads (GET or HEAD)")
    }
    guard let path = Self.renditionPath(request), let id = AssetID(String(path.id)) else {
      throw refuse("a signed address is an asset's rendition: /api/assets/ID/REP")
    }
    let query = request.query
    guard let version = query["v"], let expires = query["e"], let signature = query["sig"] else {
      throw refuse("a signed address has v, e and sig")
    }
    if let name = Self.strayParameter(query) {
      throw refuse(
        "a signed address takes v, e, sig, size, format and original, each once; not \(name.prefix(32))"
      )
    }
    do {
      try signer.check(
        id: id, version: String(version), representation: String(path.representation),
        expires: String(expires), signature: String(signature), now: now)
    } catch {
      throw refuse(error.message)
    }
    // A photo trashed or gone is no longer shown to an address signed before.
    if let seen = seenLive.withLock({ $0[id] }), now - seen < Self.liveFor { return }
    guard let asset = try? library.asset(id), asset.trashedAt == nil else {
      seenLive.withLock { $0[id] = nil }
      throw APIError.notFound("no such asset: it is in the trash or gone")
    }
    seenLive.withLock { seen in
      if seen.count >= 100_000 { seen.removeAll(keepingCapacity: true) }
      seen[id] = now
    }
  }

  static let parameters = ["v", "e", "sig", "size", "format", "original"]

  /// The asset id and representation of a rendition's path, `/api/assets/ID/REP`.
  private static func renditionPath(_ request: Request) -> (
    id: Substring, representation: Substring
  )? {
    let path = request.uri.path
    let prefix = "/api/assets/"
    guard path.utf8.starts(with: prefix.utf8) else { return nil }
    let rest = path.utf8.dropFirst(prefix.utf8.count)
    guard let slash = rest.firstIndex(of: UInt8(ascii: "/")),
      !rest[rest.index(after: slash)...].contains(UInt8(ascii: "/"))
    else { return nil }
    return (path[rest.startIndex..<slash], path[path.utf8.index(after: slash)...])
  }

  /// The first parameter a signed address may not have: one a rendition does not read, or
  /// one given twice (every such variation would be a new entry in every cache in front, for
  /// the same picture); nil when there is none.
  private static func strayParameter(_ query: FormQuery) -> Substring? {
    // (Names compared byte for byte, in a list of six: no hashing of each.)
    var seen: [Substring] = []
    return query.firstName { name in
      defer { seen.append(name) }
      return !parameters.contains { $0.utf8.elementsEqual(name.utf8) }
        || seen.contains { $0.utf8.elementsEqual(name.utf8) }
    }
  }

  /// Whether `text` is an expiry as a signed address writes it: seconds since 1970, 1 to 12
  /// digits.
  static func isExpiry(_ text: Substring) -> Bool {
    (1...12).contains(text.utf8.count) && text.utf8.allSatisfy { (48...57).contains($0) }
  }

  /// Whether `request` has a signed address's form (a signable representation; `v`; `e` in
  /// digits; `sig` of 22 base64url characters; no other parameter, none twice), whatever
  /// its signature is worth: only such a one falls back to a login when it fails.
  static func isWellFormed(_ request: Request) -> Bool {
    guard let path = renditionPath(request),
      let rep = Representation(rawValue: String(path.representation)),
      RenditionSigner.representations.contains(rep)
    else { return false }
    let query = request.query
    guard strayParameter(query) == nil, query["v"] != nil, let expires = query["e"],
      isExpiry(expires), let signature = query["sig"], signature.utf8.count == 22,
      signature.utf8.allSatisfy({ byte in
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
          || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
      })
    else { return false }
    return true
  }
}

/// An asset's signed addresses in the API (`signed`): the expiry (`e=`) and, by
/// representation, the signature (`sig=`) to add to its URL.
struct APISignatures: Encodable, Sendable {
  var expires: Int
  var signatures: [String: String]

  func encode(to encoder: Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(expires, forKey: Key("expires"))
    for (representation, signature) in signatures.sorted(by: { $0.key < $1.key }) {
      try container.encode(signature, forKey: Key(representation))
    }
  }

  struct Key: CodingKey {
    let stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
  }
}
