import Foundation
import Testing

@testable import Darkroom

/// A WebDriver session in Debian's `chromium`, through `chromedriver`, both started here and
/// stopped when it ends. Commands are plain HTTP/1.1 JSON requests on a socket.
final class Browser: @unchecked Sendable {
  let driver = Process()
  let port: Int
  let profile: TemporaryFolder
  private(set) var session = ""
  static let element = "element-6066-11e4-a52e-4f735466cecf"

  init() throws {
    profile = try TemporaryFolder()
    port = try Self.freePort()
    driver.executableURL = URL(fileURLWithPath: "/usr/bin/chromedriver")
    driver.arguments = ["--port=\(port)", "--log-path=\(profile.file("chromedriver.log"))"]
    driver.standardOutput = FileHandle.nullDevice
    driver.standardError = FileHandle.nullDevice
    try driver.run()
    let ready = eventually(30) {
      ((try? call("GET", "/status")) as? [String: Any])?["ready"] as? Bool == true
    }
    guard ready else { throw DarkroomError(.engine, "chromedriver did not start on port \(port)") }
    let options: [String: Any] = [
      "binary": "/usr/bin/chromium",
      "args": [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--window-size=1280,1000", "--user-data-dir=\(profile.file("profile"))",
      ],
    ]
    let created = try call(
      "POST", "/session",
      [
        "capabilities": [
          "alwaysMatch": [
            "browserName": "chrome", "goog:chromeOptions": options,
            "goog:loggingPrefs": ["browser": "ALL"],
          ]
        ]
      ])
    guard let id = (created as? [String: Any])?["sessionId"] as? String else {
      throw DarkroomError(.engine, "no WebDriver session: \(String(describing: created))")
    }
    session = id
  }

  deinit {
    if !session.isEmpty { _ = try? call("DELETE", "/session/\(session)") }
    if driver.isRunning {
      kill(driver.processIdentifier, SIGKILL)
      driver.waitUntilExit()
    }
  }

  static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length)
        return getsockname(fd, $0, &length)
      }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// One WebDriver command; its `value`.
  @discardableResult
  func call(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { throw DarkroomError(.io, "chromedriver is not listening") }
    let payload = try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
    var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    head += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n\r\n"
    let request = Array(head.utf8) + payload
    var offset = 0
    while offset < request.count {
      let n = request[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      guard n > 0 else { throw DarkroomError(.io, "cannot write to chromedriver") }
      offset += n
    }
    // chromedriver keeps connections open: read the head, then Content-Length bytes.
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var split: Range<Int>?
    var length = 0
    while split == nil || response.count < split!.upperBound + length {
      let n = read(fd, &buffer, buffer.count)
      guard n > 0 else { break }
      response += buffer[0..<n]
      if split == nil, let end = response.firstRange(of: Array("\r\n\r\n".utf8)) {
        split = end
        let head = String(decoding: response[..<end.lowerBound], as: UTF8.self).lowercased()
        for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
          length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
        }
      }
    }
    guard let split else { return nil }
    let json = try JSONSerialization.jsonObject(
      with: Data(response[split.upperBound...]), options: [.fragmentsAllowed])
    let value = (json as? [String: Any])?["value"]
    if let error = (value as? [String: Any])?["error"] as? String {
      throw DarkroomError(
        .engine, "WebDriver \(path): \(error): \((value as? [String: Any])?["message"] ?? "")")
    }
    return value
  }

  func go(_ url: String) throws { try call("POST", "/session/\(session)/url", ["url": url]) }

  /// A script run in every page this session opens from now on, before the page's own
  /// (chromedriver's passage to the DevTools protocol).
  func beforeEveryPage(_ script: String) throws {
    try call(
      "POST", "/session/\(session)/goog/cdp/execute",
      ["cmd": "Page.addScriptToEvaluateOnNewDocument", "params": ["source": script]])
  }

  /// A server on `served` (no rate limit), and a browser logged in to it at its address.
  static func loggedIn(to served: ServedLibrary) throws -> (ServeProcess, Browser, String) {
    let server = try ServeProcess(served.root, arguments: ["--rate-limit", "0"])
    let (browser, base) = try loggedIn(to: server)
    return (server, browser, base)
  }

  /// A browser logged in to `server` with the write token, and the server's address.
  static func loggedIn(to server: ServeProcess) throws -> (Browser, String) {
    let browser = try Browser()
    let base = "http://127.0.0.1:\(server.port)"
    guard try browser.logIn(at: base) else {
      throw DarkroomError(.engine, "the login at \(base) did not reach the first page")
    }
    return (browser, base)
  }

  /// Logs in at the server at `base` with the write token; true once the first page (the
  /// timeline) is shown.
  func logIn(at base: String) throws -> Bool {
    try go(base + "/login")
    try type(try find("#token"), ServedLibrary.writeToken)
    try click(try find("button[type=submit]"))
    return eventually { url == base + "/" }
  }
  var url: String { ((try? call("GET", "/session/\(session)/url")) as? String) ?? "" }

  func find(_ css: String) throws -> String {
    let value = try call(
      "POST", "/session/\(session)/element", ["using": "css selector", "value": css])
    guard let id = (value as? [String: Any])?[Self.element] as? String else {
      throw DarkroomError(.notFound, "no element \(css)")
    }
    return id
  }

  func findAll(_ css: String) throws -> [String] {
    let value = try call(
      "POST", "/session/\(session)/elements", ["using": "css selector", "value": css])
    return (value as? [[String: Any]] ?? []).compactMap { $0[Self.element] as? String }
  }

  func click(_ element: String) throws {
    try call("POST", "/session/\(session)/element/\(element)/click", [:])
  }
  /// Finds `css` and clicks it; finds it again when the page replaced it between the two (a
  /// stale element reference), as the timeline does when it lays a month out again.
  func click(css: String) throws {
    var tries = 0
    while true {
      do {
        return try click(try find(css))
      } catch let error as DarkroomError
        where error.message.contains("stale element reference") && tries < 20
      {
        tries += 1
        usleep(100_000)
      }
    }
  }
  func type(_ element: String, _ text: String) throws {
    try call("POST", "/session/\(session)/element/\(element)/value", ["text": text])
  }
  func text(_ element: String) throws -> String {
    (try call("GET", "/session/\(session)/element/\(element)/text") as? String) ?? ""
  }
  func attribute(_ element: String, _ name: String) throws -> String? {
    try call("GET", "/session/\(session)/element/\(element)/attribute/\(name)") as? String
  }

  /// A click with a modifier key held (Shift: \u{E008}, Control: \u{E009}).
  func click(_ element: String, holding key: String) throws {
    let origin: [String: Any] = [Self.element: element]
    try call(
      "POST", "/session/\(session)/actions",
      [
        "actions": [
          [
            "type": "key", "id": "keyboard",
            "actions": [
              ["type": "keyDown", "value": key], ["type": "pause"], ["type": "pause"],
              ["type": "pause"],
              ["type": "keyUp", "value": key],
            ],
          ],
          [
            "type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"],
            "actions": [
              ["type": "pause"], ["type": "pointerMove", "origin": origin, "x": 0, "y": 0],
              ["type": "pointerDown", "button": 0], ["type": "pointerUp", "button": 0],
              ["type": "pause"],
            ],
          ],
        ]
      ])
    try call("DELETE", "/session/\(session)/actions")
  }

  func press(_ key: String) throws {
    try call(
      "POST", "/session/\(session)/actions",
      [
        "actions": [
          [
            "type": "key", "id": "keys",
            "actions": [["type": "keyDown", "value": key], ["type": "keyUp", "value": key]],
          ]
        ]
      ])
  }

  func run(_ script: String, _ arguments: [Any] = []) throws -> Any? {
    try call("POST", "/session/\(session)/execute/sync", ["script": script, "args": arguments])
  }

  /// What the page wrote to the console since the last call, at `SEVERE` (errors, failed
  /// requests).
  func consoleErrors() throws -> [String] {
    let entries = try call("POST", "/session/\(session)/se/log", ["type": "browser"])
    return (entries as? [[String: Any]] ?? []).filter { $0["level"] as? String == "SEVERE" }
      .map { $0["message"] as? String ?? "" }
  }

  /// The ids of the timeline's cells in the page, in its order (only the rows near the
  /// screen are in it).
  func cellIDs() throws -> [String] {
    try run(
      "return Array.from(document.querySelectorAll('.timeline .cell')).map((c) => c.dataset.id)")
      as? [String] ?? []
  }

  /// The month sections in the page, with each one's top on the screen (in CSS pixels).
  func sectionTops() throws -> [String: Double] {
    let value = try run(
      """
      const out = {};
      for (const s of document.querySelectorAll('.timeline .section')) {
        const h = s.querySelector('h2');
        if (h) out[h.textContent] = s.getBoundingClientRect().top;
      }
      return out;
      """)
    return (value as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.doubleValue }
  }

  /// The colour near the top left of each of the grid's first `count` thumbnails (the
  /// samples' centre is white: grey either way), as loaded in the page (decoded from the
  /// image responses by a canvas); nil until all are loaded.
  func thumbnailColours(_ count: Int) throws -> [[Double]]? {
    let value = try run(
      """
      const imgs = Array.from(document.querySelectorAll('.timeline .cell img')).slice(0, arguments[0]);
      if (!imgs.every((img) => img.complete && img.naturalWidth > 0)) return null;
      return imgs.map((img) => {
        const canvas = document.createElement('canvas');
        canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
        const context = canvas.getContext('2d');
        context.drawImage(img, 0, 0);
        const d = context.getImageData(img.naturalWidth / 10, img.naturalHeight / 10, 1, 1).data;
        return [d[0], d[1], d[2]];
      });
      """, [count])
    return (value as? [[Any]])?.map { $0.compactMap { ($0 as? NSNumber)?.doubleValue } }
  }
}

func isGrey(_ rgb: [Double]) -> Bool { rgb.count == 3 && rgb.max()! - rgb.min()! <= 3 }

@Suite(
  "The gallery in a real browser (Debian's chromium through chromedriver)", .serialized,
  .timeLimit(.minutes(10)), .offThePool)
struct BrowserTests {
  @Test(
    "log in, open an album, Shift-click three, apply noir to 3/3 grey, revert, upload; no token, no page"
  )
  func gallery() throws {
    let served = try ServedLibrary()
    let server = try ServeProcess(served.root, arguments: ["--rate-limit", "0"])
    let browser = try Browser()
    let base = "http://127.0.0.1:\(server.port)"

    // Without a session, a page is refused: the login form instead.
    try browser.go(base + "/album?ref=smart:all")
    #expect(browser.url == base + "/login?next=%2Falbum%3Fref%3Dsmart%3Aall")
    try browser.type(try browser.find("#token"), "not the token")
    try browser.click(css: "button[type=submit]")
    // The refusal is a new page: looked for until it has loaded, as every step after a
    // click below is.
    #expect(
      eventually {
        (try? browser.text(try browser.find(".error")))
          == "That token is not one this server knows."
      })

    try browser.type(try browser.find("#token"), ServedLibrary.writeToken)
    try browser.click(css: "button[type=submit]")
    #expect(
      eventually { browser.url == base + "/album?ref=smart:all" }, "back where the login began")
    try browser.go(base + "/albums")
    try browser.click(css: "main a[href='/album?ref=smart:all']")
    #expect(browser.url == base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.cellIDs().count) == 9 })
    #expect(
      eventually {
        (try? browser.thumbnailColours(3)).flatMap { $0 }?.allSatisfy { !isGrey($0) } == true
      })

    // The check mark selects (a click elsewhere opens the viewer); Shift takes the range.
    let checks = try browser.findAll(".timeline .cell .check")
    try browser.click(checks[0])
    try browser.click(checks[2], holding: "\u{E008}")
    let count = try browser.find(".selection-count")
    #expect(try browser.text(count) == "3 selected")

    try browser.click(css: "#preset option[value='noir']")
    try browser.click(css: "button[data-act='apply']")
    let progress = try browser.find(".progress-text")
    #expect(eventually(120) { (try? browser.text(progress)) == "Applying 3/3 · done" })
    #expect(
      eventually(60) {
        (try? browser.thumbnailColours(3)).flatMap { $0 }?.allSatisfy(isGrey) == true
      })
    let untouched = try browser.thumbnailColours(4)?.last
    #expect(untouched.map { !isGrey($0) } == true, "the fourth was not selected")
    let ids = try served.ids()
    #expect(try ids.filter { try served.library.asset($0).adjustmentVersion == 1 }.count == 3)

    try browser.click(css: "button[data-act='revert']")
    #expect(eventually(120) { (try? browser.text(progress)) == "Reverting 3/3 · done" })
    #expect(
      eventually(60) {
        (try? browser.thumbnailColours(3)).flatMap { $0 }?.allSatisfy { !isGrey($0) } == true
      },
      """
      \((try? browser.thumbnailColours(3)) ?? nil)
      \(String(describing: try? browser.run("return Array.from(document.querySelectorAll('.grid img')).slice(0, 3).map((i) => i.src)")))
      \(ids.compactMap { try? served.library.asset($0) }.map { "\($0.id) \($0.contentHash.prefix(12)) v\($0.adjustmentVersion)" })
      \(server.stderr.suffix(4000))
      """)
    #expect(try ids.allSatisfy { try served.library.asset($0).adjustmentVersion == 0 })

    try browser.press("\u{E00C}")  // Escape clears the selection, and the toolbar goes
    #expect(
      try browser.run("return document.querySelector('.selection-count').textContent")
        as? String == "0 selected")
    #expect(try browser.run("return document.querySelector('.toolbar').hidden") as? Bool == true)

    // Upload through the file picker: the new photo appears in the grid.
    try browser.type(try browser.find("#files"), Fixture.sample("display-p3.jpg"))
    #expect(eventually(60) { (try? browser.cellIDs().count) == 10 })
    #expect(try browser.text(try browser.find(".uploads li")) == "display-p3.jpg: added")
    #expect(FileManager.default.fileExists(atPath: served.root + "/Uploads/display-p3.jpg"))
    #expect(server.stop() == 0)
  }

  @Test(
    "rough edges: HTML error pages, one h1 a page, a favicon, a tile for a damaged file, counts that follow trash and upload, an upload error said once"
  )
  func roughEdges() throws {
    let served = try ServedLibrary(samples: ["gps.jpg", "orientation-1.jpg"])
    // A JPEG whose coded data is garbage after its first bytes: its header and end are whole
    // (it is catalogued), its pixels cannot be decoded.
    var damaged = try Fixture.bytes(Fixture.sample("orientation-3.jpg"))
    let scan = try #require(
      damaged.indices.first { damaged[$0] == 0xFF && damaged[$0 + 1] == 0xDA })
    for index in (scan + 40)..<(damaged.count - 2) { damaged[index] = index % 2 == 0 ? 0x00 : 0xFF }
    _ = try served.folder.write("damaged.jpg", damaged)
    _ = try served.library.scanBlocking()
    let (server, browser, base) = try Browser.loggedIn(to: served)
    let headings = "return Array.from(document.querySelectorAll('h1')).map((h) => h.textContent)"

    // A missing album or asset is a page that says so, with a way back; never raw JSON.
    try browser.go(base + "/album?ref=Trips")
    #expect(try browser.run(headings) as? [String] == ["Not found"])
    #expect(try browser.text(try browser.find("main .error")) == "No album Trips.")
    try browser.go(base + "/asset/01JD3ZQ4N8W5XK2M7P9R1T6V0B")
    #expect(try browser.run(headings) as? [String] == ["Not found"])
    #expect(
      try browser.text(try browser.find("main .error")).hasPrefix("01JD3ZQ4N8W5XK2M7P9R1T6V0B: "))
    #expect(try browser.find("main a[href='/']") != "")
    #expect(try server.request("GET", "/album?ref=Trips").status == 404)

    // One h1 on every page; the favicon the pages name is served.
    try browser.go(base + "/albums")
    #expect(try browser.run(headings) as? [String] == ["Albums"])
    let icon = try #require(
      try browser.run("return document.querySelector('link[rel=icon]').getAttribute('href')")
        as? String)
    let fetched = try server.request("GET", icon)
    #expect(fetched.status == 200 && fetched.text.contains("Content-Type: image/svg+xml"))

    try browser.go(base + "/album?ref=smart:all")
    #expect(try browser.run(headings) as? [String] == ["All"])
    let summary = try browser.find(".summary")
    #expect(try browser.text(summary) == "3 items")
    // The damaged file is a tile that says so; the others are pictures.
    #expect(
      eventually {
        (try? browser.findAll(".timeline .broken").count) == 1
          && (try? browser.findAll(".timeline img").count) == 2
      })
    // The tile says what is wrong in words; the decoder's own, from the server, on hover.
    #expect(
      eventually {
        (try? browser.text(try browser.find(".timeline .broken"))) == "This file is damaged"
      }, "\(String(describing: try? browser.text(try browser.find(".timeline .broken"))))")
    let title = try browser.attribute(try browser.find(".timeline .broken"), "title") ?? ""
    #expect(title.hasPrefix("damaged.jpg: ") && title.count > 20, "\(title)")

    // Trash one: the count follows, as it does an upload.
    try browser.click(try browser.findAll(".timeline .cell .check")[0])
    try browser.click(css: "button[data-act='trash']")
    #expect(eventually(60) { (try? browser.text(summary)) == "2 items" })
    #expect(eventually { (try? browser.cellIDs().count) == 2 })
    try browser.type(try browser.find("#files"), Fixture.sample("display-p3.jpg"))
    #expect(eventually(60) { (try? browser.text(summary)) == "3 items" })

    // A refused upload's message names the file once.
    let text = try served.folder.write("notes.jpg", Array("not a photo".utf8))
    _ = try browser.run("document.querySelector('#files').value = ''")  // a new choice
    try browser.type(try browser.find("#files"), text)
    #expect(
      eventually(60) { (try? browser.findAll(".uploads li.failed").count) == 1 },
      "\(String(describing: try? browser.run("return document.querySelector('.uploads').textContent")))"
    )
    let said = try browser.text(try browser.find(".uploads li.failed"))
    #expect(said.hasPrefix("notes.jpg: ") && !said.dropFirst(11).contains("notes.jpg"), "\(said)")
    #expect(try browser.text(summary) == "3 items")
    #expect(server.stop() == 0)
  }

  @Test(
    "search filters the grid and what Select all moves to the trash; the trash empties once confirmed; the viewer shows caption, rating and keywords, and keeps a favourite"
  )
  func search() throws {
    let served = try ServedLibrary(samples: ["gps.jpg", "orientation-1.jpg", "orientation-2.jpg"])
    let sidecar = """
      <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="4"
        xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:description><rdf:Alt>
      <rdf:li xml:lang="x-default">Pikes Peak at dawn</rdf:li></rdf:Alt></dc:description>
      <dc:subject><rdf:Bag><rdf:li>Colorado</rdf:li></rdf:Bag></dc:subject></rdf:Description>
      </rdf:RDF></x:xmpmeta>
      """
    _ = try served.folder.write("gps.jpg.xmp", Array(sidecar.utf8))
    _ = try served.library.scanBlocking()
    let gps = try #require(try served.library.asset(atPath: served.folder.file("gps.jpg"))?.id)
    let (server, browser, base) = try Browser.loggedIn(to: served)

    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.cellIDs().count) == 3 })
    try browser.type(try browser.find(".search input[type=search]"), "peak\u{E007}")  // Enter
    #expect(eventually { browser.url == base + "/album?ref=smart%3Aall&text=peak" })
    #expect(eventually { (try? browser.cellIDs()) == [gps.rawValue] })
    #expect(try browser.text(try browser.find(".summary")) == "1 item")
    // The filters' form says the same in the list's words: four stars or more.
    try browser.go(base + "/album?ref=smart:all")
    try browser.click(css: ".filters summary")
    try browser.click(css: ".filters select[name=rating] option[value='>=4']")
    try browser.click(css: ".filters button[type=submit]")
    #expect(
      eventually { browser.url == base + "/album?ref=smart%3Aall&rating=%3E%3D4" }, "\(browser.url)"
    )
    #expect(eventually { (try? browser.cellIDs()) == [gps.rawValue] })
    #expect(try browser.text(try browser.find(".summary")) == "1 item")
    #expect(
      try browser.run("return document.querySelector('.filters select[name=rating]').value")
        as? String == ">=4")
    // The viewer says what the sidecar said.
    try browser.go(base + "/asset/\(gps)")
    #expect(try browser.text(try browser.find(".viewer .caption")) == "Pikes Peak at dawn")
    #expect(try browser.text(try browser.find(".viewer .rating")) == "★★★★☆")
    #expect(try browser.text(try browser.find(".viewer .keywords")) == "Colorado")
    let place = try browser.text(try browser.find(".viewer .place"))
    #expect(place.hasPrefix("Rio de Janeiro, Rio de Janeiro, Brazil · -22.95"), "\(place)")
    #expect(place.hasSuffix(" · America/Sao_Paulo"), "\(place)")
    // Two stars in one press: written to the sidecar, which keeps its description.
    try browser.click(css: ".viewer .rating button[data-stars='2']")
    #expect(
      eventually {
        (try? browser.attribute(try browser.find(".viewer .rating"), "aria-label"))
          == "Rating: 2 of 5 stars"
      })
    #expect(try browser.text(try browser.find(".viewer .rating")) == "★★☆☆☆")
    let rated = try served.library.asset(gps)
    #expect(rated.rating == 2 && rated.caption == "Pikes Peak at dawn")
    try browser.go(base + "/album?ref=smart%3Aall&text=peak")
    // "All" is all that match: only the one photo goes to the trash.
    try browser.click(css: "button[data-act='select-all']")
    try browser.click(css: "button[data-act='trash']")
    #expect(
      eventually(60) {
        (try? browser.text(try browser.find(".progress-text"))) == "Moving to trash 1/1 · done"
      })
    var trashed = AssetQuery()
    trashed.trashed = true
    #expect(try served.library.assetIDs(matching: trashed) == [gps])
    #expect(
      FileManager.default.fileExists(atPath: served.folder.file(".darkroom/trash/\(gps)/gps.jpg")))
    #expect(try served.library.count(matching: AssetQuery()) == 2)

    // The trash page empties the trash, once asked and confirmed; the file is gone.
    try browser.go(base + "/album?ref=smart:trash")
    #expect(eventually { (try? browser.cellIDs()) == [gps.rawValue] })
    try browser.click(css: "button[data-act='empty']")
    _ = try browser.call("POST", "/session/\(browser.session)/alert/accept", [:])
    #expect(
      eventually(30) {
        (try? browser.text(try browser.find(".progress-text"))) == "Emptied: 1 deleted for good"
      })
    // The album is read again after the job's last report: its count follows.
    #expect(eventually { (try? browser.text(try browser.find(".summary"))) == "0 items" })
    #expect(try served.library.count(matching: trashed) == 0)
    let inTrash = served.folder.file(".darkroom/trash/\(gps)/gps.jpg")
    #expect(!FileManager.default.fileExists(atPath: inTrash), "deleted for good")

    // The viewer says what the sidecar said, and keeps a favourite across a reload.
    let one = try #require(
      try served.library.asset(atPath: served.folder.file("orientation-1.jpg")))
    try browser.go(base + "/asset/\(one.id)")
    let star = try browser.find(".viewer .favourite")
    #expect(try browser.text(star) == "☆ Favourite")
    try browser.click(star)
    #expect(eventually { (try? browser.text(star)) == "★ Favourite" })
    #expect(try served.library.asset(one.id).isFavourite)
    try browser.go(base + "/asset/\(one.id)")
    #expect(try browser.text(try browser.find(".viewer .favourite")) == "★ Favourite")
    // (A script's mistake shows here first: Select all once threw in the page and left its
    // button there, dead.)
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }

  @Test("the grid shows the newest first, and the viewer's next is the next older")
  func newestFirst() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg", "orientation-2.jpg", "gps.jpg"])
    for (name, date) in [
      ("orientation-1.jpg", "2019:05:01 10:00:00"), ("orientation-2.jpg", "2021:05:01 10:00:00"),
      ("gps.jpg", "2020:05:01 10:00:00"),
    ] {
      let run = try CLI.run(
        [
          "-q", "-overwrite_original", "-DateTimeOriginal=\(date)", "-OffsetTimeOriginal=+00:00",
          served.folder.file(name),
        ], executable: "/usr/bin/exiftool")
      #expect(run.status == 0, "\(run.stderr)")
    }
    _ = try served.library.scanBlocking()
    func id(_ name: String) throws -> String {
      try #require(try served.library.asset(atPath: served.folder.file(name))).id.rawValue
    }
    let newest = [try id("orientation-2.jpg"), try id("gps.jpg"), try id("orientation-1.jpg")]
    let (server, browser, base) = try Browser.loggedIn(to: served)
    try browser.go(base + "/album?ref=smart:all")
    #expect(eventually { (try? browser.cellIDs()) == newest })
    // Each month opens with its name, on the clock where the photos were taken.
    let months = try browser.sectionTops().sorted { $0.value < $1.value }.map(\.key)
    #expect(months == ["May 2021", "May 2020", "May 2019"])
    // The address may ask for the oldest first.
    try browser.go(base + "/album?ref=smart:all&sort=date")
    #expect(eventually { (try? browser.cellIDs()) == newest.reversed() })
    try browser.go(base + "/album?ref=smart:all&sort=name")
    #expect(eventually { (try? browser.cellIDs().count) == 3 })
    #expect(try browser.sectionTops().isEmpty, "by name: no months")
    try browser.go(base + "/asset/\(newest[0])?ref=smart:all")
    let next = try browser.attribute(try browser.find("a[rel=next]"), "href")
    #expect(next?.contains("/asset/\(newest[1])") == true, "\(next ?? "none")")
    #expect(server.stop() == 0)
  }
}
