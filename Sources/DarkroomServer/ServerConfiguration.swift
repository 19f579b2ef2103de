import Darkroom

#if canImport(Glibc)
  import Glibc
#endif

/// How `darkroom serve` runs: where it listens, who may do what, and its limits.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.port = 8080
/// configuration.tokens = try Tokens(file: "tokens.txt")
/// ```
package struct ServerConfiguration: Sendable {
  /// The address to listen on: loopback unless told otherwise.
  package var host = "127.0.0.1"
  package var port = 8080
  /// Who may read and who may write (bearer tokens, and the login form's).
  package var tokens = Tokens()
  /// Renders at once: as many as cores.
  package var renderSlots = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  /// Cold renders waiting beyond the running ones before the server answers 503.
  package var renderQueueBound = 64
  /// Connections one client address may hold open at once (0: no limit): a new one past it
  /// is closed at once. Behind a front server every request comes from its address: raise
  /// this (or set 0) there.
  package var maxConnectionsPerClient = 128
  /// Connections open at once in all (0: no limit; the start lowers it to what the open
  /// files limit leaves room for): past it, a request is answered 503 with `Retry-After`.
  package var maxConnections = 4096
  /// A connection with nothing under way for this long is closed, and so is one whose
  /// request's head has not arrived whole by then (a slow-header client).
  package var idleTimeout: Duration = .seconds(30)
  /// Requests a second per client, sustained (0: no limit), and the burst allowed above it.
  package var rateLimit = 200.0
  package var rateBurst = 400.0
  /// Failed logins a client may make at once, and how many more it earns a second (five,
  /// then one each 12 s).
  package var failedLogins = (burst: 5.0, perSecond: 5.0 / 60)
  /// Failed space unlocks a session, and a client address, may make at once, and how many
  /// more each earns a second (five, then one each 12 s). A session that has not failed is
  /// never refused.
  package var failedUnlocks = (burst: 5.0, perSecond: 5.0 / 60)
  /// What an upload may be.
  package var uploadLimits = Upload.Limits()
  /// How representations and edits are made; with workers, decoders run in worker
  /// processes, so a file that crashes one costs one error response.
  package var pixels = PixelSettings()
  /// Batch jobs' assets at once.
  package var batchJobs = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  /// How often the change feed looks at the change log.
  package var changePollInterval: Duration = .milliseconds(250)
  /// A folder of encrypted spaces (`darkroom space create`) that the gallery's sessions may
  /// unlock with a password; nil for none.
  package var spaces: String?
  /// An unlocked space is locked after this long without a request that uses it.
  package var spaceIdle: Duration = .seconds(15 * 60)
  /// Whether the server makes the gallery's thumbnails the cache lacks in the background
  /// (``Library/makeGridThumbnails(_:progress:)``): at start, newest first, then those of
  /// each new or changed photo; one render at a time, and only while no request's render
  /// waits. `darkroom serve` turns it on (`--no-background` does not).
  package var backgroundThumbnails = false
  /// An internal location of a front server (nginx) that serves the library's rendition
  /// cache folder, such as `/_darkroom_cache/`: a rendition found in the cache is then
  /// answered with its headers and `X-Accel-Redirect` to its file there, and the front server
  /// sends the bytes. nil: the bytes are sent from here.
  package var accelRedirect: String?
  /// How long a signed rendition address lives, in seconds, when the API's listings hand
  /// them out (``RenditionSigner``): a front server or a CDN may check and serve those
  /// without asking this one. nil: none are handed out, and a signed address is refused.
  package var signedRenditions: Int?
  /// A tile server's URL with `{z}`, `{x}` and `{y}` (`https://tile.openstreetmap.org/{z}/{x}/{y}.png`)
  /// for the gallery's map, and the credit its terms ask for: no map until it is set (the
  /// photos' positions go nowhere else). Its origin is added to the pages' `img-src`.
  package var mapTiles: String?
  package var mapAttribution: String?

  /// Where the tiles come from (`https://tile.openstreetmap.org`), or nil.
  package var mapTilesOrigin: String? {
    guard let mapTiles, let scheme = mapTiles.range(of: "://") else { return nil }
    let rest = mapTiles[scheme.upperBound...]
    let host = rest.prefix { $0 != "/" }
    return host.isEmpty ? nil : String(mapTiles[..<scheme.upperBound]) + host
  }

  /// Whether `url` is a tile URL the map takes: http(s), a host, `{z}`, `{x}` and `{y}`,
  /// nothing a page's attribute or a policy could be broken out of.
  package static func isTileURL(_ url: String) -> Bool {
    (url.hasPrefix("https://") || url.hasPrefix("http://")) && url.contains("{z}")
      && url.contains("{x}") && url.contains("{y}")
      && !url.contains { $0.isWhitespace || "\"'<>;\\`".contains($0) } && url.count <= 512
  }

  package init() {}
}

/// The access a token or a session gives.
package enum Access: String, Sendable, Comparable, Codable {
  case read, write
  package static func < (a: Access, b: Access) -> Bool { a == .read && b == .write }
}

/// Bearer tokens and what each may do, read from a file of lines `read TOKEN` or
/// `write TOKEN` (`#` starts a comment). Tokens are kept as SHA-256 hashes: a lookup by
/// hash leaks nothing through its timing about a token's characters.
package struct Tokens: Sendable {
  private var access: [String: Access] = [:]

  package init() {}

  /// The tokens in `file`.
  ///
  /// A file that its group or others may read or write is refused, as ssh refuses such a
  /// key: its tokens are the server's passwords.
  ///
  /// - Throws: `invalidArgument` naming the file for one with group or other permission
  ///   bits, and naming the file and line for a line that is not `read TOKEN` or
  ///   `write TOKEN`, or a token shorter than 16 characters; what reading the file throws.
  package init(file: String) throws(DarkroomError) {
    var info = stat()
    if stat(file, &info) == 0, info.st_mode & 0o077 != 0 {
      let mode = String(info.st_mode & 0o777, radix: 8)
      throw DarkroomError(
        .invalidArgument, file: file,
        "others may read or change this token file (mode \(mode)): make it private with chmod 600"
      )
    }
    let text = String(decoding: try readWholeFile(file), as: UTF8.self)
    for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      let words = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
      if words.isEmpty { continue }
      guard words.count == 2, let access = Access(rawValue: String(words[0])),
        words[1].count >= 16
      else {
        throw DarkroomError(
          .invalidArgument, file: file,
          "line \(number + 1): expected `read TOKEN` or `write TOKEN`, with a token of 16 characters or more"
        )
      }
      add(String(words[1]), access)
    }
  }

  /// Adds a token.
  package mutating func add(_ token: String, _ access: Access) {
    self.access[ContentHash.of(text: token).hex] = access
  }

  /// What `token` may do; nil for a token that is not one.
  package func access(_ token: String) -> Access? {
    access[ContentHash.of(text: token).hex]
  }

  package var isEmpty: Bool { access.isEmpty }

  /// A new random token: 32 hex digits from the system's secure generator.
  package static func random() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<2).map { _ in
      let text = String(generator.next() as UInt64, radix: 16)
      return String(repeating: "0", count: 16 - text.count) + text
    }.joined()
  }
}
