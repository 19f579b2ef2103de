import Foundation
import Testing

@testable import Darkroom

extension Browser {
  /// Drags from the centre of `element` by (dx, dy) CSS pixels with the mouse.
  func drag(_ element: String, dx: Int, dy: Int) throws {
    try mouse(
      on: element,
      [
        ["type": "pointerDown", "button": 0],
        ["type": "pointerMove", "origin": "pointer", "x": dx / 2, "y": dy / 2, "duration": 50],
        [
          "type": "pointerMove", "origin": "pointer", "x": dx - dx / 2, "y": dy - dy / 2,
          "duration": 50,
        ],
        ["type": "pointerUp", "button": 0],
      ])
  }

  /// The editor's Auto, then Save, each waited for by what its status line says: "auto: …"
  /// within 30 s, then "saved" within a minute.
  func autoThenSave() throws {
    let status = { (try? self.text(self.find(".editor .status"))) ?? "" }
    try click(try find("[data-act='auto']"))
    #expect(eventually(30) { status().hasPrefix("auto:") })
    try click(try find("[data-act='save']"))
    #expect(eventually(60) { status() == "saved" }, "\(status())")
  }

  /// The window at `width` x `height` CSS pixels.
  func resize(_ width: Int, _ height: Int) throws {
    try call("POST", "/session/\(session)/window/rect", ["width": width, "height": height])
  }

  /// A PNG of the page as shown, written to DARKROOM_SCREENSHOTS/`name`.png when that is set
  /// (to look at; nothing is asserted of it).
  func screenshot(_ name: String) throws {
    guard let folder = ProcessInfo.processInfo.environment["DARKROOM_SCREENSHOTS"] else { return }
    guard let base64 = try call("GET", "/session/\(session)/screenshot") as? String,
      let png = Data(base64Encoded: base64)
    else { return }
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try png.write(to: URL(fileURLWithPath: folder + "/" + name + ".png"))
  }
}

@Suite("The gallery's editor, in chromium", .serialized, .timeLimit(.minutes(10)), .offThePool)
struct EditorBrowserTests {
  @Test(
    "a phone's HEVC video and a motion photo's HEVC motion play in the viewer (the playback version: frames decoded, time going on); the editor trims the video and turns it grey; Revert gives the file back"
  )
  func videoPlaysAndEdits() throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try VideoEditTests.hevcClip(in: folder)
    try FileManager.default.removeItem(atPath: folder.file("plain.mov"))
    // A Samsung motion photo whose motion is HEVC (as its phones record it).
    let parts = try Fixture.temporaryFolder()
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=15:duration=1", "-c:v", "libx265",
        "-x265-params", "log-level=error", "-tag:v", "hvc1", "-pix_fmt", "yuv420p", "motion.mp4",
      ], in: parts)
    let motionVideo = try Fixture.bytes(parts.file("motion.mp4"))
    let still = try LivePhotoTests.motionPhoto(
      "PXL_1.MP.jpg", xmp: LivePhotoTests.googleXMP(length: motionVideo.count),
      video: motionVideo, in: parts)
    try FileManager.default.copyItem(atPath: still, toPath: folder.file("PXL_1.MP.jpg"))
    var made = try Library.create(at: folder.path)
    made.catalogURL = nil
    let library = made
    let scanned = try library.scanBlocking()
    #expect(scanned.added == 2, "\(scanned)")
    let id = try #require(try library.asset(atPath: clip)?.id)
    let motion = try #require(try library.asset(atPath: folder.file("PXL_1.MP.jpg"))?.id)
    let original = try ContentHash.of(file: clip)
    let served = ServedLibrary(over: library, in: folder)
    let (server, browser, base) = try Browser.loggedIn(to: served)
    defer { withExtendedLifetime(server) {} }

    // Chromium on Linux plays no HEVC: the viewer asks for the playback version, and plays it.
    try browser.go(base + "/album?ref=smart:all")
    #expect(
      eventually(30) { (try? browser.findAll(".cell[data-id='\(id.rawValue)'] a").count) == 1 })
    try browser.click(css: ".cell[data-id='\(id.rawValue)'] a")
    #expect(eventually(30) { browser.viewerOpen })
    let source =
      try browser.run("return document.querySelector('video.clip').currentSrc") as? String
    #expect(source?.contains("/playback?") == true, "\(source ?? "")")
    // A video element's frame width and time, once it is told to play (muted, shown).
    func playing(_ selector: String) throws -> () -> [Double] {
      _ = try browser.run(
        "const v = document.querySelector('\(selector)'); v.muted = true; v.hidden = false; v.play();"
      )
      return {
        (try? browser.run(
          "const v = document.querySelector('\(selector)'); return [v.videoWidth, v.currentTime]")
          as? [NSNumber])?.map(\.doubleValue) ?? []
      }
    }
    let state = try playing("video.clip")
    #expect(eventually(60) { (state().first ?? 0) > 0 }, "\(state())")
    #expect(eventually(60) { (state().last ?? 0) > 0.2 }, "\(state())")
    #expect(state().first == 360, "upright: \(state())")
    try browser.screenshot("video-viewer")
    try browser.resize(390, 844)
    try browser.screenshot("video-viewer-phone")
    try browser.resize(1280, 1000)

    // The motion photo's LIVE: its HEVC motion through the playback version, playing.
    _ = try browser.run("history.back()")
    #expect(eventually(30) { !browser.viewerOpen })
    try browser.click(css: ".cell[data-id='\(motion.rawValue)'] a")
    #expect(eventually(30) { browser.viewerOpen })
    let liveSource = try browser.run("return document.querySelector('video.live').src") as? String
    #expect(liveSource?.contains("/playback?") == true, "\(liveSource ?? "")")
    let live = try playing("video.live")
    #expect(eventually(60) { (live().first ?? 0) == 320 }, "\(live())")
    #expect(eventually(60) { (live().last ?? 0) > 0.2 }, "\(live())")

    // The editor: the trim's sliders, the poster grey in the preview, then Save.
    try browser.go(base + "/asset/\(id.rawValue)?edit=1")
    #expect(eventually(30) { (try? browser.findAll("#edit-trim-end").count) == 1 })
    _ = try browser.run(
      """
      const set = (key, value) => { const i = document.getElementById(key); i.value = value;
        i.dispatchEvent(new Event('input')); i.dispatchEvent(new Event('change')); };
      set('edit-trim-start', '0.5'); set('edit-trim-end', '1.5'); set('edit-noir-intensity', '1');
      """)
    try browser.screenshot("video-editor")
    try browser.click(css: "[data-act='save']")
    #expect(
      eventually(120) { (try? browser.text(browser.find(".editor .status"))) == "saved" },
      "\((try? browser.text(browser.find(".editor .status"))) ?? "")")
    let data = try #require(try Editor().adjustments(clip))
    #expect(data.graph.nodes.map(\.op) == ["trim", "noir"], "\(data.graph.nodes)")
    let probe = try VideoEditTests.probe(clip)
    let length = Double(probe.video?["duration"] as? String ?? "") ?? 0
    #expect(abs(length - 1.0) <= 1.0 / 30 + 1e-6, "\(length)")
    let frame = try VideoEditTests.frames(clip, at: [0.5], in: folder)[0]
    #expect(VideoEditTests.colourfulness(frame.pixels) < 2)

    try browser.click(css: "[data-act='revert']")
    #expect(eventually(60) { (try? ContentHash.of(file: clip)) == original })

    // At a phone's width: the trim's sliders where a thumb reaches them.
    try browser.resize(390, 844)
    try browser.go(base + "/asset/\(id.rawValue)?edit=1")
    #expect(eventually(30) { (try? browser.findAll("#edit-trim-end").count) == 1 })
    _ = try browser.run("document.getElementById('edit-trim-start').scrollIntoView()")
    try browser.screenshot("video-editor-phone")
  }

  @Test(
    "every tool: rotate, flip, a crop by its handles, straighten, three sliders, Auto, save, revert; keyboard and phone width"
  )
  func editorTools() throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let id = try served.ids()[0]
    let path = served.library.path(of: try served.library.asset(id))
    let original = try ContentHash.of(file: path)
    let (server, browser, base) = try Browser.loggedIn(to: served)
    defer { withExtendedLifetime(server) {} }
    try browser.go(base + "/asset/\(id.rawValue)?edit=1")
    #expect(eventually(30) { (try? browser.findAll("#edit-tone-exposure").count) == 1 })
    // Every group as Photos has it, each with its reset.
    let groups =
      try browser.run(
        "return Array.from(document.querySelectorAll('.editor .group h3')).map((h) => h.textContent)"
      )
      as? [String]
    #expect(
      groups == [
        "Crop & straighten", "Light", "Color", "Black & White", "Curves", "Color ranges", "Detail",
        "Vignette",
      ])
    #expect(try browser.findAll(".editor .group .reset").count == 8)
    try browser.screenshot("editor-desktop")

    // A photo's first preview, then one that changes with each tool.
    let previews = { () -> String in
      (try? browser.run("return document.querySelector('.photo').src") as? String) ?? ""
    }
    let first = previews()
    try browser.click(css: "[data-geometry='right']")
    #expect(eventually(30) { previews().hasPrefix("blob:") && previews() != first })
    try browser.click(css: "[data-geometry='flip-h']")

    // The crop: its frame over the photo; the south-east handle dragged in by a quarter.
    try browser.click(css: "[data-geometry='crop']")
    #expect(eventually { (try? browser.attribute(browser.find(".crop-frame"), "hidden")) == nil })
    let frame = { () -> [Double] in
      let rect = try? browser.run(
        "const r = document.querySelector('.crop-frame').getBoundingClientRect(); return [r.width, r.height]"
      )
      return (rect as? [NSNumber])?.map(\.doubleValue) ?? []
    }
    let before = frame()
    try browser.drag(
      try browser.find(".crop-frame .handle.se"), dx: -Int(before[0] / 4), dy: -Int(before[1] / 4))
    let after = frame()
    #expect(after.count == 2 && abs(after[0] - before[0] * 0.75) < 6, "\(before) -> \(after)")
    try browser.screenshot("editor-crop")
    // The keyboard moves the frame: two steps right.
    try browser.click(css: ".crop-frame")
    try browser.press("\u{E014}")
    try browser.press("\u{E014}")
    try browser.press("\u{E007}")  // Enter: done

    // Straighten, and three sliders: exposure by the keyboard, vibrance and sharpness set.
    _ = try browser.run(
      """
      const set = (id, value) => { const i = document.getElementById(id); i.value = value;
        i.dispatchEvent(new Event('input', { bubbles: true })); };
      set('edit-angle', '3'); set('edit-vibrance-amount', '0.4'); set('edit-sharpen-amount', '0.8');
      """)
    try browser.click(css: "#edit-tone-exposure")
    _ = try browser.run("document.getElementById('edit-tone-exposure').value = '0'")
    for _ in 0..<6 { try browser.press("\u{E014}") }  // ArrowRight: six steps of 0.05
    #expect(
      eventually {
        (try? browser.run("return document.getElementById('edit-tone-exposure').value") as? String)
          == "0.3"
      })

    // A slider's own reset: shown once it is moved, with its value beside it and the track
    // filled from its rest (the middle) to the value; a press puts it back and hides it.
    let texture = """
      const i = document.getElementById('edit-texture-amount');
      return [i.value, i.nextElementSibling.value, String(i.nextElementSibling.nextElementSibling.classList.contains('moved')),
        i.style.getPropertyValue('--from'), i.style.getPropertyValue('--to')];
      """
    #expect(try browser.run(texture) as? [String] == ["0", "0", "false", "50%", "50%"])
    _ = try browser.run(
      """
      const i = document.getElementById('edit-texture-amount'); i.value = '0.5';
      i.dispatchEvent(new Event('input', { bubbles: true }));
      """)
    #expect(try browser.run(texture) as? [String] == ["0.5", "0.5", "true", "50%", "75%"])
    try browser.click(css: "[aria-label='Reset Texture']")
    #expect(try browser.run(texture) as? [String] == ["0", "0", "false", "50%", "50%"])

    // Auto: the values it chose shown in the sliders, with the ones set by hand kept.
    try browser.autoThenSave()
    let saved = try #require(try served.library.editHistory(id).versions.last)
    let ops = saved.graph.nodes.map(\.op)
    #expect(Array(ops.prefix(3)) == ["rotate", "flip", "crop"], "\(ops)")
    #expect(ops.contains("vibrance") && ops.contains("sharpen") && ops.contains("tone"))
    let crop = try #require(saved.graph.nodes.first { $0.op == "crop" })
    #expect(crop.params["angle"] == .number(3))
    guard case .number(let width)? = crop.params["width"], case .number(let x)? = crop.params["x"]
    else {
      Issue.record("a crop rectangle: \(crop.params)")
      return
    }
    #expect(abs(width - 0.75) < 0.03 && abs(x - 0.02) < 0.011, "\(crop.params)")
    #expect(try ContentHash.of(file: path) != original)
    // The caption says the saved file's size without a reload (it said the original's).
    let asset = try served.library.asset(id)
    let size = "\(asset.displayWidth)×\(asset.displayHeight)"
    #expect(eventually(30) { (try? browser.text(browser.find("figcaption .size"))) == size })
    #expect(size != "600×400", "the crop changed the size")
    try browser.screenshot("editor-saved")

    // At a phone's width the panel goes under the photo, its controls as large as a finger.
    try browser.resize(390, 844)
    try browser.go(base + "/asset/\(id.rawValue)?edit=1")
    #expect(eventually(30) { (try? browser.findAll("#edit-tone-exposure").count) == 1 })
    let small =
      try browser.run(
        """
        return Array.from(document.querySelectorAll('.editor button, .editor input[type=range]'))
          .filter((b) => b.offsetParent !== null).map((b) => b.getBoundingClientRect().height)
          .filter((h) => h < 44).length
        """) as? Int
    #expect(small == 0)
    try browser.screenshot("editor-phone")

    // The edit saved as a preset: the album's batch menu offers it after the built-in ones.
    try served.library.savePreset("my-look", graph: saved.graph)
    try browser.go(base + "/album?ref=smart:all")
    let options =
      try browser.run(
        "return Array.from(document.querySelectorAll('#preset option')).map((o) => o.value)")
      as? [String]
    #expect(options == Presets.names + ["my-look"], "\(options ?? [])")
    try browser.screenshot("album-phone")
    try browser.go(base + "/asset/\(id.rawValue)?edit=1")
    #expect(eventually(30) { (try? browser.findAll("#edit-tone-exposure").count) == 1 })

    try browser.click(css: "[data-act='revert']")
    #expect(eventually(60) { (try? browser.text(browser.find(".editor .status"))) == "reverted" })
    #expect(try ContentHash.of(file: path) == original)
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
  }

  @Test(
    "a photo of an encrypted space opens from the space's grid in the same editor, over the space's routes: a preview grey for Black & White, a turn, Auto, save (the history says v1), revert (the original again); photos added from the space's page, one refused with its reason; phone width too"
  )
  func spaceEditor() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let spaces = try Fixture.temporaryFolder()
    let dir = spaces.file("Spaces")
    let space = try Space.create(at: dir, password: pw("beta"), kdf: testKDF)
    _ = try space.add(file: Fixture.sample("gps.jpg"))
    let server = try ServeProcess(served.root, arguments: ["--rate-limit", "0", "--spaces", dir])
    let (browser, base) = try Browser.loggedIn(to: server)
    try browser.go(base + "/space")
    try browser.type(try browser.find("#password"), "beta")
    try browser.click(css: "form[action='/space/unlock'] button[type=submit]")
    #expect(eventually(30) { (try? browser.findAll(".grid .cell a").count) == 1 })
    try browser.screenshot("space-desktop")
    try browser.click(css: ".grid .cell a")
    #expect(eventually { browser.url.hasPrefix(base + "/space/asset/") })
    try browser.click(css: ".open-editor")
    #expect(eventually(30) { (try? browser.findAll("#edit-noir-intensity").count) == 1 })
    // The colour a sixth of the way into the photo shown (the sample's sky), as decoded by
    // a canvas once loaded; nil before.
    let colour = { () -> [Double]? in
      let value = try? browser.run(
        """
        const img = document.querySelector('.photo');
        if (!img.complete || img.naturalWidth === 0) return null;
        const canvas = document.createElement('canvas');
        canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
        const context = canvas.getContext('2d');
        context.drawImage(img, 0, 0);
        const d = context.getImageData(img.naturalWidth / 6, img.naturalHeight / 6, 1, 1).data;
        return [img.src, d[0], d[1], d[2]];
        """)
      guard let parts = value as? [Any], parts.count == 4 else { return nil }
      return parts.dropFirst().compactMap { ($0 as? NSNumber)?.doubleValue }
    }
    let source = {
      (try? browser.run("return document.querySelector('.photo').src") as? String) ?? ""
    }
    #expect(eventually(30) { colour().map { !isGrey($0) } == true }, "the photo in colour first")
    _ = try browser.run(
      """
      const i = document.getElementById('edit-noir-intensity'); i.value = '1';
      i.dispatchEvent(new Event('input', { bubbles: true }));
      """)
    #expect(eventually(30) { source().hasPrefix("blob:") && colour().map(isGrey) == true })
    let caption = { (try? browser.text(browser.find("figure figcaption .size"))) ?? "" }
    let upright = caption()
    let sides = upright.split(separator: "×")
    #expect(sides.count == 2 && sides[0] != sides[1], "\(upright)")
    try browser.click(css: "[data-geometry='right']")
    try browser.screenshot("space-editor-desktop")
    try browser.autoThenSave()
    // The saved photo from the space's own address, grey; the history as the space keeps it.
    #expect(
      eventually(30) {
        source().contains("/api/space/assets/") && colour().map(isGrey) == true
      }, "\(source())")
    let versions = {
      (try? browser.run(
        "return Array.from(document.querySelectorAll('.history button')).map((b) => b.textContent)"
      )) as? [String] ?? []
    }
    #expect(eventually(30) { versions().count == 2 }, "\(versions())")
    #expect(versions().first == "Original")
    #expect(versions().last?.hasPrefix("v1: ") == true && versions().last?.contains("noir") == true)
    #expect(versions().last?.hasSuffix(" (current)") == true, "\(versions())")
    // The caption says the turned photo's size, as the space's row does now.
    let turnedSize = sides.reversed().joined(separator: "×")
    #expect(eventually(30) { caption() == turnedSize }, "\(caption())")

    try browser.resize(390, 844)
    try browser.screenshot("space-editor-phone")
    try browser.click(css: "[data-act='revert']")
    #expect(eventually(60) { (try? browser.text(browser.find(".editor .status"))) == "reverted" })
    #expect(eventually(30) { versions() == ["Original (current)"] }, "\(versions())")
    #expect(
      eventually(30) {
        source().contains("/api/space/assets/") && colour().map { !isGrey($0) } == true
      }, "the original's colour again")
    #expect(eventually(30) { caption() == upright }, "\(caption())")
    // Photos added from the space's page: one refused (its reason stays, with a way to see
    // the rest), then one alone (the page shows it at once).
    try browser.go(base + "/space")
    let notPhoto = try spaces.write("notes.jpg", Array("not a photo\n".utf8))
    let cells = { (try? browser.findAll(".grid .cell").count) ?? -1 }
    let picked = notPhoto + "\n" + Fixture.sample("orientation-6.jpg")
    try browser.type(try browser.find("#files"), picked)
    let lines = {
      (try? browser.run(
        "return Array.from(document.querySelectorAll('.uploads li')).map((l) => l.className + ' ' + l.querySelector('span').textContent)"
      )) as? [String] ?? []
    }
    #expect(eventually(60) { lines().count == 2 && lines().allSatisfy { !$0.hasPrefix(" ") } })
    #expect(
      lines() == [
        "failed notes.jpg: is not a photo or video Darkroom reads (not an image in any format Darkroom reads)",
        "ok orientation-6.jpg: added",
      ])
    #expect(try browser.attribute(try browser.find(".upload .hint"), "hidden") == nil)
    try browser.screenshot("space-upload-refused")
    try browser.click(css: ".upload .hint a")
    #expect(eventually(30) { cells() == 2 })
    try browser.type(try browser.find("#files"), Fixture.sample("orientation-3.jpg"))
    #expect(eventually(60) { cells() == 3 })
    try browser.screenshot("space-phone")
    // (The refused upload's 422 is the browser's one complaint.)
    let complaints = try browser.consoleErrors()
    #expect(complaints.count == 1 && complaints[0].contains("/api/space/uploads?name=notes.jpg"))
    #expect(complaints.first?.contains("422") == true, "\(complaints)")
    withExtendedLifetime(server) {}
  }

  @Test(
    "filters the panel has no control for stay where they were: a warp before the panel's (its crop and turns are of the warp's result), grain after them"
  )
  func uncontrolledKeepTheirPlace() throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let id = try served.ids()[0]
    let warp = "warp x1=0.05 y1=0 x2=0.95 y2=0.02 x3=1 y3=1 x4=0 y4=0.98"
    try served.library.editBlocking(
      id, with: FilterGraph.parse(specs: [warp, "tone exposure=0.2", "grain amount=0.2"]))
    let (server, browser, base) = try Browser.loggedIn(to: served)
    defer { withExtendedLifetime(server) {} }
    try browser.go(base + "/asset/\(id.rawValue)?edit=1")
    #expect(eventually(30) { (try? browser.findAll("#edit-tone-contrast").count) == 1 })
    _ = try browser.run(
      """
      const i = document.getElementById('edit-tone-contrast'); i.value = '0.3';
      i.dispatchEvent(new Event('input', { bubbles: true }));
      """)
    try browser.click(css: "[data-act='save']")
    #expect(eventually(60) { (try? browser.text(browser.find(".editor .status"))) == "saved" })
    let saved = try #require(try served.library.editHistory(id).versions.last)
    #expect(saved.graph.nodes.map(\.op) == ["warp", "tone", "grain"], "\(saved.graph.nodes)")
    #expect(saved.graph.nodes.first?.text == (try FilterGraph.parse(spec: warp)).nodes.first?.text)
    #expect(saved.graph.nodes[1].params["contrast"] == .number(0.3))
    #expect(try browser.consoleErrors() == [])
  }

  @Test(
    "curves and colour ranges: a point added on the curve by the mouse and moved by the keyboard, a range's saturation and another's luminance, saved as curve and hsl; the panel shows them again after a reload"
  )
  func curvesAndRanges() throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let id = try served.ids()[0]
    let (server, browser, base) = try Browser.loggedIn(to: served)
    defer { withExtendedLifetime(server) {} }
    try browser.go(base + "/asset/\(id.rawValue)?edit=1")
    #expect(eventually(30) { (try? browser.findAll("#edit-hsl-saturation").count) == 1 })
    let value = { (id: String) in
      (try? browser.run("return document.getElementById('\(id)').value") as? String) ?? ""
    }
    let set = { (id: String, to: String) throws in
      _ = try browser.run(
        """
        const i = document.getElementById('\(id)'); i.value = '\(to)';
        i.dispatchEvent(new Event('input', { bubbles: true }));
        """)
    }
    // Blue's saturation down; orange's sliders are its own; blue's come back.
    try browser.click(css: "[data-range='blue']")
    try set("edit-hsl-saturation", "-0.5")
    try browser.click(css: "[data-range='orange']")
    #expect(value("edit-hsl-saturation") == "0")
    try set("edit-hsl-luminance", "0.3")
    try browser.click(css: "[data-range='blue']")
    #expect(value("edit-hsl-saturation") == "-0.5" && value("edit-hsl-luminance") == "0")
    #expect(
      try browser.run(
        "return [...document.querySelectorAll('.swatches .changed')].map((b) => b.dataset.range)")
        as? [String] == ["orange", "blue"])

    // The curve: pressed at its middle (on the straight line), dragged up a fifth of the
    // square, then two steps up by the keyboard (the new point has the focus).
    let square = try browser.find("svg.curve")
    let height =
      (try browser.run("return document.querySelector('svg.curve').getBoundingClientRect().height")
      as? NSNumber)?.doubleValue ?? 0
    try browser.drag(square, dx: 0, dy: -Int(height * 0.2))
    #expect(try browser.findAll("svg.curve circle.point").count == 3)
    try browser.press("\u{E013}")  // ArrowUp
    try browser.press("\u{E013}")
    try browser.screenshot("editor-curves")
    try browser.click(css: "[data-act='save']")
    #expect(eventually(60) { (try? browser.text(browser.find(".editor .status"))) == "saved" })
    let saved = try #require(try served.library.editHistory(id).versions.last)
    let hsl = try #require(saved.graph.nodes.first { $0.op == "hsl" })
    #expect(hsl.params["blue-saturation"] == .number(-0.5))
    #expect(hsl.params["orange-luminance"] == .number(0.3))
    let curve = try #require(saved.graph.nodes.first { $0.op == "curve" })
    guard case .text(let text)? = curve.params["rgb"] else {
      Issue.record("a curve of every channel: \(curve.params)")
      return
    }
    let points = text.split(separator: ",").map {
      $0.split(separator: ":").compactMap { Double($0) }
    }
    // The drag: 0.2 of the square's 108 units is 0.216 up from 0.5, plus 0.02.
    #expect(points.count == 3 && points[0] == [0, 0] && points[2] == [1, 1], "\(text)")
    #expect(points.count == 3 && abs(points[1][0] - 0.5) < 0.02, "\(text)")
    #expect(points.count == 3 && abs(points[1][1] - 0.736) < 0.03, "\(text)")
    let ops = saved.graph.nodes.map(\.op)
    #expect(ops.firstIndex(of: "curve")! < ops.firstIndex(of: "hsl")!, "\(ops)")

    // Reloaded: the panel shows the version it holds.
    try browser.go(base + "/asset/\(id.rawValue)?edit=1")
    #expect(eventually(30) { (try? browser.findAll("svg.curve circle.point").count) == 3 })
    try browser.click(css: "[data-range='blue']")
    #expect(value("edit-hsl-saturation") == "-0.5")
    try browser.resize(390, 844)
    _ = try browser.run("document.querySelector('svg.curve').scrollIntoView()")
    try browser.screenshot("editor-curves-phone")
    let consoleErrors = try browser.consoleErrors()
    #expect(consoleErrors == [])
  }
}
