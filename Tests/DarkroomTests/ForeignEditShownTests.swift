import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// Edits made elsewhere, shown (issue 30): every representation of a photo Lightroom or
/// darktable edited shows that edit, through every door (the command line, the library, the
/// API, a space), as Lightroom and Photos show the edited version; `--original` (the API's
/// `original=true`) shows the file's own pixels; the user's files are never touched.
@Suite("Edits made elsewhere, shown", .timeLimit(.minutes(5)), .offThePool)
struct ForeignEditShownTests {
  /// Lightroom's crop of the upright 600x400 photo, 0.1 to 0.7 across and 0.2 to 0.9 down
  /// (360x280), in grey.
  static let cropAndGrey = [
    "HasCrop": "True", "CropLeft": "0.1", "CropTop": "0.2", "CropRight": "0.7",
    "CropBottom": "0.9", "CropAngle": "0", "ConvertToGrayscale": "True",
  ]

  /// Width and height of an encoded image.
  static func size(_ bytes: [UInt8]) throws -> [Int] {
    try PinnedBytes.borrowing(bytes) { pinned throws(DarkroomError) in
      let image = try VipsImage.open(buffer: pinned, name: "rendition", sequential: false)
      return [image.width, image.height]
    }
  }

  /// Renders `photo` on the command line and returns the output's path.
  static func render(
    _ photo: String, _ representation: String, _ extra: [String] = [], in folder: TemporaryFolder,
    as name: String
  ) throws -> String {
    let output = folder.file(name)
    let run = try CLI.run(["render", photo, "--rep", representation, "-o", output] + extra)
    #expect(run.status == 0, "\(run.stderr)")
    return output
  }

  @Test(
    "a sidecar's crop and grayscale (exiftool, orientation 6) are shown by every representation on the command line, not by --original; the photo and its sidecar are untouched; the output carries no settings to apply again"
  )
  func commandLine() throws {
    let folder = try TemporaryFolder()
    let six = try ForeignEditTests.copy("orientation-6.jpg", to: "six.jpg", in: folder)
    try ForeignEditTests.lightroom(six, Self.cropAndGrey, sidecar: true)
    let sidecar = folder.file("six.xmp")
    let (photoBytes, sidecarBytes) = (try Fixture.bytes(six), try Fixture.bytes(sidecar))
    let (photoStat, sidecarStat) = (try FileStat(six), try FileStat(sidecar))

    let screen = try Self.render(six, "fullscreen", in: folder, as: "screen.jpg")
    #expect(try Self.size(Fixture.bytes(screen)) == [360, 280])
    #expect(try ForeignEditTests.isGrey(screen))
    // The crop's pixels: the upright original's at the same places, as grey.
    let upright = folder.file("upright.png")
    let turned = try CLI.run(
      ["autorot", Fixture.sample("orientation-6.jpg"), upright], executable: "/usr/bin/vips")
    #expect(turned.status == 0)
    let (expected, shown) = (try pixels(upright), try pixels(screen))
    for (x, y) in [(20, 20), (180, 140), (340, 260), (10, 250)] {
      let want = try expected.pixel(x: 60 + x, y: 80 + y)
      let luma = 0.2126 * want[0] + 0.7152 * want[1] + 0.0722 * want[2]
      #expect(abs(try shown.pixel(x: x, y: y)[0] - luma) <= 12, "\(x),\(y)")
    }
    let thumbnail = try Self.render(six, "thumbnail", in: folder, as: "thumb.jpg")
    #expect(try Self.size(Fixture.bytes(thumbnail)) == [256, 256])
    #expect(try ForeignEditTests.isGrey(thumbnail))
    let aspect = try Self.render(six, "aspect-thumbnail", in: folder, as: "aspect.jpg")
    #expect(try Self.size(Fixture.bytes(aspect)) == [256, 199])
    // `full`: the edit at its full size, upright, in the file's format.
    let full = try Self.render(six, "full", in: folder, as: "full.jpg")
    #expect(try Self.size(Fixture.bytes(full)) == [360, 280])
    #expect(try ForeignEditTests.isGrey(full))
    // A rendition says nothing that would have it edited again.
    #expect(try ForeignEditTests.info(screen)["foreignEdit"] is NSNull)
    #expect(try ForeignEditTests.info(full)["foreignEdit"] is NSNull)

    // --original: the file's own pixels.
    let plain = try Self.render(six, "fullscreen", ["--original"], in: folder, as: "plain.jpg")
    #expect(try Self.size(Fixture.bytes(plain)) == [600, 400])
    #expect(try !ForeignEditTests.isGrey(plain))
    let plainFull = try Self.render(six, "full", ["--original"], in: folder, as: "plain-full.jpg")
    #expect(try Fixture.bytes(plainFull) == photoBytes)

    #expect(try Fixture.bytes(six) == photoBytes)
    #expect(try Fixture.bytes(sidecar) == sidecarBytes)
    #expect(try FileStat(six) == photoStat)
    #expect(try FileStat(sidecar) == sidecarStat)
  }

  @Test(
    "an angled crop (embedded, exiftool) renders at the crop's size within a pixel, and exposure +1 doubles linear light within 5%"
  )
  func angleAndExposure() throws {
    let folder = try TemporaryFolder()
    // A uniform grey of level 90 (linear 0.102), 600x400.
    let grey = folder.file("grey.jpg")
    for arguments in [
      ["black", folder.file("black.v"), "600", "400", "--bands", "3"],
      ["linear", folder.file("black.v"), folder.file("grey.v"), "1", "90"],
      ["cast", folder.file("grey.v"), grey + "[Q=98]", "uchar"],
    ] {
      #expect(try CLI.run(arguments, executable: "/usr/bin/vips").status == 0)
    }
    try ForeignEditTests.lightroom(
      grey,
      [
        "HasCrop": "True", "CropLeft": "0.2", "CropTop": "0.2", "CropRight": "0.8",
        "CropBottom": "0.8", "CropAngle": "5", "Exposure2012": "+1.00",
      ], sidecar: false)
    let screen = try Self.render(grey, "fullscreen", in: folder, as: "screen.png")
    let shown = try pixels(screen)
    #expect(
      abs(shown.width - 360) <= 1 && abs(shown.height - 240) <= 1, "\(shown.width)x\(shown.height)")
    let level = try VideoTests.patch(shown, shown.width / 2 - 4, shown.height / 2 - 4)[1]
    func linear(_ v: Double) -> Double {
      let e = v / 255
      return e <= 0.04045 ? e / 12.92 : pow((e + 0.055) / 1.055, 2.4)
    }
    #expect(abs(linear(level) / linear(90) - 2) <= 0.1, "\(level)")
    let plain = try pixels(Self.render(grey, "fullscreen", ["--original"], in: folder, as: "o.png"))
    #expect(plain.width == 600 && plain.height == 400)
    #expect(abs(try VideoTests.patch(plain, 296, 196)[1] - 90) <= 2)
  }

  @Test(
    "a changed sidecar changes the rendition (not served from the cache); a file Darkroom edited from the settings is not edited twice; darktable's crop is shown; AlreadyApplied and a broken sidecar render the file as it is"
  )
  func cacheAndPriority() throws {
    let folder = try TemporaryFolder()
    let photo = try ForeignEditTests.copy("orientation-1.jpg", to: "one.jpg", in: folder)
    try ForeignEditTests.lightroom(photo, Self.cropAndGrey, sidecar: true)
    func screen(_ name: String) throws -> (size: [Int], cached: Bool) {
      let output = folder.file(name)
      let run = try CLI.run(
        [
          "render", photo, "--rep", "fullscreen", "-o", output, "--json", "--cache-dir",
          folder.file("cache"),
        ])
      #expect(run.status == 0, "\(run.stderr)")
      let entry = try JSONSerialization.jsonObject(with: run.stdoutData) as? [String: Any]
      return (try Self.size(Fixture.bytes(output)), entry?["cached"] as? Bool ?? false)
    }
    #expect(try screen("a.jpg") == ([360, 280], false))
    #expect(try screen("b.jpg") == ([360, 280], true))
    // Another crop in the sidecar: the file's content is the same, its rendition not.
    try FileManager.default.removeItem(atPath: folder.file("one.xmp"))
    try ForeignEditTests.lightroom(
      photo,
      [
        "HasCrop": "True", "CropLeft": "0", "CropTop": "0", "CropRight": "0.5", "CropBottom": "0.5",
      ],
      sidecar: true)
    #expect(try screen("c.jpg") == ([300, 200], false))

    // Taken over by Darkroom: the file is the edit now, and the sidecar is not applied again.
    #expect(try CLI.run(["edit", photo, "--from-xmp"]).status == 0)
    #expect(try screen("d.jpg").size == [300, 200])
    #expect(try CLI.run(["revert", photo]).status == 0)
    #expect(try screen("e.jpg").size == [300, 200])

    // darktable's crop, from its NAME.EXT.xmp.
    let dt = try ForeignEditTests.copy("orientation-6.jpg", to: "dt.jpg", in: folder)
    _ = try folder.write(
      "dt.jpg.xmp",
      Array(
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:darktable="http://darktable.sf.net/" darktable:history_end="1">
        <darktable:history><rdf:Seq>
        <rdf:li darktable:num="0" darktable:operation="crop" darktable:enabled="1" darktable:modversion="1"
          darktable:params="cdcccc3dcdcc4c3e3333333f6666663f0000000000000000" darktable:multi_priority="0"/>
        </rdf:Seq></darktable:history></rdf:Description></rdf:RDF></x:xmpmeta>
        """.utf8))
    let cropped = try Self.render(dt, "fullscreen", in: folder, as: "dt-screen.jpg")
    #expect(try Self.size(Fixture.bytes(cropped)) == [360, 280])

    // Settings already applied to the pixels, and a sidecar that is not XMP: as it is.
    let applied = try ForeignEditTests.copy("orientation-1.jpg", to: "applied.jpg", in: folder)
    var settings = Self.cropAndGrey
    settings["AlreadyApplied"] = "True"
    try ForeignEditTests.lightroom(applied, settings, sidecar: false)
    let asItIs = try Self.render(applied, "fullscreen", in: folder, as: "applied-screen.jpg")
    #expect(try Self.size(Fixture.bytes(asItIs)) == [600, 400])
    // Lightroom's NAME.xmp beside a RAW is the RAW's: the JPEG of the same name (the camera's,
    // or one rendered from the RAW) is shown as it is, unless crs:RawFileName names it.
    let pair = try ForeignEditTests.copy("orientation-1.jpg", to: "pair.jpg", in: folder)
    _ = try folder.write("pair.dng", Array("a RAW beside it".utf8))
    try ForeignEditTests.lightroom(pair, Self.cropAndGrey, sidecar: true)
    let beside = try Self.render(pair, "fullscreen", in: folder, as: "pair-screen.jpg")
    #expect(try Self.size(Fixture.bytes(beside)) == [600, 400])
    try FileManager.default.removeItem(atPath: folder.file("pair.xmp"))
    var named = Self.cropAndGrey
    named["RawFileName"] = "pair.jpg"
    try ForeignEditTests.lightroom(pair, named, sidecar: true)
    let itsOwn = try Self.render(pair, "fullscreen", in: folder, as: "pair-own.jpg")
    #expect(try Self.size(Fixture.bytes(itsOwn)) == [360, 280])

    let broken = try ForeignEditTests.copy("orientation-1.jpg", to: "broken.jpg", in: folder)
    _ = try folder.write("broken.xmp", Array("<x:xmpmeta><rdf:RDF>".utf8))
    let unedited = try Self.render(broken, "fullscreen", in: folder, as: "broken-screen.jpg")
    #expect(try Self.size(Fixture.bytes(unedited)) == [600, 400])
  }

  @Test(
    "the library and the API show the edit the scan catalogued (the asset's mark, its version), original=true the file's own, a smaller thumbnail made from a larger one is cropped once, and a changed sidecar is seen after a scan; a space shows an embedded one"
  )
  func libraryAPIAndSpace() async throws {
    let served = try ServedLibrary(samples: ["orientation-6.jpg", "gps.jpg"])
    let photo = served.root + "/orientation-6.jpg"
    try ForeignEditTests.lightroom(photo, Self.cropAndGrey, sidecar: true)
    _ = try await served.library.scan()
    let asset = try #require(try served.library.asset(atPath: photo))
    #expect(asset.foreignSettings?.program == "lightroom")
    #expect(asset.foreignSettings?.source == "orientation-6.xmp")
    #expect(asset.foreignSettings?.values["CropLeft"] == "0.1")
    let plain = try #require(try served.library.asset(atPath: served.root + "/gps.jpg"))
    #expect(plain.foreignSettings == nil)
    // Settings already applied (a JPEG Lightroom exported): not an edit made elsewhere.
    var applied = Self.cropAndGrey
    applied["AlreadyApplied"] = "True"
    try ForeignEditTests.lightroom(served.root + "/gps.jpg", applied, sidecar: false)
    _ = try await served.library.scan()
    let exported = try #require(try served.library.asset(atPath: served.root + "/gps.jpg"))
    #expect(exported.foreignSettings == nil && exported.id == plain.id)
    let id = asset.id
    #expect(
      try Self.size(served.library.render(id, RenditionSpec(.fullscreen)).bytes) == [360, 280])
    #expect(
      try Self.size(await served.library.image(for: id, RenditionSpec(.fullscreen)).bytes) == [
        360, 280,
      ])
    let photoBytes = try Fixture.bytes(photo)

    try await served.test { client, _ in
      let described = try await client.execute(
        uri: "/api/assets/\(id)", method: .get, headers: ServedLibrary.read)
      let settings = described.object["foreignSettings"] as? [String: Any]
      #expect(settings?["program"] as? String == "lightroom", "\(described.text)")
      let version = try #require(described.object["version"] as? String)
      #expect(version.hasPrefix(String(asset.contentHash.prefix(12)) + "-") && version.count == 21)
      let screen = try await client.execute(
        uri: "/api/assets/\(id)/fullscreen?v=\(version)", method: .get, headers: ServedLibrary.read)
      #expect(screen.status == .ok)
      #expect(try Self.size(screen.bytes) == [360, 280])
      #expect(screen.headers[.cacheControl]?.contains("immutable") == true)
      let own = try await client.execute(
        uri: "/api/assets/\(id)/fullscreen?original=true", method: .get, headers: ServedLibrary.read
      )
      #expect(try Self.size(own.bytes) == [600, 400])
      #expect(own.headers[.eTag] != screen.headers[.eTag])
      let file = try await client.execute(
        uri: "/api/assets/\(id)/full?original=true", method: .get, headers: ServedLibrary.read)
      #expect(file.bytes == photoBytes)
      let edited = try await client.execute(
        uri: "/api/assets/\(id)/full", method: .get, headers: ServedLibrary.read)
      #expect(try Self.size(edited.bytes) == [360, 280])
      let bad = try await client.execute(
        uri: "/api/assets/\(id)/fullscreen?original=maybe", method: .get,
        headers: ServedLibrary.read)
      #expect(bad.status == .badRequest)
      #expect(
        (bad.object["error"] as? [String: Any])?["message"] as? String
          == "original takes true or false; not maybe", "\(bad.text)")
    }
    // A larger aspect thumbnail first, then a smaller one made from it (not from the
    // original): cropped once (twice would be 180x163).
    let images = Images(served.library)
    var large = RenditionSpec(.aspectThumbnail)
    large.size = 300
    #expect(try Self.size(await images.image(of: asset, large).bytes) == [300, 233])
    var small = RenditionSpec(.aspectThumbnail)
    small.size = 180
    let counter = ReadCounter()
    let path = try served.library.checkedPath(of: asset)
    let derived = try await FaultInjection.whenReached(
      "thumbnail-from-larger", file: path, { counter.hit(path) },
      during: { try await images.image(of: asset, small) })
    #expect(counter[path] == 1)
    #expect(try Self.size(derived.bytes) == [180, 140])

    // The sidecar changes; the next scan catalogues it, and the API shows it.
    try FileManager.default.removeItem(atPath: served.root + "/orientation-6.xmp")
    try ForeignEditTests.lightroom(
      photo,
      [
        "HasCrop": "True", "CropLeft": "0", "CropTop": "0", "CropRight": "0.5", "CropBottom": "0.5",
      ],
      sidecar: true)
    _ = try await served.library.scan()
    let changed = try #require(try served.library.asset(atPath: photo))
    #expect(changed.foreignSettings?.values["CropRight"] == "0.5")
    try await served.test { client, _ in
      let screen = try await client.execute(
        uri: "/api/assets/\(id)/fullscreen", method: .get, headers: ServedLibrary.read)
      #expect(try Self.size(screen.bytes) == [300, 200])
    }
    #expect(try Fixture.bytes(photo) == photoBytes)

    // A space: the sealed original's own settings (it keeps no sidecar).
    let folder = try TemporaryFolder()
    let eight = try ForeignEditTests.copy("orientation-8.jpg", to: "eight.jpg", in: folder)
    try ForeignEditTests.lightroom(
      eight,
      [
        "HasCrop": "True", "CropLeft": "0.25", "CropTop": "0", "CropRight": "0.75",
        "CropBottom": "0.5",
      ],
      sidecar: false)
    _ = try Space.create(at: folder.file("Spaces"), password: pw("p"), kdf: testKDF)
    let space = try Library.open(space: folder.file("Spaces"), password: pw("p"))
    defer { space.close() }
    let (sealed, _) = try space.add(file: eight)
    #expect(try Self.size(space.render(sealed.id, RenditionSpec(.fullscreen)).bytes) == [300, 200])
    var original = RenditionSpec(.fullscreen)
    original.foreignEdit = .hidden
    #expect(try Self.size(space.render(sealed.id, original).bytes) == [600, 400])
  }
}
