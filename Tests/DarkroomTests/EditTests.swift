import Foundation
import Testing

@testable import Darkroom

/// A folder with copies of samples, to edit in place.
func workspace(_ samples: String...) throws -> (TemporaryFolder, [String]) {
  let folder = try Fixture.temporaryFolder()
  let paths = try samples.map { try folder.write($0, Fixture.bytes(Fixture.sample($0))) }
  return (folder, paths)
}

func graph(_ specs: String...) throws -> FilterGraph {
  try FilterGraph.parse(specs: specs)
}

/// Decodes an image file's pixels.
func pixels(_ path: String) throws -> VipsImage {
  try VipsImage.open(path: path, sequential: false)
}

@Suite("Editing", .timeLimit(.minutes(10)), .offThePool)
struct EditTests {
  let editor = Editor()

  @Test("edit then revert gives back the original bytes; the original is stored by hash")
  func editRevert() throws {
    let (folder, paths) = try workspace("orientation-6.jpg")
    defer { withExtendedLifetime(folder) {} }
    let original = try ContentHash.of(file: paths[0])
    let result = try editor.edit(paths[0], with: graph("noir", "crop aspect=4:5"))
    #expect(try ContentHash.of(file: paths[0]) != original)
    #expect(result.adjustment.original.sha256 == original.hex)
    #expect(try ContentHash.of(file: paths[0]).hex == result.adjustment.result.sha256)
    #expect(
      FileManager.default.fileExists(atPath: folder.file(".darkroom/originals/\(original.hex)")))
    let edited = try AssetMetadata.read(path: paths[0])
    #expect((edited.width, edited.height) == (320, 400), "upright 600x400, then 4:5")
    #expect(edited.orientation == .valid(.up))
    #expect(edited.cameraModel == "Sample Scene", "metadata kept")

    #expect(try editor.revert(paths[0]) == .restoredOriginal(sha256: original.hex))
    #expect(try ContentHash.of(file: paths[0]) == original)
    #expect(try editor.revert(paths[0]) == .alreadyAtVersion(0))
    #expect(try ContentHash.of(file: paths[0]) == original)
  }

  @Test("re-edit renders from the original; revert --to 1 restores the first edit exactly")
  func versions() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    let first = try editor.edit(paths[0], with: graph("tone exposure=0.3"))
    let second = try editor.edit(paths[0], with: graph("crop 0 0 0.5 0.5"))
    #expect(second.adjustment.version == 2)
    #expect(second.adjustment.graph.nodes.map(\.op) == ["tone", "crop"])
    #expect(second.adjustment.original == first.adjustment.original, "still the same original")
    let history = try editor.history(paths[0])
    #expect(history.map(\.version) == [1, 2])
    #expect(
      try editor.revert(paths[0], to: 1)
        == .restoredVersion(1, sha256: first.adjustment.result.sha256))
    #expect(try ContentHash.of(file: paths[0]).hex == first.adjustment.result.sha256)
    let replaced = try editor.edit(paths[0], with: graph("noir"), mode: .replace)
    #expect(replaced.adjustment.graph.nodes.map(\.op) == ["noir"])
    try editor.revert(paths[0])
    #expect(try ContentHash.of(file: paths[0]).hex == first.adjustment.original.sha256)
  }

  @Test("revert works after the file is renamed and moved inside its library")
  func revertAfterMove() throws {
    let (folder, paths) = try workspace("orientation-3.jpg")
    defer { withExtendedLifetime(folder) {} }
    let original = try ContentHash.of(file: paths[0])
    try editor.edit(paths[0], with: graph("sepia"))
    try FileManager.default.createDirectory(
      atPath: folder.file("album/2024"), withIntermediateDirectories: true)
    let moved = folder.file("album/2024/renamed.jpg")
    try FileManager.default.moveItem(atPath: paths[0], toPath: moved)
    #expect(try editor.revert(moved) == .restoredOriginal(sha256: original.hex))
    #expect(try ContentHash.of(file: moved) == original)
  }

  @Test("a lost original is a clear error and the file is left as it is")
  func lostOriginal() throws {
    let (folder, paths) = try workspace("orientation-2.jpg")
    defer { withExtendedLifetime(folder) {} }
    let result = try editor.edit(paths[0], with: graph("noir"))
    try FileManager.default.removeItem(
      atPath: folder.file(".darkroom/originals/\(result.adjustment.original.sha256)"))
    let before = try ContentHash.of(file: paths[0])
    let error = #expect(throws: DarkroomError.self) { try editor.revert(paths[0]) }
    #expect(error?.message.contains("the library has lost this file's original") == true)
    #expect(try ContentHash.of(file: paths[0]) == before)
  }

  @Test("a file's edit lock excludes its own edits, in any thread or process, and no other file's")
  func editLocksAreByFile() throws {
    let folder = try Fixture.temporaryFolder()
    let store = Library(root: folder.url).store
    let file = folder.file("a.jpg")
    // A file that shared `file`'s lock file when edits' locks were striped over 256 files.
    let other = try SignalTests.sharingStripe(with: file, in: folder.path)
    #expect(try store.lockIsFree(for: file))
    try store.withLock(for: file) { () throws(DarkroomError) in
      // Another open of the lock file, as another thread or process makes, is refused...
      #expect(try !store.lockIsFree(for: file))
      #expect(try !store.lockIsFree(for: folder.path + "/./a.jpg"), "the same file, spelt so")
      // ...while a file whose lock once shared a stripe with it is free.
      #expect(try store.lockIsFree(for: folder.file(other)))
    }
    #expect(try store.lockIsFree(for: file), "released at the end")
  }

  @Test("noir makes R = G = B everywhere")
  func noirIsGrey() throws {
    let (folder, paths) = try workspace("alpha.png")
    defer { withExtendedLifetime(folder) {} }
    try editor.edit(paths[0], with: graph("noir"))
    let image = try pixels(paths[0])
    for (x, y) in [(60, 60), (539, 60), (60, 339), (539, 339), (270, 200), (300, 150)] {
      let p = try image.pixel(x: x, y: y)
      #expect(p[0] == p[1] && p[1] == p[2], "\(x),\(y): \(p)")
    }
    #expect(image.hasAlpha, "alpha kept")
    #expect(try image.pixel(x: 2, y: 2)[3] == 0)
  }

  @Test("planned pointwise steps (folded tables, grey band) give the same pixels as one by one")
  func pointwisePlanMatchesSteps() throws {
    let source = try VipsImage.open(path: Fixture.sample("alpha.png"), sequential: false).srgb()
    let g = try graph(
      "noir", "tone exposure=0.5 contrast=0.2", "crop 10 10 500 300 unit=px", "tone warmth=0.4")
    let planned = try g.apply(to: source)
    let luma = NoirFilter.luma
    let tone = try FilterNode("tone", ["exposure": .number(0.5), "contrast": .number(0.2)])
    let warm = try FilterNode("tone", ["warmth": .number(0.4)])
    let stepwise = try source.recombined(luma + luma + luma)
      .mapped(NoirFilter.curve(intensity: 1))
      .mapped(ToneFilter.table(FilterArguments(values: tone.params)))
      .cropped(left: 10, top: 10, width: 500, height: 300)
      .recombined(ToneFilter.matrix(FilterArguments(values: warm.params)))
    #expect(
      (planned.width, planned.height, planned.bands) == (
        stepwise.width, stepwise.height, stepwise.bands
      ))
    for (x, y) in [(0, 0), (50, 50), (250, 150), (499, 299), (300, 20), (100, 280)] {
      #expect(try planned.pixel(x: x, y: y) == stepwise.pixel(x: x, y: y), "\(x),\(y)")
    }
  }

  @Test("tone: all zero is the identity; +1 stop doubles linear light")
  func tone() throws {
    let (folder, paths) = try workspace("alpha.png")
    defer { withExtendedLifetime(folder) {} }
    let before = try pixels(Fixture.sample("alpha.png"))
    let points = [(60, 60), (60, 339), (300, 120), (300, 330), (200, 300)]
    // Pixels are read before the next edit replaces the file (libvips decodes lazily).
    try editor.edit(paths[0], with: graph("tone"))
    let identity = try pixels(paths[0])
    for (x, y) in points {
      let a = try before.pixel(x: x, y: y)
      let b = try identity.pixel(x: x, y: y)
      #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 1 }, "identity at \(x),\(y): \(a) vs \(b)")
    }
    try editor.edit(paths[0], with: graph("tone exposure=1"), mode: .replace)
    let brighter = try pixels(paths[0])
    func linear(_ v: Double) -> Double {
      let x = v / 255
      return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
    }
    var ratios: [Double] = []
    for (x, y) in points {
      let a = try before.pixel(x: x, y: y)
      let c = try brighter.pixel(x: x, y: y)
      for band in 0..<3 where a[band] >= 20 && linear(a[band]) * 2 < 0.95 {
        ratios.append(linear(c[band]) / linear(a[band]))
      }
    }
    #expect(ratios.count >= 5)
    #expect(ratios.allSatisfy { abs($0 - 2) < 0.12 }, "\(ratios)")
  }

  @Test("crop in pixels keeps exactly that rectangle: the red corner")
  func cropPixels() throws {
    let (folder, paths) = try workspace("alpha.png")
    defer { withExtendedLifetime(folder) {} }
    try editor.edit(paths[0], with: graph("crop 45 45 40 30 unit=px"))
    let image = try pixels(paths[0])
    #expect((image.width, image.height) == (40, 30))
    for (x, y) in [(0, 0), (39, 0), (0, 29), (39, 29)] {
      #expect(Array(try image.pixel(x: x, y: y).prefix(3)) == [220, 30, 30])
    }
  }

  @Test("rotate 90 turns clockwise; flip mirrors; straighten keeps the largest inner rectangle")
  func geometry() throws {
    let (folder, paths) = try workspace(
      "orientation-1.jpg", "orientation-4.jpg", "orientation-8.jpg")
    defer { withExtendedLifetime(folder) {} }
    try editor.edit(paths[0], with: graph("rotate 90"))
    let turned = try pixels(paths[0])
    #expect((turned.width, turned.height) == (400, 600))
    try expectColour(
      turned, x: 20, y: 20, [30, 60, 220], "rotate 90: bottom-left comes to top-left")
    try expectColour(
      turned, x: 379, y: 20, [220, 30, 30], "rotate 90: top-left comes to top-right")

    try editor.edit(paths[1], with: graph("flip horizontal"))
    let mirrored = try pixels(paths[1])
    try expectColour(mirrored, x: 20, y: 20, [30, 170, 60], "flip: top-right comes to top-left")

    try editor.edit(paths[2], with: graph("crop angle=10"))
    let straight = try pixels(paths[2])
    let inner = CropFilter.innerSize(width: 600, height: 400, degrees: 10)
    #expect(straight.width == Int(inner.width.rounded(.down)))
    #expect(straight.height == Int(inner.height.rounded(.down)))
    #expect(abs(Double(straight.width) / Double(straight.height) - 1.5) < 0.01)
  }

  @Test("the same original and adjustment data render to identical bytes")
  func deterministic() throws {
    let (folder, paths) = try workspace("orientation-5.jpg")
    defer { withExtendedLifetime(folder) {} }
    let result = try editor.edit(paths[0], with: graph("process", "crop aspect=1:1"))
    let original = try Fixture.bytes(Fixture.sample("orientation-5.jpg"))
    let metadata = try AssetMetadata.read(.data(original, name: "o"))
    let again = try Renderer().renderEdit(
      .data(original, name: "o"), metadata: metadata,
      recipe: result.adjustment.recipe(for: "o", original: metadata))
    let once = try Renderer().renderEdit(
      .data(original, name: "o"), metadata: metadata,
      recipe: result.adjustment.recipe(for: "o", original: metadata))
    #expect(again == once)
    #expect(ContentHash.of(bytes: again).hex == result.adjustment.result.sha256)
  }

  @Test("adjustment data: canonical JSON round-trips to the same bytes; newer versions are refused")
  func adjustmentData() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    let data = try editor.edit(
      paths[0], with: graph("tone exposure=0.5 contrast=0.2", "crop aspect=4:5")
    ).adjustment
    let json = data.canonicalJSON
    let decoded = try AdjustmentData.decode(json: json, source: "x")
    #expect(decoded == data)
    #expect(decoded.canonicalJSON == json)
    var text = String(decoding: json, as: UTF8.self)
    #expect(text.hasPrefix("{\"created\":"), "keys sorted")
    #expect(text.contains("\"formatVersion\":1"), "version 1's filters keep version 1")
    // One past the newest version this build reads (3 since `warp`).
    let (newer, current) = (AdjustmentData.currentVersion + 1, AdjustmentData.currentVersion)
    #expect(current == 3 && FilterGraph.currentVersion == 3)
    text = text.replacing("\"formatVersion\":1", with: "\"formatVersion\":\(newer)")
    #expect(
      throws: DarkroomError(
        .invalidArgument, file: "new.json",
        "adjustment data version \(newer) is newer than this darkroom reads (\(current)); upgrade darkroom. Nothing was changed"
      )
    ) {
      try AdjustmentData.decode(json: Array(text.utf8), source: "new.json")
    }
    let foreign = #"{"format":"com.apple.photos","formatVersion":1}"#
    let error = #expect(throws: DarkroomError.self) {
      try AdjustmentData.decode(json: Array(foreign.utf8), source: "f.json")
    }
    #expect(
      error?.message.hasPrefix("not Darkroom adjustment data: format is 'com.apple.photos'") == true
    )
    let newerGraph =
      #"{"format":"org.darkroom.filter-graph","version":"# + "\(newer)" + #","nodes":[]}"#
    #expect(
      throws: DarkroomError(
        .invalidArgument, file: "g.json",
        "filter graph version \(newer) is newer than this darkroom reads (\(current)); upgrade darkroom. Nothing was changed"
      )
    ) {
      try FilterGraph.decode(json: Array(newerGraph.utf8), source: "g.json")
    }
  }

  @Test(
    "filter specs are checked before any pixel moves, with messages naming node and parameter",
    arguments: [
      ("tone exposure=9", "Expected number between -4 and 4 for tone.exposure but received 9"),
      (
        "tone glow=1",
        "Unknown parameter 'glow' for tone: expected exposure, contrast, brightness, highlights, shadows, saturation, warmth"
      ),
      ("rotate 45", "Expected one of 90, 180, 270 for rotate.angle but received 45"),
      (
        "flip sideways",
        "Expected one of horizontal, vertical for flip.direction but received sideways"
      ),
      ("crop 0.5 0.5 0.6 0.2", "crop rectangle 0.5 0.5 0.6 0.2 reaches outside the image"),
      ("crop 0.1 0.1", "crop needs all of x, y, width and height, or none of them"),
      ("crop aspect=4", "Expected ratio W:H such as 4:5 for crop.aspect but received 4"),
      (
        "noir intensity=lots",
        "Expected number between 0 and 1 for noir.intensity but received lots"
      ),
      ("glow", "Unknown filter 'glow'"),
      ("sharpen amount=9", "Expected number between 0 and 3 for sharpen.amount but received 9"),
      (
        "curve rgb=0:0,0.5",
        "Expected points x:y,x:y,... (2 to 16, fractions 0 to 1, x rising) such as 0:0,0.5:0.6,1:1 for curve.rgb but received 0:0,0.5"
      ),
      ("curve rgb=0.5:0,0.2:1", "Expected points x:y,x:y,..."),
      ("curve", "curve needs points for rgb, red, green or blue"),
      ("hsl teal-hue=1", "Unknown parameter 'teal-hue' for hsl: expected red-hue, red-saturation"),
      ("balance temperature=900", "Expected number between 2000 and 25000 for balance.temperature"),
    ])
  func validation(spec: String, message: String) throws {
    let error = #expect(throws: DarkroomError.self) { try FilterGraph.parse(spec: spec) }
    #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "")")
  }

  @Test("every preset loads from Filters/ and the compiled-in copy matches the files")
  func presets() throws {
    let names = [
      "noir", "mono", "tonal", "chrome", "fade", "instant", "process", "transfer", "sepia",
    ]
    for name in names {
      let file = Fixture.root.appendingPathComponent("Filters/\(name).json").path
      let fromFile = try FilterGraph.decode(json: Fixture.bytes(file), source: file)
      let builtIn = try #require(Presets.named(name), "\(name)")
      #expect(builtIn == fromFile, "\(name): run Scripts/generate-presets.sh")
      #expect(builtIn.description?.isEmpty == false)
    }
    let files = try FileManager.default.contentsOfDirectory(
      atPath: Fixture.root.appendingPathComponent("Filters").path)
    #expect(Set(files.map { String($0.dropLast(5)) }) == Set(Presets.names))
  }
}
