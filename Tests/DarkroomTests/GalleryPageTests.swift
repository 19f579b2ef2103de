import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

@Suite("The gallery's pages, as the server writes them", .offThePool)
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
  .timeLimit(.minutes(5)), .offThePool)
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
    #expect(eventually { (try? browser.cellIDs().count) ?? 0 >= 6 })
    let checks = try browser.run(Self.probe, [".timeline .cell .check"]) as? [String] ?? []
    #expect(
      checks.count == 1 && checks[0].hasPrefix("probed ") && checks[0] != "probed 0", "\(checks)")
    let sizes =
      try browser.run(
        "return Array.from(document.querySelectorAll('.scrubber a.year')).map((a) => parseFloat(getComputedStyle(a).fontSize))"
      ) as? [Double] ?? []
    #expect(sizes.count >= 3 && sizes.allSatisfy { $0 >= 12 }, "\(sizes)")
    try browser.screenshot("phone-timeline")

    try browser.click(css: ".timeline .cell a")
    #expect(eventually { browser.viewerOpen })
    let controls =
      try browser.run(
        Self.probe,
        [".lightbox .controls button:not([hidden]), .lightbox .controls a:not([hidden])"])
      as? [String]
    #expect(controls == ["probed 7"], "\(controls ?? [])")
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
    try browser.click(css: ".cell[data-id='\(id)'] a")
    #expect(eventually { browser.viewerOpen })
    try browser.press("i")
    let status = ".lightbox .notes-status"
    try browser.click(css: ".lightbox .notes button[data-stars='4']")
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
    try browser.click(css: ".lightbox .notes button[data-stars='4']")
    #expect(eventually { (try? served.library.asset(id).rating) == 0 })
    try browser.click(css: ".lightbox .notes button[data-stars='2']")
    #expect(eventually { (try? served.library.asset(id).rating) == 2 })
    // Opened again after a reload: what the catalog holds.
    try browser.go(base + "/")
    #expect(eventually { (try? browser.cellIDs()) == [id.rawValue] })
    try browser.click(css: ".cell[data-id='\(id)'] a")
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

/// Photos dated by their files (no metadata of their own), `name: seconds since 1970`.
func filesDated(_ dates: [(String, Double)], in folder: TemporaryFolder) throws {
  let bytes = try plainJPEG(120)
  for (index, (name, seconds)) in dates.enumerated() {
    // Bytes of its own for each (a comment segment), the same pixels.
    let tag = Array("photo \(index)".utf8)
    let path = try folder.write(
      name,
      Array(bytes.prefix(2)) + [0xFF, 0xFE, 0, UInt8(tag.count + 2)] + tag + bytes.dropFirst(2))
    var times = [
      timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0),
    ]
    utimensat(AT_FDCWD, path, &times, 0)
  }
}

/// Noon UTC of a day.
func noon(_ year: Int, _ month: Int, _ day: Int) -> Double {
  var calendar = Calendar(identifier: .gregorian)
  calendar.timeZone = TimeZone(identifier: "UTC")!
  return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12))!
    .timeIntervalSince1970
}

@Suite("On this day", .offThePool)
struct OnThisDayTests {
  @Test(
    "day=MM-DD finds what was taken on that day of any year (29 February too), in both catalogs, the list and the API; a day no year has is refused",
    arguments: CatalogBackend.allCases)
  func query(backend: CatalogBackend) async throws {
    let folder = try Fixture.temporaryFolder()
    try filesDated(
      [
        ("a.jpg", noon(2019, 11, 29)), ("b.jpg", noon(2023, 11, 29)), ("c.jpg", noon(2023, 11, 28)),
        ("d.jpg", noon(2020, 2, 29)), ("e.jpg", noon(2024, 11, 29) - 13 * 3600),
      ], in: folder)
    var library = try Library.create(at: folder.path)
    library.catalogURL = try backend.newCatalogURL()
    _ = try await library.scan()
    func names(_ parameters: [(name: String, value: String)]) throws -> [String] {
      try library.assets(matching: AssetQuery(parameters: parameters + [("sort", "name")]))
        .assets(in: 0..<10).map(\.name)
    }
    #expect(try names([("day", "11-29")]) == ["a.jpg", "b.jpg"])
    #expect(try names([("day", "11-28")]) == ["c.jpg", "e.jpg"])
    #expect(try names([("day", "11-29"), ("to", "2022-12-31")]) == ["a.jpg"])
    #expect(try names([("day", "02-29")]) == ["d.jpg"])
    let all = try library.assets(matching: AssetQuery()).assets(in: 0..<5)
    #expect(all.map(\.day).sorted() == [229, 1128, 1128, 1129, 1129])
    for bad in ["02-30", "13-01", "1-29", "11/29"] {
      #expect(throws: DarkroomError.self, "\(bad)") { try names([("day", bad)]) }
    }
    if backend == .sqlite {
      let listed = try CLI.run(
        ["list", "--library", folder.path, "--day", "11-29", "--sort", "name"], cwd: folder.path)
      #expect(listed.stdout == "a.jpg\nb.jpg\n", "\(listed.stderr)")
      let refused = try CLI.run(["list", "--library", folder.path, "--day", "02-30"])
      #expect(refused.status == 64 || refused.status == 2, "\(refused.status)")
      #expect(
        refused.stderr.contains("--day takes a day of the year, MM-DD (11-29); not 02-30"),
        "\(refused.stderr)")
      let served = ServedLibrary(over: library, in: folder)
      try await served.test { client, _ in
        let found = try await client.execute(
          uri: "/api/assets?day=11-29&sort=name", method: .get, headers: ServedLibrary.read)
        #expect(
          (found.object["assets"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
            == ["a.jpg", "b.jpg"])
      }
    }
  }
}

@Suite("On this day, in chromium", .serialized, .timeLimit(.minutes(5)), .offThePool)
struct OnThisDayBrowserTests {
  @Test(
    "the timeline opens with a card for each earlier year that has photos taken on today's date, each leading to them; none for this year or another day"
  )
  func memories() throws {
    let folder = try Fixture.temporaryFolder()
    try filesDated([("old.jpg", noon(2001, 6, 1))], in: folder)
    let library = try Library.create(at: folder.path)
    _ = try library.scanBlocking()
    let (server, browser, base) = try Browser.loggedIn(to: ServedLibrary(over: library, in: folder))
    // Today as the browser sees it, then photos of today in two earlier years, this year and
    // yesterday's.
    let today = try #require(
      try browser.run(
        "const d = new Date(); return [d.getFullYear(), d.getMonth() + 1, d.getDate()]")
        as? [Int])
    let (year, month, day) = (today[0], today[1], today[2])
    // (On 29 February, years that have one.)
    let (near, far) = month == 2 && day == 29 ? (4, 8) : (2, 5)
    let sameDay = noon(year - near, month, day)
    try filesDated(
      [
        ("two.jpg", sameDay), ("two-b.jpg", sameDay + 60),
        ("five.jpg", noon(year - far, month, day)),
        ("now.jpg", noon(year, month, day)), ("other.jpg", sameDay - 86_400),
      ], in: folder)
    _ = try library.scanBlocking()
    try browser.go(base + "/")
    #expect(eventually { (try? browser.findAll(".memories li").count) == 2 })
    #expect(try browser.text(try browser.find(".memories h2")) == "On this day")
    let cards = try browser.findAll(".memories li a").map { try browser.text($0) }
    #expect(
      cards == [
        "\(near) years ago\n\(year - near) · 2 items", "\(far) years ago\n\(year - far) · 1 item",
      ],
      "\(cards)")
    let loaded =
      "return Array.from(document.querySelectorAll('.memories img')).every((i) => i.naturalWidth > 0)"
    #expect(eventually { (try? browser.run(loaded)) as? Bool == true })
    try browser.screenshot("on-this-day")
    try browser.click(try browser.findAll(".memories li a")[0])
    #expect(eventually { (try? browser.cellIDs().count) == 2 })
    let shown = Set(try browser.cellIDs())
    let expected = Set(
      try ["two.jpg", "two-b.jpg"].map {
        try #require(try library.asset(atPath: folder.file($0))).id.rawValue
      })
    #expect(shown == expected)
    #expect(try browser.findAll(".memories").isEmpty, "only on the timeline of everything")
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }
}

@Suite("The slideshow, in chromium", .serialized, .timeLimit(.minutes(5)), .offThePool)
struct SlideshowBrowserTests {
  @Test(
    "Slideshow opens the viewer on the newest and goes on to the next once each has shown, to the last, where it stops; space pauses it"
  )
  func slideshow() throws {
    let folder = try Fixture.temporaryFolder()
    try filesDated(
      [("a.jpg", noon(2024, 5, 1)), ("b.jpg", noon(2024, 5, 2)), ("c.jpg", noon(2024, 5, 3))],
      in: folder)
    let library = try Library.create(at: folder.path)
    _ = try library.scanBlocking()
    func id(_ name: String) throws -> String {
      try #require(try library.asset(atPath: folder.file(name))).id.rawValue
    }
    let (server, browser, _) = try Browser.loggedIn(to: ServedLibrary(over: library, in: folder))
    #expect(eventually { (try? browser.cellIDs().count) == 3 })
    let showing = "return location.pathname"
    let (a, b, c) = (try id("a.jpg"), try id("b.jpg"), try id("c.jpg"))
    try browser.click(css: "button[data-act='slideshow']")
    #expect(eventually { browser.viewerOpen })
    #expect(try browser.run(showing) as? String == "/asset/\(c)")
    let pressed = ".lightbox [data-v='play']"
    #expect(try browser.attribute(try browser.find(pressed), "aria-pressed") == "true")
    #expect(eventually { (try? browser.run(showing)) as? String == "/asset/\(b)" })
    #expect(eventually { (try? browser.run(showing)) as? String == "/asset/\(a)" })
    // The last: it stops there, the viewer still open.
    #expect(
      eventually { (try? browser.attribute(try browser.find(pressed), "aria-pressed")) == "false" })
    #expect(browser.viewerOpen)
    #expect(try browser.run(showing) as? String == "/asset/\(a)")
    // Space starts and pauses it.
    try browser.press(" ")
    #expect(try browser.attribute(try browser.find(pressed), "aria-pressed") == "true")
    try browser.press(" ")
    #expect(try browser.attribute(try browser.find(pressed), "aria-pressed") == "false")
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }
}

@Suite("Places", .offThePool)
struct PlacesTests {
  @Test(
    "countries with their counts and newest posters, most first, then a country's towns with their regions; the trash left out; the places page leads from one to the other and to a town's photos",
    arguments: CatalogBackend.allCases)
  func places(backend: CatalogBackend) async throws {
    let folder = try Fixture.temporaryFolder()
    let spots: [(String, String, String?, String, Double)] = [
      ("a.jpg", "Boulder", "Colorado", "United States", noon(2020, 1, 1)),
      ("b.jpg", "Boulder", "Colorado", "United States", noon(2021, 1, 1)),
      ("c.jpg", "Denver", "Colorado", "United States", noon(2019, 1, 1)),
      ("d.jpg", "Lyon", "Auvergne-Rhône-Alpes", "France", noon(2018, 1, 1)),
      ("e.jpg", "Paris", nil, "France", noon(2017, 1, 1)),
      ("f.jpg", "Kyoto", "Kyoto", "Japan", noon(2016, 1, 1)),
    ]
    try filesDated(spots.map { ($0.0, $0.4) } + [("nowhere.jpg", noon(2015, 1, 1))], in: folder)
    var library = try Library.create(at: folder.path)
    library.catalogURL = try backend.newCatalogURL()
    _ = try await library.scan()
    // Where each was taken, as the scan finds it from a GPS position.
    var changes = CatalogChanges()
    var ids: [String: AssetID] = [:]
    for (name, place, region, country, _) in spots {
      var asset = try #require(try library.asset(atPath: folder.file(name)))
      (asset.place, asset.region, asset.country) = (place, region, country)
      changes.upserts.append(asset)
      ids[name] = asset.id
    }
    try library.catalog().commit(changes)
    try library.trash([try #require(ids["f.jpg"])])

    let countries = try library.places()
    #expect(countries.map(\.name) == ["United States", "France"])
    #expect(countries.map(\.count) == [3, 2])
    #expect(countries.map(\.poster) == [ids["b.jpg"], ids["d.jpg"]], "the newest of each")
    let towns = try library.places(in: "United States")
    #expect(towns.map(\.name) == ["Boulder", "Denver"])
    #expect(towns.map(\.region) == ["Colorado", "Colorado"] && towns.map(\.count) == [2, 1])
    #expect(try library.places(in: "France").map(\.region) == ["Auvergne-Rhône-Alpes", nil])
    #expect(try library.places(in: "Japan").isEmpty, "its one photo is in the trash")

    guard backend == .sqlite else { return }
    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      let page = try await client.execute(uri: "/places", method: .get, headers: ServedLibrary.read)
      #expect(page.status == .ok)
      #expect(page.text.contains("<a href=\"/places?country=United%20States\">"))
      #expect(page.text.contains("<span class=\"name\">France</span>"))
      #expect(
        page.text.contains(
          "<a href=\"/places\" aria-current=\"page\"><svg class=\"icon\" aria-hidden=\"true\"><use href=\"#i-places\"/></svg>Places</a>"
        ))
      let country = try await client.execute(
        uri: "/places?country=United%20States", method: .get, headers: ServedLibrary.read)
      #expect(country.text.contains("<h1 class=\"title\">United States</h1>"))
      #expect(country.text.contains("<a href=\"/album?ref=smart%3Aall&amp;place=Boulder\">"))
      #expect(country.text.contains("<span class=\"count\">Colorado · 2 items</span>"))
      let api = try await client.execute(
        uri: "/api/places?country=France", method: .get, headers: ServedLibrary.read)
      let places = try #require(api.object["places"] as? [[String: Any]])
      #expect(places.compactMap { $0["name"] as? String } == ["Lyon", "Paris"])
      let town = try await client.execute(
        uri: "/api/assets?place=Boulder", method: .get, headers: ServedLibrary.read)
      #expect((town.object["assets"] as? [[String: Any]])?.count == 2)
    }
  }
}

@Suite("The viewer's address, in chromium", .serialized, .timeLimit(.minutes(5)), .offThePool)
struct ViewerAddressBrowserTests {
  @Test(
    "the viewer's address, reloaded, opens the same viewer over its album (a photo months down too), and Escape then returns to the album's address"
  )
  func reload() throws {
    let served = try datedLibrary(count: 40, newest: 1_751_241_600, apart: 86_400 * 20)
    let ids = try served.library.assetIDs(matching: AssetQuery(parameters: [("sort", "-date")]))
    let (server, browser, base) = try Browser.loggedIn(to: served)
    #expect(eventually { (try? browser.cellIDs().count) ?? 0 > 3 })
    try browser.click(css: ".cell[data-id='\(ids[0])'] a")
    #expect(eventually { browser.viewerOpen })
    try browser.press("\u{E014}")  // ArrowRight
    #expect(eventually { browser.url.hasPrefix(base + "/asset/\(ids[1])?") })
    let address = browser.url
    #expect(address.hasSuffix("&view=1"), "\(address)")
    try browser.go(address)
    #expect(eventually { browser.viewerOpen })
    #expect(try browser.run("return document.body.dataset.page") as? String == "album")
    #expect(try browser.run("return location.pathname") as? String == "/asset/\(ids[1])")
    let shown = "return document.querySelector('.lightbox .shown').naturalWidth"
    #expect(eventually { (try? browser.run(shown)) as? Int ?? 0 > 0 })
    try browser.press("\u{E00C}")  // Escape
    #expect(eventually { !browser.viewerOpen && browser.url == base + "/" })
    #expect(eventually { (try? browser.cellIDs().isEmpty) == false })

    // One taken two years before the newest: its month is read, and the viewer opens on it.
    let old = ids[36]
    try browser.go(base + "/asset/\(old)?ref=smart%3Aall&view=1")
    #expect(eventually { browser.viewerOpen })
    #expect(try browser.run("return location.pathname") as? String == "/asset/\(old)")
    try browser.press("\u{E014}")  // ArrowRight: the next older
    #expect(eventually { browser.url.hasPrefix(base + "/asset/\(ids[37])?") })
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }
}
