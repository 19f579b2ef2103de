import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// No path leads out of a library: an upload never writes through a symbolic link, and a
/// catalogued file swapped for a link (or for another file) is never read in its place.
@Suite("Links inside a library lead nowhere", .timeLimit(.minutes(10)), .offThePool)
struct LinkTests {
  @Test("an upload into a folder that is a link, or below one, is refused and writes nothing")
  func uploadThroughLinkRefused() async throws {
    let served = try ServedLibrary()
    let outside = try TemporaryFolder()
    try FileManager.default.createSymbolicLink(
      atPath: served.folder.file("out"), withDestinationPath: outside.path)
    let photo = try Fixture.bytes(Fixture.sample("gps.jpg"))
    let other = try Fixture.bytes(Fixture.sample("display-p3.jpg"))
    try await served.test { client, _ in
      for folder in ["out", "out%2Fsub"] {
        let response = try await client.execute(
          uri: "/api/uploads?name=evil.jpg&folder=\(folder)", method: .post,
          headers: ServedLibrary.write, body: ByteBuffer(bytes: photo))
        #expect(response.status == .badRequest, "\(folder)")
        #expect(response.errorKind == "invalid-argument")
        #expect(
          response.object["error"].flatMap { ($0 as? [String: Any])?["message"] as? String }
            == "out: is not a folder of the library (a link or a file is in the way)")
      }
      // A real folder still takes uploads (of a photo the library lacks).
      let fine = try await client.execute(
        uri: "/api/uploads?name=fine.jpg&folder=in%2Fsub", method: .post,
        headers: ServedLibrary.write, body: ByteBuffer(bytes: other))
      #expect(fine.status == .created)
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    #expect(try Fixture.bytes(served.folder.file("in/sub/fine.jpg")) == other)
  }

  @Test("a catalogued file swapped for a link: download, full and renditions are refused")
  func swappedForLinkRefused() async throws {
    let served = try ServedLibrary()
    let secret = try TemporaryFolder()
    let secretBytes = try Fixture.bytes(Fixture.sample("orientation-3.jpg"))
    let target = try secret.write("secret.jpg", secretBytes)
    let id = try #require(
      try served.ids().first { try served.library.asset($0).path == "gps.jpg" })
    let path = served.folder.file("gps.jpg")
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    let refusal = "gps.jpg: is a symbolic link: Darkroom does not follow links inside a library"
    try await served.test { client, _ in
      let download = try await client.execute(
        uri: "/api/download", method: .post, headers: ServedLibrary.read,
        body: jsonBody(["ids": [id.rawValue]]))
      #expect(download.status == .unprocessableContent)
      #expect(!download.bytes.contains(subsequence: secretBytes.prefix(64)))
      for representation in ["full", "fullscreen", "thumbnail"] {
        let response = try await client.execute(
          uri: "/api/assets/\(id)/\(representation)", method: .get, headers: ServedLibrary.read)
        #expect(response.status == .unprocessableContent, "\(representation)")
        #expect(
          response.object["error"].flatMap { ($0 as? [String: Any])?["message"] as? String }
            == refusal, "\(representation)")
      }
    }
    // The engine refuses it the same way to any caller.
    let asset = try served.library.asset(id)
    #expect(throws: DarkroomError.self) { try served.library.openFile(of: asset) }
  }

  @Test("a catalogued file replaced by another file is not sent; one with the same bytes is")
  func replacedFileChecked() throws {
    let served = try ServedLibrary()
    let id = try #require(
      try served.ids().first { try served.library.asset($0).path == "gps.jpg" })
    let asset = try served.library.asset(id)
    let path = served.library.path(of: asset)
    let original = try Fixture.bytes(path)
    // Same bytes, new inode (a copy tool that replaces files): still the catalogued content.
    try FileManager.default.removeItem(atPath: path)
    try Data(original).write(to: URL(fileURLWithPath: path))
    let same = try served.library.openFile(of: asset)
    #expect(try same.read(at: 0, count: same.size) == original)
    // Other bytes under a new inode: refused, naming the file.
    try FileManager.default.removeItem(atPath: path)
    try Data(try Fixture.bytes(Fixture.sample("orientation-1.jpg"))).write(
      to: URL(fileURLWithPath: path))
    do {
      _ = try served.library.openFile(of: asset)
      Issue.record("a replaced file was opened")
    } catch {
      #expect(error.kind == .unreadable)
      #expect(
        error.description
          == "\(path): is not the file the catalog knows (it was replaced since it was catalogued)")
    }
  }
}

extension Array where Element == UInt8 {
  fileprivate func contains(subsequence: ArraySlice<UInt8>) -> Bool {
    guard !subsequence.isEmpty, subsequence.count <= count else { return false }
    return (0...(count - subsequence.count)).contains {
      self[$0..<$0 + subsequence.count] == subsequence
    }
  }
}
