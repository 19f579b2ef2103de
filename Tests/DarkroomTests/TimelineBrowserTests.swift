import Foundation
import Testing

@testable import Darkroom

extension Browser {
  /// A double click on an element (two presses, as a person makes them).
  func doubleClick(_ element: String) throws {
    try mouse(
      on: element,
      [
        ["type": "pointerDown", "button": 0], ["type": "pointerUp", "button": 0],
        ["type": "pointerDown", "button": 0], ["type": "pointerUp", "button": 0],
      ])
  }

  /// The mouse moved to the centre of `element`, then `steps` (WebDriver pointer actions).
  func mouse(on element: String, _ steps: [[String: Any]]) throws {
    let origin: [String: Any] = [Self.element: element]
    let move: [String: Any] = ["type": "pointerMove", "origin": origin, "x": 0, "y": 0]
    try call(
      "POST", "/session/\(session)/actions",
      [
        "actions": [
          [
            "type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"],
            "actions": [move] + steps,
          ]
        ]
      ])
    try call("DELETE", "/session/\(session)/actions")
  }

  /// The element the page has focus on: its class and data-id.
  func focused() throws -> [String] {
    try run(
      "const e = document.activeElement; return [e.className || e.tagName, e.dataset.id || '']")
      as? [String] ?? []
  }

  var scrollY: Double { ((try? run("return scrollY")) as? NSNumber)?.doubleValue ?? -1 }
  var viewerOpen: Bool {
    (try? run("return !document.querySelector('.lightbox').hidden")) as? Bool == true
  }
}

/// A sample as a JPEG `size` pixels wide with no metadata (so no date: the file's own).
func plainJPEG(_ size: Int) throws -> [UInt8] {
  var spec = RenditionSpec(.aspectThumbnail)
  spec.size = size
  spec.metadata = .strip
  return try Renderer().render(.file(Fixture.sample("orientation-1.jpg")), spec).bytes
}

/// A library of `count` copies of one small JPEG without a date of its own (each with bytes
/// of its own), dated by their modification times `apart` seconds apart, newest first from
/// `newest`.
func datedLibrary(count: Int, newest: Double, apart: Double, size: Int = 300) throws
  -> ServedLibrary
{
  let folder = try TemporaryFolder()
  let bytes = try plainJPEG(size)
  for index in 0..<count {
    let tag = Array("photo \(index)".utf8)
    var unique = bytes
    unique.insert(
      contentsOf: [0xFF, 0xFE, UInt8((tag.count + 2) >> 8), UInt8((tag.count + 2) & 0xFF)] + tag,
      at: 2)
    let name = String(format: "d%03d/p%05d.jpg", index / 500, index)
    try FileManager.default.createDirectory(
      atPath: (folder.file(name) as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    let path = try folder.write(name, unique)
    let seconds = newest - Double(index) * apart
    var times = [
      timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0),
    ]
    utimensat(AT_FDCWD, path, &times, 0)
  }
  let library = try Library.create(at: folder.path)
  _ = try library.scanBlocking()
  return ServedLibrary(over: library, in: folder)
}

@Suite(
  "The gallery's timeline and viewer, in chromium", .serialized, .timeLimit(.minutes(10)),
  .offThePool)
struct TimelineBrowserTests {
  @Test(
    "newest first; a scrubber jump lands on its month (and a reload there); a click opens the viewer and Escape returns to the same place; zoom loads full; the info panel; a favourite kept; the keyboard alone"
  )
  func timelineAndViewer() throws {
    // Sixty photos two weeks apart, from mid 2021 back to early 2019; and one with a camera,
    // a place and a date (31 December 2023), the newest.
    let served = try datedLibrary(count: 60, newest: 1_623_000_000, apart: 14 * 86_400)
    try FileManager.default.copyItem(
      atPath: Fixture.sample("gps.jpg"), toPath: served.folder.file("gps.jpg"))
    _ = try served.library.scanBlocking()
    let gps = try #require(try served.library.asset(atPath: served.folder.file("gps.jpg")))
    let (server, browser, base) = try Browser.loggedIn(to: served)
    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.cellIDs().first) == gps.id.rawValue }, "the newest first")
    #expect(try browser.sectionTops().keys.contains("December 2023"))

    // The scrubber: June 2019, far below, at the top of the screen, with its photos shown.
    let june = try served.library.assetIDs(matching: AssetQuery(parameters: [("month", "2019-06")]))
    #expect(june.count == 2)
    _ = try browser.run("document.querySelector(\".scrubber a[data-month='2019-06']\").click()")
    let landed = {
      guard let top = (try? browser.sectionTops())?["June 2019"], abs(top) <= 2 else {
        return false
      }
      let shown =
        (try? browser.run(
          """
          return Array.from(document.querySelectorAll(".cell[data-section='2019-06'] img"))
            .filter((img) => img.complete && img.naturalWidth > 0).length
          """)) as? Int
      return shown == 2 && browser.url.hasSuffix("at=2019-06")
    }
    #expect(
      eventually(30, landed), "\(String(describing: try? browser.sectionTops())) \(browser.url)")
    #expect(Set(try browser.cellIDs()).isSuperset(of: june.map(\.rawValue)))
    // The address keeps the place: a reload lands there again.
    try browser.go(base + "/album?ref=smart%3Aall&at=2019-06")
    #expect(eventually(30, landed), "\(String(describing: try? browser.sectionTops()))")

    // A click on a photo on the screen opens the viewer; Escape returns to the same place:
    // the photo where it was on the screen (the page's offset may change meanwhile, as the
    // month above is read and laid out, with the photos in view held still).
    let target = try #require(
      try browser.run(
        "return document.elementFromPoint(innerWidth / 4, innerHeight / 2).closest('.cell').dataset.id"
      ) as? String)
    let onScreen =
      "return document.querySelector(\".cell[data-id='\(target)']\").getBoundingClientRect().top"
    // Measured once the layout holds still (the month above may still be laid out).
    func settled() -> Double? {
      guard let first = try? browser.run(onScreen) as? Double else { return nil }
      usleep(300_000)
      return (try? browser.run(onScreen) as? Double) == first ? first : nil
    }
    var measured: Double?
    #expect(
      eventually {
        measured = settled()
        return measured != nil
      })
    let before = try #require(measured)
    try browser.click(css: ".cell[data-id='\(target)'] a")
    #expect(eventually { browser.viewerOpen && browser.url.hasPrefix(base + "/asset/\(target)") })
    #expect(
      eventually {
        (try? browser.run("return document.querySelector('.lightbox .shown').naturalWidth"))
          as? Int ?? 0 > 0
      })
    try browser.press("\u{E00C}")
    #expect(eventually { !browser.viewerOpen })
    #expect(eventually { browser.url.hasSuffix("at=2019-06") }, "\(browser.url)")
    // Back where it was once the layout settles (never settling elsewhere).
    #expect(
      eventually { settled().map { abs($0 - before) < 1 } ?? false },
      "\(String(describing: try? browser.run(onScreen))) after \(before), at \(browser.scrollY)")

    // Across months: the viewer steps from June's last photo to May's first and back; the
    // keyboard moves down from June's last row into May and up again; Shift takes a range
    // over three months.
    func month(_ key: String) throws -> [String] {
      try served.library.assetIDs(
        matching: AssetQuery(parameters: [("month", key), ("sort", "-date")])
      ).map(\.rawValue)
    }
    let (juneIDs, mayIDs) = (try month("2019-06"), try month("2019-05"))
    try browser.click(css: ".cell[data-id='\(juneIDs.last!)'] a")
    #expect(eventually { browser.viewerOpen })
    try browser.press("\u{E014}")
    #expect(eventually { browser.url.hasPrefix(base + "/asset/\(mayIDs[0])") }, "\(browser.url)")
    try browser.press("\u{E012}")
    #expect(
      eventually { browser.url.hasPrefix(base + "/asset/\(juneIDs.last!)") }, "\(browser.url)")
    // Back closes it; Forward shows it again; Escape closes it and the address is the album's.
    _ = try browser.call("POST", "/session/\(browser.session)/back", [:])
    #expect(eventually { !browser.viewerOpen && browser.url.contains("/album?") }, "\(browser.url)")
    _ = try browser.call("POST", "/session/\(browser.session)/forward", [:])
    #expect(eventually { browser.viewerOpen && browser.url.hasPrefix(base + "/asset/") })
    try browser.press("\u{E00C}")
    #expect(eventually { !browser.viewerOpen && browser.url.contains("/album?") }, "\(browser.url)")
    _ = try browser.run("document.querySelector(\".cell[data-id='\(juneIDs.last!)']\").focus()")
    try browser.press("\u{E015}")  // down
    #expect(eventually { mayIDs.contains((try? browser.focused())?.last ?? "") })
    try browser.press("\u{E013}")  // up
    #expect(eventually { juneIDs.contains((try? browser.focused())?.last ?? "") })
    let newestIDs = try served.library.assetIDs(
      matching: AssetQuery(parameters: [("sort", "-date")])
    )
    .map(\.rawValue)
    let march = try month("2019-03")
    try browser.click(css: ".cell[data-id='\(juneIDs[0])'] .check")
    try browser.click(
      try browser.find(".cell[data-id='\(march.last!)'] .check"), holding: "\u{E008}")
    let span =
      try #require(newestIDs.firstIndex(of: juneIDs[0])).distance(
        to: try #require(newestIDs.firstIndex(of: march.last!))) + 1
    #expect(
      eventually {
        (try? browser.text(try browser.find(".selection-count"))) == "\(span) selected"
      }, "\(span)")
    try browser.press("\u{E00C}")

    // The newest: zoom switches to the file itself; the info panel says when, with what and
    // where; a favourite is kept across a reload.
    _ = try browser.run("scrollTo(0, 0)")
    #expect(eventually { (try? browser.findAll(".cell[data-id='\(gps.id)'] a").count) == 1 })
    try browser.click(css: ".cell[data-id='\(gps.id)'] a")
    #expect(eventually { browser.viewerOpen })
    let shown =
      "const i = document.querySelector('.lightbox .shown'); return [i.dataset.rep, i.naturalWidth]"
    #expect(eventually { (try? browser.run(shown)) as? [AnyHashable] == ["fullscreen", 600] })
    try browser.doubleClick(try browser.find(".lightbox .shown"))
    #expect(
      eventually { (try? browser.run(shown)) as? [AnyHashable] == ["full", 600] },
      "\(String(describing: try? browser.run(shown)))")
    #expect(
      (try browser.run("return document.querySelector('.lightbox .shown').src") as? String)?
        .contains("/api/assets/\(gps.id)/full?") == true)
    try browser.press("i")
    let info = try browser.text(try browser.find(".lightbox .info"))
    for expected in [
      "Sunday 31 December 2023, 23:59", "Darkroom Field Camera",
      "Rio de Janeiro, Rio de Janeiro, Brazil", "-22.95", "600 × 400",
    ] {
      #expect(info.contains(expected), "\(expected) in \(info)")
    }
    try browser.click(css: ".lightbox [data-v='favourite']")
    #expect(
      eventually {
        (try? browser.attribute(try browser.find(".lightbox [data-v='favourite']"), "aria-pressed"))
          == "true"
      })
    #expect(try served.library.asset(gps.id).isFavourite)
    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.findAll(".cell[data-id='\(gps.id)'] a").count) == 1 })
    // Its cell is marked (and says so in its picture's name); no other cell is.
    let marked =
      "return [...document.querySelectorAll('.cell .fav-badge')].map((m) => m.closest('.cell').dataset.id)"
    #expect(try browser.run(marked) as? [String] == [gps.id.rawValue])
    #expect(
      (try browser.attribute(try browser.find(".cell[data-id='\(gps.id)'] img"), "alt"))?
        .hasSuffix(", favourite") == true)
    try browser.screenshot("timeline-favourite")
    try browser.click(css: ".cell[data-id='\(gps.id)'] a")
    #expect(
      eventually {
        (try? browser.attribute(try browser.find(".lightbox [data-v='favourite']"), "aria-pressed"))
          == "true"
      }, "kept across a reload")
    // Taken back in the viewer: the cell's mark goes with it.
    try browser.click(css: ".lightbox [data-v='favourite']")
    #expect(eventually { (try? browser.run(marked) as? [String]) == [] })
    #expect(try !served.library.asset(gps.id).isFavourite)
    try browser.press("\u{E00C}")
    #expect(eventually { !browser.viewerOpen })

    // The keyboard alone: Tab into the grid, an arrow to the next photo, Enter opens it,
    // Escape closes it and the focus is back on it.
    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.cellIDs().count) ?? 0 > 4 })
    var tabs = 0
    while try browser.focused().first != "cell", tabs < 20 {
      try browser.press("\u{E004}")
      tabs += 1
    }
    let order = try served.library.assetIDs(matching: AssetQuery(parameters: [("sort", "-date")]))
    #expect(try browser.focused() == ["cell", order[0].rawValue], "after \(tabs) tabs")
    try browser.press("\u{E014}")  // right
    #expect(try browser.focused() == ["cell", order[1].rawValue])
    try browser.press("\u{E007}")  // Enter
    #expect(eventually { browser.viewerOpen && browser.url.hasPrefix(base + "/asset/\(order[1])") })
    try browser.press("\u{E014}")  // the next in the viewer
    #expect(eventually { browser.url.hasPrefix(base + "/asset/\(order[2])") })
    try browser.press("\u{E00C}")
    #expect(eventually { !browser.viewerOpen })
    #expect(eventually { (try? browser.focused()) == ["cell", order[2].rawValue] })

    // Delete in the viewer: the photo to the trash (its file moved, its id kept), the next
    // one shown in its place, and the album without it.
    // (The page holds only the rows near the screen: the album's count says how many.)
    let count = { () -> Int in
      Int((try? browser.text(try browser.find(".summary")))?.split(separator: " ").first ?? "")
        ?? -1
    }
    let countBefore = count()
    try browser.press("\u{E007}")  // Enter: open order[2]
    #expect(eventually { browser.viewerOpen && browser.url.hasPrefix(base + "/asset/\(order[2])") })
    try browser.screenshot("viewer-trash")
    try browser.press("\u{E017}")  // Delete
    #expect(eventually { browser.url.hasPrefix(base + "/asset/\(order[3])") }, "\(browser.url)")
    var trashed = AssetQuery()
    trashed.trashed = true
    #expect(try served.library.assetIDs(matching: trashed) == [order[2]])
    try browser.press("\u{E00C}")
    #expect(eventually { !browser.viewerOpen })
    #expect(eventually { count() == countBefore - 1 }, "\(count()) after \(countBefore)")
    #expect(eventually { (try? browser.cellIDs().contains(order[2].rawValue)) == false })
    // Delete with a selection: what is selected goes.
    try browser.click(css: ".cell[data-id='\(order[3])'] .check")
    try browser.press("\u{E017}")
    #expect(
      eventually(60) { (try? served.library.assetIDs(matching: trashed).count) == 2 },
      "the selection's Delete")
    // In the trash the viewer offers neither Edit nor the trash again.
    try browser.go(base + "/album?ref=smart:trash")
    #expect(
      eventually { (try? Set(browser.cellIDs())) == [order[2].rawValue, order[3].rawValue] })
    try browser.click(css: ".cell[data-id='\(order[2])'] a")
    #expect(eventually { browser.viewerOpen })
    let offered =
      "return ['edit', 'trash'].map((v) => document.querySelector(`.lightbox [data-v=\"${v}\"]`).hidden)"
    #expect(try browser.run(offered) as? [Bool] == [true, true])
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }

  @Test(
    "an album made from a selection survives a reload; the duplicates page trashes one of a pair; the count follows an upload made elsewhere"
  )
  func organise() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg", "orientation-2.jpg", "gps.jpg"])
    try FileManager.default.createDirectory(
      atPath: served.folder.file("copy"), withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: Fixture.sample("gps.jpg"), toPath: served.folder.file("copy/gps.jpg"))
    _ = try served.library.scanBlocking()
    let (server, browser, base) = try Browser.loggedIn(to: served)

    // A drag from a month's name across the first photo of each month selects those two.
    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.cellIDs().count) == 4 })
    let firsts = try #require(
      try browser.run(
        """
        return Array.from(document.querySelectorAll('.timeline .section'))
          .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
          .map((s) => s.querySelector('.cell').dataset.id)
        """) as? [String])
    #expect(firsts.count == 2)
    let heading = try browser.find(".timeline .section h2")
    let lastFirst = try browser.find(".cell[data-id='\(firsts[1])']")
    try browser.call(
      "POST", "/session/\(browser.session)/actions",
      [
        "actions": [
          [
            "type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"],
            "actions": [
              ["type": "pointerMove", "origin": [Browser.element: heading], "x": -20, "y": 0],
              ["type": "pointerDown", "button": 0],
              ["type": "pointerMove", "origin": [Browser.element: heading], "x": 0, "y": 40],
              ["type": "pointerMove", "origin": [Browser.element: lastFirst], "x": -20, "y": 0],
              ["type": "pointerUp", "button": 0],
            ],
          ]
        ]
      ])
    try browser.call("DELETE", "/session/\(browser.session)/actions")
    #expect(try browser.text(try browser.find(".selection-count")) == "2 selected")
    let banded =
      try browser.run(
        "return Array.from(document.querySelectorAll('.cell[aria-selected=true]')).map((c) => c.dataset.id)"
      ) as? [String]
    #expect(Set(banded ?? []) == Set(firsts), "\(banded ?? [])")
    try browser.press("\u{E00C}")

    // Two chosen with their check marks, added to a new album.
    let chosen = Array(try browser.cellIDs().prefix(2))
    for id in chosen { try browser.click(css: ".cell[data-id='\(id)'] .check") }
    #expect(try browser.text(try browser.find(".selection-count")) == "2 selected")
    try browser.click(css: "button[data-act='album']")
    try browser.type(try browser.find("#album-title"), "Trip")
    try browser.click(css: ".album-dialog button[type=submit]")
    #expect(
      eventually {
        (try? browser.text(try browser.find(".progress-text"))) == "Added 2 to Trip"
      })
    #expect(try served.library.album("Trip").count == 2)
    try browser.go(base + "/albums")
    let link = try browser.find("a[href='/album?ref=Trip']")
    let label = try browser.text(link)
    #expect(label.hasSuffix("2"), "\(label)")
    try browser.go(base + "/album?ref=Trip")
    #expect(eventually { (try? Set(browser.cellIDs())) == Set(chosen) })

    // The duplicates page: the pair side by side; the second chosen, the first trashed.
    try browser.go(base + "/duplicates")
    let radios = try browser.findAll(".duplicate-group input[type=radio]")
    #expect(radios.count == 2)
    let keep = try #require(try browser.attribute(radios[1], "value"))
    let other = try #require(try browser.attribute(radios[0], "value"))
    try browser.click(radios[1])
    try browser.click(css: ".duplicate-group button[data-act='resolve']")
    #expect(eventually(60) { (try? browser.findAll(".duplicate-group").count) == 0 })
    #expect(try browser.text(try browser.find(".summary")) == "No duplicates left.")
    let kept = try served.library.asset(try #require(AssetID(keep)))
    let trashed = try served.library.asset(try #require(AssetID(other)))
    #expect(kept.trashedAt == nil && trashed.trashedAt != nil)
    #expect(try served.library.duplicates().isEmpty)

    // An upload from elsewhere (the API): the page's count and grid follow, with no reload.
    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.text(try browser.find(".summary"))) == "3 items" })
    _ = try browser.run("window.sameDocument = true")
    let upload = try server.request(
      "POST", "/api/uploads?name=p3.jpg", body: try Fixture.bytes(Fixture.sample("display-p3.jpg")))
    #expect(upload.status == 201 || upload.status == 200, "\(upload.text)")
    #expect(eventually(30) { (try? browser.text(try browser.find(".summary"))) == "4 items" })
    #expect(eventually { (try? browser.cellIDs().count) == 4 })
    #expect(try browser.run("return window.sameDocument") as? Bool == true)

    // The album deleted from its page, once confirmed: gone from the albums, its photos not.
    let (photos, trash) = (
      try served.library.count(matching: AssetQuery()),
      try served.library.assetIDs(
        matching: {
          var q = AssetQuery()
          q.trashed = true
          return q
        }())
    )
    try browser.go(base + "/album?ref=Trip")
    #expect(eventually { (try? browser.cellIDs().isEmpty) == false })
    try browser.click(css: "button[data-act='delete-album']")
    _ = try browser.call("POST", "/session/\(browser.session)/alert/accept", [:])
    #expect(eventually { browser.url == base + "/albums" }, "\(browser.url)")
    #expect(try browser.findAll("a[href='/album?ref=Trip']").isEmpty)
    #expect(try !served.library.albums().contains { $0.title == "Trip" })
    #expect(try served.library.count(matching: AssetQuery()) == photos)
    #expect(
      try served.library.assetIDs(
        matching: {
          var q = AssetQuery()
          q.trashed = true
          return q
        }())
        == trash)
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }

  @Test(
    "JPEG XL (allowed) and HEIC in the timeline and the viewer: shown in a format chromium reads")
  func jxlAndHEIC() throws {
    let served = try ServedLibrary(samples: ["heif-exif-6.heic"])
    let elsewhere = try TemporaryFolder()
    let jxl = elsewhere.file("made.jxl")
    let made = try CLI.run(["copy", Fixture.sample("gps.jpg"), jxl], executable: "/usr/bin/vips")
    #expect(made.status == 0, "\(made.stderr)")
    let server = try ServeProcess(
      served.root, arguments: ["--rate-limit", "0", "--allow-format", "jxl"])
    let uploaded = try server.request(
      "POST", "/api/uploads?name=made.jxl", body: try Fixture.bytes(jxl))
    #expect(uploaded.status == 201, "\(uploaded.text)")
    let (browser, base) = try Browser.loggedIn(to: server)
    try browser.go(base + "/album?ref=smart:all")
    let decoded = """
      return Array.from(document.querySelectorAll(arguments[0])).map((img) =>
        img.complete ? img.naturalWidth + "x" + img.naturalHeight : "loading")
      """
    // Both 600 x 400 upright: 384 wide in a row 184 high.
    #expect(
      eventually {
        (try? browser.run(decoded, [".timeline img"])) as? [String] == ["384x256", "384x256"]
      },
      "\(String(describing: try? browser.run(decoded, [".timeline img"])))")
    // The HEIC's own page too.
    let heic = try #require(
      try served.library.assets(matching: AssetQuery()).assets(in: 0..<2).first {
        $0.format == "heif"
      })
    try browser.go(base + "/asset/\(heic.id)")
    #expect(
      eventually { (try? browser.run(decoded, ["img.photo"])) as? [String] == ["600x400"] },
      "\(String(describing: try? browser.run(decoded, ["img.photo"])))")
    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.cellIDs().count) == 2 })
    for id in try browser.cellIDs() {
      try browser.click(css: ".cell[data-id='\(id)'] a")
      #expect(
        eventually {
          (try? browser.run(decoded, [".lightbox .shown"])) as? [String] == ["600x400"]
        }, "\(String(describing: try? browser.run(decoded, [".lightbox .shown"])))")
      try browser.press("\u{E00C}")
      #expect(eventually { !browser.viewerOpen })
    }
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }

  @Test(
    "after a jump, the month above waits for the thumbnails of the month jumped to"
  )
  func jumpPriorities() throws {
    // 1,400 photos 2,000 s apart: the newest month holds far more than a page (500), the
    // month below it the rest.
    let served = try datedLibrary(count: 1_400, newest: 1_701_388_799, apart: 2_000, size: 48)
    let months = try served.library.months(matching: AssetQuery(parameters: [("sort", "-date")]))
    try #require(months.count == 2 && months[0].count > 1_000, "\(months)")
    let (newer, older) = (
      AssetQuery.monthText(months[0].month), AssetQuery.monthText(months[1].month)
    )
    let (server, browser, base) = try Browser.loggedIn(to: served)
    defer { _ = server.stop() }
    // The page opens at the older month (`at=`, as a scrubber link or a reload does): the
    // jump is made as soon as the months are known, before any page of the month above can
    // have been read. (A click after the first screen raced the gallery's reading on: when
    // the month above had been read before the click, there was nothing left to check.)
    // The first page of the month jumped to is held back until a page of the month above
    // has come, as a busy server may answer them: its rows, and so its thumbnails, are not
    // there yet to be waited for, and the month above must wait for them all the same.
    try browser.beforeEveryPage(
      """
      const fetched = window.fetch;
      let above;
      const aboveCame = new Promise((resolve) => { above = resolve; });
      window.fetch = async (url, options) => {
        const text = String(url);
        if (text.includes('month=\(older)') && !text.includes('after=')) {
          await Promise.race([aboveCame, new Promise((r) => setTimeout(r, 1500))]);
          return fetched(url, options);
        }
        const response = await fetched(url, options);
        // (A moment later: after the gallery has laid out what came.)
        if (text.includes('month=\(newer)')) setTimeout(above, 300);
        return response;
      };
      """)
    try browser.go(base + "/album?ref=smart:all&at=\(older)")
    // Everything arrives.
    #expect(
      eventually {
        (try? browser.run(
          """
          return !!document.querySelector(".cell[data-section='\(older)'] img[src]")
            && Array.from(document.querySelectorAll('.timeline img[src]')).every((i) => i.complete && i.naturalWidth > 0)
            && !document.querySelector('.timeline img[data-want]:not([src])')
          """
        )) as? Bool == true
      })
    // The month above is read on, once they have all come (from its start, to reach its
    // end just above the screen).
    let pages = """
      return performance.getEntriesByType('resource')
        .filter((e) => e.name.includes('month=\(newer)') && e.name.includes('after=')).length;
      """
    #expect(eventually { (try? browser.run(pages)) as? Int ?? 0 > 0 })
    // From the requests' own timings: every thumbnail asked for between the jump and the
    // first of those pages had come before that page was asked for.
    let timings =
      try browser.run(
        """
        const after = performance.getEntriesByType('resource');
        const first = Math.min(...after.filter((e) => e.name.includes('month=\(newer)') && e.name.includes('after='))
          .map((e) => e.startTime));
        const thumbs = after.filter((e) => e.name.includes('/aspect-thumbnail') && e.startTime < first);
        return [thumbs.length, Math.max(0, ...thumbs.map((e) => e.responseEnd)), first];
        """) as? [Double] ?? []
    try #require(timings.count == 3, "\(timings)")
    #expect(timings[0] > 10, "\(timings)")
    #expect(timings[1] <= timings[2], "the month above after the thumbnails: \(timings)")
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
  }

  @Test(
    "20,000 photos over ten years: jumps and scrolling stay under 3,000 elements, with no console error"
  )
  func twentyThousand() throws {
    // A small JPEG (48 x 32), copied 20,000 times, one every 4.4 hours for ten years.
    let served = try datedLibrary(count: 20_000, newest: 1_700_000_000, apart: 15_840, size: 48)
    let (server, browser, base) = try Browser.loggedIn(to: served)
    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.cellIDs().count) ?? 0 > 10 })
    var most = 0
    let months = try served.library.months(matching: AssetQuery(parameters: [("sort", "-date")]))
    #expect(months.count >= 120)
    // Thirty jumps across the years (more months than the page keeps), and three screens
    // scrolled after each.
    for month in stride(from: 0, to: months.count, by: months.count / 30).map({ months[$0] }) {
      let key = AssetQuery.monthText(month.month)
      _ = try browser.run("document.querySelector(\".scrubber a[data-month='\(key)']\").click()")
      #expect(
        eventually {
          (try? browser.run(
            "return document.querySelectorAll(\".cell[data-section='\(key)'] img[src]\").length"))
            as? Int ?? 0 > 0
        }, "\(key)")
      for _ in 0..<3 {
        // Counted once the page has drawn the new place (two frames after the scroll).
        let counted = try browser.call(
          "POST", "/session/\(browser.session)/execute/async",
          [
            "script": """
            const done = arguments[arguments.length - 1];
            scrollBy(0, innerHeight);
            requestAnimationFrame(() => requestAnimationFrame(() =>
              done(document.querySelectorAll('*').length)));
            """,
            "args": [],
          ])
        most = max(most, counted as? Int ?? .max)
      }
    }
    #expect(most > 100 && most < 3000, "\(most) elements")
    // The page keeps the assets of at most about 5,000 photos (a month more while one loads).
    let kept =
      try browser.run("return Number(document.querySelector('main').dataset.loaded)") as? Int
    #expect((kept ?? .max) > 0 && (kept ?? .max) <= 5000 + 200, "\(kept ?? -1) kept")
    // Everything asked for arrives, and nothing waits for ever.
    #expect(
      eventually {
        (try? browser.run(
          """
          return Array.from(document.querySelectorAll('.timeline img[src]')).every((i) => i.complete && i.naturalWidth > 0)
            && !document.querySelector('.timeline img[data-want]:not([src])')
          """
        )) as? Bool == true
      })
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    // The server gone: a month not yet seen says so, with a way to try again.
    #expect(server.stop() == 0)
    let oldest = try #require(months.last.map { AssetQuery.monthText($0.month) })
    _ = try browser.run("document.querySelector(\".scrubber a[data-month='\(oldest)']\").click()")
    #expect(
      eventually {
        (try? browser.run(
          "const n = document.querySelector('.notice'); return n.hidden ? '' : n.textContent"))
          as? String == "The server cannot be reached. Retry"
      })
  }
}
