import Crypto
import Foundation
import Testing

@testable import Darkroom

/// `serve --signed-renditions`: the listings hand out signed addresses of the grid's and the
/// viewer's renditions; darkroom, and nginx through docs/nginx/darkroom-signed.js, let such an
/// address in without a login, and refuse a wrong, foreign, other-representation or expired
/// one with 403.
@Suite(.serialized, .offThePool)
struct SignedRenditionTests {
  /// One GET or other request on a connection of its own: status, head and body bytes.
  static func fetch(
    port: Int, _ path: String, method: String = "GET", token: String? = nil,
    accept: String = "image/webp,image/*"
  ) throws -> (status: Int, head: String, bytes: [UInt8]) {
    let fd = try ServeProcess.connect(port: port)
    defer { close(fd) }
    var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    head += "Accept: \(accept)\r\n"
    if let token { head += "Authorization: Bearer \(token)\r\n" }
    ServeProcess.send(fd, Array((head + "Content-Length: 0\r\n\r\n").utf8))
    return ServeProcess.readResponse(fd)
  }

  static func header(_ name: String, in head: String) -> String? {
    for line in head.split(separator: "\r\n") {
      let parts = line.split(separator: ":", maxSplits: 1)
      if parts.count == 2, parts[0].lowercased() == name.lowercased() {
        return parts[1].trimmingCharacters(in: .whitespaces)
      }
    }
    return nil
  }

  static func message(_ bytes: [UInt8]) -> String? {
    let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    return (object?["error"] as? [String: Any])?["message"] as? String
  }

  /// The documented signature, worked out here from the key's bytes with swift-crypto (not
  /// by the engine's signer): HMAC-SHA256 over the five lines, first 16 bytes, base64url.
  static func signature(
    key: [UInt8], _ id: String, _ rep: String, _ version: String, _ expires: Int
  )
    -> String
  {
    let message = "darkroom-rendition-1\n\(id)\n\(rep)\n\(version)\n\(expires)"
    let code = HMAC<SHA256>.authenticationCode(
      for: Array(message.utf8), using: SymmetricKey(data: key))
    return Data(Array(code).prefix(16)).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// The listing's assets (id, version, signed) as read with the read token.
  static func listed(_ server: ServeProcess) throws -> [[String: Any]] {
    let list = try server.request("GET", "/api/assets", token: ServedLibrary.readToken)
    #expect(list.status == 200)
    return ServeProcess.json(list.text)["assets"] as? [[String: Any]] ?? []
  }

  @Test("a signed address opens its one rendition without a login; any other is 403")
  func darkroomChecks() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg", "gps.jpg"])
    let server = try ServeProcess(served.root, arguments: ["--signed-renditions"])
    defer { _ = server.stop() }
    let keyPath = served.root + "/.darkroom/signing.key"
    var info = stat()
    #expect(lstat(keyPath, &info) == 0)
    #expect(info.st_mode & 0o7777 == 0o600)
    let key = try Fixture.bytes(keyPath)
    #expect(key.count == 32)

    let assets = try Self.listed(server)
    #expect(assets.count == 2)
    let now = Int(Date().timeIntervalSince1970)
    var addresses: [String: (version: String, expires: Int, signed: [String: String])] = [:]
    for asset in assets {
      let id = try #require(asset["id"] as? String)
      let version = try #require(asset["version"] as? String)
      let signed = try #require(asset["signed"] as? [String: Any])
      let expires = try #require(signed["expires"] as? Int)
      // A day and up to an hour more, ending on a whole hour.
      #expect(expires % 3600 == 0)
      #expect(expires > now + 86_400 - 5 && expires <= now + 86_400 + 3600 + 5)
      var signatures: [String: String] = [:]
      for rep in ["thumbnail", "aspect-thumbnail", "fullscreen"] {
        let signature = try #require(signed[rep] as? String)
        #expect(signature == Self.signature(key: key, id, rep, version, expires))
        signatures[rep] = signature
      }
      #expect(Set(signed.keys) == ["expires", "thumbnail", "aspect-thumbnail", "fullscreen"])
      addresses[id] = (version, expires, signatures)
    }
    let ids = addresses.keys.sorted()
    let (a, b) = (ids[0], ids[1])
    func address(
      _ id: String, _ rep: String, signedAs other: String? = nil, rep signedRep: String? = nil
    )
      -> String
    {
      let (version, expires, _) = addresses[id]!
      let signature = addresses[other ?? id]!.signed[signedRep ?? rep]!
      return "/api/assets/\(id)/\(rep)?size=64&v=\(version)&e=\(expires)&sig=\(signature)"
    }

    // No login: the same bytes as a logged-in reader's, kept no longer than it lives.
    let signed = try Self.fetch(port: server.port, address(a, "thumbnail"))
    #expect(signed.status == 200, "\(signed.head)")
    let (version, expires, _) = addresses[a]!
    let plain = try Self.fetch(
      port: server.port, "/api/assets/\(a)/thumbnail?size=64&v=\(version)",
      token: ServedLibrary.readToken)
    #expect(plain.status == 200)
    #expect(!signed.bytes.isEmpty && signed.bytes == plain.bytes)
    let cacheControl = try #require(Self.header("Cache-Control", in: signed.head))
    #expect(cacheControl.hasPrefix("public, max-age=") && cacheControl.hasSuffix(", immutable"))
    let maxAge = Int(cacheControl.dropFirst(16).prefix { $0.isNumber }) ?? -1
    #expect(maxAge > 86_000 && maxAge <= expires - now - 60)
    #expect(Self.header("Cache-Control", in: plain.head) == "public, max-age=31536000, immutable")
    for rep in ["aspect-thumbnail", "fullscreen"] {
      #expect(try Self.fetch(port: server.port, address(a, rep)).status == 200)
    }

    let notThis = "the signature is not this library's for this asset, version and representation"
    func refused(_ path: String, _ message: String, method: String = "GET") throws {
      let answer = try Self.fetch(port: server.port, path, method: method)
      #expect(answer.status == 403, "\(path): \(answer.head)")
      #expect(Self.message(answer.bytes) == message, "\(path)")
      #expect(Self.header("Content-Type", in: answer.head) == "application/json; charset=utf-8")
    }
    // Another asset's signature, another representation's, a changed byte, another version.
    try refused(address(a, "thumbnail", signedAs: b), notThis)
    try refused(address(a, "fullscreen", rep: "thumbnail"), notThis)
    var flipped = Array(addresses[a]!.signed["thumbnail"]!)
    flipped[3] = flipped[3] == "A" ? "B" : "A"
    try refused(
      "/api/assets/\(a)/thumbnail?size=64&v=\(version)&e=\(expires)&sig=\(String(flipped))", notThis
    )
    try refused(
      address(a, "thumbnail").replacingOccurrences(of: "v=\(version)", with: "v=0\(version)"),
      notThis)
    // A later expiry than the one signed.
    try refused(
      address(a, "thumbnail").replacingOccurrences(of: "e=\(expires)", with: "e=\(expires + 3600)"),
      notThis)
    // Past its expiry, signed with the right key.
    let past = now - 60
    let stale = Self.signature(key: key, a, "thumbnail", version, past)
    let when = Date(timeIntervalSince1970: Double(past)).ISO8601Format()
    try refused(
      "/api/assets/\(a)/thumbnail?size=64&v=\(version)&e=\(past)&sig=\(stale)",
      "the signed address expired at \(when)")
    // What a signature never opens.
    try refused(
      "/api/assets/\(a)/full?v=\(version)&e=\(expires)&sig=\(Self.signature(key: key, a, "full", version, expires))",
      "a signed address names only a thumbnail, aspect-thumbnail or fullscreen")
    try refused(
      "/api/assets/\(a)/history?v=\(version)&e=\(expires)&sig=x",
      "a signed address names only a thumbnail, aspect-thumbnail or fullscreen")
    try refused("/api/assets?sig=x", "a signed address is an asset's rendition: /api/assets/ID/REP")
    try refused("/api/assets/\(a)/thumbnail?sig=x", "a signed address has v, e and sig")
    try refused(
      address(a, "thumbnail"), "a signed address only reads (GET or HEAD)", method: "POST")
    // Only the parameters a rendition reads, each once; an expiry written otherwise.
    let only =
      "a signed address takes v, e, sig, size, format and original, each once; not "
    try refused(address(a, "thumbnail") + "&crop=attention", only + "crop")
    try refused(address(a, "thumbnail") + "&size=65", only + "size")
    try refused(
      address(a, "thumbnail").replacingOccurrences(of: "e=\(expires)", with: "e=0\(expires)"),
      "the signed address's expiry (e) is not a time")
    // A bad signature with a login: let in by the login, and not marked for nginx to keep.
    var flippedAddress = address(a, "thumbnail")
    flippedAddress.replaceSubrange(
      flippedAddress.index(flippedAddress.endIndex, offsetBy: -3)..., with: "xyz")
    let withLogin = try Self.fetch(
      port: server.port, flippedAddress, token: ServedLibrary.readToken)
    #expect(withLogin.status == 200)
    #expect(withLogin.bytes == plain.bytes)
    #expect(Self.header("X-Accel-Expires", in: withLogin.head) == nil)
    // An address no server hands out (an empty signature) is refused even with a login.
    let malformed = try Self.fetch(
      port: server.port, "/api/assets/\(a)/thumbnail?v=\(version)&e=\(expires)&sig=",
      token: ServedLibrary.readToken)
    #expect(malformed.status == 403)
    #expect(Self.message(malformed.bytes) == notThis)
    #expect(Self.header("X-Accel-Expires", in: signed.head) == "60")
    // A photo in the trash: its addresses are 404. (One not asked for since; the server
    // looks an asset up again at most every SignedAddresses.liveFor seconds.)
    let trashed = try CLI.run(["trash", b, "--library", served.root])
    #expect(trashed.status == 0, "\(trashed.stderr)")
    let gone = try Self.fetch(port: server.port, address(b, "thumbnail"))
    #expect(gone.status == 404)
    #expect(Self.message(gone.bytes) == "no such asset: it is in the trash or gone")
    // No signature and no login: as before.
    #expect(try Self.fetch(port: server.port, "/api/assets/\(a)/thumbnail?size=64").status == 401)
    #expect(server.stop() == 0)
    #expect(try Fixture.bytes(keyPath) == key)  // the key outlives the server

    // A server that hands out none takes none, and lists none.
    let unsigned = try ServeProcess(served.root)
    defer { _ = unsigned.stop() }
    #expect(try Self.listed(unsigned).allSatisfy { $0["signed"] == nil })
    let answer = try Self.fetch(port: unsigned.port, address(a, "thumbnail"))
    #expect(answer.status == 403)
    #expect(
      Self.message(answer.bytes)
        == "this server takes no signed addresses (darkroom serve --signed-renditions)")
  }

  @Test("base64url (signatures, shared links' tokens) is Foundation's base64 with - _ and no =")
  func base64url() {
    var generator = SystemRandomNumberGenerator()
    for count in 0...40 {
      let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let expected = Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
      #expect(Library.base64url(bytes) == expected, "\(bytes)")
    }
    #expect(Library.base64url([0xFB, 0xFF]) == "-_8")
  }

  @Test("a signing key that others may read is refused, and the server does not start")
  func keyOthersMayRead() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let keyPath = served.root + "/.darkroom/signing.key"
    #expect(FileManager.default.createFile(atPath: keyPath, contents: Data(count: 32)))
    chmod(keyPath, 0o644)
    let before = try Fixture.bytes(keyPath)
    let result = try CLI.run(["serve", served.root, "--port", "0", "--signed-renditions"])
    #expect(result.status == 1)
    #expect(
      result.stderr
        == "darkroom: \(keyPath): refused as the key that signs renditions' addresses: others may use it (mode 644): remove it, and the server makes another (every signed address handed out stops working)\n"
    )
    #expect(try Fixture.bytes(keyPath) == before)
    var info = stat()
    #expect(lstat(keyPath, &info) == 0 && info.st_mode & 0o7777 == 0o644)
  }

  /// nginx with docs/server.md's block for signed addresses, in front of darkroom at
  /// `upstream`; `key` (the library's key file) is written for it in hex, as the page says.
  final class Nginx: @unchecked Sendable {
    let folder: TemporaryFolder
    let process = Process()
    let port: Int

    static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") }
    static var hasNJS: Bool {
      available
        && FileManager.default.fileExists(atPath: "/usr/lib/nginx/modules/ngx_http_js_module.so")
    }

    /// With `checks`, the block that checks signatures in nginx (njs); else the one that
    /// keeps what darkroom checked.
    init(upstream: Int, key: String, checks: Bool) throws {
      folder = try TemporaryFolder()
      port = try Browser.freePort()
      let script = Fixture.root.appendingPathComponent("docs/nginx/darkroom-signed.js").path
      // The key in hex, as docs/server.md's od line writes it for nginx.
      let hex = try Fixture.bytes(key).map { String(format: "%02x", $0) }.joined()
      let snippet = try folder.write(
        "darkroom-signing-key.conf", Array("set $darkroom_signing_key \(hex);\n".utf8))
      let root = folder.path
      let cache = ("/var/cache/nginx/darkroom-signed", root + "/cache")
      let (http, location) =
        checks
        ? try Self.documentedBlock(
          1,
          [
            cache, ("/etc/nginx/darkroom-signed.js", script),
            ("/etc/nginx/darkroom-signing-key.conf", snippet),
          ])
        : try Self.documentedBlock(0, [cache])
      let config = """
        \(checks ? "load_module /usr/lib/nginx/modules/ngx_http_js_module.so;" : "")
        daemon off;
        master_process off;
        pid \(root)/nginx.pid;
        error_log \(root)/error.log;
        events { worker_connections 64; }
        http {
          access_log off;
          client_body_temp_path \(root)/body;
          proxy_temp_path \(root)/proxy;
          fastcgi_temp_path \(root)/fastcgi;
          uwsgi_temp_path \(root)/uwsgi;
          scgi_temp_path \(root)/scgi;
          upstream darkroom { server 127.0.0.1:\(upstream); }
          \(http)
          server {
            listen 127.0.0.1:\(port);
            location / {
              proxy_pass http://darkroom;
              proxy_set_header Host $host;
            }
            \(location)
          }
        }
        """
      try config.write(toFile: folder.file("nginx.conf"), atomically: true, encoding: .utf8)
      process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
      process.arguments = ["-p", root, "-c", folder.file("nginx.conf"), "-e", root + "/error.log"]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      let port = port
      let up = eventually(20) {
        guard let fd = try? ServeProcess.connect(port: port) else { return false }
        close(fd)
        return true
      }
      if !up {
        let log = (try? String(contentsOfFile: root + "/error.log", encoding: .utf8)) ?? ""
        throw DarkroomError(.engine, "nginx did not start: \(log)")
      }
    }

    /// docs/server.md's nginx block `index` (0: nginx keeps what darkroom checked; 1: nginx
    /// checks with njs) for signed addresses, as written there but for the paths `here`
    /// gives (written there, used here): its lines for `http { }`, and its `location`.
    static func documentedBlock(_ index: Int, _ here: [(String, String)]) throws -> (
      http: String, location: String
    ) {
      let page = try String(
        contentsOf: Fixture.root.appendingPathComponent("docs/server.md"), encoding: .utf8)
      guard let section = page.range(of: "## Signed addresses") else {
        throw DarkroomError(.notFound, "docs/server.md has no section on signed addresses")
      }
      var from = section.upperBound
      var blocks: [String] = []
      while let open = page.range(of: "```nginx\n", range: from..<page.endIndex),
        let close = page.range(of: "```", range: open.upperBound..<page.endIndex)
      {
        blocks.append(String(page[open.upperBound..<close.lowerBound]))
        from = close.upperBound
      }
      guard index < blocks.count else {
        throw DarkroomError(.notFound, "docs/server.md has \(blocks.count) nginx blocks there")
      }
      var block = blocks[index]
      for (written, path) in here {
        guard block.contains(written) else {
          throw DarkroomError(.notFound, "docs/server.md's block \(index) does not name \(written)")
        }
        block = block.replacingOccurrences(of: written, with: path)
      }
      guard let split = block.range(of: "# in server { }") else {
        throw DarkroomError(.notFound, "docs/server.md's block has no '# in server { }'")
      }
      return (String(block[..<split.lowerBound]), String(block[split.lowerBound...]))
    }

    /// Kills it: nginx without a master process keeps the signal mask it was started with,
    /// in which the test runner's threads block SIGTERM, so only SIGKILL reaches it.
    func stop() {
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
      }
    }

    deinit { stop() }
  }

  /// Two photos served with `--signed-renditions`, behind nginx with docs/server.md's block
  /// (`checks`: the njs one).
  static func behindNginx(checks: Bool) throws -> (ServedLibrary, ServeProcess, Nginx) {
    let served = try ServedLibrary(samples: ["orientation-1.jpg", "gps.jpg"])
    let server = try ServeProcess(served.root, arguments: ["--signed-renditions"])
    let nginx = try Nginx(
      upstream: server.port, key: served.root + "/.darkroom/signing.key", checks: checks)
    return (served, server, nginx)
  }

  @Test(
    "plain nginx keeps the signed answers darkroom checked, a minute at most, and no other",
    .enabled(if: Nginx.available, "needs nginx (.ci/run installs it)"))
  func nginxKeeps() throws {
    let (served, server, nginx) = try Self.behindNginx(checks: false)
    defer { _ = (served, server.stop(), nginx.stop()) }
    let assets = try Self.listed(server)
    let first = try #require(assets.first)
    let other = try #require(assets.last)
    let (id, version) = (first["id"] as! String, first["version"] as! String)
    let signed = first["signed"] as! [String: Any]
    let expires = signed["expires"] as! Int
    let address = "/api/assets/\(id)/thumbnail?size=64&v=\(version)&e=\(expires)&sig="
    let good = address + (signed["thumbnail"] as! String)
    let forged = address + ((other["signed"] as! [String: Any])["thumbnail"] as! String)

    // darkroom tells nginx how long it may keep the answer: a minute (less than the
    // address's life), and nginx does not pass that on.
    let direct = try Self.fetch(port: server.port, good)
    #expect(direct.status == 200)
    #expect(Self.header("X-Accel-Expires", in: direct.head) == "60")
    let miss = try Self.fetch(port: nginx.port, good)
    #expect(miss.status == 200, "\(miss.head)")
    #expect(Self.header("X-Cache-Status", in: miss.head) == "MISS")
    #expect(Self.header("X-Accel-Expires", in: miss.head) == nil)
    #expect(miss.bytes == direct.bytes)
    #expect(Self.header("X-Cache-Status", in: try Self.fetch(port: nginx.port, good).head) == "HIT")
    // A forged address reaches darkroom, is refused, and is not kept (twice: 403 each time).
    for _ in 0..<2 {
      let answer = try Self.fetch(port: nginx.port, forged)
      #expect(answer.status == 403)
      #expect(Self.header("X-Cache-Status", in: answer.head) == "MISS")
      #expect(Self.header("X-Accel-Expires", in: answer.head) == nil)
    }
    // A logged-in request whose address names SIG (nginx's $arg_ ignores case; darkroom
    // does not, and checks the login): answered, never kept, so the same address without
    // the login is darkroom's 401, not the logged-in answer.
    let sneaky = "/api/assets/\(id)/thumbnail?size=64&v=\(version)&SIG=x"
    #expect(try Self.fetch(port: nginx.port, sneaky, token: ServedLibrary.readToken).status == 200)
    #expect(try Self.fetch(port: nginx.port, sneaky).status == 401)
    // Unsigned: bypasses the cache; darkroom's 401.
    let unsigned = try Self.fetch(
      port: nginx.port, "/api/assets/\(id)/thumbnail?size=64&v=\(version)")
    #expect(unsigned.status == 401)
    #expect(Self.header("X-Cache-Status", in: unsigned.head) == "BYPASS")

    // darkroom stopped: what it checked is answered by nginx alone; the forgery, never kept,
    // finds no darkroom (502), so nginx never answered it from its cache.
    #expect(server.stop() == 0)
    let alone = try Self.fetch(port: nginx.port, good)
    #expect(alone.status == 200)
    #expect(alone.bytes == direct.bytes)
    #expect(Self.header("X-Cache-Status", in: alone.head) == "HIT")
    #expect(try Self.fetch(port: nginx.port, forged).status == 502)
  }

  @Test(
    "nginx checks a signed address itself and answers it from its cache, darkroom stopped",
    .enabled(if: Nginx.hasNJS, "needs nginx and its njs module (.ci/run installs them)"))
  func nginxChecks() throws {
    let (served, server, nginx) = try Self.behindNginx(checks: true)
    defer { _ = (served, server.stop(), nginx.stop()) }
    let key = try Fixture.bytes(served.root + "/.darkroom/signing.key")

    let assets = try Self.listed(server)
    let first = try #require(assets.first)
    let other = try #require(assets.last)
    let (id, version) = (first["id"] as! String, first["version"] as! String)
    let signed = first["signed"] as! [String: Any]
    let expires = signed["expires"] as! Int
    let good =
      "/api/assets/\(id)/thumbnail?size=64&v=\(version)&e=\(expires)&sig=\(signed["thumbnail"] as! String)"
    let foreign =
      "/api/assets/\(id)/thumbnail?size=64&v=\(version)&e=\(expires)&sig=\((other["signed"] as! [String: Any])["thumbnail"] as! String)"
    let otherRep =
      "/api/assets/\(id)/fullscreen?size=64&v=\(version)&e=\(expires)&sig=\(signed["thumbnail"] as! String)"
    let past = Int(Date().timeIntervalSince1970) - 60
    let expired =
      "/api/assets/\(id)/thumbnail?size=64&v=\(version)&e=\(past)&sig=\(Self.signature(key: key, id, "thumbnail", version, past))"

    let direct = try Self.fetch(port: server.port, good)
    #expect(direct.status == 200)
    let miss = try Self.fetch(port: nginx.port, good)
    #expect(miss.status == 200, "\(miss.head)")
    #expect(Self.header("X-Cache-Status", in: miss.head) == "MISS")
    #expect(miss.bytes == direct.bytes)
    let hit = try Self.fetch(port: nginx.port, good)
    #expect(Self.header("X-Cache-Status", in: hit.head) == "HIT")
    // Unsigned, without a login: darkroom's own 401, passed through and not kept.
    let unsigned = try Self.fetch(
      port: nginx.port, "/api/assets/\(id)/thumbnail?size=64&v=\(version)")
    #expect(unsigned.status == 401)

    // darkroom stopped: nginx answers the signed address from its cache, and refuses the
    // others itself (a request it let through would find no darkroom: 502).
    #expect(server.stop() == 0)
    let alone = try Self.fetch(port: nginx.port, good)
    #expect(alone.status == 200)
    #expect(alone.bytes == direct.bytes)
    #expect(Self.header("X-Cache-Status", in: alone.head) == "HIT")
    for path in [
      foreign, otherRep, expired,
      good.replacingOccurrences(of: "e=\(expires)", with: "e=\(expires + 3600)"),
    ] {
      let answer = try Self.fetch(port: nginx.port, path)
      #expect(answer.status == 403, "\(path): \(answer.head)")
      #expect(
        Self.message(answer.bytes) == "not a signed address of this library, or one that expired")
    }
    #expect(try Self.fetch(port: nginx.port, good, method: "POST").status == 403)
  }
}
