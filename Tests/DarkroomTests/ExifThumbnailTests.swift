import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom

/// The small JPEG cameras embed in EXIF (IFD1): found at scan time, served as it is, shown by
/// the gallery until a photo's own thumbnail comes.
@Suite("Embedded EXIF thumbnails", .serialized, .timeLimit(.minutes(10)), .offThePool)
struct ExifThumbnailTests {
  /// The JSON `info --json` prints for one file.
  static func info(_ path: String) throws -> [String: Any] {
    let run = try CLI.run(["info", path, "--json"])
    let list = try JSONSerialization.jsonObject(with: run.stdoutData) as? [[String: Any]]
    return try #require(list?.first, "\(run.stderr)")
  }

  @Test(
    "info finds where the thumbnail is: a whole JPEG there; none for a photo without one, or whose thumbnail is not a JPEG"
  )
  func found() throws {
    let gps = Fixture.sample("gps.jpg")
    let range = try #require(try Self.info(gps)["exifThumbnail"] as? [String: Int])
    let (offset, length) = (try #require(range["offset"]), try #require(range["length"]))
    let file = try Fixture.bytes(gps)
    #expect(length == 2887 && offset + length <= file.count)
    let bytes = Array(file[offset..<offset + length])
    #expect(bytes.prefix(2) == [0xFF, 0xD8] && bytes.suffix(2) == [0xFF, 0xD9])
    let folder = try TemporaryFolder()
    let image = try VipsImage.open(path: try folder.write("t.jpg", bytes), sequential: false)
    #expect(image.width > 0 && image.width <= 256 && image.height <= 256)
    // None at all; and one whose bytes are no JPEG (start marker overwritten).
    #expect(try Self.info(Fixture.sample("orientation-1.jpg"))["exifThumbnail"] is NSNull)
    var spoiled = file
    spoiled[offset] = 0
    #expect(try Self.info(try folder.write("spoiled.jpg", spoiled))["exifThumbnail"] is NSNull)
  }

  @Test(
    "The API serves the scanned thumbnail's bytes as they are; 404 with a JSON error for none and for a file changed since the scan"
  )
  func served() async throws {
    let served = try ServedLibrary(samples: ["gps.jpg", "orientation-1.jpg"])
    let gps = try #require(try served.library.asset(atPath: served.folder.file("gps.jpg")))
    let plain = try #require(
      try served.library.asset(atPath: served.folder.file("orientation-1.jpg")))
    let range = try #require(gps.exifThumbnail)
    #expect(plain.exifThumbnail == nil)
    let file = try Fixture.bytes(served.folder.file("gps.jpg"))
    let expected = Array(file[range.offset..<range.offset + range.length])
    let version = String(gps.contentHash.prefix(12))
    try await served.test { client, _ in
      let listed = try await client.execute(
        uri: "/api/assets/\(gps.id.rawValue)", method: .get, headers: ServedLibrary.read)
      #expect(
        listed.object["exifThumbnail"] as? [String: Int] == [
          "offset": range.offset, "length": range.length,
        ])
      let thumb = try await client.execute(
        uri: "/api/assets/\(gps.id.rawValue)/exif-thumbnail?v=\(version)", method: .get,
        headers: ServedLibrary.read)
      #expect(thumb.status == .ok && thumb.bytes == expected)
      #expect(thumb.headers[.contentType] == "image/jpeg")
      #expect(thumb.headers[.cacheControl] == "public, max-age=31536000, immutable")
      let none = try await client.execute(
        uri: "/api/assets/\(plain.id.rawValue)/exif-thumbnail", method: .get,
        headers: ServedLibrary.read)
      #expect(none.status == .notFound && none.errorKind == "not-found")
      #expect(
        ((none.object["error"] as? [String: Any])?["message"] as? String)?.hasSuffix(
          "orientation-1.jpg: has no embedded thumbnail") == true, "\(none.text)")
    }
    // The file rewritten since the scan: the bytes there may be anything now.
    var changed = file
    changed.insert(contentsOf: [0xFF, 0xFE, 0x00, 0x05, 0x61, 0x62, 0x63], at: 2)
    _ = try served.folder.write("gps.jpg", changed)
    try await served.test { client, _ in
      let stale = try await client.execute(
        uri: "/api/assets/\(gps.id.rawValue)/exif-thumbnail", method: .get,
        headers: ServedLibrary.read)
      #expect(stale.status == .notFound, "\(stale.text)")
      #expect(stale.text.contains("has changed since it was scanned: scan it again"))
    }
  }

  @Test("The gallery shows the embedded thumbnails while the real ones render, then the real ones")
  func placeholdersThenThumbnails() throws {
    let folder = try TemporaryFolder()
    let bytes = try Fixture.bytes(Fixture.sample("gps.jpg"))
    for index in 0..<3 {
      let tag = Array("copy \(index)".utf8)
      var unique = bytes
      unique.insert(
        contentsOf: [0xFF, 0xFE, 0, UInt8(tag.count + 2)] + tag, at: 2)
      _ = try folder.write("p\(index).jpg", unique)
    }
    let library = try Library.create(at: folder.path)
    _ = try library.scanBlocking()
    // While the gate file is there, the server's renders wait.
    let gate = try folder.write("gate", [])
    let server = try ServeProcess(
      folder.path, arguments: ["--rate-limit", "0"],
      environment: ["DARKROOM_TEST_RENDER_GATE": gate])
    let (browser, base) = try Browser.loggedIn(to: server)
    try browser.go(base + "/album?ref=smart:all")
    let counts = {
      (try? browser.run(
        """
        const loaded = (s) => Array.from(document.querySelectorAll(s))
          .filter((i) => i.complete && i.naturalWidth > 0).length;
        return [loaded('.cell img.placeholder'), loaded('.cell img:not(.placeholder)'),
          document.querySelectorAll('.cell img.placeholder').length];
        """)) as? [Int] ?? []
    }
    #expect(eventually { counts() == [3, 0, 3] }, "placeholders first: \(counts())")
    try FileManager.default.removeItem(atPath: gate)
    #expect(eventually { counts() == [0, 3, 0] }, "then the thumbnails: \(counts())")
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
  }
}
