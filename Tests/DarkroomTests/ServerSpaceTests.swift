import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// A served library beside a folder of two spaces: "alpha" (empty) and "beta" (one photo).
final class ServedSpaces: @unchecked Sendable {
  let served: ServedLibrary
  let folder: TemporaryFolder
  let dir: String

  init() throws {
    served = try ServedLibrary(samples: ["orientation-1.jpg"])
    folder = try Fixture.temporaryFolder()
    dir = folder.file("Spaces")
    _ = try Space.create(at: dir, password: pw("alpha"), kdf: testKDF)
    let beta = try Space.create(
      at: dir, password: pw("beta"), otherPasswords: [pw("alpha")], kdf: testKDF)
    _ = try beta.add(file: Fixture.sample("orientation-8.jpg"))
  }

  func configuration(idle: Duration = .seconds(900)) -> ServerConfiguration {
    var configuration = served.configuration()
    configuration.spaces = dir
    configuration.spaceIdle = idle
    return configuration
  }

  func test(
    _ configuration: ServerConfiguration? = nil,
    _ body: @escaping @Sendable (any TestClientProtocol, DarkroomServer) async throws -> Void
  ) async throws {
    try await served.test(configuration ?? self.configuration(), body)
  }
}

/// A gallery login: its cookie, session id and CSRF token.
struct GalleryLogin {
  let cookie: String
  let csrf: String
  var session: String { String(cookie.dropFirst(AccessMiddleware.cookieName.count + 1)) }

  static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

  static func login(
    _ client: any TestClientProtocol, token: String = ServedLibrary.writeToken
  ) async throws -> GalleryLogin {
    let login = try await client.execute(
      uri: "/login", method: .post, headers: form, body: ByteBuffer(string: "token=\(token)"))
    let cookie = String(try #require(login.headers[.setCookie]).split(separator: ";")[0])
    let page = try await client.execute(uri: "/space", method: .get, headers: [.cookie: cookie])
    let csrf = try #require(
      page.text.split(separator: "name=\"csrf-token\" content=\"").dropFirst().first?.prefix(32))
    return GalleryLogin(cookie: cookie, csrf: String(csrf))
  }

  /// Headers of a cookie request that may change something.
  var headers: HTTPFields { [.cookie: cookie, .csrfToken: csrf] }

  func form(_ text: String) -> ByteBuffer { ByteBuffer(string: "csrf=\(csrf)&" + text) }

  func get(_ client: any TestClientProtocol, _ uri: String, _ extra: HTTPFields = [:])
    async throws -> TestResponse
  {
    var headers: HTTPFields = [.cookie: cookie]
    headers.append(contentsOf: extra)
    return try await client.execute(uri: uri, method: .get, headers: headers)
  }

  func post(_ client: any TestClientProtocol, _ uri: String, _ body: ByteBuffer = ByteBuffer())
    async throws -> TestResponse
  {
    try await client.execute(uri: uri, method: .post, headers: headers, body: body)
  }

  func postForm(_ client: any TestClientProtocol, _ uri: String, _ text: String = "")
    async throws -> TestResponse
  {
    var headers = Self.form
    headers[.cookie] = cookie
    return try await client.execute(uri: uri, method: .post, headers: headers, body: form(text))
  }
}

/// Where a secret's bytes appear under `folder`: every 16-byte window of `secret` at a
/// multiple of 16 is looked for at every offset of every file, so any copy of 31 or more
/// contiguous bytes of it is found.
func leaks(of secret: [UInt8], under folder: String) throws -> [String] {
  var windows = Set<[UInt8]>()
  for start in stride(from: 0, to: secret.count - 15, by: 16) {
    windows.insert(Array(secret[start..<start + 16]))
  }
  var found: [String] = []
  for (file, bytes) in try filesUnder(folder) where bytes.count >= 16 {
    for offset in 0...(bytes.count - 16) where windows.contains(Array(bytes[offset..<offset + 16]))
    {
      found.append("\(file) at \(offset)")
      break
    }
  }
  return found
}

/// The EXIF segment (APP1) of a JPEG: its GPS directory is in it.
func exifSegment(_ jpeg: [UInt8]) throws -> [UInt8] {
  var at = 2
  while at + 4 < jpeg.count, jpeg[at] == 0xFF {
    let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
    if jpeg[at + 1] == 0xE1 { return Array(jpeg[at..<at + 2 + length]) }
    at += 2 + length
  }
  throw DarkroomError(.corrupt, "no EXIF segment")
}

@Suite("darkroom serve: encrypted spaces", .timeLimit(.minutes(10)), .offThePool)
struct ServerSpaceTests {
  @Test("a space that locks itself is forgotten by its session then, not at its next request")
  func forgottenWhenIdle() throws {
    let folder = try Fixture.temporaryFolder()
    let space = try Space.create(at: folder.file("S"), password: pw("alpha"), kdf: testKDF)
    let sessions = Sessions(spaceIdle: .milliseconds(50))
    let session = sessions.create(.write, token: ServedLibrary.writeToken)
    sessions.unlock(space, for: session.id)
    #expect(sessions.heldSpaces == 1)
    // Nothing asks for it: its timer locks it, and the session lets it go. (The bound is
    // against a hang, not a measure.)
    #expect(eventually(60) { sessions.heldSpaces == 0 })
    #expect(space.isClosed && space.keys.space.isWiped)
    #expect(sessions.space(for: session.id) == nil)
  }

  @Test(
    "unlock, upload, browse, render, range, edit, revert and lock: nothing in plaintext on disk")
  func unlockAndServe() async throws {
    let spaces = try ServedSpaces()
    let gps = try Fixture.bytes(Fixture.sample("gps.jpg"))
    let turned = try Fixture.bytes(Fixture.sample("orientation-6.jpg"))
    let cacheBefore = try filesUnder(spaces.served.library.cacheFolder.path).count
    try await spaces.test { client, server in
      let login = try await GalleryLogin.login(client)
      let lockedPage = try await login.get(client, "/space")
      #expect(lockedPage.status == .ok)
      #expect(lockedPage.text.contains("Unlock a space"))
      #expect(lockedPage.headers[.cacheControl] == "no-store")
      let locked = try await login.get(client, "/api/space/assets")
      #expect(locked.status == .forbidden)
      #expect(locked.errorKind == "locked")
      // A bearer token has no session, so no space to lock: 403, as for unlocking.
      for path in ["/space/lock", "/api/space/lock"] {
        let bearer = try await client.execute(
          uri: path, method: .post, headers: ServedLibrary.write)
        #expect(bearer.status == .forbidden, "\(path)")
        #expect(bearer.errorKind == "session-needed", "\(path)")
      }

      // A wrong password: the page says so, and the API says exactly this and nothing else.
      let wrongPage = try await login.postForm(client, "/space/unlock", "password=gamma")
      #expect(wrongPage.status == .forbidden)
      #expect(wrongPage.text.contains("No space opens with this password."))
      let wrong = try await login.post(
        client, "/api/space/unlock", jsonBody(["password": "gamma"]))
      #expect(wrong.status == .forbidden)
      #expect(wrong.errorKind == "no-space")
      #expect(
        (wrong.object["error"] as? [String: Any])?["message"] as? String
          == "no space opens with this password")
      #expect(server.sessions.unlockedCount == 0)

      let unlocked = try await login.postForm(client, "/space/unlock", "password=alpha")
      #expect(unlocked.status == .seeOther)
      #expect(unlocked.headers[.location] == "/space")
      #expect(server.sessions.unlockedCount == 1)

      // Uploads: added, then the same bytes again, then a second photo.
      func upload(_ name: String, _ bytes: [UInt8]) async throws -> TestResponse {
        try await login.post(client, "/api/space/uploads?name=\(name)", ByteBuffer(bytes: bytes))
      }
      let added = try await upload("gps.jpg", gps)
      #expect(added.status == .created)
      #expect(added.object["status"] as? String == "added")
      #expect(try await upload("again.jpg", gps).object["status"] as? String == "duplicate")
      let second = try await upload("orientation-6.jpg", turned)
      #expect(second.status == .created)
      let id = try #require((second.object["asset"] as? [String: Any])?["id"] as? String)
      let notImage = try await upload("notes.jpg", Array("not an image".utf8))
      #expect(notImage.status.code / 100 == 4)

      // Only this space's assets: beta's photo is not among them.
      let list = try await login.get(client, "/api/space/assets")
      let names = (list.object["assets"] as? [[String: Any]] ?? []).compactMap {
        $0["name"] as? String
      }
      #expect(names.sorted() == ["gps.jpg", "orientation-6.jpg"])
      #expect(list.headers[.cacheControl] == "no-store")
      let page = try await login.get(client, "/space")
      #expect(page.text.contains("/api/space/assets/\(id)/thumbnail"))
      #expect(page.text.contains("action=\"/space/lock\""))

      // Renders come from memory, with the bytes the plaintext file renders to.
      let screen = try await login.get(client, "/api/space/assets/\(id)/fullscreen")
      #expect(screen.status == .ok)
      #expect(screen.headers[.cacheControl] == "no-store")
      #expect(screen.headers[.contentType] == "image/jpeg")
      var spec = RenditionSpec(.fullscreen)
      spec.metadata = .strip
      let expected = try Renderer().render(.file(Fixture.sample("orientation-6.jpg")), spec)
      #expect(screen.bytes == expected.bytes)
      let again = try await login.get(client, "/api/space/assets/\(id)/fullscreen")
      #expect(again.bytes == screen.bytes)

      // Range: exactly the bytes asked for, and the whole without one.
      let part = try await login.get(
        client, "/api/space/assets/\(id)/full", [.range: "bytes=100-199"])
      #expect(part.status == .partialContent)
      #expect(part.bytes == Array(turned[100..<200]))
      #expect(part.headers[.contentRange] == "bytes 100-199/\(turned.count)")
      let whole = try await login.get(client, "/api/space/assets/\(id)/full")
      #expect(whole.bytes == turned)
      let outside = try await login.get(
        client, "/api/space/assets/\(id)/full", [.range: "bytes=\(turned.count)-"])
      #expect(outside.status == .rangeNotSatisfiable)

      // An edit turns the thumbnail grey, and the photo a quarter: its row says the result's
      // size, as a library's does of an edited file. A revert brings back the original, byte
      // for byte, and its size.
      func size(_ object: [String: Any]) -> [Int] {
        ["width", "height"].map { object[$0] as? Int ?? 0 }
      }
      let upright = size(try await login.get(client, "/api/space/assets/\(id)").object)
      #expect(upright == [600, 400], "\(upright)")
      let edit = try await login.post(
        client, "/api/space/assets/\(id)/edit",
        jsonBody(["filters": ["noir", "rotate angle=90"]]))
      #expect(edit.status == .ok)
      #expect(edit.object["editVersion"] as? Int == 1)
      #expect(size(edit.object) == [400, 600], "\(edit.text)")
      #expect(
        size(try await login.get(client, "/api/space/assets/\(id)").object) == size(edit.object))
      let grey = try centrePixel(
        try await login.get(client, "/api/space/assets/\(id)/thumbnail").bytes)
      #expect(grey[0] == grey[1] && grey[1] == grey[2], "grey: \(grey)")
      let revert = try await login.post(client, "/api/space/assets/\(id)/revert")
      #expect(revert.object["editVersion"] as? Int == 0)
      #expect(size(try await login.get(client, "/api/space/assets/\(id)").object) == upright)
      #expect(try await login.get(client, "/api/space/assets/\(id)/full").bytes == turned)

      // Bad requests are 4xx with a JSON error.
      for uri in [
        "/api/space/assets/\(id)/poster", "/api/space/assets/../header",
        "/api/space/assets/gps.jpg/full", "/api/space/assets/\(id)/full?size=10",
        "/api/space/assets/\(id)/thumbnail?format=avif",
        "/api/space/assets/0123456789abcdef0123456789abcdef/full",
      ] {
        let bad = try await login.get(client, uri)
        #expect(bad.status.code / 100 == 4, "\(uri): \(bad.status)")
        #expect(bad.errorKind != nil, "\(uri)")
      }

      // Lock: the key is zeroed now, and the space answers "locked".
      let held = try #require(server.sessions.space(for: login.session))
      let lock = try await login.postForm(client, "/space/lock")
      #expect(lock.status == .seeOther)
      #expect(held.isClosed)
      #expect(held.keys.space.isWiped && held.keys.objects.isWiped)
      #expect(held.assets.isEmpty)
      #expect(server.sessions.unlockedCount == 0)
      #expect(try await login.get(client, "/api/space/assets/\(id)/full").errorKind == "locked")
    }
    // Nothing under the folder is plaintext: no image signature, EXIF (its GPS directory
    // included), location text or file name.
    #expect(
      try plaintextFound(
        under: spaces.dir, names: ["gps.jpg", "orientation-6", "orientation-8", "-22.95", "43.21"]
      ).isEmpty)
    #expect(try leaks(of: exifSegment(gps), under: spaces.dir).isEmpty)
    #expect(try leaks(of: turned, under: spaces.dir).isEmpty)
    // Nor did the library's own cache get any of it.
    #expect(try filesUnder(spaces.served.library.cacheFolder.path).count == cacheBefore)
    // The scanner finds 40 bytes of the EXIF segment at an odd offset among random ones.
    let control = try Fixture.temporaryFolder()
    let noise = (0..<999).map { _ in UInt8.random(in: 0...255) }
    _ = try control.write("control", noise + Array(try exifSegment(gps)[37..<77]) + noise)
    #expect(try leaks(of: exifSegment(gps), under: control.path) == ["control at 1010"])
  }

  @Test(
    "the key is dropped on logout and after the idle time; bearer tokens and read-only sessions")
  func keyLifetime() async throws {
    let spaces = try ServedSpaces()
    let idle = Duration.seconds(600)
    var configuration = spaces.configuration(idle: idle)
    // Five failed unlocks, then one an hour: what the limit checks below see cannot depend on
    // how long Argon2id took for the five (a loaded machine once refilled a token meanwhile).
    configuration.failedUnlocks = (burst: 5, perSecond: 1.0 / 3600)
    try await spaces.test(configuration) { client, server in
      // Logout.
      var login = try await GalleryLogin.login(client)
      _ = try await login.post(client, "/api/space/unlock", jsonBody(["password": "beta"]))
      var held = try #require(server.sessions.space(for: login.session))
      #expect(held.assets.map(\.name) == ["orientation-8.jpg"])
      let logout = try await login.postForm(client, "/logout")
      #expect(logout.status == .seeOther)
      #expect(held.isClosed && held.keys.space.isWiped)
      #expect(server.sessions.unlockedCount == 0)

      // Idle, found by the space's own timer (as time passes: the check it makes at its
      // deadline, asked here at chosen instants) and by a request (as it comes).
      login = try await GalleryLogin.login(client)
      _ = try await login.post(client, "/api/space/unlock", jsonBody(["password": "alpha"]))
      held = try #require(server.sessions.space(for: login.session))
      let deadline = try #require(held.idleDeadline(at: .now))
      #expect(deadline > .now + idle - .seconds(60) && deadline <= .now + idle)
      #expect(!held.lockIfIdle(at: .now + idle / 2))
      #expect(!held.isClosed && server.sessions.unlockedCount == 1)
      #expect(held.lockIfIdle(at: .now + idle + .seconds(1)))
      #expect(held.isClosed && held.keys.names.isWiped)
      #expect(server.sessions.unlockedCount == 0)
      #expect(server.sessions.space(for: login.session) == nil)
      _ = try await login.post(client, "/api/space/unlock", jsonBody(["password": "alpha"]))
      held = try #require(server.sessions.space(for: login.session))
      #expect(server.sessions.space(for: login.session, at: .now + idle + .seconds(1)) == nil)
      #expect(held.isClosed)
      #expect(try await login.get(client, "/api/space/assets").errorKind == "locked")
      let state = try await login.get(client, "/api/space")
      #expect(state.object["unlocked"] as? Bool == false)
      #expect(state.object["idleSeconds"] as? Int == 600)
      // Locked through the API: its answer is the space's state, served and locked.
      _ = try await login.post(client, "/api/space/unlock", jsonBody(["password": "alpha"]))
      held = try #require(server.sessions.space(for: login.session))
      let locked = try await login.post(client, "/api/space/lock")
      #expect(locked.status == .ok && held.isClosed)
      #expect(locked.object["served"] as? Bool == true)
      #expect(locked.object["unlocked"] as? Bool == false)
      #expect(locked.object["idleSeconds"] as? Int == 600)

      // A bearer token has no session to hold a key.
      let bearer = try await client.execute(
        uri: "/api/space/unlock", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["password": "alpha"]))
      #expect(bearer.status == .forbidden)
      #expect(bearer.errorKind == "session-needed")

      // A read-only session may unlock and look, not add.
      let reader = try await GalleryLogin.login(client, token: ServedLibrary.readToken)
      let opened = try await reader.post(
        client, "/api/space/unlock", jsonBody(["password": "beta"]))
      #expect(opened.status == .ok)
      #expect(opened.object["count"] as? Int == 1)
      let write = try await reader.post(
        client, "/api/space/uploads?name=a.jpg",
        ByteBuffer(bytes: try Fixture.bytes(Fixture.sample("gps.jpg"))))
      #expect(write.status == .forbidden)
      #expect(write.errorKind == "read-only")
      // It may preview and ask Auto, as a read-only session may in the library; not edit.
      let betaID = try #require(
        ((opened.object["assets"] as? [[String: Any]])?.first)?["id"] as? String)
      let preview = try await reader.post(
        client, "/api/space/assets/\(betaID)/preview", jsonBody(["filters": ["noir"]]))
      #expect(preview.status == .ok)
      #expect(preview.headers[.contentType] == "image/jpeg")
      let edit = try await reader.post(
        client, "/api/space/assets/\(betaID)/edit", jsonBody(["filters": ["noir"]]))
      #expect(edit.status == .forbidden)
      #expect(edit.errorKind == "read-only")

      // Failed unlocks are rate limited: five a minute.
      var statuses: [Int] = []
      for _ in 0..<6 {
        let response = try await reader.post(
          client, "/api/space/unlock", jsonBody(["password": "wrong"]))
        statuses.append(response.status.code)
      }
      #expect(statuses == [403, 403, 403, 403, 403, 429])
      // Past the limit the right password is not even tried: 429, and nothing opens.
      let right = try await reader.post(
        client, "/api/space/unlock", jsonBody(["password": "beta"]))
      #expect(right.status == .tooManyRequests)
      #expect(right.errorKind == "rate-limited")
      #expect(Int(right.headers[.retryAfter] ?? "") ?? 0 >= 1)
    }
  }

  @Test(
    "a space's upload is sealed as it arrives: a 40 MB photo raises the server's peak memory by a few MB, not its size; cut short or refused, it leaves nothing; a video sent chunked is added"
  )
  func uploadStreams() throws {
    let spaces = try ServedSpaces()
    // A photo of noise, 9000x6000 grey: about 40 MB as a JPEG of quality 100.
    let folder = try TemporaryFolder()
    let vips = "/usr/bin/vips"
    let noise = folder.file("noise.v")
    #expect(
      try CLI.run(["gaussnoise", noise, "9000", "6000", "--sigma", "60"], executable: vips)
        .status == 0)
    let big = folder.file("big.jpg")
    #expect(try CLI.run(["cast", noise, big + "[Q=100]", "uchar"], executable: vips).status == 0)
    let photo = try Fixture.bytes(big)
    #expect(photo.count > 35 << 20, "\(photo.count) bytes")
    let server = try ServeProcess(spaces.served.root, arguments: ["--spaces", spaces.dir])
    defer { _ = server.stop() }
    let login = try server.exchange(
      "POST /login HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n",
      body: Array("token=\(ServedLibrary.writeToken)&next=%2Fspace".utf8))
    let start = try #require(login.text.range(of: "darkroom_session=")?.upperBound)
    let cookie =
      "Cookie: darkroom_session=" + login.text[start...].prefix { $0.isHexDigit } + "\r\n"
    let page = try server.exchange("GET /space HTTP/1.1\r\n" + cookie)
    let csrfStart = try #require(
      page.text.range(of: "<meta name=\"csrf-token\" content=\"")?.upperBound)
    let session = cookie + "X-CSRF-Token: " + page.text[csrfStart...].prefix { $0 != "\"" } + "\r\n"
    let unlock = try server.exchange(
      "POST /api/space/unlock HTTP/1.1\r\nContent-Type: application/json\r\n" + session,
      body: Array(#"{"password":"alpha"}"#.utf8))
    #expect(unlock.status == 200, "\(unlock.text)")
    let pid = server.process.processIdentifier
    let before = try Self.peakKilobytes(pid)
    let upload = try server.exchange(
      "POST /api/space/uploads?name=big.jpg HTTP/1.1\r\n" + session, body: photo)
    #expect(upload.status == 201, "\(upload.text.prefix(300))")
    let grown = try Self.peakKilobytes(pid) - before
    #expect(grown < 24 << 10, "the peak grew by \(grown) KiB for \(photo.count >> 10) KiB")
    // What was sealed is the photo, byte for byte.
    let id = try #require(
      (ServeProcess.json(upload.text)["asset"] as? [String: Any])?["id"] as? String)
    let back = try server.exchange(
      "GET /api/space/assets/\(id)/full HTTP/1.1\r\nRange: bytes=0-15\r\n" + session)
    #expect(back.status == 206)
    #expect(back.text.lowercased().contains("\r\ncontent-range: bytes 0-15/\(photo.count)\r\n"))
    let whole = try server.connect()
    server.send(
      whole,
      Array(
        ("GET /api/space/assets/\(id)/full HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
          + session + "\r\n").utf8))
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while case let n = read(whole, &buffer, buffer.count), n > 0 { response += buffer[0..<n] }
    close(whole)
    #expect(
      ContentHash.of(bytes: Array(response.suffix(photo.count))) == ContentHash.of(bytes: photo),
      "the sealed photo is the photo, byte for byte")

    // Cut short: the connection closes after half its bytes; nothing is added.
    func objects() throws -> Int {
      try filesUnder(spaces.dir).keys.filter { $0.contains("objects/") }.count
    }
    let sealed = try objects()
    let fd = try server.connect()
    let head =
      "POST /api/space/uploads?name=cut.jpg HTTP/1.1\r\nHost: x\r\n" + session
      + "Content-Length: \(photo.count)\r\n\r\n"
    server.send(fd, Array(head.utf8) + Array(photo.prefix(photo.count / 2)))
    close(fd)
    // A refused one (not an image) leaves nothing either.
    let refused = try server.exchange(
      "POST /api/space/uploads?name=text.jpg HTTP/1.1\r\n" + session,
      body: Array(repeating: UInt8(ascii: "x"), count: 6 << 20))
    #expect(refused.status == 422, "\(refused.text.prefix(300))")
    #expect(try objects() == sealed, "no object left by the cut or the refused upload")

    // A video sent without Content-Length (chunked): held in memory, read once, added.
    let clip = try Fixture.bytes(try VideoEditTests.hevcClip(in: folder))
    let chunked = try server.connect()
    server.send(
      chunked,
      Array(
        ("POST /api/space/uploads?name=clip.mov HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
          + session + "Transfer-Encoding: chunked\r\n\r\n"
          + String(clip.count, radix: 16) + "\r\n").utf8) + clip + Array("\r\n0\r\n\r\n".utf8))
    var answer: [UInt8] = []
    while case let n = read(chunked, &buffer, buffer.count), n > 0 { answer += buffer[0..<n] }
    close(chunked)
    let text = String(decoding: answer, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 201"), "\(text.prefix(300))")
    #expect(text.contains("\"mediaType\":\"video\""), "\(text.prefix(600))")
    #expect(server.stop() == 0)
  }

  /// The peak resident memory of process `pid`, in KiB (VmHWM).
  static func peakKilobytes(_ pid: Int32) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
  }

  @Test(
    "strangers' failed unlocks from the owner's address never lock out a session that has not failed"
  )
  func strangersCannotLockOutTheOwner() async throws {
    let spaces = try ServedSpaces()
    var configuration = spaces.configuration()
    configuration.failedUnlocks = (burst: 5, perSecond: 1.0 / 3600)
    try await spaces.test(configuration) { client, server in
      // Three strangers with read sessions, all from this one address ("local").
      var statuses: [[Int]] = []
      for tries in [6, 2, 2] {
        let stranger = try await GalleryLogin.login(client, token: ServedLibrary.readToken)
        var mine: [Int] = []
        for _ in 0..<tries {
          let response = try await stranger.post(
            client, "/api/space/unlock", jsonBody(["password": "guess"]))
          mine.append(response.status.code)
        }
        statuses.append(mine)
      }
      // The first spends the address's five; each other fails once, then is limited.
      #expect(statuses == [[403, 403, 403, 403, 403, 429], [403, 429], [403, 429]])
      // The owner, from the same address, in a session that has not failed: it opens.
      let owner = try await GalleryLogin.login(client)
      let opened = try await owner.post(
        client, "/api/space/unlock", jsonBody(["password": "beta"]))
      #expect(opened.status == .ok)
      #expect(server.sessions.space(for: owner.session) != nil)
    }
  }

  @Test(
    "a motion photo in a space keeps its video: the engine's bytes, the space's API (whole, a range, 404 JSON for a still) and its asset's motionVideo"
  )
  func motionPhotoInSpace() async throws {
    let spaces = try ServedSpaces()
    let folder = try TemporaryFolder()
    let video = try LivePhotoTests.clip("clip.mp4", in: folder)
    let photo = try LivePhotoTests.motionPhoto(
      "PXL_1.MP.jpg", xmp: LivePhotoTests.googleXMP(length: video.count), video: video,
      in: folder)
    // The engine: added to the space as a file, its video read from the sealed original.
    let beta = try Library.open(space: spaces.dir, password: pw("beta"))
    let (sealed, _) = try beta.add(file: photo)
    #expect(sealed.motionVideo?.length == video.count)
    #expect(try beta.motionVideoBytes(of: sealed.id) == video)
    #expect(try beta.motionVideoBytes(of: sealed.id, part: 5..<50) == Array(video[5..<50]))
    beta.close()
    // The command line: by name, from the space.
    let passwordFile = try folder.write("password", Array("beta".utf8))
    let out = folder.file("out.mp4")
    let cli = try CLI.run(
      [
        "render", "--space", spaces.dir, "--password-file", passwordFile, "--rep", "video",
        "PXL_1.MP.jpg", "-o", out,
      ])
    #expect(cli.status == 0, "\(cli.stderr)")
    #expect(try Fixture.bytes(out) == video)
    let still = try CLI.run(
      [
        "render", "--space", spaces.dir, "--password-file", passwordFile, "--rep", "video",
        "orientation-8.jpg", "-o", folder.file("none.mp4"),
      ])
    #expect(still.status == 1)
    #expect(
      still.stderr
        == "darkroom: orientation-8.jpg: has no video: it is not a live or motion photo\n")

    // The server: uploaded to another space, served with ranges.
    let bytes = try Fixture.bytes(photo)
    try await spaces.test { client, _ in
      let login = try await GalleryLogin.login(client)
      #expect(
        try await login.postForm(client, "/space/unlock", "password=alpha").status == .seeOther)
      let added = try await login.post(
        client, "/api/space/uploads?name=PXL_1.MP.jpg", ByteBuffer(bytes: bytes))
      #expect(added.status == .created, "\(added.text)")
      let asset = try #require(added.object["asset"] as? [String: Any])
      #expect(
        asset["motionVideo"] as? [String: Int] == [
          "offset": bytes.count - video.count, "length": video.count,
        ])
      let id = try #require(asset["id"] as? String)
      let whole = try await login.get(client, "/api/space/assets/\(id)/video")
      #expect(whole.status == .ok)
      #expect(whole.headers[.contentType] == "video/mp4")
      #expect(whole.headers[.cacheControl] == "no-store")
      #expect(whole.bytes == video)
      let part = try await login.get(
        client, "/api/space/assets/\(id)/video", [.range: "bytes=100-199"])
      #expect(part.status == .partialContent)
      #expect(part.bytes == Array(video[100..<200]))
      let still = try await login.post(
        client, "/api/space/uploads?name=gps.jpg",
        ByteBuffer(bytes: try Fixture.bytes(Fixture.sample("gps.jpg"))))
      let stillID = try #require((still.object["asset"] as? [String: Any])?["id"] as? String)
      let none = try await login.get(client, "/api/space/assets/\(stillID)/video")
      #expect(none.status == .notFound)
      #expect(
        (none.object["error"] as? [String: Any])?["message"] as? String
          == "gps.jpg: has no video: it is not a live or motion photo", "\(none.text)")
    }
  }

  @Test(
    "a video in a space through the API: uploaded, listed as a video, played as H.264 (streamed as it is made, then with ranges, never stored by the browser), its page's cell a link to it; a bad delivery is a 400"
  )
  func videoInSpace() async throws {
    let spaces = try ServedSpaces()
    let folder = try TemporaryFolder()
    let clip = try Fixture.bytes(try VideoEditTests.hevcClip(in: folder))
    try await spaces.test { client, _ in
      let login = try await GalleryLogin.login(client)
      #expect(
        try await login.postForm(client, "/space/unlock", "password=alpha").status == .seeOther)
      let added = try await login.post(
        client, "/api/space/uploads?name=clip.mov", ByteBuffer(bytes: clip))
      #expect(added.status == .created, "\(added.text)")
      let asset = try #require(added.object["asset"] as? [String: Any])
      let id = try #require(asset["id"] as? String)
      #expect(asset["mediaType"] as? String == "video")
      #expect(abs((asset["duration"] as? Double ?? 0) - 2) < 0.05)
      #expect(asset["width"] as? Int == 360 && asset["height"] as? Int == 640)

      let first = try await login.get(client, "/api/space/assets/\(id)/playback?delivery=fast")
      #expect(first.status == .ok, "\(first.text)")
      #expect(first.headers[.contentType] == "video/mp4")
      #expect(first.headers[.cacheControl] == "no-store")
      let played = try folder.write("played.mp4", first.bytes)
      let probe = try VideoEditTests.probe(played)
      #expect(probe.video?["codec_name"] as? String == "h264")
      #expect(probe.video?["width"] as? Int == 360 && probe.video?["height"] as? Int == 640)
      #expect(probe.audio?["codec_name"] as? String == "aac")
      let part = try await login.get(
        client, "/api/space/assets/\(id)/playback?delivery=fast", [.range: "bytes=0-99"])
      #expect(part.status == .partialContent)
      #expect(part.headers[.cacheControl] == "no-store")
      #expect(part.bytes == Array(first.bytes.prefix(100)))

      // A video cut short: refused with the file's name and what is wrong, nothing kept.
      let cut = try await login.post(
        client, "/api/space/uploads?name=cut.mov",
        ByteBuffer(bytes: Array(clip.prefix(clip.count / 2))))
      #expect(cut.status == .unprocessableContent, "\(cut.text)")
      #expect(
        ((cut.object["error"] as? [String: Any])?["message"] as? String)?.hasPrefix("cut.mov: ")
          == true, "\(cut.text)")
      let listed = try await login.get(client, "/api/space/assets")
      #expect((listed.object["assets"] as? [[String: Any]])?.count == 1)

      let bad = try await login.get(client, "/api/space/assets/\(id)/playback?delivery=huge")
      #expect(bad.status == .badRequest)
      #expect(
        (bad.object["error"] as? [String: Any])?["message"] as? String
          == "delivery takes fast, medium or high; not huge")

      let page = try await login.get(client, "/space")
      #expect(page.text.contains("<a href=\"/space/asset/\(id)\">"))
      // Its own page: the poster, with the editor's trim, and the video played from there.
      let own = try await login.get(client, "/space/asset/\(id)")
      #expect(own.status == .ok)
      #expect(own.text.contains("<a class=\"play\" href=\"/api/space/assets/\(id)/playback\">"))
      #expect(page.text.contains("alt=\"clip.mov, video, 0:02\""))
      #expect(page.text.contains("<span class=\"video-badge\" aria-hidden=\"true\">0:02</span>"))
    }
    // Nothing of the clip or what was played is under the spaces' folder unencrypted.
    let played = try Fixture.bytes(folder.file("played.mp4"))
    let secrets = SpaceVideoTests.needles(clip) + SpaceVideoTests.needles(played)
    #expect(try SpaceVideoTests.holders(of: secrets, under: spaces.dir).isEmpty)
  }

  @Test(
    "a space's assets are the API's asset routes: the same photo in the library and in a space gives the same preview, Auto and history; what a space keeps not is a 4xx naming it"
  )
  func sameRoutes() async throws {
    let spaces = try ServedSpaces()
    let photo = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    try await spaces.test { client, _ in
      let login = try await GalleryLogin.login(client)
      _ = try await login.post(client, "/api/space/unlock", jsonBody(["password": "alpha"]))
      let added = try await login.post(
        client, "/api/space/uploads?name=orientation-1.jpg", ByteBuffer(bytes: photo))
      #expect(added.status == .created)
      let spaceID = try #require((added.object["asset"] as? [String: Any])?["id"] as? String)
      let listed = try await login.get(client, "/api/assets")
      let libraryID = try #require(
        ((listed.object["assets"] as? [[String: Any]])?.first)?["id"] as? String)
      let doors = ["/api/assets/\(libraryID)", "/api/space/assets/\(spaceID)"]

      func answers(_ method: HTTPRequest.Method, _ path: String, _ body: Any?) async throws
        -> [TestResponse]
      {
        var all: [TestResponse] = []
        for door in doors {
          var headers = login.headers
          if body != nil { headers[.contentType] = "application/json" }
          all.append(
            try await client.execute(
              uri: door + path, method: method, headers: headers,
              body: body.map(jsonBody) ?? ByteBuffer()))
        }
        return all
      }

      // A preview: the same JPEG from either door, the photo's own pixels through the graph.
      let previews = try await answers(
        .post, "/preview", ["filters": ["noir", "tone exposure=0.3"], "size": 320])
      #expect(previews.map(\.status) == [.ok, .ok])
      #expect(previews.map { $0.headers[.cacheControl] } == ["no-store", "no-store"])
      #expect(previews[0].bytes == previews[1].bytes)
      // (A preview carries no metadata: not the server's path, not an adjustment document.)
      #expect(previews[0].bytes[2...3] != [0xFF, 0xE1])
      #expect(!previews[0].text.contains("AdjustmentData"))
      let grey = try centrePixel(previews[1].bytes)
      #expect(grey[0] == grey[1] && grey[1] == grey[2], "grey: \(grey)")
      // Auto: the same explicit filters.
      let autos = try await answers(.post, "/auto", nil)
      #expect(autos.map(\.status) == [.ok, .ok])
      #expect(autos[0].object["filters"] as? [String] == autos[1].object["filters"] as? [String])
      // An edit, then the history: one version with the same filters, and it is current.
      let edits = try await answers(.post, "/edit", ["filters": ["noir"]])
      #expect(edits.map(\.status) == [.ok, .ok])
      #expect(edits[1].object["editVersion"] as? Int == 1)
      let histories = try await answers(.get, "/history", nil)
      for history in histories {
        #expect(history.object["current"] as? Int == 1)
        let versions = history.object["versions"] as? [[String: Any]] ?? []
        #expect(versions.map { $0["filters"] as? [String] } == [["noir"]])
      }
      // One asset: the space's shape never shows its keyed identity.
      let shown = try await answers(.get, "", nil)
      #expect(shown[0].object["contentHash"] != nil)
      #expect(shown[1].object["contentHash"] == nil)
      #expect(shown[1].object["name"] as? String == "orientation-1.jpg")
      #expect(shown[1].object["editVersion"] as? Int == 1)

      // What a space keeps not: a 4xx with a JSON error that says so, never a 5xx.
      let favourite = try await answers(.put, "/favourite", ["favourite": true])
      #expect(favourite[0].status == .ok)
      #expect(favourite[1].status == .badRequest)
      #expect(
        (favourite[1].object["error"] as? [String: Any])?["message"] as? String
          == "a space keeps no favourites")
      let metadata = try await answers(.patch, "/metadata", ["caption": "a caption"])
      #expect(metadata[0].status == .ok)
      #expect(metadata[1].status == .badRequest)
      #expect(
        (metadata[1].object["error"] as? [String: Any])?["message"] as? String
          == "Spaces: is an encrypted space: it has no sidecars: descriptions, ratings and keywords"
      )
      let exif = try await login.get(client, doors[1] + "/exif-thumbnail")
      #expect(exif.status.code / 100 == 4)
      #expect(exif.errorKind != nil)

      // The list takes the library's parameters and pages: the trash, a type, a limit.
      let second = try await login.post(
        client, "/api/space/uploads?name=gps.jpg",
        ByteBuffer(bytes: try Fixture.bytes(Fixture.sample("gps.jpg"))))
      #expect(second.status == .created)
      let first = try await login.get(client, "/api/space/assets?type=photo&limit=1")
      #expect((first.object["assets"] as? [[String: Any]])?.count == 1)
      #expect(first.object["count"] as? Int == 2)
      let after = try #require(first.object["next"] as? String)
      let rest = try await login.get(client, "/api/space/assets?type=photo&limit=1&after=\(after)")
      #expect((rest.object["assets"] as? [[String: Any]])?.count == 1)
      #expect(rest.object["next"] == nil)
      // Without a limit, every asset at once, as before the list took pages.
      let whole = try await login.get(client, "/api/space/assets")
      #expect((whole.object["assets"] as? [[String: Any]])?.count == 2)
      #expect(whole.object["next"] == nil)
      let trash = try await login.get(client, "/api/space/assets?trashed=true")
      #expect((trash.object["assets"] as? [[String: Any]])?.isEmpty == true)
      let bad = try await login.get(client, "/api/space/assets?trashed=maybe")
      #expect(bad.status == .badRequest)
      #expect(
        (bad.object["error"] as? [String: Any])?["message"] as? String
          == "trashed takes true or false; not maybe")
    }
  }

  @Test(
    "a space's photo has the library's asset page over the space's asset routes, without stars or favourite; locked, the page sends the browser to unlock; an id not in the space is not found"
  )
  func assetPage() async throws {
    let spaces = try ServedSpaces()
    let photo = try Fixture.bytes(Fixture.sample("gps.jpg"))
    try await spaces.test { client, _ in
      let login = try await GalleryLogin.login(client)
      _ = try await login.post(client, "/api/space/unlock", jsonBody(["password": "alpha"]))
      let added = try await login.post(
        client, "/api/space/uploads?name=gps.jpg", ByteBuffer(bytes: photo))
      let id = try #require((added.object["asset"] as? [String: Any])?["id"] as? String)
      let second = try await login.post(
        client, "/api/space/uploads?name=secret-name.jpg",
        ByteBuffer(bytes: try Fixture.bytes(Fixture.sample("orientation-3.jpg"))))
      let next = try #require((second.object["asset"] as? [String: Any])?["id"] as? String)
      let grid = try await login.get(client, "/space")
      #expect(grid.text.contains("<a href=\"/space/asset/\(id)\">"))

      let page = try await login.get(client, "/space/asset/\(id)")
      #expect(page.status == .ok)
      let html = page.text
      // Its neighbours in the space's order (oldest first), as the space's own pages.
      #expect(html.contains("<a href=\"/space/asset/\(next)\" rel=\"next\" accesskey=\"n\">"))
      let nextPage = try await login.get(client, "/space/asset/\(next)").text
      #expect(nextPage.contains("<a href=\"/space/asset/\(id)\" rel=\"prev\" accesskey=\"p\">"))
      // The title (which a browser keeps in its history on disk) is not the photo's name.
      #expect(nextPage.contains("<title>Encrypted space"), "\(nextPage)")
      #expect(nextPage.contains("alt=\"secret-name.jpg\""))
      #expect(!nextPage.contains("<title>secret-name"))
      #expect(
        html.contains(
          "<main id=\"main\" tabindex=\"-1\" class=\"viewer\" data-id=\"\(id)\" data-version=\"0\" data-api=\"/api/space/assets\" data-space=\"true\">"
        ), "\(html)")
      #expect(
        html.contains(
          "<img class=\"photo\" src=\"/api/space/assets/\(id)/fullscreen?size=1600&amp;v=0\" alt=\"gps.jpg\">"
        ))
      #expect(html.contains("<a class=\"back\" href=\"/space\">Back to the space</a>"))
      #expect(html.contains("<button type=\"button\" class=\"open-editor\" hidden>Edit</button>"))
      for absent in ["class=\"rating\"", "class=\"favourite\"", "rel=\"prev\"", "gps.jpg</h1>"] {
        #expect(!html.contains(absent), "\(absent)")
      }
      // The same photo in the library: its page has what the space's leaves out.
      let listed = try await login.get(client, "/api/assets")
      let libraryIDs = (listed.object["assets"] as? [[String: Any]] ?? []).compactMap {
        $0["id"] as? String
      }
      let libraryPage = try await login.get(client, "/asset/\(try #require(libraryIDs.first))")
      #expect(libraryPage.text.contains("class=\"rating\""))
      #expect(libraryPage.text.contains("data-api=\"/api/assets\""))
      // An id of the library, not of the space: the gallery's page saying so.
      let elsewhere = try await login.get(client, "/space/asset/\(libraryIDs[0])")
      #expect(elsewhere.status == .notFound)
      // (In the space's words: no folder of the server's is named.)
      #expect(
        elsewhere.text.contains(
          "<p class=\"error\">\(libraryIDs[0]): no such asset in this space.</p>"),
        "\(elsewhere.text)")
      let api = try await login.get(client, "/api/space/assets/\(libraryIDs[0])")
      #expect(api.status == .notFound)
      #expect(
        (api.object["error"] as? [String: Any])?["message"] as? String
          == "\(libraryIDs[0]): no such asset in this space")

      // Locked: to the space's form; without a session (a bearer token): refused.
      _ = try await login.post(client, "/api/space/lock")
      let locked = try await login.get(client, "/space/asset/\(id)")
      #expect(locked.status == .seeOther)
      #expect(locked.headers[.location] == "/space")
      let token = try await client.execute(
        uri: "/space/asset/\(id)", method: .get, headers: ServedLibrary.write)
      #expect(token.status == .forbidden)
    }
  }

  @Test("a server's failure on a space's request is logged without the file it names")
  func failureLogged() {
    let failure = DarkroomError(.io, file: "holiday-secret.jpg", "cannot write: no space left")
    for path in ["/api/space/assets/X/edit", "/space", "/space/unlock", "/api/space"] {
      #expect(ErrorMiddleware.logged(failure, path: path) == "cannot write: no space left")
    }
    #expect(
      ErrorMiddleware.logged(failure, path: "/api/assets/X/edit")
        == "holiday-secret.jpg: cannot write: no space left")
    #expect(ErrorMiddleware.logged(failure, path: "/api/spaces").hasPrefix("holiday-secret.jpg"))
    struct Other: Error { var name = "holiday-secret.jpg" }
    #expect(ErrorMiddleware.logged(Other(), path: "/api/space/assets") == "Other")
  }

  @Test("every key is zeroed when the server stops")
  func shutdown() async throws {
    let spaces = try ServedSpaces()
    let server = try DarkroomServer(
      library: spaces.served.library, configuration: spaces.configuration())
    let held = Locked<Space?>(nil)
    try await server.application(logger: ServedLibrary.quiet, watch: false).test(.live) { client in
      let login = try await GalleryLogin.login(client)
      let opened = try await login.post(
        client, "/api/space/unlock", jsonBody(["password": "alpha"]))
      #expect(opened.status == .ok)
      held.withLock { $0 = server.sessions.space(for: login.session) }
    }
    let space = try #require(held.withLock { $0 })
    #expect(space.isClosed && space.keys.space.isWiped)
    #expect(server.sessions.unlockedCount == 0)
  }

  @Test("a server without --spaces has no space routes; serve refuses a folder that is not one")
  func noSpaces() async throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    try await served.test { client, _ in
      let login = try await GalleryLogin.loginWithoutSpaces(client)
      for uri in ["/space", "/api/space/assets"] {
        let response = try await client.execute(
          uri: uri, method: .get, headers: [.cookie: login])
        #expect(response.status == .notFound)
        #expect(response.errorKind == "not-found")
      }
    }
    let folder = try Fixture.temporaryFolder()
    let result = try CLI.run(["serve", served.root, "--spaces", folder.path, "--port", "0"])
    #expect(result.status == 1)
    #expect(
      result.stderr
        == "darkroom: \(folder.path): is not a folder of spaces: darkroom space create makes one\n")
  }
}

extension GalleryLogin {
  /// A login's cookie on a server without spaces (whose /space is not a page).
  static func loginWithoutSpaces(_ client: any TestClientProtocol) async throws -> String {
    let login = try await client.execute(
      uri: "/login", method: .post, headers: form,
      body: ByteBuffer(string: "token=\(ServedLibrary.writeToken)"))
    return String(try #require(login.headers[.setCookie]).split(separator: ";")[0])
  }
}
