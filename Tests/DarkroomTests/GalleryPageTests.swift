import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

@Suite("The gallery's pages, as the server writes them")
struct GalleryPageTests {
  @Test(
    "a folder that holds only folders leads into each (with its count and poster), and one that holds both says so"
  )
  func foldersOfFolders() async throws {
    let folder = try Fixture.temporaryFolder()
    for (sample, path) in [
      ("orientation-1.jpg", "2024/summer/a.jpg"), ("gps.jpg", "2024/winter/b.jpg"),
      ("orientation-3.jpg", "2024/winter/deep/c.jpg"),
    ] {
      try FileManager.default.createDirectory(
        atPath: folder.file((path as NSString).deletingLastPathComponent),
        withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: Fixture.sample(sample), toPath: folder.file(path))
    }
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    let summer = try #require(try library.asset(atPath: folder.file("2024/summer/a.jpg")))
    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      func page(_ uri: String) async throws -> String {
        let response = try await client.execute(uri: uri, method: .get, headers: ServedLibrary.read)
        #expect(response.status == .ok, "\(uri)")
        return response.text
      }
      let top = try await page("/album?ref=folder:2024")
      #expect(top.contains("<p class=\"summary\" aria-live=\"polite\">0 items and 2 folders</p>"))
      for (ref, name) in [("folder:2024%2Fsummer", "summer"), ("folder:2024%2Fwinter", "winter")] {
        #expect(top.contains("<a href=\"/album?ref=\(ref)\">"), "\(ref)")
        #expect(top.contains("<span class=\"name\">\(name)</span>"), "\(name)")
      }
      #expect(top.contains("/api/assets/\(summer.id)/thumbnail?size=200"), "summer's poster")
      let winter = try await page("/album?ref=folder:2024/winter")
      #expect(winter.contains("<p class=\"summary\" aria-live=\"polite\">1 item and 1 folder</p>"))
      #expect(winter.contains("<a href=\"/album?ref=folder:2024%2Fwinter%2Fdeep\">"))
      let deep = try await page("/album?ref=folder:2024/winter/deep")
      #expect(!deep.contains("class=\"subfolders\""))
      #expect(deep.contains("<p class=\"summary\" aria-live=\"polite\">1 item</p>"))
    }
  }
}
