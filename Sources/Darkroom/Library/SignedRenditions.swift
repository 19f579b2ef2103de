import Crypto
import FoundationEssentials

/// Addresses of renditions that need no login, so that a front server (nginx) or a CDN can
/// check them and answer from its own cache without asking Darkroom: the gallery's grid and
/// viewer images, handed out by a server started with `--signed-renditions`.
///
/// A signature is an HMAC-SHA256, under a key kept in the library (`.darkroom/signing.key`,
/// 32 random bytes, 0600), over the asset's id, its ``Asset/version``, the representation and
/// an expiry, cut to its first 128 bits and written as 22 characters of base64url. The
/// message is those four lines after a first line naming the scheme:
///
/// ```text
/// darkroom-rendition-1
/// 01JD6W2C0Q3T9Y3V8G5RZ2KX4M      (the asset's id)
/// thumbnail                         (the representation)
/// 3f1c9a7be2d4                      (its version: the v= of the address)
/// 1767225600                        (the expiry, seconds since 1970, UTC)
/// ```
///
/// The address is the API's own with two parameters more:
/// `/api/assets/ID/thumbnail?size=256&v=VERSION&e=EXPIRY&sig=SIGNATURE`. The size and format
/// are not signed: whoever holds a signature for an asset's thumbnail may ask for any size
/// of it, as a logged-in reader may. A signature names one version: after an edit the
/// address still answers until it expires (docs/server.md says with which pixels).
///
/// Expiries are rounded up to a whole step (an hour, or the lifetime when shorter), so that a
/// page loaded twice within a step gets the same addresses, which browsers and caches keep.
/// `docs/nginx/darkroom-signed.js` is the same check written for nginx's njs.
package struct RenditionSigner: Sendable {
  /// The HMAC with its key already set up (its padded blocks hashed), copied for each
  /// signature.
  private let keyed: HMAC<SHA256>

  /// The representations a signature may name: those the gallery shows from the cache.
  package static let representations: [Representation] = [
    .thumbnail, .aspectThumbnail, .fullscreen,
  ]
  /// The key's file in the library's `.darkroom/`.
  package static let keyName = "signing.key"
  static let scheme = "darkroom-rendition-1"

  package init(key: [UInt8]) { keyed = HMAC<SHA256>(key: SymmetricKey(data: key)) }

  /// The signature of `representation` of `asset` at `version`, valid until `expires`
  /// (seconds since 1970).
  package func signature(
    id: AssetID, version: String, representation: Representation, expires: Int
  ) -> String {
    let message =
      Self.scheme + "\n" + id.rawValue + "\n" + representation.rawValue + "\n"
      + version + "\n" + String(expires)
    var hmac = keyed
    hmac.update(data: Array(message.utf8))
    let code = hmac.finalize()
    return Library.base64url(Array(code.prefix(16)))
  }

  /// The expiry to sign now for addresses that live at least `lifetime` seconds: the end of
  /// the current step (an hour, or `lifetime` when shorter) plus `lifetime`.
  package static func expiry(lifetime: Int, now: Double) -> Int {
    let step = max(1, min(3600, lifetime))
    let (seconds, _) = Int(now.rounded(.down)).dividedReportingOverflow(by: step)
    return (seconds + 1) * step + lifetime
  }

  /// Checks a signed address's parts; returns when `signature` is this library's for them and
  /// `expires` is still ahead of `now`.
  ///
  /// - Throws: `invalidArgument` saying why not: a representation no signature names, an
  ///   expiry that is not a number or has passed, or a signature that is not this key's for
  ///   this asset, version and representation. The signature is compared in a time that does
  ///   not depend on where it first differs.
  package func check(
    id: AssetID, version: String, representation: String, expires: String, signature: String,
    now: Double
  ) throws(DarkroomError) {
    guard let rep = Representation(rawValue: representation), Self.representations.contains(rep)
    else {
      throw DarkroomError(
        .invalidArgument, "a signed address names only a thumbnail, aspect-thumbnail or fullscreen")
    }
    // Digits as the signer writes them (no sign, no leading zero): the text is what is signed.
    guard expires.utf8.count <= 12, let seconds = Int(expires), seconds >= 0,
      String(seconds) == expires
    else {
      throw DarkroomError(.invalidArgument, "the signed address's expiry (e) is not a time")
    }
    guard Double(seconds) > now else {
      throw DarkroomError(
        .invalidArgument,
        "the signed address expired at \(Date(timeIntervalSince1970: Double(seconds)).ISO8601Format())"
      )
    }
    let expected = self.signature(
      id: id, version: version, representation: rep, expires: seconds)
    guard Secrets.equal(expected, signature) else {
      throw DarkroomError(
        .invalidArgument,
        "the signature is not this library's for this asset, version and representation")
    }
  }
}

extension Library {
  /// This library's signer of rendition addresses, its key made on first use.
  ///
  /// - Throws: `invalidArgument` naming `.darkroom/signing.key` when it is not this user's
  ///   alone or not 32 bytes; `io` when the library's `.darkroom/` cannot hold it (read-only).
  package func renditionSigner() throws(DarkroomError) -> RenditionSigner {
    let path = metadataFolder.path + "/" + RenditionSigner.keyName
    let made = try PrivateKeyFile.open(
      path, what: "the key that signs renditions' addresses",
      remedy: "the server makes another (every signed address handed out stops working)")
    guard let key = made else {
      throw DarkroomError(
        .io, file: path, "cannot be made: the library's .darkroom folder is not writable")
    }
    return RenditionSigner(key: key)
  }
}
