import Foundation
import Testing

@testable import Darkroom

/// The editor's filters as adjustment data (issue 54): every adjustment replays to the same
/// bytes, goes out to Lightroom's settings and back, reverts exactly; Auto writes explicit
/// values that replay exactly; older documents keep their bytes.
@Suite("Editor filters: adjustment data, Lightroom, Auto", .timeLimit(.minutes(10)), .offThePool)
struct EditorDocumentTests {
  let editor = Editor()

  /// Every adjustment of the panel, each off its default.
  static let panel = [
    "balance temperature=5200 tint=0.1", "tone exposure=0.3 contrast=0.1",
    "light brilliance=0.3 whites=0.1 blacks=-0.05", "curve rgb=0:0,0.3:0.25,0.7:0.78,1:1",
    "vibrance 0.25", "hsl blue-saturation=-0.3 orange-luminance=0.2 green-hue=0.1",
    "definition 0.3", "texture 0.2", "denoise luminance=0.2 colour=0.3",
    "sharpen amount=0.8 radius=1.2 detail=0.4", "vignette amount=-0.3 midpoint=0.4",
    "grain amount=0.2 size=1.5", "perspective vertical=0.1",
  ]

  @Test(
    "the whole panel: edit, then its adjustment data replayed on a copy gives the same bytes; revert is exact"
  )
  func panelReplays() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    let copy = try folder.write("copy.jpg", Fixture.bytes(paths[0]))
    let original = try ContentHash.of(file: paths[0])
    let edit = try editor.edit(paths[0], with: FilterGraph.parse(specs: Self.panel))
    #expect(edit.adjustment.graph.documentVersion == 2)
    #expect(
      String(decoding: edit.adjustment.canonicalJSON, as: UTF8.self).contains("\"formatVersion\":2")
    )
    // Through the document's bytes, as `edit --adjustment` reads them.
    let replayed = try AdjustmentData.decode(json: edit.adjustment.canonicalJSON, source: "data")
    _ = try editor.edit(copy, with: replayed.graph, mode: .replace)
    // The files differ in their embedded adjustment data (name, time); the pixels not at all.
    #expect(try pixels(copy).pixels() == pixels(paths[0]).pixels())
    #expect(try ContentHash.of(file: paths[0]) != original)
    #expect(try editor.revert(paths[0]) == .restoredOriginal(sha256: original.hex))
    #expect(try ContentHash.of(file: paths[0]) == original)
  }

  @Test(
    "every filter at its widest on a JPEG read as a stream (apply) and on images of 1 to 9 pixels: each renders, none fails"
  )
  func extremes() throws {
    let folder = try TemporaryFolder()
    var photos = [try folder.write("gps.jpg", Fixture.bytes(Fixture.sample("gps.jpg")))]
    for (w, h) in [(1, 1), (2, 3), (7, 1), (1, 9)] {
      let image = try VipsImage.fromPixels(
        [UInt8](repeating: 120, count: w * h * 3), width: w, height: h, bands: 3)
      photos.append(try folder.write("t\(w)x\(h).jpg", image.encode(suffix: ".jpg")))
    }
    let widest = [
      "balance 2000 tint=-1", "light brilliance=1 whites=1 blacks=-1", "vibrance 1",
      "curve rgb=0:1,1:0", "hsl red-hue=1 blue-saturation=1", "definition 1", "texture -1",
      "sharpen amount=3 radius=5 detail=1", "denoise luminance=1 colour=1 radius=10",
      "vignette -1 roundness=1", "grain 1 size=20", "perspective vertical=1 horizontal=-1",
      "auto",
    ]
    for spec in widest {
      let run = try CLI.run(
        ["apply", "--filter", spec, "--progress", "none", "--force", "-o", folder.file("out")]
          + photos)
      #expect(run.status == 0, "\(spec): \(run.stderr)")
    }
    for (name, size) in [("gps.jpg", (600, 400)), ("t2x3.jpg", (2, 3)), ("t1x9.jpg", (1, 9))] {
      let out = try pixels(folder.file("out/" + name))
      #expect((out.width, out.height) == size, "\(name)")
    }
  }

  @Test("adjustment data of version 1's filters keeps its bytes, and its render")
  func versionOneKeepsItsBytes() throws {
    let json =
      #"{"format":"org.darkroom.filter-graph","nodes":[{"op":"tone","params":{"brightness":0,"contrast":0.2,"exposure":0.5,"highlights":0,"saturation":0,"shadows":0,"warmth":0}},{"op":"crop","params":{"angle":0,"aspect":"4:5","unit":"fraction"}}],"version":1}"#
    let graph = try FilterGraph.decode(json: Array(json.utf8), source: "old.json")
    #expect(graph.canonicalJSON == Array(json.utf8))
    #expect(graph.documentVersion == 1)
    let newer = try FilterGraph.parse(specs: ["tone exposure=0.5", "vibrance 0.2"])
    #expect(String(decoding: newer.canonicalJSON, as: UTF8.self).hasSuffix("\"version\":2}"))
  }

  @Test("a value out of range is refused with one line naming it, and nothing is written")
  func outOfRangeWritesNothing() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    let before = try ContentHash.of(file: paths[0])
    let result = try CLI.run(["edit", paths[0], "--filter", "vignette amount=-3"])
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "darkroom: Expected number between -1 and 1 for vignette.amount but received -3\n")
    #expect(try ContentHash.of(file: paths[0]) == before)
    #expect(!FileManager.default.fileExists(atPath: folder.file(".darkroom")))
  }

  @Test("a preview scales radii in pixels with the image; proportions stay")
  func previewScalesPixels() throws {
    let graph = try FilterGraph.parse(specs: ["sharpen radius=2", "grain size=4", "texture 0.5"])
    let half = try graph.scalingPixels(by: 0.5)
    #expect(half.nodes[0].params["radius"] == .number(1))
    #expect(half.nodes[1].params["size"] == .number(2))
    #expect(half.nodes[2] == graph.nodes[2])
    let tiny = try graph.scalingPixels(by: 0.01)
    #expect(tiny.nodes[0].params["radius"] == .number(0.3), "kept in its range")
  }

  @Test(
    "Lightroom's panel read into the filters, and adjustments --xmp writes it back for exiftool")
  func lightroomRoundTrip() throws {
    let values = [
      "Whites2012": "+40", "Blacks2012": "-20", "Vibrance": "+30", "Clarity2012": "+25",
      "Texture": "+15", "Sharpness": "40", "SharpenRadius": "+1.2", "SharpenDetail": "30",
      "LuminanceSmoothing": "20", "ColorNoiseReduction": "25", "PostCropVignetteAmount": "-35",
      "PostCropVignetteMidpoint": "45", "GrainAmount": "10", "HueAdjustmentBlue": "-10",
      "SaturationAdjustmentBlue": "-40", "IncrementalTemperature": "+20", "IncrementalTint": "-5",
      "PerspectiveVertical": "-12", "ToneCurvePV2012": "0, 0;64, 56;192, 200;255, 255",
      "Dehaze": "+10",
    ]
    let settings = ForeignSettings(
      program: "lightroom", source: "a.xmp", values: values, instances: [])
    let edit = try #require(ForeignEdit.lightroom(settings, width: 600, height: 400))
    #expect(
      edit.graph.nodes.map(\.text) == [
        "perspective vertical=0.12", "balance temperature=7151 tint=-0.05",
        "light whites=0.2 blacks=-0.1", "curve rgb=0:0,0.25098:0.219608,0.752941:0.784314,1:1",
        "vibrance", "hsl blue-hue=-0.1 blue-saturation=-0.4", "definition amount=0.25",
        "texture amount=0.15", "denoise luminance=0.2 colour=0.25",
        "sharpen amount=0.8 radius=1.2 detail=0.3", "vignette amount=-0.35 midpoint=0.45",
        "grain amount=0.1",
      ])
    #expect(edit.ignored == ["Dehaze"])
    #expect(!edit.approximated.contains("Dehaze") && edit.approximated.contains("ToneCurvePV2012"))

    // Written back: exiftool reads Camera Raw's values as Lightroom would.
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    _ = try editor.edit(paths[0], with: edit.graph)
    let sidecar = try #require(try Library.lightroomSidecar(ofFile: paths[0]))
    let xmp = try folder.write("out.xmp", sidecar)
    let exiftool = Process()
    exiftool.executableURL = URL(fileURLWithPath: "/usr/bin/exiftool")
    exiftool.arguments = ["-j", "-n", "-XMP-crs:all", xmp]
    let pipe = Pipe()
    exiftool.standardOutput = pipe
    try exiftool.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    exiftool.waitUntilExit()
    let read = try #require(
      (try JSONSerialization.jsonObject(with: output) as? [[String: Any]])?.first)
    // Camera Raw writes a sign ("+40"), which exiftool keeps as text.
    func value(_ name: String) -> Double? {
      (read[name] as? Double) ?? (read[name] as? String).flatMap { Double($0) }
    }
    #expect(value("Whites2012") == 40)
    #expect(value("Blacks2012") == -20)
    #expect(value("Clarity2012") == 25)
    #expect(value("Sharpness") == 40)
    #expect(value("SharpenRadius") == 1.2)
    #expect(value("SaturationAdjustmentBlue") == -40)
    #expect(value("IncrementalTemperature") == 20)
    #expect(value("PostCropVignetteAmount") == -35)
    #expect(value("PerspectiveVertical") == -12)
    #expect(read["ToneCurvePV2012"] as? [String] == ["0, 0", "64, 56", "192, 200", "255, 255"])
    // And back into Darkroom whole: the same graph, the same bytes.
    let again = try ForeignEdit.graph(xmp: sidecar, source: "out.xmp")
    #expect(again == edit.graph)
  }
}

/// Auto on versions of a scene made to need it (issue 54's measures).
@Suite("Auto", .timeLimit(.minutes(10)), .offThePool)
struct AutoTests {
  /// A daylight scene: sky, foliage, skin, shadow and a white wall (its largest neutral
  /// surface, which Auto balances by), with soft gradients.
  static func scene(_ width: Int = 240, _ height: Int = 160) -> [[Double]] {
    var linear: [[Double]] = []
    for y in 0..<height {
      for x in 0..<width {
        let (u, v) = (Double(x) / Double(width), Double(y) / Double(height))
        var c: [Double]
        if v < 0.25 {
          c = [0.09 + 0.04 * u, 0.16 + 0.04 * u, 0.4]  // clear sky
        } else if u < 0.3 {
          c = [0.05 + 0.08 * v, 0.1 + 0.1 * v, 0.03]  // foliage
        } else if u < 0.45 {
          c = [0.5, 0.3, 0.22].map { $0 * (0.6 + 0.5 * v) }  // skin
        } else if u < 0.65 {
          c = [0.002, 0.002, 0.0022].map { $0 * (1 + 4 * v) }  // shadow
        } else {
          c = [0.76, 0.76, 0.74].map { $0 * (0.75 + 0.25 * v) }  // white wall
        }
        linear.append(c)
      }
    }
    return linear
  }

  static func bytes(_ linear: [[Double]], gains: [Double] = [1, 1, 1], exposure: Double = 1)
    -> [UInt8]
  {
    linear.flatMap { c in
      (0..<3).map {
        UInt8((ColourMath.encode(min(1, c[$0] * gains[$0] * exposure)) * 255).rounded())
      }
    }
  }

  static func run(_ nodes: [FilterNode], on rgb: [UInt8]) throws -> [UInt8] {
    let image = try VipsImage.fromPixels(rgb, width: 240, height: 160, bands: 3)
    return try FilterGraph(nodes: nodes).apply(to: image).pixels()
  }

  /// The 2nd to 98th percentile of luminance, as a fraction of the range.
  static func span(_ rgb: [UInt8]) -> Double {
    let l = stride(from: 0, to: rgb.count, by: 3).map {
      0.2126 * Double(rgb[$0]) + 0.7152 * Double(rgb[$0 + 1]) + 0.0722 * Double(rgb[$0 + 2])
    }.sorted()
    return (l[Int(Double(l.count - 1) * 0.98)] - l[Int(Double(l.count - 1) * 0.02)]) / 255
  }

  /// The cast on the scene's white wall: the distance of its average colour's a*, b* from
  /// neutral (a cast of the light moves every surface; the wall shows it alone).
  static func cast(_ rgb: [UInt8], width: Int = 240) -> Double {
    var mean = [0.0, 0.0, 0.0]
    var count = 0
    for i in stride(from: 0, to: rgb.count, by: 3) {
      let (x, y) = ((i / 3) % width, (i / 3) / width)
      guard Double(x) >= 0.65 * Double(width), Double(y) >= 0.25 * 160 else { continue }
      for c in 0..<3 { mean[c] += ColourMath.decode(Double(rgb[i + c]) / 255) }
      count += 1
    }
    let encoded = mean.map { ColourMath.encode($0 / Double(count)) * 255 }
    let lab = ColourMath.lab(srgb: encoded)
    return (lab[1] * lab[1] + lab[2] * lab[2]).squareRoot()
  }

  static func meanDeltaE(_ a: [UInt8], _ b: [UInt8]) -> Double {
    var sum = 0.0
    for i in stride(from: 0, to: a.count, by: 3) {
      let p = ColourMath.lab(srgb: a[i..<i + 3].map(Double.init))
      let q = ColourMath.lab(srgb: b[i..<i + 3].map(Double.init))
      sum += zip(p, q).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot()
    }
    return sum / Double(a.count / 3)
  }

  @Test("under- and over-exposed: the 2nd-98th percentiles of luminance span at least 80%")
  func exposure() throws {
    let scene = Self.scene()
    for exposure in [0.1, 4] {
      let rgb = Self.bytes(scene, exposure: exposure)
      // Over-exposed, the clipped highlights keep the span wide; the midtones are what is off.
      if exposure < 1 { #expect(Self.span(rgb) < 0.8, "it needs it: \(Self.span(rgb))") }
      let nodes = try AutoFilter.choose(rgb: rgb, strength: 1)
      let fixed = try Self.run(nodes, on: rgb)
      #expect(Self.span(fixed) >= 0.8, "x\(exposure): \(nodes.map(\.text)) -> \(Self.span(fixed))")
      print(
        "auto, exposure x\(exposure): span \(Self.span(rgb)) -> \(Self.span(fixed)): \(nodes.map(\.text))"
      )
    }
  }

  @Test("a colour cast falls by at least 70%, tungsten's too (the warm search: 1.45 and 1.55)")
  func colourCast() throws {
    let scene = Self.scene()
    #expect(Self.cast(Self.bytes(scene)) < 2, "the wall itself is near neutral")
    let casts = [
      [1.3, 1.0, 0.65], [0.75, 0.95, 1.3], [1.0, 1.25, 0.9], [1.15, 0.9, 1.1],
      [1.45, 1.0, 0.55], [1.55, 1.0, 0.5],
    ]
    for gains in casts {
      let rgb = Self.bytes(scene, gains: gains)
      let before = Self.cast(rgb)
      let nodes = try AutoFilter.choose(rgb: rgb, strength: 1)
      let after = Self.cast(try Self.run(nodes, on: rgb))
      #expect(after <= 0.3 * before, "\(gains): \(nodes.map(\.text)) cast \(before) -> \(after)")
      print("auto, gains \(gains): cast \(before) -> \(after): \(nodes.map(\.text))")
    }
  }

  @Test("a photo that needs nothing moves by a trifle at most (mean dE under 2)")
  func needsNothing() throws {
    let rgb = Self.bytes(Self.scene())
    let nodes = try AutoFilter.choose(rgb: rgb, strength: 1)
    let after = try Self.run(nodes, on: rgb)
    #expect(Self.meanDeltaE(rgb, after) < 2, "\(nodes.map(\.text))")
    print(
      "auto, a scene that needs nothing: mean dE \(Self.meanDeltaE(rgb, after)): \(nodes.map(\.text))"
    )
  }

  @Test("a blue sky with white clouds keeps its blue: no balance, the sky's hue within 5 degrees")
  func blueSky() throws {
    // Grey world read this as a blue cast and chose 25,000 K (issue 54's real photos). The
    // tones may still be stretched (its span is under 80%); the colour is the sky's.
    var linear: [[Double]] = []
    var sky: [Int] = []
    for y in 0..<160 {
      for x in 0..<240 {
        let (u, v) = (Double(x) / 240, Double(y) / 160)
        let cloud = (u - 0.3) * (u - 0.3) / 0.02 + (v - 0.4) * (v - 0.4) / 0.04 < 1
        if !cloud { sky.append(linear.count) }
        linear.append(
          cloud
            ? [0.82, 0.83, 0.85].map { $0 * (0.85 + 0.15 * v) }
            : [0.04 + 0.05 * v, 0.12 + 0.1 * v, 0.5 + 0.1 * u])
      }
    }
    func hue(_ rgb: [UInt8]) -> Double {
      var mean = [0.0, 0.0, 0.0]
      for i in sky { for c in 0..<3 { mean[c] += ColourMath.decode(Double(rgb[3 * i + c]) / 255) } }
      let lab = ColourMath.lab(srgb: mean.map { ColourMath.encode($0 / Double(sky.count)) * 255 })
      return atan2(lab[2], lab[1]) * 180 / .pi
    }
    let rgb = Self.bytes(linear)
    let nodes = try AutoFilter.choose(rgb: rgb, strength: 1)
    #expect(!nodes.contains { $0.op == BalanceFilter.name }, "\(nodes.map(\.text))")
    let after = try Self.run(nodes, on: rgb)
    #expect(abs(hue(after) - hue(rgb)) < 5, "\(hue(rgb)) -> \(hue(after)): \(nodes.map(\.text))")
    print("auto, a blue sky: hue \(hue(rgb)) -> \(hue(after)): \(nodes.map(\.text))")
  }

  @Test("auto in an edit is stored as the values it chose, and replays to the same bytes")
  func autoIsExplicit() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    let copy = try folder.write("copy.jpg", Fixture.bytes(paths[0]))
    let edit = try Editor().edit(paths[0], with: FilterGraph.parse(specs: ["auto", "noir"]))
    #expect(!edit.adjustment.graph.nodes.contains { $0.op == "auto" })
    #expect(edit.adjustment.graph.nodes.last?.op == "noir")
    _ = try Editor().edit(copy, with: edit.adjustment.graph, mode: .replace)
    #expect(try pixels(copy).pixels() == pixels(paths[0]).pixels())
  }
}
