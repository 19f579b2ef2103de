import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// Query strings as HTML forms write them: `+` is a space.
@Suite("Query strings: a + is a space", .timeLimit(.minutes(5)), .offThePool)
struct FormQueryTests {
  /// A library of two photos: `Summer Trip/a.jpg` (the sample taken in Rio de Janeiro by the
  /// Darkroom Field Camera, captioned "Marie Curie at the lab", keyword "New York", in the
  /// album "Trip 2024") and `b.jpg`, which has none of these.
  static func library() async throws -> (ServedLibrary, AssetID) {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      atPath: folder.file("Summer Trip"), withIntermediateDirectories: true)
    _ = try folder.write("Summer Trip/a.jpg", Fixture.bytes(Fixture.sample("gps.jpg")))
    _ = try folder.write(
      "Summer Trip/a.jpg.xmp",
      Array(
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/">\
        <dc:description><rdf:Alt><rdf:li xml:lang="x-default">Marie Curie at the lab</rdf:li></rdf:Alt></dc:description>\
        <dc:subject><rdf:Bag><rdf:li>New York</rdf:li></rdf:Bag></dc:subject>\
        </rdf:Description></rdf:RDF></x:xmpmeta>
        """.utf8))
    _ = try folder.write("b.jpg", Fixture.bytes(Fixture.sample("orientation-1.jpg")))
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    let a = try #require(try library.asset(atPath: folder.file("Summer Trip/a.jpg")))
    try library.edit(.create("Trip 2024"))
    try library.edit(.add("Trip 2024", [a.id]))
    return (ServedLibrary(over: library, in: folder), a.id)
  }

  @Test(
    "each parameter that takes text finds the photo with + for its spaces, as with %20: text, keyword, camera, place, album, folder",
    arguments: [
      ("text", "Marie Curie"), ("keyword", "New York"), ("camera", "Darkroom Field Camera"),
      ("place", "Rio de Janeiro"), ("album", "Trip 2024"), ("album", "folder:Summer Trip"),
    ])
  func plusIsASpace(_ name: String, _ value: String) async throws {
    let (served, id) = try await Self.library()
    try await served.test { client, _ in
      for spaced in [
        value.replacingOccurrences(of: " ", with: "+"),
        value.replacingOccurrences(of: " ", with: "%20"),
      ] {
        let list = try await client.execute(
          uri: "/api/assets?\(name)=\(spaced)", method: .get, headers: ServedLibrary.read)
        #expect(list.status == .ok, "\(name)=\(spaced): \(list.text.prefix(200))")
        let ids = (list.object["assets"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(ids == [id.rawValue], "\(name)=\(spaced)")
      }
    }
  }

  @Test("the gallery's search form and an album whose title has a space show their photo")
  func galleryPages() async throws {
    let (served, id) = try await Self.library()
    try await served.test { client, _ in
      let login = try await client.execute(
        uri: "/login", method: .post, headers: GalleryLogin.form,
        body: ByteBuffer(string: "token=\(ServedLibrary.readToken)"))
      let cookie = String(try #require(login.headers[.setCookie]).split(separator: ";")[0])
      for uri in [
        "/album?ref=smart%3Aall&text=Marie+Curie", "/album?ref=Trip+2024",
        "/album?ref=folder%3ASummer+Trip",
      ] {
        let page = try await client.execute(uri: uri, method: .get, headers: [.cookie: cookie])
        #expect(page.status == .ok, "\(uri)")
        #expect(page.text.contains("1 item"), "\(uri): \(page.text.prefix(300))")
        #expect(page.text.contains(id.rawValue), "\(uri)")
      }
    }
  }

  @Test("a value whose escapes do not read stays as it came; + in a name is kept")
  func readingRules() {
    let query = FormQuery("text=a+b%20c&bad=%zz+1&x+y=1&empty&last=1&last=2")
    #expect(query["text"] == "a b c")
    #expect(query["bad"] == "%zz 1")
    #expect(query["x+y"] == "1")
    #expect(query["empty"] == "")
    #expect(query["last"] == "1")
    #expect(query["missing"] == nil)
  }

  @Test("pairs as a form splits them: empty ones skipped, the first = splits, names byte for byte")
  func pairs() {
    let query = FormQuery("&&a=b=c&=v&flag&&\u{212A}=kelvin&k=1&")
    let pairs = query.map { "\($0.0)|\($0.1)" }
    #expect(pairs == ["a|b=c", "|v", "flag|", "\u{212A}|kelvin", "k|1"])
    #expect(query["a"] == "b=c")
    #expect(query[""] == "v")
    #expect(query["flag"] == "")
    // U+212A KELVIN SIGN is canonically a K; a name is its bytes, as the client sent them.
    #expect(query["K"] == nil)
    #expect(query["\u{212A}"] == "kelvin")
    #expect(query.firstName { $0.utf8.count > 1 } == "flag")
    #expect(FormQuery(nil).map { $0.0 }.isEmpty)
    #expect(FormQuery("")["a"] == nil)
  }
}
