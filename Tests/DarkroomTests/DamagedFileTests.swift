import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// Damaged files are assets that say so: in the timeline, the Problems album, `list
/// --damaged`, `check`, the API and the gallery, shown as far as they decode.
@Suite("Damaged files in the library", .offThePool)
struct DamagedFileTests {
  /// The files of a library with three damaged ones, by name: a whole JPEG; the same cut in
  /// half (an interrupted copy: its header reads, its pixels stop); a JPEG whose header makes
  /// no sense; a MOV cut short; a note (no photo).
  static func files(in folder: TemporaryFolder) throws {
    let whole = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    _ = try folder.write("whole.jpg", whole)
    _ = try folder.write("cut.jpg", Array(whole.prefix(whole.count / 2)))
    _ = try folder.write(
      "corrupt.jpg", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x02] + Array("garbage".utf8))
    _ = try folder.write(
      "cutclip.mov", Array(try Fixture.bytes(Fixture.sample("clip.mov")).prefix(1000)))
    _ = try folder.write("notes.txt", Array("a note\n".utf8))
    // Dated by their files (nothing else of them reads): cutclip.mov in 2020, corrupt.jpg
    // the newest (in 2025; the others were taken in June 2024).
    for (name, date) in [("cutclip.mov", 1_577_880_000.0), ("corrupt.jpg", 1_735_732_800.0)] {
      try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSince1970: date)], ofItemAtPath: folder.file(name))
    }
  }

  /// What a user's file is: its bytes' hash, mode, size, links and modification time.
  static func state(_ path: String) throws -> [String] {
    var info = stat()
    guard stat(path, &info) == 0 else { return ["missing"] }
    return [
      ContentHash.of(bytes: try Fixture.bytes(path)).hex, String(info.st_mode, radix: 8),
      "\(info.st_size)", "\(info.st_nlink)", "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)",
    ]
  }

  static let names = ["whole.jpg", "cut.jpg", "corrupt.jpg", "cutclip.mov", "notes.txt"]

  /// The damaged ones, oldest first.
  static let expected: [(name: String, kind: DarkroomError.Kind, problem: String, detail: String)] =
    [
      (
        "cutclip.mov", .corrupt, "This video's file is damaged",
        "damaged MOV header: box 'mdat' runs past the end of the file"
      ),
      (
        "cut.jpg", .truncated, "This photo's file is cut short",
        "truncated JPEG: image data ends without an end-of-image marker"
      ),
      (
        "corrupt.jpg", .corrupt, "This photo's file is damaged",
        "corrupt JPEG: expected a marker at byte 6"
      ),
    ]

  @Test(
    "the scan catalogues damaged photos and videos with what is wrong, leaves their files as they were, and learns when one is whole again",
    arguments: CatalogBackend.allCases)
  func scan(backend: CatalogBackend) throws {
    let folder = try Fixture.temporaryFolder()
    try Self.files(in: folder)
    let before = try Self.names.map { try Self.state(folder.file($0)) }
    var library = try Library.create(at: folder.path)
    library.catalogURL = try backend.newCatalogURL()
    let summary = try library.scanBlocking()
    #expect(
      [summary.added, summary.damaged, summary.skipped, summary.problems.count] == [4, 3, 1, 0]
        as [Int],
      "\(summary)")
    #expect(try Self.names.map { try Self.state(folder.file($0)) } == before, "files untouched")

    var query = AssetQuery()
    query.damaged = true
    let damaged = try library.assets(matching: query, offset: 0, limit: 10)
    #expect(damaged.map(\.name) == Self.expected.map(\.name))
    for (asset, expected) in zip(damaged, Self.expected) {
      #expect(asset.damage?.kind == expected.kind, "\(asset.name)")
      #expect(asset.damage?.problem == expected.problem, "\(asset.name)")
      #expect(asset.damage?.detail == expected.detail, "\(asset.name)")
    }
    // The one cut short was read as far as its header: size and date, as the whole one's.
    let whole = try #require(try library.asset(atPath: folder.file("whole.jpg")))
    let cut = damaged[1]
    #expect([cut.width, cut.height, cut.displayWidth] == [600, 400, 600] as [Int])
    #expect(cut.captureDate == whole.captureDate && cut.captureDate != nil)
    #expect(whole.damage == nil)
    // Nothing of the others was read: no size; their dates are their files'.
    #expect(damaged[2].width == 0 && damaged[2].format == "jpeg" && damaged[2].mediaType == .photo)
    #expect(damaged[0].width == 0 && damaged[0].format == "mov" && damaged[0].mediaType == .video)
    #expect(damaged[0].sortDate == 1_577_880_000)
    query.damaged = false
    #expect(try library.assets(matching: query, offset: 0, limit: 10).map(\.name) == ["whole.jpg"])

    // The Problems album holds them; a poster is the newest that shows something (not the
    // newest of all, corrupt.jpg).
    let albums = try library.albums()
    let problems = try #require(albums.first { $0.ref == "smart:problems" })
    #expect(problems.count == 3 && problems.title == "Problems")
    #expect(problems.poster == cut.id)
    let newest = try library.assets(matching: AssetQuery(parameters: [("sort", "-date")]))
    #expect(newest.first == damaged[2].id)
    for ref in ["smart:all", "folder:"] {
      let poster = albums.first { $0.ref == ref }?.poster
      #expect(poster == whole.id || poster == cut.id, "\(ref)")
    }

    // A rescan reads none of them again; once the file is whole, its asset (the same id)
    // says so.
    let again = try library.scanBlocking()
    #expect([again.unchanged, again.damaged, again.added] == [5, 0, 0] as [Int], "\(again)")
    try Data(try Fixture.bytes(Fixture.sample("orientation-1.jpg"))).write(
      to: URL(fileURLWithPath: folder.file("cut.jpg")))
    let mended = try library.scanBlocking()
    #expect([mended.changed, mended.damaged] == [1, 0] as [Int], "\(mended)")
    let healed = try library.asset(cut.id)
    #expect(healed.damage == nil && healed.path == "cut.jpg")
    query.damaged = true
    #expect(try library.count(matching: query) == 2)
  }

  @Test(
    "one cut short is shown by id as far as it decodes (its top, grey below); one of which nothing decodes is refused as the scan found it; the grid's pass makes what it can"
  )
  func shown() throws {
    let folder = try Fixture.temporaryFolder()
    try Self.files(in: folder)
    let library = try Library.create(at: folder.path)
    _ = try library.scanBlocking()
    let cut = try #require(try library.asset(atPath: folder.file("cut.jpg")))
    let whole = try #require(try library.asset(atPath: folder.file("whole.jpg")))
    let corrupt = try #require(try library.asset(atPath: folder.file("corrupt.jpg")))

    // Fullscreen, in PNG: the pixels as they decode (the full representation of a JPEG is
    // its file, as it is).
    var spec = RenditionSpec(.fullscreen)
    spec.format = .png
    let shown = try TemporaryFolder()
    let path = try shown.write("cut.png", try library.render(cut.id, spec).bytes)
    let wholePath = try shown.write("whole.png", try library.render(whole.id, spec).bytes)
    let image = try VipsImage.open(path: path, sequential: false)
    let reference = try VipsImage.open(path: wholePath, sequential: false)
    #expect([image.width, image.height] == [600, 400] as [Int])
    #expect(try image.pixel(x: 10, y: 10) == reference.pixel(x: 10, y: 10))
    #expect(try image.pixel(x: 10, y: 10) != [128, 128, 128])
    #expect(try image.pixel(x: 300, y: 390) == [128, 128, 128], "grey where the file ends")

    #expect {
      _ = try library.render(corrupt.id, RenditionSpec(.thumbnail))
    } throws: { error in
      let error = error as? DarkroomError
      return error?.kind == .corrupt && error?.message == Self.expected[2].detail
        && error?.file == folder.file("corrupt.jpg")
    }
    // The pass makes the thumbnails of the whole one and the one cut short, and asks nothing
    // of the two of which nothing decodes.
    let pass = try library.makeGridThumbnails()
    #expect(pass.failed == 0 && pass.made > 0 && pass.problems.isEmpty, "\(pass)")
  }

  @Test(
    "the command line counts them, lists them with their problems, and check reports each (exit 1)"
  )
  func commandLine() throws {
    let folder = try Fixture.temporaryFolder()
    try Self.files(in: folder)
    let before = try Self.names.map { try Self.state(folder.file($0)) }
    let scan = try CLI.run(["scan", folder.path, "--no-background"])
    #expect(scan.status == 0, "\(scan.stderr)")
    #expect(
      scan.stderr.contains(
        ": 4 added, 0 changed, 0 moved, 0 removed, 0 unchanged, 1 not photos or videos, 3 damaged (darkroom list --damaged) in "
      ), "\(scan.stderr)")
    let list = try CLI.run(["list", "--library", folder.path, "--damaged"], cwd: folder.path)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(
      list.stdout == Self.expected.map { "\($0.name): \($0.problem) (\($0.detail))\n" }.joined())
    let json = try CLI.run(["list", "--library", folder.path, "--damaged", "--json"])
    let listed = try #require(
      try JSONSerialization.jsonObject(with: json.stdoutData) as? [[String: Any]])
    #expect(
      listed.compactMap { ($0["damage"] as? [String: Any])?["problem"] as? String }
        == Self.expected.map(\.problem))
    let whole = try CLI.run(["list", "--library", folder.path, "--no-damaged"], cwd: folder.path)
    #expect(whole.stdout == "whole.jpg\n")

    let check = try CLI.run(["check", folder.path])
    #expect(check.status == 1, "\(check.stdout) \(check.stderr)")
    let lines = check.stdout.split(separator: "\n").map(String.init)
    // (By name.)
    for expected in Self.expected.sorted(by: { $0.name < $1.name }) {
      #expect(
        lines.contains(
          "\(folder.file(expected.name)): \(expected.problem) (\(expected.detail))"),
        "\(check.stdout)")
    }
    #expect(lines.last == "0 original(s), 0 adjustment document(s): 3 problem(s)")
    #expect(try Self.names.map { try Self.state(folder.file($0)) } == before, "files untouched")
  }

  @Test(
    "the API lists them with their problems and answers a render of nothing with a 422 that says what is wrong in words"
  )
  func api() async throws {
    let folder = try Fixture.temporaryFolder()
    try Self.files(in: folder)
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    let served = ServedLibrary(over: library, in: folder)
    let corrupt = try #require(try library.asset(atPath: folder.file("corrupt.jpg")))
    let cut = try #require(try library.asset(atPath: folder.file("cut.jpg")))
    try await served.test { client, _ in
      let listed = try await client.execute(
        uri: "/api/assets?damaged=true", method: .get, headers: ServedLibrary.read)
      #expect(listed.status == .ok)
      let assets = try #require(listed.object["assets"] as? [[String: Any]])
      #expect(assets.compactMap { $0["path"] as? String } == Self.expected.map(\.name))
      #expect(
        assets.compactMap { ($0["damage"] as? [String: Any])?["kind"] as? String }
          == Self.expected.map(\.kind.rawValue))
      let album = try await client.execute(
        uri: "/api/assets?album=smart:problems", method: .get, headers: ServedLibrary.read)
      #expect(album.object["count"] as? Int == 3)

      let refused = try await client.execute(
        uri: "/api/assets/\(corrupt.id)/thumbnail?size=256", method: .get,
        headers: ServedLibrary.read)
      #expect(refused.status == .unprocessableContent)
      let error = try #require(refused.object["error"] as? [String: Any])
      #expect(error["kind"] as? String == "corrupt")
      #expect(error["problem"] as? String == "This file is damaged")
      #expect(error["message"] as? String == "corrupt.jpg: " + Self.expected[2].detail)

      let top = try await client.execute(
        uri: "/api/assets/\(cut.id)/thumbnail?size=256", method: .get, headers: ServedLibrary.read)
      #expect(top.status == .ok && top.headers[.contentType] == "image/jpeg")

      let bad = try await client.execute(
        uri: "/api/assets?damaged=perhaps", method: .get, headers: ServedLibrary.read)
      #expect(bad.status == .badRequest, "\(bad.text)")
      #expect(
        (bad.object["error"] as? [String: Any])?["message"] as? String
          == "damaged takes true or false; not perhaps")
    }
  }
}

extension DamagedFileTests {
  @Test(
    "a photo whose header reads but whose data does not is marked damaged by the render that finds it: the API's 422 says so, and from then on Problems, list --damaged and check list it; the file untouched"
  )
  func foundByRender() async throws {
    let folder = try Fixture.temporaryFolder()
    let whole = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    // The scan's Huffman tables point at one the file does not define: its header (and
    // so the scan) reads well; libjpeg refuses its pixels.
    var bad = whole
    let scan = try #require(bad.indices.dropLast().first { bad[$0] == 0xFF && bad[$0 + 1] == 0xDA })
    bad[scan + 6] = 0x33
    _ = try folder.write("bad.jpg", bad)
    _ = try folder.write("whole.jpg", whole)
    let before = try ["bad.jpg", "whole.jpg"].map { try Self.state(folder.file($0)) }
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    let id = try #require(try library.asset(atPath: folder.file("bad.jpg"))).id
    #expect(try library.asset(id).damage == nil)
    let detail = "cannot render: VipsJpeg: Huffman table 0x03 was not defined"
    // A render that fails at --fail-on warning marks nothing (a warning is not damage).
    var strict = PixelSettings()
    strict.failOn = .warning
    #expect(throws: DarkroomError.self) {
      _ = try library.render(id, RenditionSpec(.thumbnail), settings: strict)
    }
    #expect(try library.asset(id).damage == nil)

    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      let none = try await client.execute(
        uri: "/api/assets?damaged=true", method: .get, headers: ServedLibrary.read)
      #expect((none.object["assets"] as? [[String: Any]])?.count == 0, "\(none.text)")
      for _ in 0..<2 {
        let refused = try await client.execute(
          uri: "/api/assets/\(id)/thumbnail?size=256", method: .get, headers: ServedLibrary.read)
        #expect(refused.status == .unprocessableContent, "\(refused.text)")
        let error = try #require(refused.object["error"] as? [String: Any])
        #expect(error["problem"] as? String == "This file is damaged")
        #expect(error["message"] as? String == "bad.jpg: " + detail)
      }
      let listed = try await client.execute(
        uri: "/api/assets?album=smart:problems", method: .get, headers: ServedLibrary.read)
      let assets = try #require(listed.object["assets"] as? [[String: Any]])
      #expect(assets.compactMap { $0["path"] as? String } == ["bad.jpg"])
      #expect(
        assets.compactMap { ($0["damage"] as? [String: Any])?["problem"] as? String }
          == ["This photo's file is damaged"])
    }
    let marked = try #require(try library.asset(id).damage)
    #expect(marked.kind == .corrupt && marked.detail == detail)
    let list = try CLI.run(["list", "--library", folder.path, "--damaged"], cwd: folder.path)
    #expect(list.stdout == "bad.jpg: This photo's file is damaged (\(detail))\n", "\(list.stderr)")
    let check = try CLI.run(["check", folder.path])
    #expect(check.status == 1)
    #expect(
      check.stdout.contains("\(folder.file("bad.jpg")): This photo's file is damaged (\(detail))"),
      "\(check.stdout)")
    // A render that fails for a reason that is not the file's data (the file moved away
    // meanwhile) marks nothing.
    let wholeID = try #require(try library.asset(atPath: folder.file("whole.jpg"))).id
    #expect(rename(folder.file("whole.jpg"), folder.file("away.jpg")) == 0)
    #expect(throws: DarkroomError.self) {
      _ = try library.render(wholeID, RenditionSpec(.thumbnail))
    }
    #expect(rename(folder.file("away.jpg"), folder.file("whole.jpg")) == 0)
    #expect(try library.asset(wholeID).damage == nil)
    #expect(try ["bad.jpg", "whole.jpg"].map { try Self.state(folder.file($0)) } == before)
  }
}

@Suite(
  "Damaged files in the gallery, in chromium", .serialized, .timeLimit(.minutes(5)), .offThePool)
struct DamagedFileBrowserTests {
  @Test(
    "a cut-short JPEG is in the grid with its top half and marked; one of which nothing decodes is a tile with its sentence (grid, viewer, its page); the Problems album lists them, at a desktop's width and a phone's"
  )
  func gallery() throws {
    let folder = try Fixture.temporaryFolder()
    try DamagedFileTests.files(in: folder)
    let library = try Library.create(at: folder.path)
    _ = try library.scanBlocking()
    func id(_ name: String) throws -> String {
      try #require(try library.asset(atPath: folder.file(name))).id.rawValue
    }
    let (cut, corrupt, clip, whole) = (
      try id("cut.jpg"), try id("corrupt.jpg"), try id("cutclip.mov"), try id("whole.jpg")
    )
    let (server, browser, base) = try Browser.loggedIn(to: ServedLibrary(over: library, in: folder))

    // The timeline: newest first (corrupt.jpg's file is from 2025, the photos from 2024).
    #expect(eventually { (try? browser.cellIDs().count) == 4 })
    #expect(try browser.cellIDs().first == corrupt)
    let loaded =
      "const i = document.querySelector(\".cell[data-id='\(cut)'] img\"); return i !== null && i.naturalWidth > 0"
    #expect(eventually { (try? browser.run(loaded)) as? Bool == true })
    #expect(try browser.findAll(".cell[data-id='\(cut)'] .damage-badge").count == 1)
    #expect(try browser.findAll(".cell[data-id='\(whole)'] .damage-badge").isEmpty)
    #expect(
      try browser.text(try browser.find(".cell[data-id='\(corrupt)'] .broken"))
        == "This photo's file is damaged")
    #expect(try browser.findAll(".cell[data-id='\(corrupt)'] img").isEmpty, "nothing asked for")
    try browser.screenshot("damaged-timeline")

    // The viewer over the timeline says it in the photo's place, and offers no Edit.
    try browser.click(css: ".cell[data-id='\(corrupt)'] a")
    #expect(eventually { browser.viewerOpen })
    #expect(
      try browser.text(try browser.find(".lightbox .problem")) == "This photo's file is damaged.")
    #expect(
      try browser.run("return document.querySelector(\".lightbox [data-v='edit']\").hidden")
        as? Bool == true)
    try browser.press("\u{E00C}")  // Escape

    // The Problems album: the three, each saying what is wrong.
    try browser.go(base + "/album?ref=smart:problems")
    #expect(eventually { (try? browser.cellIDs()) == [corrupt, cut, clip] })
    #expect(
      try browser.text(try browser.find(".cell[data-id='\(cut)'] .damage-badge"))
        == "⚠ This photo's file is cut short")
    #expect(
      try browser.text(try browser.find(".cell[data-id='\(clip)'] .broken"))
        == "This video's file is damaged")
    try browser.screenshot("damaged-problems")
    try browser.go(base + "/albums")
    let problems = try browser.text(
      try browser.find(".albums a[href='/album?ref=smart:problems']"))
    #expect(problems.hasSuffix("Problems\n3"), "\(problems)")

    // Their pages: what is wrong, the pixels only of the one cut short; no editor.
    try browser.go(base + "/asset/\(cut)")
    #expect(
      try browser.text(try browser.find(".viewer .damage"))
        == "This photo's file is cut short: shown as far as it can be read. truncated JPEG: image data ends without an end-of-image marker"
    )
    #expect(try browser.findAll(".viewer .photo").count == 1)
    #expect(
      try browser.run("return document.querySelector('.open-editor').hidden") as? Bool == true)
    try browser.go(base + "/asset/\(corrupt)")
    #expect(try browser.text(try browser.find(".viewer .broken")) == "This photo's file is damaged")
    #expect(try browser.findAll(".viewer .photo").isEmpty)

    // At a phone's width the Problems album says the same.
    try browser.resize(390, 844)
    try browser.go(base + "/album?ref=smart:problems")
    #expect(eventually { (try? browser.cellIDs()) == [corrupt, cut, clip] })
    #expect(
      try browser.text(try browser.find(".cell[data-id='\(corrupt)'] .broken"))
        == "This photo's file is damaged")
    try browser.screenshot("damaged-problems-phone")
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }
}

extension DamagedFileTests {
  @Test(
    "a render's damage is one conditional write in either catalog: marked once, with a change logged; a row that no longer describes the rendered file is not marked",
    arguments: CatalogBackend.allCases)
  func markDamaged(backend: CatalogBackend) throws {
    let folder = try Fixture.temporaryFolder()
    var bad = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let scan = try #require(bad.indices.dropLast().first { bad[$0] == 0xFF && bad[$0 + 1] == 0xDA })
    bad[scan + 6] = 0x33
    _ = try folder.write("bad.jpg", bad)
    _ = try folder.write("other.jpg", try Fixture.bytes(Fixture.sample("gps.jpg")))
    var library = try Library.create(at: folder.path)
    library.catalogURL = try backend.newCatalogURL()
    _ = try library.scanBlocking()
    let asset = try #require(try library.asset(atPath: folder.file("bad.jpg")))
    let other = try #require(try library.asset(atPath: folder.file("other.jpg")))
    let before = try library.lastChange()
    #expect(throws: DarkroomError.self) {
      _ = try library.render(asset.id, RenditionSpec(.thumbnail))
    }
    #expect(try library.asset(asset.id).damage?.kind == .corrupt)
    let changes = try library.changes(since: before)
    #expect(changes.map(\.id) == [asset.id] && changes.map(\.kind) == [.changed], "\(changes)")
    // Asked again of the same row: it has its damage, so nothing is written.
    let damage = AssetDamage(kind: .corrupt, detail: "again", video: false)
    #expect(try library.catalog().markDamaged(damage, ifStill: asset) == false)
    // A row whose file changed since it was read (another hash): not marked.
    var stale = other
    stale.contentHash = String(repeating: "0", count: 64)
    #expect(try library.catalog().markDamaged(damage, ifStill: stale) == false)
    #expect(try library.asset(other.id).damage == nil)
    #expect(try library.catalog().markDamaged(damage, ifStill: other) == true)
    #expect(try library.asset(other.id).damage?.detail == "again")
  }
}
