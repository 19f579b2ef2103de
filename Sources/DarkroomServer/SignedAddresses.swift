import Darkroom
import Foundation
import Hummingbird

/// `serve --signed-renditions`: the listings' assets carry signatures of their grid and viewer
/// renditions (``RenditionSigner``), and a request that carries one needs no login.
struct SignedAddresses: Sendable {
  let signer: RenditionSigner
  /// How long an address handed out lives at least, in seconds.
  let lifetime: Int

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
  static func isSigned(_ request: Request) -> Bool { request.uri.queryParameters["sig"] != nil }

  /// Checks a signed request: a GET or HEAD of `/api/assets/ID/REP` with `v`, `e` and `sig`
  /// that this library signed, not yet expired.
  ///
  /// - Throws: 403 saying what is wrong (never which byte of the signature).
  func check(_ request: Request, now: Double = Date().timeIntervalSince1970) throws {
    func refuse(_ message: String) -> APIError { APIError(.forbidden, "signature", message) }
    guard request.method == .get || request.method == .head else {
      throw refuse("a signed address only reads (GET or HEAD)")
    }
    let parts = request.uri.path.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 5, parts[1] == "api", parts[2] == "assets",
      let id = AssetID(String(parts[3]))
    else { throw refuse("a signed address is an asset's rendition: /api/assets/ID/REP") }
    let query = request.uri.queryParameters
    guard let version = query["v"], let expires = query["e"], let signature = query["sig"] else {
      throw refuse("a signed address has v, e and sig")
    }
    do {
      try signer.check(
        id: id, version: String(version), representation: String(parts[4]),
        expires: String(expires), signature: String(signature), now: now)
    } catch {
      throw refuse(error.message)
    }
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
