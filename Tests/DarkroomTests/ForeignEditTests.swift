import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// Lightroom's edits (`crs:` settings, issue 30): read from sidecars and embedded packets
/// written by exiftool and exiv2, shown by `info`, taken over by `edit --from-xmp` through
/// every door, and written back as a sidecar Lightroom reads (`adjustments --xmp`).
@Suite("Lightroom edits", .timeLimit(.minutes(5)), .offThePool)
struct ForeignEditTests {
  /// `photo` given Camera Raw `settings` by exiftool: in a `NAME.xmp` sidecar beside it, or
  /// embedded (`sidecar: false`).
  static func lightroom(_ photo: String, _ settings: [String: String], sidecar: Bool) throws {
    let arguments = settings.sorted { $0.key < $1.key }.map { "-XMP-crs:\($0.key)=\($0.value)" }
    // A sidecar is made from nothing (exiftool writes a new .xmp file), not from the photo.
    let target =
      sidecar
      ? [(photo as NSString).deletingPathExtension + ".xmp"] : ["-overwrite_original", photo]
    let run = try CLI.run(["-q"] + arguments + target, executable: "/usr/bin/exiftool")
    #expect(run.status == 0, "\(run.stderr)")
  }

  static func copy(_ sample: String, to name: String, in folder: TemporaryFolder) throws -> String {
    let path = folder.file(name)
    try FileManager.default.copyItem(atPath: Fixture.sample(sample), toPath: path)
    return path
  }

  static func info(_ path: String) throws -> [String: Any] {
    let run = try CLI.run(["info", "--json", path])
    #expect(run.status == 0, "\(run.stderr)")
    let entries = try JSONSerialization.jsonObject(with: run.stdoutData) as? [[String: Any]]
    return try #require(entries?.first)
  }

  /// The mean of the image's bands at a few places: equal bands are grey.
  static func isGrey(_ path: String) throws -> Bool {
    let image = try pixels(path)
    return try [(0.25, 0.25), (0.5, 0.5), (0.75, 0.6)].allSatisfy { (fx, fy) in
      let p = try image.pixel(x: Int(Double(image.width) * fx), y: Int(Double(image.height) * fy))
      return abs(p[0] - p[1]) <= 1 && abs(p[1] - p[2]) <= 1
    }
  }

  @Test(
    "whether settings are shown is what building their edit says, for every mix of crop, grayscale, tone, already applied and neutral values"
  )
  func shownMatchesTheEdit() {
    let choices: [(String, [String])] = [
      ("HasCrop", ["True", "False", "true"]), ("ConvertToGrayscale", ["True", "False"]),
      ("AlreadyApplied", ["True", "False"]), ("Exposure2012", ["0", "+1.00", " 0 ", "9"]),
      ("CropLeft", ["0.1", "0.9"]), ("Clarity2012", ["0", "+10"]),
    ]
    var settings = [
      ForeignSettings(program: "lightroom", source: "a.xmp", values: [:], instances: [])
    ]
    for (name, options) in choices {
      settings = settings.flatMap { base in
        [base]
          + options.map { option in
            var copy = base
            copy.values[name] = option
            return copy
          }
      }
    }
    #expect(settings.count == 4 * 3 * 3 * 5 * 3 * 3)
    var shown = 0
    for s in settings {
      let built = ForeignEdit(s, width: 600, height: 400).map { !$0.alreadyApplied } ?? false
      #expect(s.isShown(width: 600, height: 400) == built, "\(s.values)")
      if built { shown += 1 }
    }
    #expect(shown > 0 && shown < settings.count)
  }

  @Test(
    "the catalog's JSON of settings reads back as they were: quotes, backslashes, control characters, non-ASCII, empty"
  )
  func catalogJSON() throws {
    let hostile = "a\"b\\c\nd\re\tf\u{1}g\u{1F}h/é漢字😀"
    let settings = ForeignSettings(
      program: "lightroom", source: "a\"b.xmp",
      values: ["CropLeft": "0.1", hostile: hostile, "": "", "Name\u{0}": "\u{7F}"],
      instances: ["crop", hostile])
    let text = settings.catalogJSON
    let decoded = try JSONDecoder().decode(ForeignSettings.self, from: Data(text.utf8))
    #expect(decoded == settings, "\(text)")
    // Parsed as JSON by another reader too, with the same strings.
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    #expect((object["values"] as? [String: String])?[hostile] == hostile)
    let empty = ForeignSettings(program: "darktable", source: "XMP", values: [:], instances: [])
    #expect(
      empty.catalogJSON == #"{"instances":[],"program":"darktable","source":"XMP","values":{}}"#)
  }

  @Test(
    "a sidecar's crop and grayscale (orientation 6, exiftool) and an embedded crop (orientation 8, exiv2): info says what is rendered and not, --from-xmp renders it, revert restores, the sidecar is untouched"
  )
  func cropAndGrayscale() throws {
    let folder = try TemporaryFolder()
    // Orientation 6: stored 400x600, 600x400 upright; the crop is of the upright image.
    let six = try Self.copy("orientation-6.jpg", to: "six.jpg", in: folder)
    try Self.lightroom(
      six,
      [
        "HasCrop": "True", "CropLeft": "0.1", "CropTop": "0.2", "CropRight": "0.7",
        "CropBottom": "0.9", "CropAngle": "0", "ConvertToGrayscale": "True",
        "Dehaze": "+20", "AlreadyApplied": "False",
      ], sidecar: true)
    let sidecar = folder.file("six.xmp")
    let sidecarBytes = try Fixture.bytes(sidecar)
    let sidecarStat = try FileStat(sidecar)
    // A mode of its own, which the edit and the revert must keep.
    #expect(chmod(six, 0o640) == 0)
    let original = try Fixture.bytes(six)
    let originalStat = try FileStat(six)
    let entry = try #require(try Self.info(six)["foreignEdit"] as? [String: Any])
    #expect(entry["source"] as? String == "six.xmp")
    #expect(
      entry["filters"] as? String == "crop x=0.1 y=0.2 width=0.6 height=0.7 | tone saturation=-1")
    #expect(
      entry["rendered"] as? [String]
        == ["HasCrop", "CropLeft", "CropTop", "CropRight", "CropBottom", "ConvertToGrayscale"])
    #expect(entry["approximated"] as? [String] == [])
    #expect(entry["ignored"] as? [String] == ["Dehaze"])
    let text = try CLI.run(["info", six])
    #expect(
      text.stdout.contains(
        "Edited in     Lightroom (six.xmp): crop x=0.1 y=0.2 width=0.6 height=0.7 | tone saturation=-1; not rendered: Dehaze\n"
      ), "\(text.stdout)")

    let edit = try CLI.run(["edit", six, "--from-xmp"])
    #expect(
      edit.stdout
        == "\(six): edited (version 1: crop x=0.1 y=0.2 width=0.6 height=0.7 | tone saturation=-1)\n",
      "\(edit.stderr)")
    let edited = try pixels(six)
    #expect(edited.width == 360 && edited.height == 280)
    #expect(try FileStat(six).mode == 0o640)
    #expect(try Self.isGrey(six))
    // The same pixels as the crop of the upright original, turned grey.
    let upright = folder.file("upright.png")
    #expect(
      try CLI.run(
        ["autorot", Fixture.sample("orientation-6.jpg"), upright], executable: "/usr/bin/vips"
      )
      .status == 0)
    let expected = try pixels(upright)
    let (left, top) = (60, 80)
    for (x, y) in [(20, 20), (180, 140), (340, 260)] {
      let want = try expected.pixel(x: left + x, y: top + y)
      let luma = 0.2126 * want[0] + 0.7152 * want[1] + 0.0722 * want[2]
      #expect(abs(try edited.pixel(x: x, y: y)[0] - luma) <= 12, "\(x),\(y)")
    }
    #expect(try CLI.run(["revert", six]).status == 0)
    #expect(try Fixture.bytes(six) == original)
    let reverted = try FileStat(six)
    #expect(
      [reverted.mode, reverted.user, reverted.group, mode_t(reverted.links)]
        == [originalStat.mode, originalStat.user, originalStat.group, 1])
    #expect(try Fixture.bytes(sidecar) == sidecarBytes)
    #expect(try FileStat(sidecar) == sidecarStat)

    // Orientation 8, the settings embedded by exiv2: upright 600x400 again.
    let eight = try Self.copy("orientation-8.jpg", to: "eight.jpg", in: folder)
    let exiv2 = try CLI.run(
      [
        "-M", "set Xmp.crs.HasCrop True", "-M", "set Xmp.crs.CropLeft 0.25", "-M",
        "set Xmp.crs.CropTop 0", "-M", "set Xmp.crs.CropRight 0.75", "-M",
        "set Xmp.crs.CropBottom 0.5", "-M", "set Xmp.crs.CropAngle 0", eight,
      ], executable: "/usr/bin/exiv2")
    #expect(exiv2.status == 0, "\(exiv2.stderr)")
    let embedded = try #require(try Self.info(eight)["foreignEdit"] as? [String: Any])
    #expect(embedded["source"] as? String == "XMP")
    #expect(try CLI.run(["edit", eight, "--from-xmp"]).status == 0)
    let half = try pixels(eight)
    #expect(half.width == 300 && half.height == 200)
  }

  @Test(
    "an angled crop renders at the crop's own size (within a pixel), exposure +1 doubles linear light (within 5%), and the sidecar wins over the file's own settings"
  )
  func angleExposureAndPriority() throws {
    let folder = try TemporaryFolder()
    // A uniform grey of level 90 (linear 0.102), 600x400.
    let grey = folder.file("grey.jpg")
    #expect(
      try CLI.run(
        ["black", folder.file("black.v"), "600", "400", "--bands", "3"], executable: "/usr/bin/vips"
      ).status == 0)
    #expect(
      try CLI.run(
        ["linear", folder.file("black.v"), folder.file("grey.v"), "1", "90"],
        executable: "/usr/bin/vips"
      ).status == 0)
    #expect(
      try CLI.run(
        ["cast", folder.file("grey.v"), grey + "[Q=98]", "uchar"], executable: "/usr/bin/vips"
      ).status == 0)
    try Self.lightroom(
      grey,
      [
        "HasCrop": "True", "CropLeft": "0.2", "CropTop": "0.2", "CropRight": "0.8",
        "CropBottom": "0.8", "CropAngle": "5", "Exposure2012": "+1.00",
      ], sidecar: false)
    let entry = try #require(try Self.info(grey)["foreignEdit"] as? [String: Any])
    #expect(entry["approximated"] as? [String] == ["CropAngle", "Exposure2012"])
    #expect(try CLI.run(["edit", grey, "--from-xmp"]).status == 0)
    let edited = try pixels(grey)
    #expect(
      abs(edited.width - 360) <= 1 && abs(edited.height - 240) <= 1,
      "\(edited.width)x\(edited.height)")
    let level = try VideoTests.patch(edited, edited.width / 2 - 4, edited.height / 2 - 4)[1]
    func linear(_ v: Double) -> Double {
      let e = v / 255
      return e <= 0.04045 ? e / 12.92 : pow((e + 0.055) / 1.055, 2.4)
    }
    let ratio = linear(level) / linear(90)
    #expect(abs(ratio - 2) <= 0.1, "\(level): \(ratio)")

    // A sidecar's settings win over the file's own.
    let both = try Self.copy("orientation-1.jpg", to: "both.jpg", in: folder)
    try Self.lightroom(
      both,
      [
        "HasCrop": "True", "CropLeft": "0", "CropTop": "0", "CropRight": "0.5", "CropBottom": "0.5",
      ], sidecar: false)
    try Self.lightroom(
      both,
      [
        "HasCrop": "True", "CropLeft": "0.5", "CropTop": "0.5", "CropRight": "1", "CropBottom": "1",
      ], sidecar: true)
    let winner = try #require(try Self.info(both)["foreignEdit"] as? [String: Any])
    #expect(winner["source"] as? String == "both.xmp")
    #expect(winner["filters"] as? String == "crop x=0.5 y=0.5 width=0.5 height=0.5")
  }

  @Test(
    "darktable's crop from its NAME.EXT.xmp history (up to history_end, the last entry of each module): info, --from-xmp, the modules not rendered listed"
  )
  func darktableCrop() throws {
    let folder = try TemporaryFolder()
    let photo = try Self.copy("orientation-6.jpg", to: "dt.jpg", in: folder)
    // Edges 0.1, 0.2, 0.7 and 0.9 as little-endian floats, then the ratio (0, 0); a later crop
    // past history_end, and a shadows and highlights module (shadhi: not rendered yet).
    let crop = "cdcccc3dcdcc4c3e3333333f6666663f0000000000000000"
    let later = "000000000000000000000040000000400000000000000000"
    func entry(_ number: Int, _ operation: String, _ params: String, enabled: Int = 1) -> String {
      """
      <rdf:li darktable:num="\(number)" darktable:operation="\(operation)" darktable:enabled="\(enabled)" \
      darktable:modversion="1" darktable:params="\(params)" darktable:multi_name="" darktable:multi_priority="0"/>
      """
    }
    let sidecar = """
      <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
      <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
       <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:darktable="http://darktable.sf.net/"
         darktable:xmp_version="5" darktable:history_end="4">
         <darktable:history>
          <rdf:Seq>
           \(entry(0, "flip", "ffffffff"))
           \(entry(1, "crop", "0000000000000000cdcccc3d0000803f0000000000000000"))
           \(entry(2, "shadhi", "00000000000000000000803f"))
           \(entry(3, "crop", crop))
           \(entry(4, "crop", later))
          </rdf:Seq>
         </darktable:history>
        </rdf:Description>
       </rdf:RDF>
      </x:xmpmeta>
      """
    _ = try folder.write("dt.jpg.xmp", Array(sidecar.utf8))
    let entry = try #require(try Self.info(photo)["foreignEdit"] as? [String: Any])
    #expect(entry["program"] as? String == "darktable")
    #expect(entry["source"] as? String == "dt.jpg.xmp")
    #expect(entry["filters"] as? String == "crop x=0.1 y=0.2 width=0.6 height=0.7", "\(entry)")
    #expect(entry["rendered"] as? [String] == ["crop"])
    #expect(entry["ignored"] as? [String] == ["shadhi"])
    let text = try CLI.run(["info", photo])
    #expect(
      text.stdout.contains(
        "Edited in     darktable (dt.jpg.xmp): crop x=0.1 y=0.2 width=0.6 height=0.7; not rendered: shadhi\n"
      ), "\(text.stdout)")
    #expect(try CLI.run(["edit", photo, "--from-xmp"]).status == 0)
    let edited = try pixels(photo)
    #expect(edited.width == 360 && edited.height == 280)
  }

  @Test(
    "darktable's exposure, white balance and flip on a JPEG as darktable renders them: gains on the encoded values (measured with darktable-cli 4.2), turned before the crop"
  )
  func darktableColour() throws {
    let folder = try TemporaryFolder()
    // A grey patch of 240, 150, 100 across, 60x40, upright.
    var bytes: [UInt8] = []
    for _ in 0..<40 {
      for x in 0..<60 {
        bytes += x < 20 ? [240, 240, 240] : x < 40 ? [150, 150, 150] : [100, 100, 100]
      }
    }
    let image = try VipsImage.fromPixels(bytes, width: 60, height: 40, bands: 3)
    let photo = try folder.write("grey.png", image.encode(suffix: ".png"))
    // exposure v6: mode 0, black 0, -0.5 EV, 50, -4, 0; temperature: 1.3, 1, 0.8, 1; flip 5.
    let exposure = "00000000" + Self.params([0, -0.5, 50, -4]) + "00000000"
    let modules = [
      ("exposure", 6, exposure), ("temperature", 3, Self.params([1.3, 1, 0.8, 1])),
      ("flip", 2, "05000000"),
    ]
    _ = try folder.write("grey.png.xmp", Self.darktableSidecar(modules))
    let entry = try #require(try Self.info(photo)["foreignEdit"] as? [String: Any])
    #expect(entry["rendered"] as? [String] == ["exposure", "flip", "temperature"], "\(entry)")
    #expect(entry["ignored"] as? [String] == [])
    #expect(try CLI.run(["edit", photo, "--from-xmp"]).status == 0)
    let edited = try pixels(photo)
    #expect((edited.width, edited.height) == (40, 60), "flip 5: the axes swapped")
    // Flip 5 is top-bottom, then the axes swapped: the first column's grey (240) is the top
    // row now. Each channel times its gain, then times 2^-0.5, on the encoded values, with
    // nothing clipped between (240 x 1.3 is over white until the exposure brings it down).
    for (y, level) in [(5, 240.0), (30, 150.0), (55, 100.0)] {
      let pixel = try edited.pixel(x: 20, y: y)
      let expected = [1.3, 1, 0.8].map { level * $0 / 2.0.squareRoot() }
      #expect(zip(pixel, expected).allSatisfy { abs($0 - $1) <= 1 }, "\(pixel) \(expected)")
    }
  }

  /// A darktable sidecar of `modules` (operation, version, params as hex).
  static func darktableSidecar(_ modules: [(String, Int, String)]) -> [UInt8] {
    let entries = modules.enumerated().map { number, module in
      """
      <rdf:li darktable:num="\(number)" darktable:operation="\(module.0)" darktable:enabled="1" \
      darktable:modversion="\(module.1)" darktable:params="\(module.2)" darktable:multi_name="" darktable:multi_priority="0"/>
      """
    }
    return Array(
      """
      <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about="" xmlns:darktable="http://darktable.sf.net/" darktable:history_end="\(modules.count)">
      <darktable:history><rdf:Seq>
      \(entries.joined(separator: "\n"))
      </rdf:Seq></darktable:history></rdf:Description></rdf:RDF></x:xmpmeta>
      """.utf8)
  }

  /// Little-endian 32-bit words as darktable writes a module's params (hex).
  static func params(_ values: [Float]) -> String {
    values.map { String(format: "%08x", $0.bitPattern.byteSwapped) }.joined()
  }

  @Test(
    "darktable's sharpen, local contrast, monochrome and vignette read by their 4.2 layouts, in darktable's order: a smooth vignette darkens as darktable's formula does, monochrome is grey, sharpen steepens an edge; a layout of another size is not rendered"
  )
  func darktableEffects() throws {
    let folder = try TemporaryFolder()
    // 120x80: a step from dark to light at x = 60, orange above, blue below.
    var bytes: [UInt8] = []
    for y in 0..<80 {
      for x in 0..<120 {
        let light = 0.25 + 0.6 / (1 + exp(-(Double(x) - 59.5) / 0.8))
        let colour = y < 40 ? [1.0, 0.7, 0.4] : [0.4, 0.6, 1.0]
        bytes += colour.map { UInt8(($0 * light * 255).rounded()) }
      }
    }
    let image = try VipsImage.fromPixels(bytes, width: 120, height: 80, bands: 3)
    let step = try folder.write("step.png", image.encode(suffix: ".png"))
    // sharpen v1 (radius 1.5, amount 1, threshold 0.2); bilat v3 (local laplacian, detail
    // 0.25); monochrome v2 (neutral); vignette v4 (scale 60, fall-off 60, brightness -0.6,
    // no saturation, centred, circle, dithered: the smooth ramp).
    let vignette =
      Self.params([60, 60, -0.6, 0, 0, 0]) + "00000000" + Self.params([1, 1])
      + "01000000" + "01000000"
    let modules = [
      ("vignette", 4, vignette), ("monochrome", 2, Self.params([0, 0, 2, 0])),
      ("sharpen", 1, Self.params([1.5, 1, 0.2])),
      ("bilat", 3, "01000000" + Self.params([0.5, 0.5, 0.25, 0.5])),
    ]
    _ = try folder.write("step.png.xmp", Self.darktableSidecar(modules))
    let entry = try #require(try Self.info(step)["foreignEdit"] as? [String: Any])
    #expect(entry["rendered"] as? [String] == ["vignette"], "\(entry)")
    #expect(entry["approximated"] as? [String] == ["bilat", "monochrome", "sharpen"])
    #expect(entry["ignored"] as? [String] == [])
    // darktable's order (sharpen 35, bilat 54, monochrome 64, vignette 68). The vignette's
    // ring, 0.6 of half the longer side out and 0.6 wide, from the centre to the corners
    // (144.2 / 2 pixels): 0.6 x 120 / 144.22 = 0.49923, and 0.49923 / (1 - 0.49923).
    #expect(
      entry["filters"] as? String
        == "sharpen amount=1 radius=1.5 detail=0.825 | definition amount=0.25 | tone saturation=-1 | vignette amount=-0.6 midpoint=0.49923 feather=0.996925 roundness=1",
      "\(entry)")

    // The vignette alone on flat grey: darktable's formula, pixel by pixel.
    let flat = try VipsImage.fromPixels(
      [UInt8](repeating: 128, count: 120 * 80 * 3), width: 120, height: 80, bands: 3)
    let grey = try folder.write("grey.png", flat.encode(suffix: ".png"))
    _ = try folder.write("grey.png.xmp", Self.darktableSidecar([("vignette", 4, vignette)]))
    #expect(try CLI.run(["edit", grey, "--from-xmp"]).status == 0)
    let shaded = try pixels(grey)
    func linear(_ v: Double) -> Double {
      v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }
    func encoded(_ v: Double) -> Double {
      255 * (v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055)
    }
    for (x, y) in [(60, 40), (60, 2), (114, 40), (100, 70), (0, 0), (119, 79)] {
      // darktable: distance in half the longer side; the ramp from 0.6, 0.6 wide, smoothed
      // by a cosine; the light times 1 - 0.6 w.
      let d = hypot(Double(x) + 0.5 - 60, Double(y) + 0.5 - 40) / 60
      let w = max(0, min(1, (d - 0.6) / 0.6))
      let smooth = 0.5 - cos(Double.pi * w) / 2
      let expected = encoded(linear(128 / 255) * (1 - 0.6 * smooth))
      let got = try shaded.pixel(x: x, y: y)[0]
      #expect(abs(got - expected) <= 2, "at \(x),\(y): \(got), darktable's \(expected)")
    }

    // Everything: grey, and the edge steeper than it was.
    let luma = { (x: Int) throws -> Double in
      let p = try pixels(step).pixel(x: x, y: 20)
      return p.count >= 3 ? 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2] : p[0]
    }
    let before = (try luma(58), try luma(61))
    #expect(try CLI.run(["edit", step, "--from-xmp"]).status == 0)
    #expect(try Self.isGrey(step))
    // Either side of the edge (grey keeps the luma): the dark side darker, the light lighter.
    let (dark, light) = (try luma(58) - before.0, try luma(61) - before.1)
    #expect(dark < -4 && light > 4, "\(dark) \(light)")

    // A sharpen params of another version's size (two words) is named, not drawn.
    let odd = try Self.copy("gps.jpg", to: "odd.jpg", in: folder)
    _ = try folder.write(
      "odd.jpg.xmp", Self.darktableSidecar([("sharpen", 1, Self.params([2, 1]))]))
    let oddEntry = try #require(try Self.info(odd)["foreignEdit"] as? [String: Any])
    #expect(oddEntry["ignored"] as? [String] == ["sharpen"], "\(oddEntry)")
    #expect(oddEntry["filters"] as? String == "", "\(oddEntry)")
  }

  /// A warp node's four corners, in order.
  static func corners(_ node: FilterNode) throws -> [(Double, Double)] {
    try (1...4).map { k in
      guard case .number(let x)? = node.params["x\(k)"], case .number(let y)? = node.params["y\(k)"]
      else { throw DarkroomError(.invalidArgument, "corner \(k) missing in \(node.text)") }
      return (x, y)
    }
  }

  /// darktable's `ashift` params, v5 (892 bytes, as darktable 4.2 writes them), generic
  /// mode, as hex (darktable writes them compressed; it and Darkroom read both).
  static func ashift(
    rotation: Float = 0, vertical: Float = 0, horizontal: Float = 0, shear: Float = 0,
    margins: [Float] = [0, 1, 0, 1]
  ) -> String {
    params([rotation, vertical, horizontal, shear, 28, 1, 100, 1]) + "00000000" + "00000000"
      + params(margins) + String(repeating: "00000000", count: 209)
  }

  @Test(
    "darktable's rotate and perspective (ashift, v1-v5) drawn as its map: the matrices and sizes darktable 4.2 computes (600x400: rotation 3 is 620x430, a vertical shift of 0.3 689x400), a white square moved where darktable moves it, black beyond the photo, margins cut, an EXIF-turned photo shifted as stored then turned"
  )
  func darktableAshift() throws {
    // The forward maps darktable 4.2 computes for 600x400 (its float32 arithmetic, read from
    // darktable-cli's exports, which a model of these matrices matches bit for bit).
    func words(_ rotation: Float, _ vertical: Float, _ horizontal: Float, _ shear: Float)
      -> [UInt32]
    {
      [rotation, vertical, horizontal, shear, 28, 1, 100, 1].map(\.bitPattern) + [0, 0]
        + [0, 1, 0, 1].map { Float($0).bitPattern } + Array(repeating: 0, count: 209)
    }
    let cases: [([UInt32], [Double], (Int, Int))] = [
      (
        words(3, 0, 0, 0), [0.99863, 0.052336, 0, -0.052336, 0.99863, 31.34924, 0, 0, 1], (620, 430)
      ),
      (words(0, 0.3, 0, 0), [1.148885, 0.301461, 0, 0, 1.349859, 0, 0, 0.000875, 1], (689, 400)),
      (
        words(0, 0, -0.2, 0.05),
        [0.818731, 0.040937, 0, -0.011458, 0.897508, 6.863161, -0.000302, -0.000015, 1],
        (624, 441)
      ),
    ]
    for (params, expected, size) in cases {
      let p = try #require(ForeignEdit.AshiftParams(params))
      let m = ForeignEdit.ashiftHomography(p, width: 600, height: 400)
      let scaled = m.map { $0 / m[8] }
      #expect(
        zip(scaled, expected).allSatisfy { abs($0 - $1) <= 2e-5 * max(1, abs($1)) },
        "\(scaled) \(expected)")
      let module = try #require(
        ForeignEdit.darktableAshift(params, width: 600, height: 400, exif: .up))
      let node = try #require(module.nodes.first)
      #expect(module.exact && node.op == "warp")
      let arguments = FilterArguments(values: node.params)
      #expect(WarpFilter.outputSize(arguments, width: 600, height: 400) == size, "\(node.text)")
      // A grid lays such a photo out by that size (nothing decoded).
      let shown = try #require(FilterGraph(nodes: module.nodes).outputSize(width: 600, height: 400))
      #expect(shown == size)
    }
    // The EXIF turn: the warp's corners are the stored result's, each where the turn puts
    // it (for all eight orientations), and the size turned with the photo.
    let rotation = words(3, 0.2, -0.1, 0.02)
    let plain = try #require(
      ForeignEdit.darktableAshift(rotation, width: 600, height: 400, exif: .up))
    let plainCorners = try Self.corners(#require(plain.nodes.first))
    for turn in [
      Orientation.up, .upMirrored, .down, .downMirrored, .leftMirrored, .right,
      .rightMirrored, .left,
    ] {
      let module = try #require(
        ForeignEdit.darktableAshift(rotation, width: 600, height: 400, exif: turn))
      let node = try #require(module.nodes.first)
      let corners = try Self.corners(node)
      // Each upright corner is the turned image of one stored corner.
      let unit = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
      for (k, upright) in unit.enumerated() {
        let stored = try #require(
          unit.firstIndex { ForeignEdit.turned($0, turn) == upright }, "\(turn)")
        let expected = ForeignEdit.turned(plainCorners[stored], turn)
        #expect(
          abs(corners[k].0 - expected.0) < 2e-6 && abs(corners[k].1 - expected.1) < 2e-6,
          "\(turn) corner \(k): \(corners[k]) \(expected)")
      }
      let transposes = turn.swapsDimensions
      let arguments = FilterArguments(values: node.params)
      let size = WarpFilter.outputSize(
        arguments, width: transposes ? 400 : 600, height: transposes ? 600 : 400)
      let flat = WarpFilter.outputSize(
        FilterArguments(values: try #require(plain.nodes.first).params), width: 600, height: 400)
      #expect(transposes ? (size.height, size.width) == flat : size == flat, "\(turn)")
    }
    // A grid lays out an EXIF-6 photo with darktable's perspective at its rendered size.
    let packet = try XMPPacket(Self.darktableSidecar([("ashift", 5, Self.ashift(vertical: 0.3))]))
    var asset = Asset(
      path: "x.jpg", contentHash: "",
      identity: FileIdentity(
        device: 1, inode: 1, size: 1, modified: 0, changed: 0),
      mediaType: .photo, format: "jpeg", width: 600, height: 400, sortDate: 0, addedAt: 0)
    (asset.displayWidth, asset.displayHeight, asset.orientation) = (400, 600, 6)
    let settings = try #require(ForeignSettings.read(packet, source: "x.jpg.xmp"))
    asset.foreignSettings = settings
    #expect(asset.shownSize == (400, 689), "the stored 689x400, turned a quarter")

    // Older layouts read as darktable upgrades them: v1 (rotation, shifts, toggle), v4.
    let v1 = ForeignEdit.AshiftParams([Float(3).bitPattern, 0, 0, 1])
    #expect(v1?.rotation == 3 && v1?.right == 1 && v1?.specific == false)
    let v4 = ForeignEdit.AshiftParams(
      [
        0, 0, 0, Float(0.05).bitPattern, Float(50).bitPattern, Float(1.5).bitPattern,
        Float(100).bitPattern, Float(1).bitPattern, 1, 1, 0,
      ]
        + [0.1, 0.9, 0, 1].map { Float($0).bitPattern })
    #expect(
      v4?.shear == Double(Float(0.05)) && v4?.specific == true && v4?.left == Double(Float(0.1)))
    let v2 = ForeignEdit.AshiftParams(
      [Float(1).bitPattern, 0, 0] + [50, 1.5, 80, 1.2].map { Float($0).bitPattern } + [1, 0])
    #expect(v2?.specific == true && v2?.aspect == Double(Float(1.2)) && v2?.shear == 0)
    let v3 = ForeignEdit.AshiftParams(
      [0, 0, 0] + [28, 1, 100, 1].map { Float($0).bitPattern } + [0, 0, 1]
        + [0.2, 0.8, 0.1, 0.9].map { Float($0).bitPattern })
    #expect(v3?.left == Double(Float(0.2)) && v3?.bottom == Double(Float(0.9)))
    #expect(
      ForeignEdit.AshiftParams([0, 0, 0] + [28, 1, 100, 1].map { Float($0).bitPattern } + [7, 0])
        == nil, "a mode that is neither generic nor specific")
    #expect(
      ForeignEdit.AshiftParams(Array(repeating: 0, count: 20)) == nil, "no layout of 80 bytes")
    #expect(
      ForeignEdit.AshiftParams([Float(200).bitPattern, 0, 0, 1]) == nil, "a rotation past 180")

    // Pixels: grey, with a white 9x9 square centred on (150, 100), rotated 3 degrees.
    let folder = try TemporaryFolder()
    var bytes = [UInt8](repeating: 128, count: 600 * 400 * 3)
    for y in 96...104 {
      for x in 146...154 { for c in 0..<3 { bytes[(y * 600 + x) * 3 + c] = 255 } }
    }
    let image = try VipsImage.fromPixels(bytes, width: 600, height: 400, bands: 3)
    let photo = try folder.write("square.png", image.encode(suffix: ".png"))
    _ = try folder.write(
      "square.png.xmp", Self.darktableSidecar([("ashift", 5, Self.ashift(rotation: 3))]))
    let entry = try #require(try Self.info(photo)["foreignEdit"] as? [String: Any])
    #expect(entry["rendered"] as? [String] == ["ashift"], "\(entry)")
    #expect(try CLI.run(["edit", photo, "--from-xmp"]).status == 0)
    let rotated = try pixels(photo)
    #expect((rotated.width, rotated.height) == (620, 430))
    // darktable's map takes (150, 100) to (155.03, 123.36); the result is drawn there.
    #expect(try rotated.pixel(x: 155, y: 123).allSatisfy { $0 >= 250 })
    #expect(try rotated.pixel(x: 150, y: 100).allSatisfy { abs($0 - 128) <= 1 })
    // The corners show beyond the photo: black.
    #expect(try rotated.pixel(x: 2, y: 2).allSatisfy { $0 == 0 })
    #expect(try rotated.pixel(x: 617, y: 427).allSatisfy { $0 == 0 })

    // A vertical shift cut to its margins: no black left; the square where darktable puts it.
    let cut = try folder.write("cut.png", image.encode(suffix: ".png"))
    _ = try folder.write(
      "cut.png.xmp",
      Self.darktableSidecar([
        ("ashift", 5, Self.ashift(vertical: 0.3, margins: [0.1296, 0.8704, 0, 1]))
      ]))
    #expect(try CLI.run(["edit", cut, "--from-xmp"]).status == 0)
    let shifted = try pixels(cut)
    #expect((shifted.width, shifted.height) == (510, 400))
    for (x, y) in [(1, 1), (508, 1), (1, 398), (508, 398)] {
      #expect(try shifted.pixel(x: x, y: y).allSatisfy { abs($0 - 128) <= 1 }, "\(x),\(y)")
    }

    // Stored 600x400 and turned by its EXIF (6): darktable shifts the stored pixels, then
    // turns them. The square's image (155.03, 123.36) in the stored result, 620x430, turned
    // a quarter clockwise: (429 - 123.36, 155.03) of 430x620.
    let jpeg = try image.encode(suffix: ".jpg[Q=95]")
    let turned = try folder.write(
      "turned.jpg",
      ExifBuilder.jpeg(jpeg, replacingExifWith: ExifBuilder.block([ExifBuilder.short(0x0112, 6)])))
    _ = try folder.write(
      "turned.jpg.xmp", Self.darktableSidecar([("ashift", 5, Self.ashift(rotation: 3))]))
    #expect(try CLI.run(["edit", turned, "--from-xmp"]).status == 0)
    let upright = try pixels(turned)
    #expect((upright.width, upright.height) == (430, 620))
    #expect(try upright.pixel(x: 306, y: 155).allSatisfy { $0 >= 235 })
    #expect(try upright.pixel(x: 427, y: 2).allSatisfy { $0 <= 8 })
  }

  @Test(
    "darktable's flip on a photo its EXIF turns (orientation 6): darktable turns the stored pixels instead of the EXIF, so 0 shows them as stored, 5 (a quarter turn) is the upright photo, 2 mirrors the stored pixels; as darktable-cli 4.2 exports them"
  )
  func darktableFlipOnTurnedPhoto() throws {
    let folder = try TemporaryFolder()
    let stored = try pixels(Fixture.sample("orientation-6.jpg"))  // 400x600 as stored
    func flipped(_ value: String) throws -> (entry: [String: Any]?, path: String) {
      let photo = try Self.copy("orientation-6.jpg", to: "p\(value).jpg", in: folder)
      _ = try folder.write("p\(value).jpg.xmp", Self.darktableSidecar([("flip", 2, value)]))
      return (try Self.info(photo)["foreignEdit"] as? [String: Any], photo)
    }
    // 0: no turn at all, the EXIF's undone: the stored pixels, upright.
    let none = try flipped("00000000")
    #expect(none.entry?["filters"] as? String == "rotate angle=270", "\(none.entry ?? [:])")
    #expect(try CLI.run(["edit", none.path, "--from-xmp"]).status == 0)
    let shown = try pixels(none.path)
    #expect((shown.width, shown.height) == (stored.width, stored.height))
    for (x, y) in [(20, 30), (380, 40), (200, 580)] {
      let (a, b) = (try shown.pixel(x: x, y: y), try stored.pixel(x: x, y: y))
      #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 8 }, "at \(x),\(y): \(a) \(b)")
    }
    // 2: the stored pixels mirrored left-right.
    let mirrored = try flipped("02000000")
    #expect(
      mirrored.entry?["filters"] as? String == "rotate angle=90 | flip direction=vertical",
      "\(mirrored.entry ?? [:])")
    #expect(try CLI.run(["edit", mirrored.path, "--from-xmp"]).status == 0)
    let image = try pixels(mirrored.path)
    #expect((image.width, image.height) == (stored.width, stored.height))
    for (x, y) in [(20, 30), (380, 40), (200, 580)] {
      let (a, b) = (try image.pixel(x: stored.width - 1 - x, y: y), try stored.pixel(x: x, y: y))
      #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 8 }, "at \(x),\(y): \(a) \(b)")
    }
    // 5: a quarter turn of the stored pixels, which is what the EXIF says: nothing to draw.
    #expect(try flipped("05000000").entry == nil)
  }

  @Test(
    "darktable's compressed params (gz: zlib in base64) read: tonecurve, rgbcurve and colorbalancergb, with shadhi; the tone curve's lightness nodes placed on encoded values lift a grey as the curve says; a damaged gz blob is named, not drawn"
  )
  func darktableCompressedModules() throws {
    let folder = try TemporaryFolder()
    // Made by Scripts/darktable-compare.py's tonecurve(), rgbcurve(), colorbalancergb() and
    // shadhi() (darktable 4.2's layouts; zlib as darktable writes blobs over 100 bytes).
    let toneCurve = "gz13eJxjYIAD+1kzJe0ZGBqgeNABewgedR8pgBkJMyFhZqg8I5QNAIenB1c="
    let modules = [
      ("tonecurve", 5, toneCurve),
      ("rgbcurve", 1, "gz11eJxjYIAD+1kzJe0ZGBqgeLCBweouOLC35bpuN9jcyQzETEg0DDNC5UE0AJhUB/A="),
      ("colorbalancergb", 5, "gz04eJxjYCAVNNij0gwMZ8+csUWm8YGJb23sZs2caQeiz57xsWMEigEAEh0O4Q=="),
      (
        "shadhi", 5, Self.params([0, 100, 50, 0, -50, 0, 50, 100, 50]) + "7f000000bd37863500000000"
      ),
    ]
    let photo = try Self.copy("gps.jpg", to: "photo.jpg", in: folder)
    _ = try folder.write("photo.jpg.xmp", Self.darktableSidecar(modules))
    let entry = try #require(try Self.info(photo)["foreignEdit"] as? [String: Any])
    #expect(
      entry["approximated"] as? [String] == ["colorbalancergb", "rgbcurve", "shadhi", "tonecurve"],
      "\(entry)")
    #expect(entry["ignored"] as? [String] == [])
    // In darktable's order: colour balance, RGB curves, tone curve, shadows and highlights.
    // Lightness 0.5 is the encoded grey 0.466327, 0.6 is 0.566866; the RGB curve's linear
    // 0.5, 0.6 and 0.42 are encoded 0.735357, 0.797738 and 0.679976.
    #expect(
      entry["filters"] as? String
        == "tone contrast=0.2 saturation=0.2 | vibrance | curve red=0:0,0.735357:0.797738,1:1 blue=0:0,0.735357:0.679976,1:1 | curve rgb=0:0,0.466327:0.566866,1:1 | tone highlights=-0.25 shadows=0.15",
      "\(entry)")

    // The tone curve alone on flat grey 119 (lightness 0.5 is 118.9): lifted to 0.566866.
    let flat = try VipsImage.fromPixels(
      [UInt8](repeating: 119, count: 64 * 48 * 3), width: 64, height: 48, bands: 3)
    let grey = try folder.write("grey.png", flat.encode(suffix: ".png"))
    _ = try folder.write(
      "grey.png.xmp", Self.darktableSidecar([("tonecurve", 5, toneCurve)]))
    #expect(try CLI.run(["edit", grey, "--from-xmp"]).status == 0)
    let lifted = try pixels(grey).pixel(x: 32, y: 24)
    #expect(lifted.allSatisfy { abs($0 - 0.566866 * 255) <= 1.5 }, "\(lifted)")

    // What is not drawn is named: a colour balance of only a shadows lift (its colour
    // grading), and a tone curve in its independent mode whose a curve alone is bent.
    let undrawn = try Self.copy("gps.jpg", to: "undrawn.jpg", in: folder)
    _ = try folder.write(
      "undrawn.jpg.xmp",
      Self.darktableSidecar([
        ("colorbalancergb", 5, "gz05eJw7e8bHjoEk0GCPSpMGJr61sUOmGYEYAMctB5M="),
        ("tonecurve", 5, "gz13eJxjYICBBnsIHrTAftZMSftB7E57CB5c7mMCYmYoZkLCMMAIpQHKCwbS"),
      ]))
    let named = try #require(try Self.info(undrawn)["foreignEdit"] as? [String: Any])
    #expect(named["ignored"] as? [String] == ["colorbalancergb", "tonecurve"], "\(named)")
    #expect(named["filters"] as? String == "", "\(named)")

    // A gz blob cut short is not read: the module is named, nothing drawn for it.
    let cut = try Self.copy("gps.jpg", to: "cut.jpg", in: folder)
    _ = try folder.write(
      "cut.jpg.xmp", Self.darktableSidecar([("tonecurve", 5, String(toneCurve.prefix(40)))]))
    let cutEntry = try #require(try Self.info(cut)["foreignEdit"] as? [String: Any])
    #expect(cutEntry["ignored"] as? [String] == ["tonecurve"], "\(cutEntry)")
    #expect(cutEntry["filters"] as? String == "", "\(cutEntry)")
  }

  @Test(
    "edit -> adjustments --xmp -> exiftool reads the crop and grayscale back, and edit --adjustment x.xmp on a copy gives the same graph and pixels"
  )
  func roundTrip() throws {
    let folder = try TemporaryFolder()
    let photo = try Self.copy("orientation-6.jpg", to: "photo.jpg", in: folder)
    let edit = try CLI.run(
      ["edit", photo, "--filter", "crop x=0.15 y=0.1 width=0.5 height=0.6", "--filter", "noir"])
    #expect(edit.status == 0, "\(edit.stderr)")
    let sidecar = try CLI.run(["adjustments", photo, "--xmp"])
    #expect(sidecar.status == 0, "\(sidecar.stderr)")
    let xmp = try folder.write("edit.xmp", Array(sidecar.stdoutData))
    let read = try CLI.run(
      [
        "-s3", "-XMP-crs:CropLeft", "-XMP-crs:CropTop", "-XMP-crs:CropRight",
        "-XMP-crs:CropBottom", "-XMP-crs:ConvertToGrayscale", "-XMP-crs:HasCrop",
        "-XMP-crs:AlreadyApplied", xmp,
      ], executable: "/usr/bin/exiftool")
    let values = read.stdout.split(separator: "\n").map(String.init)
    try #require(values.count == 7, "\(read.stdout)")
    for (value, want) in zip(values.prefix(4).compactMap(Double.init), [0.15, 0.1, 0.65, 0.7]) {
      #expect(abs(value - want) <= 0.002, "\(values)")
    }
    #expect(Array(values.suffix(3)) == ["True", "True", "False"])

    let copy = try Self.copy("orientation-6.jpg", to: "copy.jpg", in: folder)
    let pasted = try CLI.run(["edit", copy, "--adjustment", xmp])
    #expect(pasted.status == 0, "\(pasted.stderr)")
    let graph = { (path: String) throws -> String in
      let json = try CLI.run(["adjustments", path]).stdoutData
      let object = try JSONSerialization.jsonObject(with: json) as? [String: Any]
      let graph = try #require(object?["graph"])
      return String(
        decoding: try JSONSerialization.data(withJSONObject: graph, options: .sortedKeys),
        as: UTF8.self)
    }
    #expect(try graph(photo) == graph(copy))
    #expect(try pixels(photo).pixels() == pixels(copy).pixels())

    // Lightroom's own sidecar, without Darkroom's part: its crs settings are taken.
    let lightroom = try folder.write(
      "lr.xmp",
      Array(
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:crs="http://ns.adobe.com/camera-raw-settings/1.0/"
         crs:HasCrop="True" crs:CropLeft="0" crs:CropTop="0" crs:CropRight="0.5" crs:CropBottom="1"
         crs:ConvertToGrayscale="True"/></rdf:RDF></x:xmpmeta>
        """.utf8))
    let third = try Self.copy("orientation-1.jpg", to: "third.jpg", in: folder)
    let taken = try CLI.run(["edit", third, "--adjustment", lightroom])
    #expect(
      taken.stdout
        == "\(third): edited (version 1: crop x=0 y=0 width=0.5 height=1 | tone saturation=-1)\n",
      "\(taken.stderr)")
  }

  @Test(
    "apply --write-xmp writes each result's sidecar (read back by exiftool, not taken for a foreign edit), replaces its own, never one it did not write; not for a space"
  )
  func applyWritesSidecars() throws {
    let folder = try TemporaryFolder()
    let a = try Self.copy("orientation-1.jpg", to: "a.jpg", in: folder)
    let b = try Self.copy("gps.jpg", to: "b.jpg", in: folder)
    let theirs = try folder.write("b.xmp", Array("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>".utf8))
    let theirBytes = try Fixture.bytes(theirs)
    let theirStat = try FileStat(theirs)
    let crop = "crop x=0.1 y=0.2 width=0.5 height=0.5"
    let run = try CLI.run(
      ["apply", a, b, "--filter", crop, "--write-xmp", "--progress", "none", "--in-process"])
    #expect(run.status == 1)
    #expect(
      run.stderr.contains("\(theirs): is not a sidecar Darkroom wrote: not replaced"),
      "\(run.stderr)")
    #expect(try Fixture.bytes(theirs) == theirBytes)
    #expect(try FileStat(theirs) == theirStat)
    let sidecar = folder.file("a.xmp")
    let read = try CLI.run(
      [
        "-s3", "-XMP-crs:CropLeft", "-XMP-crs:CropTop", "-XMP-crs:CropRight", "-XMP-crs:CropBottom",
        sidecar,
      ],
      executable: "/usr/bin/exiftool")
    #expect(read.stdout == "0.1\n0.2\n0.6\n0.7\n", "\(read.stdout)")
    #expect(try Self.info(a)["foreignEdit"] is NSNull)
    // Again, with another crop: its own sidecar is replaced.
    let again = try CLI.run(
      [
        "apply", a, "--filter", "crop x=0 y=0 width=0.5 height=1", "--write-xmp", "--progress",
        "none", "--in-process",
      ])
    #expect(again.status == 0, "\(again.stderr)")
    let replaced = try CLI.run(
      ["-s3", "-XMP-crs:CropRight", sidecar], executable: "/usr/bin/exiftool")
    #expect(replaced.stdout == "0.5\n")
    let space = try CLI.run([
      "apply", "--space", folder.path, "photo.jpg", "--filter", "noir", "--write-xmp",
    ])
    #expect(space.status == 2)
    #expect(
      space.stderr.contains("--write-xmp writes files in the clear: not for a space's assets"))
  }

  @Test(
    "apply --from-xmp run again skips the files that carry their edit already, and a job taking edits over is recorded as one (a resume does the same)"
  )
  func applyAgainSkips() throws {
    let folder = try TemporaryFolder()
    let photo = try Self.copy("orientation-1.jpg", to: "p.jpg", in: folder)
    try Self.lightroom(
      photo,
      ["HasCrop": "True", "CropLeft": "0", "CropTop": "0", "CropRight": "0.5", "CropBottom": "1"],
      sidecar: true)
    let first = try CLI.run(["apply", photo, "--from-xmp", "--progress", "none", "--in-process"])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stderr.contains("apply: 1 done, 0 skipped, 0 failed"), "\(first.stderr)")
    let edited = try Fixture.bytes(photo)
    let again = try CLI.run(["apply", photo, "--from-xmp", "--progress", "none", "--in-process"])
    #expect(again.stderr.contains("apply: 0 done, 1 skipped, 0 failed"), "\(again.stderr)")
    #expect(try Fixture.bytes(photo) == edited)
    let code = try #require(
      JobLog.encode(.edit(FilterGraph(nodes: []), mode: .foreign), quality: 80))
    let (action, quality) = try #require(JobLog.decode(code))
    guard case .edit(let graph, let mode) = action else {
      Issue.record("not an edit: \(action)")
      return
    }
    #expect(graph.nodes.isEmpty && mode == .foreign && quality == 80)
    #expect(JobLog.encode(.edit(FilterGraph(nodes: []), mode: .append), quality: nil) == nil)
  }

  @Test(
    "nothing to take over is one exact line and no write: no settings, settings already applied, a sidecar that is not XML (which info reports, and the photo still renders)"
  )
  func refusals() throws {
    let folder = try TemporaryFolder()
    let plain = try Self.copy("orientation-1.jpg", to: "plain.jpg", in: folder)
    let before = try Fixture.bytes(plain)
    let beforeStat = try FileStat(plain)
    let none = try CLI.run(["edit", plain, "--from-xmp"])
    #expect(none.status == 1)
    #expect(
      none.stderr
        == "darkroom: \(plain): has no Lightroom or darktable edit in its XMP or a sidecar to take over\n"
    )
    #expect(try Fixture.bytes(plain) == before)
    #expect(try FileStat(plain) == beforeStat)
    #expect(!FileManager.default.fileExists(atPath: folder.file(".darkroom/adjustments")))

    let applied = try Self.copy("orientation-1.jpg", to: "applied.jpg", in: folder)
    try Self.lightroom(
      applied,
      [
        "HasCrop": "True", "CropLeft": "0", "CropTop": "0", "CropRight": "0.5", "CropBottom": "1",
        "AlreadyApplied": "True",
      ],
      sidecar: false)
    let appliedBytes = try Fixture.bytes(applied)
    let appliedStat = try FileStat(applied)
    let entry = try #require(try Self.info(applied)["foreignEdit"] as? [String: Any])
    #expect(entry["alreadyApplied"] as? Bool == true && entry["filters"] as? String == "")
    let refused = try CLI.run(["edit", applied, "--from-xmp"])
    #expect(
      refused.stderr
        == "darkroom: \(applied): its Lightroom edit (XMP) is already applied to its pixels (crs:AlreadyApplied): nothing to take over\n"
    )
    #expect(try Fixture.bytes(applied) == appliedBytes)
    #expect(try FileStat(applied) == appliedStat)

    let broken = try Self.copy("orientation-1.jpg", to: "broken.jpg", in: folder)
    _ = try folder.write("broken.xmp", Array("<x:xmpmeta><rdf:RDF>".utf8))
    let warned = try Self.info(broken)
    #expect(
      (warned["warnings"] as? [String])?.first?.hasPrefix("broken.xmp: not read") == true,
      "\(warned)")
    #expect(warned["foreignEdit"] is NSNull)
    #expect(
      try CLI.run(["render", broken, "--rep", "thumbnail", "-o", folder.file("t.jpg")]).status == 0)
  }

  @Test(
    "every door takes a Lightroom edit over the same way: the API's from-xmp (and 400 JSON without one) and a space's"
  )
  func doors() async throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg", "gps.jpg"])
    let photo = served.root + "/orientation-1.jpg"
    try Self.lightroom(
      photo,
      [
        "HasCrop": "True", "CropLeft": "0.25", "CropTop": "0", "CropRight": "0.75",
        "CropBottom": "1", "ConvertToGrayscale": "True",
      ],
      sidecar: true)
    _ = try await served.library.scan()
    let id = try #require(try served.library.asset(atPath: photo)?.id)
    let plain = try #require(try served.library.asset(atPath: served.root + "/gps.jpg")?.id)
    try await served.test { client, _ in
      let taken = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["mode": "from-xmp"]))
      #expect(taken.status == .ok, "\(taken.text)")
      let refused = try await client.execute(
        uri: "/api/assets/\(plain)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["mode": "from-xmp"]))
      #expect(refused.status == .badRequest)
      #expect(
        (refused.object["error"] as? [String: Any])?["message"] as? String
          == "gps.jpg: has no Lightroom or darktable edit in its XMP or a sidecar to take over",
        "\(refused.text)")
      let both = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["mode": "from-xmp", "filters": ["noir"]]))
      #expect(both.status == .badRequest)
    }
    let edited = try pixels(photo)
    #expect(edited.width == 300 && edited.height == 400)
    #expect(try Self.isGrey(photo))

    // A space: the original's own settings (a sealed file has no sidecar).
    let folder = try TemporaryFolder()
    let embedded = try Self.copy("orientation-1.jpg", to: "embedded.jpg", in: folder)
    try Self.lightroom(
      embedded,
      [
        "HasCrop": "True", "CropLeft": "0.25", "CropTop": "0", "CropRight": "0.75",
        "CropBottom": "1",
      ],
      sidecar: false)
    _ = try Space.create(at: folder.file("Spaces"), password: pw("p"), kdf: testKDF)
    let space = try Library.open(space: folder.file("Spaces"), password: pw("p"))
    defer { space.close() }
    let (asset, _) = try space.add(file: embedded)
    _ = try await space.edit(asset.id, with: FilterGraph(nodes: []), mode: .foreign)
    let result = try space.asset(asset.id)
    #expect(result.adjustmentVersion == 1)
    let bytes = try space.bytes(of: asset.id)
    let size = try PinnedBytes.borrowing(bytes) { pinned throws(DarkroomError) in
      let image = try VipsImage.open(buffer: pinned, name: "result", sequential: false)
      return [image.width, image.height]
    }
    #expect(size == [300, 400] as [Int])
  }
}
