import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// A library of the committed samples, scanned, and the tokens its servers know.
final class ServedLibrary: @unchecked Sendable {
  static let writeToken = "write-token-0123456789"
  static let readToken = "read-token-0123456789"
  static let write: HTTPFields = [.authorization: "Bearer \(writeToken)"]
  static let read: HTTPFields = [.authorization: "Bearer \(readToken)"]

  let folder: TemporaryFolder
  let library: Library

  /// The samples, copied and scanned, the catalog in SQLite or (`backend`) in a new
  /// database of the tests' PostgreSQL.
  init(
    samples: [String] = (1...8).map { "orientation-\($0).jpg" } + ["gps.jpg"],
    backend: CatalogBackend = .sqlite
  ) throws {
    folder = try TemporaryFolder()
    for name in samples {
      try FileManager.default.copyItem(atPath: Fixture.sample(name), toPath: folder.file(name))
    }
    var library = try Library.create(at: folder.path)
    library.catalogURL = try backend.newCatalogURL()
    self.library = library
    _ = try library.scanBlocking()
  }

  /// What a process serving it needs: `DARKROOM_CATALOG` for a catalog in PostgreSQL.
  var environment: [String: String] {
    library.catalogURL.map { ["DARKROOM_CATALOG": $0] } ?? [:]
  }

  /// A library a test made itself, in `folder`.
  init(over library: Library, in folder: TemporaryFolder) {
    (self.folder, self.library) = (folder, library)
  }

  var root: String { library.root.path }

  /// Request lines only when a test fails for a reason a log would show.
  static let quiet: Logger = {
    var logger = Logger(label: "darkroom-tests")
    logger.logLevel = .warning
    return logger
  }()

  /// A configuration that knows the two tokens.
  func configuration() -> ServerConfiguration {
    var configuration = ServerConfiguration()
    configuration.tokens.add(Self.writeToken, .write)
    configuration.tokens.add(Self.readToken, .read)
    return configuration
  }

  func ids() throws -> [AssetID] {
    try library.assetIDs(matching: AssetQuery())
  }

  /// Runs `body` against a server's router, without sockets.
  func test(
    _ configuration: ServerConfiguration? = nil,
    _ body: @escaping @Sendable (any TestClientProtocol, DarkroomServer) async throws -> Void
  ) async throws {
    let server = try DarkroomServer(
      library: library, configuration: configuration ?? self.configuration())
    try await server.application(logger: Self.quiet, watch: false).test(.router) { client in
      try await body(client, server)
    }
  }
}

extension TestResponse {
  var bytes: [UInt8] { Array(buffer: body) }
  var text: String { String(buffer: body) }
  /// The JSON body as a dictionary.
  var object: [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
  }
  /// The `error.kind` of a JSON error.
  var errorKind: String? { (object["error"] as? [String: Any])?["kind"] as? String }
}

func jsonBody(_ object: Any) -> ByteBuffer {
  ByteBuffer(bytes: (try? JSONSerialization.data(withJSONObject: object)) ?? Data())
}

/// Decodes an image's bytes and returns the pixel at the centre, one value per band.
func centrePixel(_ bytes: [UInt8]) throws -> [Double] {
  let folder = try TemporaryFolder()
  let path = try folder.write("image", bytes)
  let image = try VipsImage.open(path: path, sequential: false)
  return try image.pixel(x: image.width / 2, y: image.height / 2)
}

@Suite("darkroom serve: the HTTP API", .timeLimit(.minutes(10)), .offThePool)
struct ServerTests {
  @Test("no token is 401, a wrong one 401, a read-only one on a write 403; pages redirect to login")
  func access() async throws {
    let served = try ServedLibrary()
    let id = try served.ids()[0]
    try await served.test { client, _ in
      let none = try await client.execute(uri: "/api/assets", method: .get)
      #expect(none.status == .unauthorized)
      #expect(none.errorKind == "unauthorized")
      #expect(none.headers[.wwwAuthenticate] == "Bearer")
      let wrong = try await client.execute(
        uri: "/api/assets", method: .get, headers: [.authorization: "Bearer not-a-token-at-all"])
      #expect(wrong.status == .unauthorized)
      let basic = try await client.execute(
        uri: "/api/assets", method: .get, headers: [.authorization: "Basic dXNlcjpwYXNz"])
      #expect(basic.status == .unauthorized)
      let read = try await client.execute(
        uri: "/api/assets", method: .get, headers: ServedLibrary.read)
      #expect(read.status == .ok)
      let write = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .post, headers: ServedLibrary.read,
        body: jsonBody(["filters": ["noir"]]))
      #expect(write.status == .forbidden)
      #expect(write.errorKind == "read-only")
      let page = try await client.execute(uri: "/album?ref=smart:all", method: .get)
      #expect(page.status == .seeOther)
      #expect(page.headers[.location] == "/login?next=%2Falbum%3Fref%3Dsmart%3Aall")
      let metrics = try await client.execute(uri: "/metrics", method: .get)
      #expect(metrics.status == .unauthorized)
      let health = try await client.execute(uri: "/healthz", method: .get)
      #expect(health.status == .ok)
    }
    // The read-only token changed nothing.
    #expect(try served.library.asset(id).adjustmentVersion == 0)
  }

  @Test("every response carries a strict CSP, nosniff and no framing; errors are JSON")
  func securityHeaders() async throws {
    let served = try ServedLibrary()
    try await served.test { client, _ in
      for uri in ["/login", "/api/nothing-here", "/api/assets", "/static/gallery.js"] {
        let response = try await client.execute(uri: uri, method: .get, headers: ServedLibrary.read)
        let policy = response.headers[.contentSecurityPolicy] ?? ""
        #expect(policy.contains("script-src 'self'"), "\(uri)")
        #expect(policy.contains("frame-ancestors 'none'"), "\(uri)")
        #expect(!policy.contains("unsafe-inline"), "\(uri)")
        #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(uri)")
      }
      let missing = try await client.execute(
        uri: "/api/nothing-here", method: .get, headers: ServedLibrary.read)
      #expect(missing.status == .notFound)
      #expect(missing.headers[.contentType] == "application/json; charset=utf-8")
      #expect(missing.errorKind == "not-found")
    }
  }

  @Test("the asset list pages by cursor: the pages together are the whole list, once each")
  func cursorPaging() async throws {
    let served = try ServedLibrary()
    let all = try served.ids().map(\.rawValue)
    #expect(all.count == 9)
    try await served.test { client, _ in
      var seen: [String] = []
      var after: String? = nil
      var pages = 0
      repeat {
        let uri = "/api/assets?limit=4" + (after.map { "&after=\($0)" } ?? "")
        let page = try await client.execute(uri: uri, method: .get, headers: ServedLibrary.read)
        #expect(page.status == .ok)
        let assets = page.object["assets"] as? [[String: Any]] ?? []
        seen += assets.compactMap { $0["id"] as? String }
        // The first page counts the whole list; the others do not count at all (a page
        // costs the same at any depth).
        if after == nil {
          #expect(page.object["count"] as? Int == 9)
        } else {
          #expect(page.object["count"] == nil)
        }
        after = page.object["next"] as? String
        pages += 1
      } while after != nil && pages < 10
      #expect(pages == 3)
      #expect(seen == all)
      let filtered = try await client.execute(
        uri: "/api/assets?type=video", method: .get, headers: ServedLibrary.read)
      #expect(filtered.object["count"] as? Int == 0)
      let bad = try await client.execute(
        uri: "/api/assets?near=somewhere", method: .get, headers: ServedLibrary.read)
      #expect(bad.status == .badRequest)
      #expect(
        ((bad.object["error"] as? [String: Any])?["message"] as? String)?.hasPrefix(
          "near takes LAT,LON,KM") == true)
      let unknown = try await client.execute(
        uri: "/api/assets?colour=red", method: .get, headers: ServedLibrary.read)
      #expect(unknown.status == .badRequest)
    }
  }

  @Test(
    "representations: ETag is the rendition key, If-None-Match gives 304, a versioned URL is immutable"
  )
  func representationCaching() async throws {
    let served = try ServedLibrary()
    let asset = try served.library.asset(try served.ids()[0])
    let version = String(asset.contentHash.prefix(12))
    try await served.test { client, _ in
      let uri = "/api/assets/\(asset.id)/thumbnail?size=64"
      let first = try await client.execute(uri: uri, method: .get, headers: ServedLibrary.read)
      #expect(first.status == .ok)
      #expect(first.headers[.contentType] == "image/jpeg")
      #expect(first.headers[.cacheControl] == "no-cache")
      let metadata = try AssetMetadata.read(.data(first.bytes, name: "thumbnail"))
      #expect(metadata.width == 64 && metadata.height == 64)
      let tag = try #require(first.headers[.eTag])
      #expect(tag.hasPrefix("\"\(asset.contentHash.prefix(16))-"))
      var conditional = ServedLibrary.read
      conditional[.ifNoneMatch] = tag
      let again = try await client.execute(uri: uri, method: .get, headers: conditional)
      #expect(again.status == .notModified)
      #expect(again.bytes.isEmpty)
      let versioned = try await client.execute(
        uri: uri + "&v=\(version)", method: .get, headers: ServedLibrary.read)
      #expect(versioned.headers[.cacheControl] == "public, max-age=31536000, immutable")
      #expect(versioned.bytes == first.bytes)
      // Again, from memory: the same bytes and tag, and 304 for the tag.
      let remembered = try await client.execute(
        uri: uri + "&v=\(version)", method: .get, headers: ServedLibrary.read)
      #expect(remembered.bytes == first.bytes)
      #expect(remembered.headers[.eTag] == tag)
      #expect(remembered.headers[.cacheControl] == "public, max-age=31536000, immutable")
      let rememberedAgain = try await client.execute(
        uri: uri + "&v=\(version)", method: .get, headers: conditional)
      #expect(rememberedAgain.status == .notModified)
      let other = try await client.execute(
        uri: "/api/assets/\(asset.id)/thumbnail?size=65", method: .get, headers: ServedLibrary.read)
      #expect(other.headers[.eTag] != tag)
      for bad in ["size=0", "size=99999", "size=big", "format=gif", "format=../../x"] {
        let response = try await client.execute(
          uri: "/api/assets/\(asset.id)/thumbnail?\(bad)", method: .get, headers: ServedLibrary.read
        )
        #expect(response.status == .badRequest, "\(bad)")
      }
    }
  }

  @Test(
    "a HEIC is sent as WebP to a client that accepts it, else JPEG; a JPEG stays JPEG; full is the file"
  )
  func formatsBrowsersShow() async throws {
    let served = try ServedLibrary(samples: ["heif-exif-6.heic", "gps.jpg"])
    let heic = try #require(
      try served.library.assets(matching: AssetQuery()).assets(in: 0..<2).first {
        $0.format == "heif"
      })
    let jpeg = try #require(
      try served.library.assets(matching: AssetQuery()).assets(in: 0..<2).first {
        $0.format == "jpeg"
      })
    let version = String(heic.contentHash.prefix(12))
    let chromium = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
    try await served.test { client, _ in
      func get(_ uri: String, accept: String?) async throws -> TestResponse {
        var headers = ServedLibrary.read
        if let accept { headers[.accept] = accept }
        return try await client.execute(uri: uri, method: .get, headers: headers)
      }
      let thumbnail = "/api/assets/\(heic.id)/thumbnail?size=64&v=\(version)"
      // Asked by the same (versioned, immutable) URL, each client gets what it shows.
      var tags: [String: String] = [:]
      for (accept, type, format) in [
        (chromium, "image/webp", "webp"), ("*/*", "image/jpeg", "jpeg"),
        (nil, "image/jpeg", "jpeg"), ("image/webp;q=0, image/jpeg", "image/jpeg", "jpeg"),
        (chromium, "image/webp", "webp"),
      ] as [(String?, String, String)] {
        let response = try await get(thumbnail, accept: accept)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == type, "\(accept ?? "no Accept")")
        #expect(response.headers[.vary] == "Accept")
        let metadata = try AssetMetadata.read(.data(response.bytes, name: "thumbnail"))
        #expect(metadata.format == format && metadata.width == 64 && metadata.height == 64)
        let tag = try #require(response.headers[.eTag])
        #expect(tags[format].map { $0 == tag } ?? true, "one tag for each format")
        tags[format] = tag
      }
      #expect(tags["webp"] != tags["jpeg"])
      // An asked format wins; a JPEG is JPEG to every client; full is the file's own bytes.
      let png = try await get(
        "/api/assets/\(heic.id)/thumbnail?size=64&format=png", accept: chromium)
      #expect(png.headers[.contentType] == "image/png")
      let photo = try await get("/api/assets/\(jpeg.id)/fullscreen", accept: chromium)
      #expect(photo.headers[.contentType] == "image/jpeg")
      let full = try await get("/api/assets/\(heic.id)/full", accept: chromium)
      #expect(full.headers[.contentType] == "image/heic" && full.headers[.vary] == nil)
      #expect(full.bytes == (try Fixture.bytes(served.library.path(of: heic))))
    }
  }

  @Test("full answers Range requests with 206 and the right bytes, or 416")
  func ranges() async throws {
    let served = try ServedLibrary()
    let asset = try served.library.asset(try served.ids()[0])
    let original = try Fixture.bytes(served.library.path(of: asset))
    try await served.test { client, _ in
      func get(_ range: String) async throws -> TestResponse {
        var headers = ServedLibrary.read
        headers[.range] = range
        return try await client.execute(
          uri: "/api/assets/\(asset.id)/full", method: .get, headers: headers)
      }
      let head = try await get("bytes=0-99")
      #expect(head.status == .partialContent)
      #expect(head.bytes == Array(original[0..<100]))
      #expect(head.headers[.contentRange] == "bytes 0-99/\(original.count)")
      let tail = try await get("bytes=-10")
      #expect(tail.bytes == Array(original.suffix(10)))
      let open = try await get("bytes=100-")
      #expect(open.bytes == Array(original[100...]))
      let outside = try await get("bytes=\(original.count)-")
      #expect(outside.status == .rangeNotSatisfiable)
      #expect(outside.headers[.contentRange] == "bytes */\(original.count)")
      let whole = try await client.execute(
        uri: "/api/assets/\(asset.id)/full", method: .get, headers: ServedLibrary.read)
      #expect(whole.status == .ok)
      #expect(whole.bytes == original)
      #expect(whole.headers[.acceptRanges] == "bytes")
    }
  }

  @Test("path tricks reach no file: only an asset id names one")
  func pathTricks() async throws {
    let served = try ServedLibrary()
    let secret = try served.folder.write("secret.txt", Array("secret".utf8))
    _ = secret
    try await served.test { client, _ in
      let tricks = [
        "/api/assets/..%2F..%2Fetc%2Fpasswd/full", "/api/assets/../../etc/passwd",
        "/api/assets/%2Fetc%2Fpasswd/full", "/api/assets/%2e%2e/full",
        "/api/assets/secret.txt/full", "/api/assets/ZZZZZZZZZZZZZZZZZZZZZZZZZZ/full",
        "/api/assets/01ARZ3NDEKTSV4RRFFQ69G5FAV/full", "/static/..%2Fsecret.txt",
        "/static/../../etc/passwd", "/api/assets/\(try served.ids()[0])/..%2F..%2Fsecret.txt",
      ]
      for uri in tricks {
        let response = try await client.execute(uri: uri, method: .get, headers: ServedLibrary.read)
        #expect(response.status == .notFound, "\(uri)")
        #expect(!response.text.contains("secret") || response.text.contains("secret.txt"), "\(uri)")
        let message = (response.object["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(!message.isEmpty, "\(uri)")
        #expect(!message.contains(served.root), "\(uri): a server path leaked: \(message)")
      }
    }
  }

  @Test("edit, history and revert by id: the thumbnail turns grey, and revert restores the bytes")
  func editAndRevert() async throws {
    let served = try ServedLibrary()
    let id = try served.ids()[0]
    let path = served.library.path(of: try served.library.asset(id))
    let before = try Fixture.bytes(path)
    try await served.test { client, _ in
      let edit = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["filters": ["noir"]]))
      #expect(edit.status == .ok)
      #expect(edit.object["version"] as? Int == 1)
      let thumbnail = try await client.execute(
        uri: "/api/assets/\(id)/thumbnail?size=64", method: .get, headers: ServedLibrary.read)
      let pixel = try centrePixel(thumbnail.bytes)
      #expect(pixel.count == 1 || (pixel.max()! - pixel.min()! <= 2), "\(pixel)")
      let history = try await client.execute(
        uri: "/api/assets/\(id)/history", method: .get, headers: ServedLibrary.read)
      #expect(history.object["current"] as? Int == 1)
      #expect((history.object["versions"] as? [Any])?.count == 1)
      let bad = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["filters": ["/etc/passwd.json"]]))
      #expect(bad.status == .badRequest)
      let revert = try await client.execute(
        uri: "/api/assets/\(id)/revert", method: .post, headers: ServedLibrary.write)
      #expect(revert.status == .ok)
      #expect(revert.object["outcome"] as? String == "restored-original")
    }
    #expect(try Fixture.bytes(path) == before)
    #expect(try served.library.asset(id).contentHash == ContentHash.of(bytes: before).hex)
  }

  @Test(
    "a batch job over a list applies, reports progress as server-sent events, and revert undoes it")
  func batchJobs() async throws {
    let served = try ServedLibrary()
    let ids = Array(try served.ids().prefix(3))
    try await served.test { client, _ in
      let start = try await client.execute(
        uri: "/api/jobs", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["action": "apply", "filters": ["noir"], "ids": ids.map(\.rawValue)]))
      #expect(start.status == .accepted)
      let job = try #require(start.object["id"] as? String)
      #expect(start.headers[.location] == "/api/jobs/\(job)")
      let events = try await client.execute(
        uri: "/api/jobs/\(job)/events", method: .get, headers: ServedLibrary.read)
      #expect(events.headers[.contentType] == "text/event-stream")
      #expect(events.text.contains("event: done\ndata: "))
      let status = try await client.execute(
        uri: "/api/jobs/\(job)", method: .get, headers: ServedLibrary.read)
      #expect(status.object["done"] as? Int == 3)
      #expect(status.object["finished"] as? Bool == true)
      for id in ids {
        let thumbnail = try await client.execute(
          uri: "/api/assets/\(id)/thumbnail?size=32", method: .get, headers: ServedLibrary.read)
        let pixel = try centrePixel(thumbnail.bytes)
        #expect(pixel.count == 1 || (pixel.max()! - pixel.min()! <= 2))
      }
      let unknown = try await client.execute(
        uri: "/api/jobs", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["action": "delete-everything", "ids": [ids[0].rawValue]]))
      #expect(unknown.status == .badRequest)
      let missingJob = try await client.execute(
        uri: "/api/jobs/nope/events", method: .get, headers: ServedLibrary.read)
      #expect(missingJob.status == .notFound)
    }
    for id in ids { #expect(try served.library.asset(id).adjustmentVersion == 1) }
  }

  @Test("a batch over a query of 10,000 assets takes the query, not 10,000 ids")
  func batchOverTenThousand() async throws {
    let folder = try TemporaryFolder()
    let tiny = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    for n in 0..<10_000 {
      let sub = folder.file("d\(n / 1000)")
      if n % 1000 == 0 {
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
      }
      _ = try folder.write("d\(n / 1000)/p\(n).jpg", tiny)
    }
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    var configuration = ServerConfiguration()
    configuration.tokens.add(ServedLibrary.writeToken, .write)
    let server = try DarkroomServer(library: library, configuration: configuration)
    try await server.application(logger: ServedLibrary.quiet, watch: false).test(.router) {
      client in
      // Everything but two, which stay where they are.
      let keep = try library.assetIDs(matching: AssetQuery()).prefix(2).map(\.rawValue)
      let body = jsonBody(["action": "trash", "query": ["album": "smart:all"], "except": keep])
      #expect(body.readableBytes < 200)
      let start = try await client.execute(
        uri: "/api/jobs", method: .post, headers: ServedLibrary.write, body: body)
      #expect(start.object["total"] as? Int == 9_998)
      let job = try #require(start.object["id"] as? String)
      let events = try await client.execute(
        uri: "/api/jobs/\(job)/events", method: .get, headers: ServedLibrary.write)
      #expect(events.text.contains("\"done\":9998"))
    }
    #expect(try library.assets(matching: AssetQuery()).count == 2)
    #expect(try library.trashedAssets().count == 9_998)
  }

  @Test("uploads: added once, a duplicate reported, and bad ones refused with nothing left behind")
  func uploads() async throws {
    let served = try ServedLibrary()
    let photo = try Fixture.bytes(Fixture.sample("display-p3.jpg"))
    let uploads = served.root + "/Uploads"
    var configuration = served.configuration()
    configuration.uploadLimits.maxBytes = 100_000
    configuration.uploadLimits.maxPixels = 300_000
    try await served.test(configuration) {
      client, _ in
      let added = try await client.execute(
        uri: "/api/uploads?name=..%2F..%2Fholiday.jpg", method: .post, headers: ServedLibrary.write,
        body: ByteBuffer(bytes: photo))
      #expect(added.status == .created)
      #expect(added.object["status"] as? String == "added")
      let asset = try #require(added.object["asset"] as? [String: Any])
      #expect(asset["path"] as? String == "Uploads/holiday.jpg")
      let again = try await client.execute(
        uri: "/api/uploads?name=copy.jpg", method: .post, headers: ServedLibrary.write,
        body: ByteBuffer(bytes: photo))
      #expect(again.status == .ok)
      #expect(again.object["status"] as? String == "duplicate")
      #expect((again.object["asset"] as? [String: Any])?["id"] as? String == asset["id"] as? String)

      let big = try await client.execute(
        uri: "/api/uploads?name=big.jpg", method: .post, headers: ServedLibrary.write,
        body: ByteBuffer(bytes: photo + [UInt8](repeating: 0, count: 100_000)))
      #expect(big.status == .contentTooLarge)
      let text = try await client.execute(
        uri: "/api/uploads?name=notes.jpg", method: .post, headers: ServedLibrary.write,
        body: ByteBuffer(string: "not a photo at all"))
      #expect(text.status == .unprocessableContent)
      #expect(text.errorKind == "unsupported-format")
      let outside = try await client.execute(
        uri: "/api/uploads?name=a.jpg&folder=..%2Fout", method: .post, headers: ServedLibrary.write,
        body: ByteBuffer(bytes: photo))
      #expect(outside.status == .badRequest)
      let readOnly = try await client.execute(
        uri: "/api/uploads?name=r.jpg", method: .post, headers: ServedLibrary.read,
        body: ByteBuffer(bytes: photo))
      #expect(readOnly.status == .forbidden)
    }
    // A 600x400 photo is within 300,000 pixels; a larger one is not.
    let large = try Fixture.bytes(Fixture.sample("gps.jpg"))
    let metadata = try AssetMetadata.read(.data(large, name: "gps.jpg"))
    #expect(metadata.width * metadata.height == 240_000)
    configuration = served.configuration()
    configuration.uploadLimits.maxPixels = 100_000
    try await served.test(configuration) { client, _ in
      let many = try await client.execute(
        uri: "/api/uploads?name=many.jpg", method: .post, headers: ServedLibrary.write,
        body: ByteBuffer(bytes: large))
      #expect(many.status == .contentTooLarge)
      #expect(many.errorKind == "too-large")
    }
    let left = try FileManager.default.contentsOfDirectory(atPath: uploads).sorted()
    #expect(left == ["holiday.jpg"])
    var info = stat()
    #expect(stat(uploads + "/holiday.jpg", &info) == 0)
    #expect(info.st_mode & 0o777 == 0o644 & ~umaskValue())
    #expect(info.st_nlink == 1)
    #expect(try Fixture.bytes(uploads + "/holiday.jpg") == photo)
  }

  @Test("100 concurrent requests for one cold rendition render it once, counted")
  func coalescing() async throws {
    let served = try ServedLibrary()
    let id = try served.ids()[0]
    try await served.test { client, server in
      let bodies = try await withThrowingTaskGroup(of: [UInt8].self) { group in
        for _ in 0..<100 {
          group.addTask {
            let response = try await client.execute(
              uri: "/api/assets/\(id)/fullscreen?size=300", method: .get,
              headers: ServedLibrary.read)
            #expect(response.status == .ok)
            return response.bytes
          }
        }
        var all: [[UInt8]] = []
        for try await body in group { all.append(body) }
        return all
      }
      #expect(bodies.count == 100)
      #expect(Set(bodies).count == 1)
      #expect(!bodies[0].isEmpty)
      let metrics = try await client.execute(
        uri: "/metrics", method: .get, headers: ServedLibrary.read)
      #expect(metrics.text.contains("\ndarkroom_renders_total 1\n"))
      #expect(server.metrics.registry.emitToString().contains("\ndarkroom_renders_total 1\n"))
    }
  }

  @Test("past its bound the render queue answers 503 with Retry-After instead of growing")
  func queueBound() async throws {
    let metrics = ServerMetrics()
    let queue = RenderQueue(slots: 1, bound: 1, observer: metrics.renderObserver)
    let gate = DispatchSemaphore(value: 0)
    let started = DispatchSemaphore(value: 0)
    let rendition = Rendition(bytes: [1], format: .jpeg, width: 1, height: 1)
    let first = Task {
      try await queue.rendition("a") { () throws(DarkroomError) in
        started.signal()
        gate.wait()
        return rendition
      }
    }
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        started.wait()
        continuation.resume()
      }
    }
    let second = Task { try await queue.rendition("b") { () throws(DarkroomError) in rendition } }
    // "a" runs and "b" is queued behind it: a third is one too many.
    while queue.depth < 2 { await Task.yield() }
    await #expect(throws: DarkroomError.self) {
      _ = try await queue.rendition("c") { () throws(DarkroomError) in rendition }
    }
    do {
      _ = try await queue.rendition("c") { () throws(DarkroomError) in rendition }
    } catch {
      #expect(error.kind == .busy)
      let answer = ErrorMiddleware.translate(
        error, library: Library(root: URL(fileURLWithPath: "/")))
      #expect(answer.status == .serviceUnavailable)
      #expect(answer.headers[.retryAfter] == "1")
    }
    gate.signal()
    #expect(try await first.value.bytes == [1])
    #expect(try await second.value.bytes == [1])
    #expect(metrics.registry.emitToString().contains("\ndarkroom_renders_rejected_total 2\n"))
  }

  @Test("a file that crashes the decoder costs one 422, and the server goes on")
  func decoderCrash() async throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    try FileManager.default.copyItem(
      atPath: Fixture.sample("orientation-2.jpg"), toPath: served.folder.file("crashes.jpg"))
    _ = try await served.library.scan()
    let crashing = try #require(try served.library.asset(atPath: served.folder.file("crashes.jpg")))
    let fine = try served.ids().first { $0 != crashing.id }!
    var workers = WorkerPool.Configuration(executable: CLI.binary)
    workers.environment = ["DARKROOM_TEST_DECODER_FAULT": "crash=crashes"]
    let pool = WorkerPool(workers)
    defer { pool.shutDown() }
    var configuration = served.configuration()
    configuration.pixels.workers = pool
    try await served.test(configuration) { client, _ in
      let bad = try await client.execute(
        uri: "/api/assets/\(crashing.id)/thumbnail?size=64", method: .get,
        headers: ServedLibrary.read)
      #expect(bad.status == .unprocessableContent)
      #expect(bad.headers[.contentType] == "application/json; charset=utf-8")
      let good = try await client.execute(
        uri: "/api/assets/\(fine)/thumbnail?size=64", method: .get, headers: ServedLibrary.read)
      #expect(good.status == .ok)
    }
    #expect(pool.counts.crashed == 1)
  }

  @Test("the gallery's cookie needs the session's CSRF token to change anything, and its Origin")
  func csrf() async throws {
    let served = try ServedLibrary()
    let id = try served.ids()[0]
    try await served.test { client, _ in
      let login = try await client.execute(
        uri: "/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
        body: ByteBuffer(
          string: "token=\(ServedLibrary.writeToken)&next=%2Falbum%3Fref%3Dsmart%3Aall"))
      #expect(login.status == .seeOther)
      #expect(login.headers[.location] == "/album?ref=smart:all")
      let cookie = try #require(login.headers[.setCookie])
      #expect(cookie.contains("HttpOnly"))
      #expect(cookie.contains("SameSite=Strict"))
      let session = String(cookie.split(separator: ";")[0])
      let page = try await client.execute(uri: "/", method: .get, headers: [.cookie: session])
      #expect(page.status == .ok)
      let csrfToken = try #require(
        page.text.split(separator: "name=\"csrf-token\" content=\"").dropFirst().first?.prefix(32))
      let edit = "/api/assets/\(id)/favourite"
      let without = try await client.execute(
        uri: edit, method: .put, headers: [.cookie: session], body: jsonBody(["favourite": true]))
      #expect(without.status == .forbidden)
      #expect(without.errorKind == "csrf")
      let wrong = try await client.execute(
        uri: edit, method: .put,
        headers: [.cookie: session, .csrfToken: "0123456789abcdef0123456789abcdef"],
        body: jsonBody(["favourite": true]))
      #expect(wrong.status == .forbidden)
      let foreign = try await client.execute(
        uri: edit, method: .put,
        headers: [
          .cookie: session, .csrfToken: String(csrfToken), .origin: "https://evil.example",
        ],
        body: jsonBody(["favourite": true]))
      #expect(foreign.status == .forbidden)
      let with = try await client.execute(
        uri: edit, method: .put, headers: [.cookie: session, .csrfToken: String(csrfToken)],
        body: jsonBody(["favourite": true]))
      #expect(with.status == .ok)
      // Every way a browser reads as another site (a tab or newline it strips, a backslash it
      // takes for a slash) lands on this server's front page; a path of its own is kept.
      let nexts = [
        "%2F%2Fevil.example": "/", "%2F%09%2Fevil.example": "/", "%2F%0A%2Fevil.example": "/",
        "%2F%5Cevil.example": "/", "%5C%5Cevil.example": "/", "https%3A%2F%2Fevil.example": "/",
        "%2Fasset%2F%7F": "/", "%2F": "/", "%2Falbums%3Fq%3D1": "/albums?q=1",
      ]
      for (sent, expected) in nexts {
        let login = try await client.execute(
          uri: "/login", method: .post,
          headers: [.contentType: "application/x-www-form-urlencoded"],
          body: ByteBuffer(string: "token=\(ServedLibrary.writeToken)&next=\(sent)"))
        #expect(login.headers[.location] == expected, "next=\(sent)")
      }
    }
    #expect(try served.library.asset(id).isFavourite)
  }

  @Test("failed logins and busy clients are rate limited with 429 and Retry-After")
  func rateLimits() async throws {
    let served = try ServedLibrary()
    // Five at once, and a token back only after a day: what the test sees does not depend on
    // how fast this machine sends seven requests.
    var logins = served.configuration()
    logins.failedLogins = (burst: 5, perSecond: 1.0 / 86_400)
    try await served.test(logins) { client, _ in
      var statuses: [HTTPResponse.Status] = []
      for _ in 0..<7 {
        let response = try await client.execute(
          uri: "/login", method: .post,
          headers: [.contentType: "application/x-www-form-urlencoded"],
          body: ByteBuffer(string: "token=guess"))
        statuses.append(response.status)
      }
      #expect(statuses.prefix(5).allSatisfy { $0 == .unauthorized })
      #expect(statuses.suffix(2).allSatisfy { $0 == .tooManyRequests })
      // Past the limit the right token is not even checked: 429, and no session cookie.
      let right = try await client.execute(
        uri: "/login", method: .post,
        headers: [.contentType: "application/x-www-form-urlencoded"],
        body: ByteBuffer(string: "token=\(ServedLibrary.readToken)"))
      #expect(right.status == .tooManyRequests)
      #expect(right.headers[.setCookie] == nil)
    }
    var configuration = served.configuration()
    configuration.rateLimit = 0.001
    configuration.rateBurst = 3
    try await served.test(configuration) { client, _ in
      var statuses: [HTTPResponse.Status] = []
      for _ in 0..<4 {
        statuses.append(try await client.execute(uri: "/healthz", method: .get).status)
      }
      #expect(statuses == [.ok, .ok, .ok, .tooManyRequests])
      let limited = try await client.execute(uri: "/healthz", method: .get)
      #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
      #expect(limited.errorKind == "rate-limited")
    }
  }

  @Test(
    "bad requests get 4xx and a JSON error without internals: body size, filter length, logout, revert version, spaces"
  )
  func badRequests() async throws {
    let served = try ServedLibrary()
    let id = try served.ids()[0]
    try await served.test { client, _ in
      // A JSON body over 4 MiB: 413 on every call that takes one.
      let huge = ByteBuffer(
        string: "{\"filters\": [\"" + String(repeating: "x", count: 5 << 20) + "\"]}")
      for (uri, method) in [
        ("/api/jobs", HTTPRequest.Method.post), ("/api/assets/\(id)/edit", .post),
        ("/api/download", .post), ("/api/albums", .post),
      ] {
        let response = try await client.execute(
          uri: uri, method: method, headers: ServedLibrary.write, body: huge)
        #expect(response.status == .contentTooLarge, "\(uri)")
        #expect(response.errorKind == "too-large", "\(uri)")
      }
      // A filter of 50,000 characters: 400, naming the parameter, with no SQL in the answer.
      let camera = String(repeating: "%", count: 50_000)
      let long = try await client.execute(
        uri: "/api/assets?camera=" + camera.replacingOccurrences(of: "%", with: "%25"),
        method: .get, headers: ServedLibrary.read)
      #expect(long.status == .badRequest)
      #expect(
        (long.object["error"] as? [String: Any])?["message"] as? String
          == "camera takes at most 1024 bytes; not 50000")
      // A read-only token has no session to end: logging out is a write like any other.
      let logout = try await client.execute(
        uri: "/logout", method: .post, headers: ServedLibrary.read)
      #expect(logout.status == .forbidden)
      #expect(logout.errorKind == "read-only")
      // A version below 0 is no version.
      let revert = try await client.execute(
        uri: "/api/assets/\(id)/revert", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["version": -1]))
      #expect(revert.status == .badRequest)
      #expect(
        ((revert.object["error"] as? [String: Any])?["message"] as? String)?.hasSuffix(
          "version takes 0 (the original) or more; not -1") == true, "\(revert.text)")
      // Locking a space on a server that serves none: 404, not a redirect to a 404.
      let lock = try await client.execute(
        uri: "/space/lock", method: .post, headers: ServedLibrary.write)
      #expect(lock.status == .notFound)
      #expect(lock.errorKind == "not-found")
    }
  }

  @Test("a session renews with use for 12 hours at a time, but ends 7 days after its login")
  func sessionLifetime() {
    let sessions = Sessions()
    let start = ContinuousClock.now
    let session = sessions.create(.read, token: "a-token-of-sixteen", at: start)
    // Used every 11 hours: alive through day 6, and gone at day 7 however recent its use.
    var now = start
    while now + .seconds(11 * 3600) < start + Sessions.absoluteLifetime {
      now += .seconds(11 * 3600)
      #expect(sessions.session(session.id, at: now) != nil, "\(now - start)")
    }
    #expect(sessions.session(session.id, at: start + Sessions.absoluteLifetime) == nil)
    // Unused for 12 hours: gone, even early in its life.
    let idle = sessions.create(.read, token: "a-token-of-sixteen", at: start)
    #expect(sessions.session(idle.id, at: start + Sessions.lifetime + .seconds(1)) == nil)
  }

  @Test("secrets compare equal only when every byte is")
  func secretsCompare() {
    #expect(Secrets.equal("0123456789abcdef", "0123456789abcdef"))
    #expect(!Secrets.equal("0123456789abcdef", "0123456789abcdeF"))
    #expect(!Secrets.equal("0123456789abcdef", "1123456789abcdef"))
    #expect(!Secrets.equal("0123456789abcdef", "0123456789abcde"))
    #expect(!Secrets.equal("", "x"))
  }

  @Test("the change feed replays the change log as server-sent events with their sequence numbers")
  func changeFeed() async throws {
    let served = try ServedLibrary()
    let id = try served.ids()[0]
    try await served.test { client, _ in
      _ = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["filters": ["noir"]]))
      let feed = try await client.execute(
        uri: "/api/changes?since=0&follow=false", method: .get, headers: ServedLibrary.read)
      #expect(feed.headers[.contentType] == "text/event-stream")
      let ids = feed.text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.compactMap {
        Int($0.dropFirst(4))
      }
      #expect(ids == Array(1...ids.count))
      #expect(ids.count == 10)  // nine scanned, one edited
      #expect(feed.text.contains("\"kind\":\"changed\""))
      var resume = ServedLibrary.read
      resume[.lastEventID] = "9"
      let rest = try await client.execute(
        uri: "/api/changes?follow=false", method: .get, headers: resume)
      #expect(rest.text.components(separatedBy: "event: change").count == 2)
      #expect(rest.text.contains("id: 10\n"))
    }
  }

  @Test("a selection downloads as a zip whose entries are the files' bytes")
  func zipDownload() async throws {
    let served = try ServedLibrary()
    let ids = Array(try served.ids().prefix(3))
    try await served.test { client, _ in
      let response = try await client.execute(
        uri: "/api/download", method: .post, headers: ServedLibrary.read,
        body: jsonBody(["ids": ids.map(\.rawValue)]))
      #expect(response.status == .ok)
      #expect(response.headers[.contentType] == "application/zip")
      #expect(response.headers[.contentDisposition] == "attachment; filename=\"darkroom-3.zip\"")
      let entries = try ZipReader.entries(response.bytes)
      #expect(entries.count == 3)
      for (id, entry) in zip(ids, entries) {
        let asset = try served.library.asset(id)
        #expect(entry.name == asset.path)
        #expect(entry.data == (try Fixture.bytes(served.library.path(of: asset))))
        #expect(entry.crc == ZipReader.crc32(entry.data))
      }
      // The gallery's form: all of an album less the ones unticked.
      var form = ServedLibrary.read
      form[.contentType] = "application/x-www-form-urlencoded"
      let all = try served.ids()
      let less = try await client.execute(
        uri: "/api/download", method: .post, headers: form,
        body: ByteBuffer(
          string: "album=smart%3Aall&except=\(ids[0].rawValue)%2C\(ids[1].rawValue)"))
      #expect(less.status == .ok)
      let names = try ZipReader.entries(less.bytes).map(\.name)
      #expect(names.count == all.count - 2)
      for id in ids.prefix(2) {
        #expect(!names.contains(try served.library.asset(id).path))
      }
    }
  }

  @Test("albums: user album changes, counts and posters over the API")
  func albums() async throws {
    let served = try ServedLibrary()
    let ids = Array(try served.ids().prefix(2)).map(\.rawValue)
    try await served.test { client, _ in
      let create = try await client.execute(
        uri: "/api/albums", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["op": "create", "title": "Trip"]))
      #expect(create.status == .ok)
      _ = try await client.execute(
        uri: "/api/albums", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["op": "add", "title": "Trip", "ids": ids]))
      let list = try await client.execute(
        uri: "/api/albums", method: .get, headers: ServedLibrary.read)
      let albums = list.object["albums"] as? [[String: Any]] ?? []
      let trip = try #require(albums.first { $0["title"] as? String == "Trip" })
      #expect(trip["count"] as? Int == 2)
      #expect(ids.contains(trip["poster"] as? String ?? ""))
      let poster = try await client.execute(
        uri: "/api/albums", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["op": "poster", "title": "Trip", "ids": [ids[1]]]))
      let chosen = (poster.object["albums"] as? [[String: Any]])?.first {
        $0["title"] as? String == "Trip"
      }
      #expect(chosen?["poster"] as? String == ids[1])
      let dup = try await client.execute(
        uri: "/api/albums", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["op": "create", "title": "Trip"]))
      #expect(dup.status == .badRequest)
      let badOp = try await client.execute(
        uri: "/api/albums", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["op": "explode", "title": "Trip"]))
      #expect(badOp.status == .badRequest)
      // An album or asset that is not there: 404; an empty new title: 400, whatever the op.
      let missing = try await client.execute(
        uri: "/api/albums", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["op": "add", "title": "Nowhere", "ids": ids]))
      #expect(missing.status == .notFound)
      #expect(missing.errorKind == "not-found")
      let unknownAsset = try await client.execute(
        uri: "/api/albums", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["op": "add", "title": "Trip", "ids": ["01M8A03Y1YQ9HR963Q7S17MF6Q"]]))
      #expect(unknownAsset.status == .notFound, "\(unknownAsset.text)")
      for op in ["create", "rename"] {
        let empty = try await client.execute(
          uri: "/api/albums", method: .post, headers: ServedLibrary.write,
          body: jsonBody(["op": op, "title": "Trip 2", "newTitle": ""]))
        #expect(empty.status == .badRequest, "\(op)")
        #expect(
          (empty.object["error"] as? [String: Any])?["message"] as? String == "newTitle is empty")
      }
    }
  }

  @Test("one asset, filters, preview, trash and duplicates answer as documented")
  func remainingRoutes() async throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg", "gps.jpg"])
    try FileManager.default.copyItem(
      atPath: Fixture.sample("gps.jpg"), toPath: served.folder.file("gps copy.jpg"))
    _ = try await served.library.scan()
    let ids = try served.ids()
    let first = try served.library.asset(ids[0])
    try await served.test { client, _ in
      let one = try await client.execute(
        uri: "/api/assets/\(first.id)", method: .get, headers: ServedLibrary.read)
      #expect(one.object["id"] as? String == first.id.rawValue)
      #expect(one.object["version"] as? String == String(first.contentHash.prefix(12)))
      #expect(one.object["path"] as? String == first.path)
      #expect(!one.text.contains(served.root))
      let filters = try await client.execute(
        uri: "/api/filters", method: .get, headers: ServedLibrary.read)
      let presets = (filters.object["presets"] as? [[String: Any]])?.compactMap {
        $0["name"] as? String
      }
      #expect(presets == Presets.names)
      // A preview is rendered, written nowhere, and a read-only token may ask for it.
      let before = try Fixture.bytes(served.library.path(of: first))
      let preview = try await client.execute(
        uri: "/api/assets/\(first.id)/preview", method: .post, headers: ServedLibrary.read,
        body: jsonBody(["filters": ["noir"], "size": 200]))
      #expect(preview.status == .ok)
      let metadata = try AssetMetadata.read(.data(preview.bytes, name: "preview"))
      #expect(max(metadata.width, metadata.height) == 200)
      #expect(try centrePixel(preview.bytes).count == 1 || isGrey(try centrePixel(preview.bytes)))
      #expect(try Fixture.bytes(served.library.path(of: first)) == before)
      // A pixel crop names the original's pixels, whatever the preview's size.
      let crop: [String: Any] = [
        "format": "org.darkroom.filter-graph", "version": 1,
        "nodes": [
          [
            "op": "crop",
            "params": ["unit": "px", "x": 300, "y": 100, "width": 200, "height": 200],
          ]
        ],
      ]
      let cropped = try await client.execute(
        uri: "/api/assets/\(first.id)/preview", method: .post, headers: ServedLibrary.read,
        body: jsonBody(["graph": crop, "size": 200]))
      #expect(cropped.status == .ok, "\(cropped.text)")
      let square = try AssetMetadata.read(.data(cropped.bytes, name: "preview"))
      #expect(square.width == square.height && square.width >= 60 && square.width <= 70)
      let duplicates = try await client.execute(
        uri: "/api/duplicates", method: .get, headers: ServedLibrary.read)
      let groups = duplicates.object["groups"] as? [[String: Any]] ?? []
      #expect(groups.count == 1)
      #expect((groups.first?["assets"] as? [String])?.count == 2)
      #expect(groups.first?["exact"] as? Bool == true)
      let trash = try await client.execute(
        uri: "/api/jobs", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["action": "trash", "ids": [first.id.rawValue]]))
      let job = try #require(trash.object["id"] as? String)
      _ = try await client.execute(
        uri: "/api/jobs/\(job)/events", method: .get, headers: ServedLibrary.read)
      let trashed = try await client.execute(
        uri: "/api/trash", method: .get, headers: ServedLibrary.read)
      #expect(
        (trashed.object["assets"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [
          first.id.rawValue
        ])
      let emptied = try await client.execute(
        uri: "/api/trash/empty", method: .post, headers: ServedLibrary.write)
      #expect(emptied.object["assets"] as? [String] == [first.id.rawValue])
      let gone = try await client.execute(
        uri: "/api/assets/\(first.id)", method: .get, headers: ServedLibrary.read)
      #expect(gone.status == .notFound)
    }
    #expect(!FileManager.default.fileExists(atPath: served.library.path(of: first)))
  }

  @Test(
    "what Schemathesis and a reading found: upload folders, unknown favourites, AVIF, HEAD, logout")
  func foundByReading() async throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let id = try served.ids()[0]
    let photo = try Fixture.bytes(Fixture.sample("gps.jpg"))
    try await served.test { client, _ in
      for folder in [
        "orientation-1.jpg", "orientation-1.jpg%2Fsub", String(repeating: "a", count: 300),
      ] {
        let response = try await client.execute(
          uri: "/api/uploads?name=x.jpg&folder=\(folder)", method: .post,
          headers: ServedLibrary.write,
          body: ByteBuffer(bytes: photo))
        #expect(response.status == .badRequest, "\(folder.prefix(40)): \(response.text)")
      }
      let favourite = try await client.execute(
        uri: "/api/assets/01ARZ3NDEKTSV4RRFFQ69G5FAV/favourite", method: .put,
        headers: ServedLibrary.write,
        body: jsonBody(["favourite": true]))
      #expect(favourite.status == .notFound)
      let avif = try await client.execute(
        uri: "/api/assets/\(id)/thumbnail?format=avif", method: .get, headers: ServedLibrary.read)
      #expect(avif.status == .badRequest)
      let head = try await client.execute(
        uri: "/api/assets/\(id)/thumbnail?size=32", method: .head, headers: ServedLibrary.read)
      #expect(head.status == .ok)
      #expect(head.headers[.eTag] != nil)
      let login = try await client.execute(
        uri: "/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
        body: ByteBuffer(string: "token=\(ServedLibrary.readToken)"))
      let session = String((login.headers[.setCookie] ?? "").split(separator: ";")[0])
      let page = try await client.execute(uri: "/", method: .get, headers: [.cookie: session])
      let csrf = String(
        page.text.split(separator: "name=\"csrf-token\" content=\"").dropFirst().first?.prefix(32)
          ?? "")
      let logout = try await client.execute(
        uri: "/logout", method: .post,
        headers: [.cookie: session, .contentType: "application/x-www-form-urlencoded"],
        body: ByteBuffer(string: "csrf=\(csrf)"))
      #expect(logout.status == .seeOther)
      let after = try await client.execute(uri: "/", method: .get, headers: [.cookie: session])
      #expect(after.status == .seeOther)
    }
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: served.root).sorted() == [
        ".darkroom", "orientation-1.jpg",
      ])
  }

  @Test("malformed requests get a 4xx JSON error, never a 5xx")
  func malformed() async throws {
    let served = try ServedLibrary()
    let id = try served.ids()[0].rawValue
    try await served.test { client, _ in
      let cases: [(String, HTTPRequest.Method, ByteBuffer?)] = [
        ("/api/assets/\(id)/edit", .post, ByteBuffer(string: "{not json")),
        ("/api/assets/\(id)/edit", .post, ByteBuffer(string: "{\"filters\": 3}")),
        (
          "/api/assets/\(id)/edit", .post,
          ByteBuffer(string: "{\"filters\": [\"tone exposure=99\"]}")
        ),
        ("/api/assets/\(id)/edit", .post, nil),
        ("/api/assets/\(id)/revert", .post, ByteBuffer(string: "[]")),
        (
          "/api/assets/\(id)/preview", .post,
          ByteBuffer(string: "{\"filters\":[\"noir\"],\"size\":0}")
        ),
        ("/api/jobs", .post, ByteBuffer(string: "{\"action\":\"trash\"}")),
        ("/api/jobs", .post, ByteBuffer(string: "{\"action\":\"trash\",\"ids\":[\"x\"]}")),
        (
          "/api/jobs", .post,
          ByteBuffer(string: "{\"action\":\"trash\",\"query\":{\"bogus\":\"1\"}}")
        ),
        ("/api/download", .post, ByteBuffer(string: "{}")),
        ("/api/uploads", .post, ByteBuffer(string: "x")),
        ("/api/changes?since=-4", .get, nil),
        ("/api/assets/\(id)", .delete, nil),
        ("/api/assets?limit=100000", .get, nil),
        ("/api/assets?after=nope", .get, nil),
      ]
      for (uri, method, body) in cases {
        let response = try await client.execute(
          uri: uri, method: method, headers: ServedLibrary.write, body: body)
        #expect((400..<500).contains(response.status.code), "\(method) \(uri): \(response.status)")
        #expect(response.errorKind != nil, "\(method) \(uri): \(response.text)")
      }
    }
  }
}

func umaskValue() -> mode_t {
  let mask = umask(0)
  umask(mask)
  return mask
}

/// Reads a stored zip the way an unzip tool does: from its central directory.
enum ZipReader {
  struct Entry {
    var name: String
    var crc: UInt32
    var data: [UInt8]
  }

  static func entries(_ zip: [UInt8]) throws -> [Entry] {
    func u16(_ at: Int) -> Int { Int(zip[at]) | Int(zip[at + 1]) << 8 }
    func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
    let end = try #require((0...(zip.count - 22)).reversed().first { u32($0) == 0x0605_4b50 })
    let count = u16(end + 10)
    var at = u32(end + 16)
    var entries: [Entry] = []
    for _ in 0..<count {
      #expect(u32(at) == 0x0201_4b50)
      let crc = UInt32(u32(at + 16))
      let size = u32(at + 20)
      let nameLength = u16(at + 28)
      let extra = u16(at + 30)
      let comment = u16(at + 32)
      let local = u32(at + 42)
      let name = String(decoding: zip[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
      #expect(u32(local) == 0x0403_4b50)
      let start = local + 30 + u16(local + 26) + u16(local + 28)
      entries.append(Entry(name: name, crc: crc, data: Array(zip[start..<(start + size)])))
      at += 46 + nameLength + extra + comment
    }
    return entries
  }

  /// CRC-32 bit by bit (not the table the server uses).
  static func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
    }
    return ~crc
  }
}

extension ServerTests {
  @Test("a known path asked with another method: 405, Allow and the JSON error; unknown paths 404")
  func methodNotAllowed() async throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let id = try #require(try served.ids().first)
    try await served.test { client, _ in
      let trace = try await client.execute(
        uri: "/api/assets/\(id)", method: .trace, headers: ServedLibrary.write)
      #expect(trace.status == .methodNotAllowed)
      #expect(trace.headers[.allow] == "GET, HEAD")
      #expect(trace.errorKind == "method-not-allowed")
      #expect(trace.object["error"] != nil)
      let delete = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .delete, headers: ServedLibrary.write)
      #expect(delete.status == .methodNotAllowed)
      // The literal route wins, as the router resolves it (not also /api/assets/ID/{rep}).
      #expect(delete.headers[.allow] == "POST")
      let nowhere = try await client.execute(
        uri: "/api/nowhere", method: .trace, headers: ServedLibrary.write)
      #expect(nowhere.status == .notFound)
      let get = try await client.execute(
        uri: "/api/assets/\(id)", method: .get, headers: ServedLibrary.read)
      #expect(get.status == .ok)
    }
  }
}
