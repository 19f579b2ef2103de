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

@Suite(
  "The gallery's viewer on a phone and its info panel, in chromium", .serialized,
  .timeLimit(.minutes(5)))
struct PhoneGalleryTests {
  /// Whether a finger anywhere in the 44-pixel square centred on each element matching
  /// `selector` and on the screen lands on that element (its drawn mark may be smaller): the
  /// misses, named, then `probed N`.
  static let probe = """
    const misses = [];
    let probed = 0;
    for (const el of document.querySelectorAll(arguments[0])) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.top < 0 || r.bottom > innerHeight || r.left < 0 || r.right > innerWidth) continue;
      probed += 1;
      const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
      for (const [dx, dy] of [[-21, 0], [21, 0], [0, -21], [0, 21], [-15, -15], [15, 15]]) {
        const hit = document.elementFromPoint(cx + dx, cy + dy);
        if (!hit || !(hit === el || el.contains(hit))) {
          misses.push((el.dataset.v || el.className) + " at " + dx + "," + dy + ": " + (hit ? hit.className || hit.tagName : "nothing"));
          break;
        }
      }
    }
    return misses.concat(["probed " + probed]);
    """

  @Test(
    "at 390x844 the grid's check marks and the viewer's buttons take a 44-pixel finger, and the scrubber's years are at least 12 pixels"
  )
  func touchTargets() throws {
    let served = try datedLibrary(count: 40, newest: 1_751_241_600, apart: 86_400 * 40)
    let (server, browser, base) = try Browser.loggedIn(to: served)
    try browser.resize(390, 844)
    try browser.go(base + "/")
    #expect(eventually { (try? browser.cellIDs().count ?? 0) ?? 0 >= 6 })
    let checks = try browser.run(Self.probe, [".timeline .cell .check"]) as? [String] ?? []
    #expect(
      checks.count == 1 && checks[0].hasPrefix("probed ") && checks[0] != "probed 0", "\(checks)")
    let sizes =
      try browser.run(
        "return Array.from(document.querySelectorAll('.scrubber a.year')).map((a) => parseFloat(getComputedStyle(a).fontSize))"
      ) as? [Double] ?? []
    #expect(sizes.count >= 3 && sizes.allSatisfy { $0 >= 12 }, "\(sizes)")
    try browser.screenshot("phone-timeline")

    try browser.click(try browser.find(".timeline .cell a"))
    #expect(eventually { browser.viewerOpen })
    let controls =
      try browser.run(
        Self.probe,
        [".lightbox .controls button:not([hidden]), .lightbox .controls a:not([hidden])"])
      as? [String]
    #expect(controls == ["probed 6"], "\(controls ?? [])")
    try browser.screenshot("phone-viewer")
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }

  @Test(
    "the viewer's info panel sets a photo's stars, description and keywords in place: written to its sidecar (the photo's bytes untouched), kept in the catalog, shown again when it is opened again"
  )
  func infoPanelNotes() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let photo = served.folder.file("orientation-1.jpg")
    let before = try DamagedFileTests.state(photo)
    let id = try #require(try served.library.asset(atPath: photo)).id
    let (server, browser, base) = try Browser.loggedIn(to: served)
    #expect(eventually { (try? browser.cellIDs()) == [id.rawValue] })
    try browser.click(try browser.find(".cell[data-id='\(id)'] a"))
    #expect(eventually { browser.viewerOpen })
    try browser.press("i")
    let status = ".lightbox .notes-status"
    try browser.click(try browser.find(".lightbox .notes button[data-stars='4']"))
    #expect(
      eventually {
        (try? browser.text(try browser.find(status))) == "Saved to orientation-1.jpg.xmp"
      })
    #expect(try served.library.asset(id).rating == 4)
    try browser.type(try browser.find(".lightbox .notes textarea"), "Dawn at the lake\u{E007}")
    #expect(eventually { (try? served.library.asset(id).caption) == "Dawn at the lake" })
    try browser.type(
      try browser.find(".lightbox .notes input[name=keywords]"), "lake, dawn ,, Colorado\u{E004}")
    #expect(
      eventually { (try? served.library.asset(id).keywords) == ["lake", "dawn", "Colorado"] })
    #expect(FileManager.default.fileExists(atPath: photo + ".xmp"))
    #expect(try DamagedFileTests.state(photo) == before, "the photo's own file untouched")
    // The same stars again clear them.
    try browser.click(try browser.find(".lightbox .notes button[data-stars='4']"))
    #expect(eventually { (try? served.library.asset(id).rating) == 0 })
    try browser.click(try browser.find(".lightbox .notes button[data-stars='2']"))
    #expect(eventually { (try? served.library.asset(id).rating) == 2 })
    // Opened again after a reload: what the catalog holds.
    try browser.go(base + "/")
    #expect(eventually { (try? browser.cellIDs()) == [id.rawValue] })
    try browser.click(try browser.find(".cell[data-id='\(id)'] a"))
    #expect(eventually { browser.viewerOpen })
    try browser.press("i")
    #expect(
      try browser.attribute(try browser.find(".lightbox .notes .stars"), "aria-label")
        == "Rating: 2 of 5 stars")
    #expect(
      try browser.run("return document.querySelector('.lightbox .notes textarea').value") as? String
        == "Dawn at the lake")
    #expect(
      try browser.run(
        "return document.querySelector('.lightbox .notes input[name=keywords]').value")
        as? String == "lake, dawn, Colorado")
    try browser.screenshot("info-notes")
    try browser.resize(390, 844)
    try browser.screenshot("info-notes-phone")
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }
}
