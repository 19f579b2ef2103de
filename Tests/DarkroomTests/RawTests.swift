import Foundation
import Testing

@testable import Darkroom

/// Small DNGs made by `Samples/make-dngs.py` (a known Bayer mosaic, with and without an
/// embedded JPEG preview, orientation 1 and 6), and the Python with rawpy (LibRaw) and pidng
/// that makes them and develops the references.
enum RawSamples {
  /// The first Python that imports rawpy, pidng and numpy: `DARKROOM_TEST_PYTHON`, the
  /// virtual environment `Scripts/install-deps.sh` and `.ci/run` make, or `python3`.
  static let python: Result<String, DarkroomError> = {
    let environment = ProcessInfo.processInfo.environment
    let candidates =
      [environment["DARKROOM_TEST_PYTHON"], "/opt/darkroom-test-python/bin/python3"]
      .compactMap { $0 } + ["/usr/bin/env"]
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
      let prefix = candidate == "/usr/bin/env" ? ["python3"] : []
      let run = try? CLI.run(
        prefix + ["-c", "import rawpy, pidng, numpy"], executable: candidate)
      if run?.status == 0 { return .success(candidate) }
    }
    return .failure(
      DarkroomError(
        .engine,
        "the RAW tests need Python with rawpy, pidng and numpy: run Scripts/install-deps.sh"))
  }()

  static func runPython(_ arguments: [String]) throws -> CLIResult {
    let python = try python.get()
    let prefix = python == "/usr/bin/env" ? ["python3"] : []
    return try CLI.run(prefix + arguments, executable: python)
  }

  /// The folder of DNGs, made once per test run, and removed when the run ends (a static is
  /// never deinitialised).
  static let folder: Result<TemporaryFolder, DarkroomError> = {
    do {
      let folder = try TemporaryFolder()
      atexit {
        if case .success(let folder) = RawSamples.folder {
          try? FileManager.default.removeItem(at: folder.url)
        }
      }
      let script = Fixture.root.appendingPathComponent("Samples/make-dngs.py").path
      let run = try runPython([script, folder.path])
      guard run.status == 0 else {
        return .failure(DarkroomError(.engine, "make-dngs.py failed: \(run.stderr)"))
      }
      return .success(folder)
    } catch let error as DarkroomError {
      return .failure(error)
    } catch {
      return .failure(DarkroomError(.engine, "\(error)"))
    }
  }()

  /// A copy of sample `name` in `folder`.
  static func copy(_ name: String, to folder: TemporaryFolder, as target: String? = nil) throws
    -> String
  {
    let path = folder.file(target ?? name)
    try FileManager.default.copyItem(atPath: try Self.folder.get().file(name), toPath: path)
    return path
  }

  /// rawpy's development of `path` (camera white balance, 8-bit, the file's orientation).
  static func rawpy(_ path: String, half: Bool = false, in folder: TemporaryFolder) throws
    -> String
  {
    let out = folder.file((path as NSString).lastPathComponent + (half ? ".half" : "") + ".png")
    let script = Fixture.root.appendingPathComponent("Samples/rawpy-render.py").path
    let run = try runPython([script, path, out] + (half ? ["--half"] : []))
    #expect(run.status == 0, "\(run.stderr)")
    return out
  }

  /// The sample boxes `make-dngs.py` describes for `file`: region name to (box, sRGB colour
  /// the scene has, colour rawpy showed).
  static func regions(_ file: String) throws -> [String: (
    box: [Int], srgb: [Double], rawpy: [Double]
  )] {
    let data = try Data(contentsOf: URL(fileURLWithPath: try folder.get().file("dngs.json")))
    let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let files = try #require(json["files"] as? [String: Any])
    let entry = try #require(files[file] as? [String: Any])
    let regions = try #require(entry["regions"] as? [String: [String: [Int]]])
    return regions.mapValues {
      ($0["box"] ?? [], ($0["srgb"] ?? []).map(Double.init), ($0["rawpy"] ?? []).map(Double.init))
    }
  }
}

/// Camera RAW files through LibRaw in the sandboxed workers (issue 30): headers, previews,
/// demosaics compared with rawpy by pixels, and what stays refused.
@Suite("Camera RAW", .timeLimit(.minutes(5)), .offThePool)
struct RawTests {
  /// The largest difference of any band of any pixel between two images of the same size.
  static func largestDifference(_ a: String, _ b: String) throws -> Int {
    let (x, y) = (try pixels(a), try pixels(b))
    #expect((x.width, x.height, x.bands) == (y.width, y.height, y.bands))
    let (p, q) = (try x.pixels(), try y.pixels())
    guard p.count == q.count else { return 255 }
    return zip(p, q).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
  }

  /// The image's mean colour in a box (x0, y0, x1, y1).
  static func mean(_ path: String, _ box: [Int]) throws -> [Double] {
    let image = try pixels(path)
    let values = try image.pixels()
    let bands = image.bands
    var sums = [Double](repeating: 0, count: bands)
    for y in box[1]..<box[3] {
      for x in box[0]..<box[2] {
        for band in 0..<bands { sums[band] += Double(values[(y * image.width + x) * bands + band]) }
      }
    }
    let count = Double((box[2] - box[0]) * (box[3] - box[1]))
    return sums.map { $0 / count }
  }

  /// The id `server`'s watcher gives the file `name` in its first scan (nil if it never does).
  static func catalogued(_ name: String, by server: ServeProcess) -> String? {
    var id: String?
    #expect(
      eventually {
        let listed = try? server.request("GET", "/api/assets", token: ServedLibrary.readToken)
        let assets = listed.map { ServeProcess.json($0.text)["assets"] as? [[String: Any]] ?? [] }
        id = assets?.first { $0["path"] as? String == name }?["id"] as? String
        return id != nil
      }, "the watcher's first scan catalogues \(name)")
    return id
  }

  static func near(_ a: [Double], _ b: [Double], within: Double) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) <= within }
  }

  @Test(
    "info reads a DNG's header in a worker: size, orientation, camera, date; scan catalogues it")
  func headers() throws {
    let folder = try TemporaryFolder()
    for name in ["mosaic.dng", "preview-orient6.dng"] { _ = try RawSamples.copy(name, to: folder) }
    let run = try CLI.run([
      "info", "--json", folder.file("mosaic.dng"), folder.file("preview-orient6.dng"),
    ])
    #expect(run.status == 0, "\(run.stderr)")
    let entries = try #require(
      try JSONSerialization.jsonObject(with: run.stdoutData) as? [[String: Any]])
    #expect(entries.map { $0["format"] as? String } == ["raw", "raw"])
    #expect(entries.map { $0["width"] as? Int } == [600, 600])
    #expect(entries.map { $0["height"] as? Int } == [400, 400])
    #expect(entries.map { $0["orientation"] as? Int } == [1, 6])
    #expect(entries.map { $0["displayWidth"] as? Int } == [600, 400])
    #expect(entries.map { $0["cameraModel"] as? String } == ["Test Mosaic", "Test Mosaic"])
    #expect(entries.map { $0["cameraMake"] as? String } == ["Darkroom", "Darkroom"])

    let scan = try CLI.run(["scan", folder.path])
    #expect(scan.status == 0, "\(scan.stderr)")
    #expect(scan.stderr.contains(": 2 added,"), "\(scan.stderr)")
    let list = try CLI.run(["list", "--json"], cwd: folder.path)
    let assets = try #require(
      try JSONSerialization.jsonObject(with: list.stdoutData) as? [[String: Any]])
    #expect(
      Set(assets.compactMap { $0["path"] as? String }) == ["mosaic.dng", "preview-orient6.dng"])
    #expect(Set(assets.compactMap { $0["format"] as? String }) == ["raw"])
  }

  @Test(
    "a DNG without a preview is developed as rawpy (LibRaw) develops it, pixel for pixel, upright, at full and half size"
  )
  func developMatchesRawpy() throws {
    let folder = try TemporaryFolder()
    for name in ["mosaic.dng", "mosaic-orient6.dng"] {
      let path = try RawSamples.copy(name, to: folder)
      let before = try FileStat(path)
      let full = folder.file(name + ".full.png")
      let run = try CLI.run(["render", path, "--rep", "full", "--format", "png", "-o", full])
      #expect(run.status == 0, "\(run.stderr)")
      #expect(try Self.largestDifference(full, RawSamples.rawpy(path, in: folder)) <= 1)
      // A box half the size or less is developed at half size (each 2x2 of the mosaic one
      // pixel), as rawpy's half_size.
      let small = folder.file(name + ".small.png")
      let half = try CLI.run([
        "render", path, "--rep", "aspect-thumbnail", "--size", "300", "-o", small,
      ])
      #expect(half.status == 0, "\(half.stderr)")
      #expect(
        try Self.largestDifference(small, RawSamples.rawpy(path, half: true, in: folder)) <= 1)
      for (region, expected) in try RawSamples.regions(name) {
        #expect(
          Self.near(try Self.mean(full, expected.box), expected.rawpy, within: 2),
          "\(name) \(region)")
      }
      #expect(try FileStat(path) == before, "the RAW is untouched")
    }
  }

  @Test(
    "a display rendition comes from the embedded preview when it covers the box, turned by the RAW's orientation; a larger one is developed"
  )
  func previewUsedWhenLargeEnough() throws {
    let folder = try TemporaryFolder()
    let path = try RawSamples.copy("preview-orient6.dng", to: folder)
    let screen = folder.file("screen.png")
    let run = try CLI.run([
      "render", path, "--rep", "fullscreen", "--screen", "600x300", "--format", "png", "-o", screen,
    ])
    #expect(run.status == 0, "\(run.stderr)")
    let image = try pixels(screen)
    #expect((image.width, image.height) == (300, 450))
    // The preview shows the scene's own sRGB (the grey band 128); LibRaw's development, with
    // its BT.709 curve, shows it at 115: which one was used is told by the band.
    for (region, expected) in try RawSamples.regions("preview-orient6.dng") {
      let box = expected.box.map { Int((Double($0) * 0.75).rounded()) }
      let inner = [box[0] + 3, box[1] + 3, box[2] - 3, box[3] - 3]
      #expect(Self.near(try Self.mean(screen, inner), expected.srgb, within: 6), "\(region)")
    }
    let full = folder.file("full.png")
    let developed = try CLI.run(["render", path, "--rep", "full", "--format", "png", "-o", full])
    #expect(developed.status == 0, "\(developed.stderr)")
    #expect(try Self.largestDifference(full, RawSamples.rawpy(path, in: folder)) <= 1)
  }

  @Test(
    "damaged and false RAWs fail with one line naming the file and leave nothing, rendered or edited"
  )
  func badInput() throws {
    let folder = try TemporaryFolder()
    let good = try Fixture.bytes(try RawSamples.folder.get().file("mosaic.dng"))
    let cut = try folder.write("cut.dng", Array(good.prefix(2000)))
    let noise = try folder.write(
      "noise.nef", [0x49, 0x49, 0x2A, 0x00] + (0..<600).map { UInt8(($0 * 37) & 0xFF) })
    for (path, message) in [
      (cut, "cannot unpack it: Input/output error"),
      (noise, "not a RAW LibRaw reads: Unsupported file format or not RAW file"),
    ] {
      let out = folder.file("out.jpg")
      let run = try CLI.run(["render", path, "--rep", "thumbnail", "-o", out])
      #expect(run.status == 1)
      #expect(run.stderr == "darkroom: \(path): \(message)\n")
      #expect(!FileManager.default.fileExists(atPath: out))
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
          "cut.dng", "noise.nef",
        ])
    }
    let cutBytes = try Fixture.bytes(cut)
    let edit = try CLI.run(["edit", cut, "--filter", "noir"])
    #expect(edit.status == 1)
    #expect(edit.stderr == "darkroom: \(cut): cannot unpack it: Input/output error\n")
    #expect(!FileManager.default.fileExists(atPath: folder.file("cut-Edit.jpg")))
    #expect(try Fixture.bytes(cut) == cutBytes)
  }

  @Test(
    "an edit of a RAW is a JPEG beside it (NAME-Edit.jpg) whose original the RAW is: edited again it goes on, revert --to renders a version, revert removes it; the RAW is never touched, a file of the same name never replaced"
  )
  func editsBeside() throws {
    let folder = try TemporaryFolder()
    let raw = try RawSamples.copy("mosaic.dng", to: folder, as: "keep.dng")
    let (before, hash) = (try FileStat(raw), try ContentHash.of(file: raw))
    let result = folder.file("keep-Edit.jpg")
    let edit = try CLI.run(["edit", raw, "--filter", "tone saturation=-1"])
    #expect(
      edit.stdout == "\(raw): edited into \(result) (version 1: tone saturation=-1)\n",
      "\(edit.stderr)")
    let first = try pixels(result)
    #expect(first.width == 600 && first.height == 400)
    #expect(try ForeignEditTests.isGrey(result))
    // The development's pixels (rawpy's), turned grey (Rec. 709 luma).
    let developed = try pixels(RawSamples.rawpy(raw, in: folder))
    let (left, right) = (try VideoTests.patch(first, 100, 60), try VideoTests.patch(first, 500, 60))
    let luma = { (p: [Double]) in 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2] }
    #expect(abs(left[0] - luma(try VideoTests.patch(developed, 100, 60))) <= 12)
    #expect(abs(right[0] - luma(try VideoTests.patch(developed, 500, 60))) <= 12)
    // What the RAW's EXIF said, in the result's XMP: the camera.
    let described = try ForeignEditTests.info(result)
    #expect(described["cameraModel"] as? String == "Test Mosaic", "\(described)")
    #expect(described["foreignEdit"] is NSNull)

    // The result edited in place (as the gallery edits the asset it is) goes on from the RAW.
    let again = try CLI.run(["edit", result, "--filter", "crop aspect=1:1"])
    #expect(
      again.stdout == "\(result): edited (version 2: tone saturation=-1 | crop aspect=1:1)\n",
      "\(again.stderr)")
    let square = try pixels(result)
    #expect(square.width == 400 && square.height == 400)
    #expect(try ForeignEditTests.isGrey(result))
    #expect(try Fixture.bytes(result).prefix(2) == [0xFF, 0xD8])
    // --original: the RAW's development, in colour.
    let own = folder.file("own.png")
    #expect(try CLI.run(["render", result, "--original", "--rep", "full", "-o", own]).status == 0)
    #expect(try pixels(own).width == 600)
    #expect(try !ForeignEditTests.isGrey(own))
    // A copy elsewhere is the user's: revert to the original does not remove it.
    try FileManager.default.createDirectory(
      atPath: folder.file("best"), withIntermediateDirectories: true)
    let copy = folder.file("best/portfolio.jpg")
    try FileManager.default.copyItem(atPath: result, toPath: copy)
    let kept = try CLI.run(["revert", copy])
    #expect(kept.status == 1)
    #expect(
      kept.stderr
        == "darkroom: \(copy): is the edit of the RAW keep.dng, which is not beside it as NAME-Edit.jpg's original: revert --to 0 removes only a RAW's edit beside its RAW; nothing was changed\n"
    )
    #expect(FileManager.default.fileExists(atPath: copy))
    let history = try CLI.run(["history", result])
    #expect(
      history.stdout.split(separator: "\n").map { $0.prefix(2) } == [" 0", " 1", "*2"],
      "\(history.stdout)")
    #expect(try CLI.run(["revert", result, "--to", "1"]).status == 0)
    #expect(try pixels(result).width == 600)
    let reverted = try CLI.run(["revert", result])
    #expect(reverted.status == 0, "\(reverted.stderr)")
    #expect(!FileManager.default.fileExists(atPath: result))
    #expect(try ContentHash.of(file: raw) == hash)
    #expect(try FileStat(raw) == before)

    // A file of that name that Darkroom did not write: refused, and left as it was.
    let other = try RawSamples.copy("mosaic.dng", to: folder, as: "other.dng")
    let theirs = try folder.write("other-Edit.jpg", try Fixture.bytes(Fixture.sample("gps.jpg")))
    let theirStat = try FileStat(theirs)
    let refused = try CLI.run(["edit", other, "--filter", "noir"])
    #expect(refused.status == 1)
    #expect(
      refused.stderr
        == "darkroom: \(theirs): is there and is not Darkroom's edit of other.dng: not replaced\n")
    #expect(try Fixture.bytes(theirs) == (try Fixture.bytes(Fixture.sample("gps.jpg"))))
    #expect(try FileStat(theirs) == theirStat)
    // An empty file of that name, or a link, is not taken for nothing there.
    let third = try RawSamples.copy("mosaic.dng", to: folder, as: "third.dng")
    let empty = try folder.write("third-Edit.jpg", [])
    #expect(try CLI.run(["edit", third, "--filter", "noir"]).status == 1)
    #expect(try Fixture.bytes(empty).isEmpty)
    try FileManager.default.removeItem(atPath: empty)
    try FileManager.default.createSymbolicLink(atPath: empty, withDestinationPath: "nowhere.jpg")
    #expect(try CLI.run(["edit", third, "--filter", "noir"]).status == 1)
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: empty) == "nowhere.jpg")

    // A space: the RAW stays its sealed original, the edit a JPEG beside it in the space.
    _ = try folder.write("pa", pw("alpha\n"))
    let cwd = folder.url.path
    for arguments in [
      ["space", "create", "S", "--password-file", "pa", "--kdf-passes", "1", "--kdf-memory", "8"],
      ["space", "add", "S", "other.dng", "--password-file", "pa"],
      ["edit", "--space", "S", "--password-file", "pa", "--filter", "noir", "other.dng"],
      [
        "render", "--space", "S", "--password-file", "pa", "--rep", "full", "other.dng", "-o",
        "sealed.jpg",
      ],
      [
        "render", "--space", "S", "--password-file", "pa", "--rep", "full", "--original",
        "other.dng", "-o", "sealed-original.jpg",
      ],
    ] {
      let run = try CLI.run(arguments, cwd: cwd)
      #expect(run.status == 0, "\(arguments): \(run.stderr)")
    }
    let sealed = folder.file("sealed.jpg")
    #expect(try pixels(sealed).width == 600)
    #expect(try ForeignEditTests.isGrey(sealed))
    #expect(try !ForeignEditTests.isGrey(folder.file("sealed-original.jpg")))
  }

  @Test(
    "the server edits a RAW asset into a new asset beside it (the API names it), and the RAW asset stays as it was"
  )
  func editsThroughTheServer() throws {
    let folder = try TemporaryFolder()
    let path = try RawSamples.copy("mosaic.dng", to: folder)
    let hash = try ContentHash.of(file: path)
    let server = try ServeProcess(folder.path)
    let asset = try #require(Self.catalogued("mosaic.dng", by: server))
    let edited = try server.request(
      "POST", "/api/assets/\(asset)/edit", body: Array(#"{"filters": ["noir"]}"#.utf8))
    #expect(edited.status == 200, "\(edited.text)")
    let answer = ServeProcess.json(edited.text)
    let result = try #require(answer["asset"] as? String)
    #expect(result != asset && answer["version"] as? Int == 1)
    let described = try server.request(
      "GET", "/api/assets/\(result)", token: ServedLibrary.readToken)
    #expect(ServeProcess.json(described.text)["path"] as? String == "mosaic-Edit.jpg")
    #expect(ServeProcess.json(described.text)["format"] as? String == "jpeg")
    let still = try server.request("GET", "/api/assets/\(asset)", token: ServedLibrary.readToken)
    #expect(still.status == 200)
    #expect(try ContentHash.of(file: path) == hash)
    #expect(try ForeignEditTests.isGrey(folder.file("mosaic-Edit.jpg")))
    #expect(server.stop() == 0)
  }

  @Test(
    "a DNG's own XMP (captions, ratings, Lightroom's settings, written by exiftool) and a Lightroom sidecar beside a RAW are read"
  )
  func rawXMP() throws {
    let folder = try TemporaryFolder()
    let embedded = try RawSamples.copy("mosaic.dng", to: folder, as: "embedded.dng")
    let written = try CLI.run(
      [
        "-q", "-overwrite_original", "-XMP-dc:Description=Harbour at dawn", "-XMP-xmp:Rating=4",
        "-XMP-crs:HasCrop=True", "-XMP-crs:CropLeft=0.1", "-XMP-crs:CropTop=0.2",
        "-XMP-crs:CropRight=0.7", "-XMP-crs:CropBottom=0.9", "-XMP-crs:ConvertToGrayscale=True",
        embedded,
      ], executable: "/usr/bin/exiftool")
    #expect(written.status == 0, "\(written.stderr)")
    let beside = try RawSamples.copy("mosaic.dng", to: folder, as: "beside.dng")
    let sidecar = try CLI.run(
      [
        "-q", "-XMP-crs:HasCrop=True", "-XMP-crs:CropLeft=0.5", "-XMP-crs:CropTop=0",
        "-XMP-crs:CropRight=1", "-XMP-crs:CropBottom=1", "-o", folder.file("beside.xmp"),
      ], executable: "/usr/bin/exiftool")
    #expect(sidecar.status == 0, "\(sidecar.stderr)")
    let run = try CLI.run(["info", "--json", embedded, beside])
    #expect(run.status == 0, "\(run.stderr)")
    let entries = try #require(
      try JSONSerialization.jsonObject(with: run.stdoutData) as? [[String: Any]])
    #expect(entries.count == 2)
    #expect(entries.first?["caption"] as? String == "Harbour at dawn")
    #expect(entries.first?["rating"] as? Int == 4)
    let edits = entries.map { $0["foreignEdit"] as? [String: Any] }
    #expect(edits.map { $0?["source"] as? String } == ["XMP", "beside.xmp"])
    #expect(
      edits.map { $0?["filters"] as? String } == [
        "crop x=0.1 y=0.2 width=0.6 height=0.7 | tone saturation=-1",
        "crop x=0.5 y=0 width=0.5 height=1",
      ])

    // Shown, as Lightroom shows a RAW it cropped: its renditions are of the edit.
    func render(_ path: String, _ name: String, _ extra: [String] = []) throws -> VipsImage {
      let output = folder.file(name)
      let run = try CLI.run(["render", path, "--rep", "fullscreen", "-o", output] + extra)
      #expect(run.status == 0, "\(run.stderr)")
      return try pixels(output)
    }
    let grey = try render(embedded, "embedded.png")
    #expect(grey.width == 360 && grey.height == 280)
    #expect(try ForeignEditTests.isGrey(folder.file("embedded.png")))
    let right = try render(beside, "beside.png")
    #expect(right.width == 300 && right.height == 400)
    let whole = try render(beside, "whole.png", ["--original"])
    #expect(whole.width == 600 && whole.height == 400)
    // The crop's middle is the whole's right half's middle.
    #expect(
      Self.near(
        try VideoTests.patch(right, 146, 60), try VideoTests.patch(whole, 446, 60), within: 2))
  }

  @Test(
    "the server catalogues a DNG and serves its thumbnail (from the preview, upright) and its original's bytes"
  )
  func throughTheServer() throws {
    let folder = try TemporaryFolder()
    let path = try RawSamples.copy("preview-orient6.dng", to: folder)
    let server = try ServeProcess(folder.path)
    let asset = try #require(Self.catalogued("preview-orient6.dng", by: server))
    let thumbnail = try server.body("/api/assets/\(asset)/aspect-thumbnail?size=300&format=png")
    #expect(thumbnail.status == 200)
    let shown = try folder.write("shown.png", thumbnail.bytes)
    let image = try pixels(shown)
    #expect((image.width, image.height) == (200, 300))
    for (region, expected) in try RawSamples.regions("preview-orient6.dng") {
      let box = expected.box.map { Int((Double($0) * 0.5).rounded()) }
      let inner = [box[0] + 3, box[1] + 3, box[2] - 3, box[3] - 3]
      #expect(Self.near(try Self.mean(shown, inner), expected.srgb, within: 6), "\(region)")
    }
    let full = try server.body("/api/assets/\(asset)/full")
    #expect(full.status == 200)
    #expect(full.bytes == (try Fixture.bytes(path)))
    #expect(server.stop() == 0)
  }

  @Test("a process without sandboxed workers refuses RAW unless it is allowed by name")
  func onlyInWorkers() throws {
    let folder = try TemporaryFolder()
    let path = try RawSamples.copy("mosaic.dng", to: folder)
    #expect(!TrustedFormats.trusted.contains("raw"))
    #expect(TrustedFormats.sniff(try Fixture.bytes(path).prefix(32), name: path) == "raw")
    #expect(TrustedFormats.sniff(try Fixture.bytes(path).prefix(32), name: "mosaic.tif") == "tiff")
    #expect(throws: DarkroomError.self) {
      try Renderer().render(.file(path), RenditionSpec(.thumbnail))
    }
    do {
      _ = try Renderer().render(.file(path), RenditionSpec(.thumbnail))
    } catch {
      #expect(error.kind == .unsupportedFormat)
      #expect(error.message.contains("raw is not among the trusted formats"), "\(error.message)")
    }
  }
}
