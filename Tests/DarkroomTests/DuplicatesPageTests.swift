import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

@Suite("The gallery's duplicates page, a page of groups at a time", .offThePool)
struct DuplicatesPageTests {
  /// The sample with a comment segment of its own: the same pixels, other bytes.
  static func distinct(_ n: Int) throws -> [UInt8] {
    let base = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let tag = Array("copy \(n)".utf8)
    return Array(base.prefix(2)) + [0xFF, 0xFE, 0, UInt8(tag.count + 2)] + tag + base.dropFirst(2)
  }

  @Test(
    "300 look-alike copies are one group (the index sees one print), and a pair kept apart still joins it through the others"
  )
  func alikeCopies() throws {
    let folder = try Fixture.temporaryFolder()
    for n in 0..<300 { _ = try folder.write("c\(n).jpg", try Self.distinct(n)) }
    let library = try Library.create(at: folder.path)
    _ = try library.scanBlocking()
    let ids = try library.assetIDs(matching: AssetQuery(parameters: [("sort", "name")]))
    #expect(ids.count == 300)
    let groups = try library.duplicates(near: true)
    #expect(groups.map(\.assets) == [ids.sorted()])
    try library.keepApart([ids[0], ids[1]])
    #expect(try library.duplicates(near: true).map(\.assets) == [ids.sorted()])
    // Two kept apart with no third between them are two.
    let pair = try Fixture.temporaryFolder()
    for n in 0..<2 { _ = try pair.write("p\(n).jpg", try Self.distinct(n)) }
    let small = try Library.create(at: pair.path)
    _ = try small.scanBlocking()
    let both = try small.assetIDs(matching: AssetQuery())
    #expect(try small.duplicates(near: true).map(\.assets) == [both.sorted()])
    try small.keepApart(both)
    #expect(try small.duplicates(near: true).isEmpty)
  }

  @Test(
    "51 pairs and a group of 52 copies: 50 groups a page with links between, a group of more than 50 shows 50 and says how many more (and offers no resolve), a bad page number is a 400"
  )
  func paged() async throws {
    let folder = try Fixture.temporaryFolder()
    // Bytes of its own for each: a comment segment after the start marker.
    let distinct = Self.distinct
    try FileManager.default.createDirectory(
      atPath: folder.file("pairs"), withIntermediateDirectories: true)
    for n in 0..<51 {
      _ = try folder.write("pairs/a\(n).jpg", distinct(n))
      _ = try folder.write("pairs/b\(n).jpg", distinct(n))
    }
    for n in 0..<52 { _ = try folder.write("big\(n).jpg", distinct(1000)) }
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    #expect(try library.duplicates().count == 52)
    let served = ServedLibrary(over: library, in: folder)

    try await served.test { client, _ in
      func page(_ uri: String) async throws -> (status: Int, html: String) {
        let response = try await client.execute(
          uri: uri, method: .get, headers: ServedLibrary.read)
        return (Int(response.status.code), response.text)
      }
      func count(_ text: String, in html: String) -> Int {
        html.components(separatedBy: text).count - 1
      }
      let first = try await page("/duplicates")
      #expect(first.status == 200)
      #expect(count("<section class=\"duplicate-group\"", in: first.html) == 50)
      #expect(first.html.contains("52 groups, page 1 of 2"))
      #expect(first.html.contains("href=\"/duplicates?page=2\" rel=\"next\""))
      #expect(!first.html.contains("rel=\"prev\""))
      let second = try await page("/duplicates?page=2")
      #expect(second.status == 200)
      #expect(count("<section class=\"duplicate-group\"", in: second.html) == 2)
      #expect(second.html.contains("52 groups, page 2 of 2"))
      #expect(second.html.contains("href=\"/duplicates?page=1\" rel=\"prev\""))
      #expect(!second.html.contains("rel=\"next\""))
      // Group numbers go on across pages (each group's choice has a name of its own).
      #expect(second.html.contains("aria-label=\"Group 51\""))

      // The group of 52: 50 shown, 2 more said, no resolve button for it.
      let both = first.html + second.html
      #expect(count("And 2 more in this group, not shown", in: both) == 1)
      #expect(count("data-act=\"resolve\"", in: both) == 51)
      #expect(count("<img ", in: both) == 51 * 2 + 50)

      let past = try await page("/duplicates?page=9")
      #expect(past.status == 200 && past.html.contains("52 groups, page 2 of 2"))
      for bad in ["0", "two", "-1"] {
        let refused = try await page("/duplicates?page=\(bad)")
        #expect(refused.status == 400, "\(bad)")
        #expect(
          refused.html.contains(
            "<p class=\"error\">Page takes a page number from 1; not \(bad).</p>"), "\(bad)")
      }
    }
  }
}
