import Darkroom
import Foundation
import Testing

/// Edits of HEIC and AVIF photos: written with the encoder setting measured for their size
/// (``ImageFormat/editEffort(pixels:)``), at a HEIC source's own quality (``HEVCQuality``),
/// with `--effort` kept in the adjustment data. The HEICs are written by libheif's `heif-enc`
/// with x265's presets, as libheif's users (and libvips) write them.
@Suite("HEIC and AVIF edits", .timeLimit(.minutes(5)), .offThePool)
struct PhoneFormatEditTests {
  /// The sample scene at 1200x800 with a fixed film-like grain, as a PNG: something that
  /// compresses like a photo (libvips' `vips` command makes it).
  private func scene(in folder: TemporaryFolder) throws -> String {
    let png = folder.file("scene.png")
    guard !FileManager.default.fileExists(atPath: png) else { return png }
    let (big, noise, sum) = (folder.file("big.v"), folder.file("noise.v"), folder.file("sum.v"))
    for step in [
      ["resize", Fixture.sample("orientation-1.jpg"), big, "2"],
      ["gaussnoise", noise, "1200", "800", "--sigma", "5", "--mean", "0", "--seed", "7"],
      ["add", big, noise, sum], ["cast", sum, png, "uchar"],
    ] {
      let made = try CLI.run(step, executable: "/usr/bin/vips")
      #expect(made.status == 0, "\(step[0]): \(made.stderr)")
    }
    return png
  }

  /// The scene as a HEIC of libheif's `quality` with x265's `preset`.
  private func heic(_ quality: Int, preset: String, in folder: TemporaryFolder, name: String)
    throws -> String
  {
    let path = folder.file(name)
    let made = try CLI.run(
      ["-q", String(quality), "-p", "preset=\(preset)", try scene(in: folder), "-o", path],
      executable: "/usr/bin/heif-enc")
    #expect(made.status == 0, "\(made.stderr)")
    return path
  }

  @Test(
    "a HEIC's quality is read back from its first slice within a point, whichever x265 preset wrote it; no HEVC, no guess"
  )
  func estimate() throws {
    let folder = try TemporaryFolder()
    for preset in ["ultrafast", "slow"] {
      for quality in [20, 50, 80, 92] {
        let path = try heic(quality, preset: preset, in: folder, name: "\(preset)-\(quality).heic")
        let estimate = try #require(HEVCQuality.estimate(try Fixture.bytes(path)))
        #expect(abs(estimate - quality) <= 1, "\(preset) Q\(quality): \(estimate)")
      }
    }
    let whole = try Fixture.bytes(folder.file("slow-50.heic"))
    // Cut before the slice data, or not a HEIF at all: no estimate.
    #expect(HEVCQuality.estimate(Array(whole.prefix(600))) == nil)
    #expect(HEVCQuality.estimate(try Fixture.bytes(Fixture.sample("gps.jpg"))) == nil)
    #expect(HEVCQuality.estimate([]) == nil)
    var garbled = whole
    for index in stride(from: 40, to: min(garbled.count, 2000), by: 7) { garbled[index] ^= 0x5A }
    // Garbled boxes and parameter sets: an answer in range or none, never a crash.
    #expect(HEVCQuality.estimate(garbled).map { (1...100).contains($0) } ?? true)
  }

  @Test(
    "a HEIC edit is written at its source's quality with the preset for its size (slow under 4 megapixels), keeps EXIF and adjustment data, and keeps --effort; every door writes the same"
  )
  func edits() async throws {
    let folder = try TemporaryFolder()
    let path = try heic(50, preset: "slow", in: folder, name: "a.heic")
    let before = try Fixture.bytes(path).count
    let edited = try CLI.run(["edit", path, "--filter", "tone exposure=0.15"])
    #expect(edited.status == 0, "\(edited.stderr)")
    let data = try #require(try Editor().adjustments(path))
    #expect(data.result.quality == 50)
    #expect(data.result.effort == 6, "1200x800: x265's slow, libheif's own preset")
    let after = try Fixture.bytes(path)
    #expect(HEVCQuality.estimate(after) == 50)
    let ratio = Double(after.count) / Double(before)
    #expect(ratio >= 0.8 && ratio <= 1.15, "\(before) -> \(after.count) bytes")

    // Asked for, an effort is used and kept; a second edit renders from the original.
    let effort = try CLI.run(["edit", path, "--filter", "tone exposure=0.15", "--effort", "3"])
    #expect(effort.status == 0, "\(effort.stderr)")
    #expect(try Editor().adjustments(path)?.result.effort == 3)
    #expect(try Fixture.bytes(path) != after, "another preset, other bytes")
    let wrong = try CLI.run(["edit", path, "--filter", "noir", "--effort", "10"])
    #expect(wrong.status == 2)
    #expect(wrong.stderr.contains("Expected integer between 0 and 9 for --effort but received 10"))

    // The sample's EXIF is carried, turned upright, with the edit's adjustment data in XMP.
    let turned = try folder.write("turned.heic", Fixture.bytes(Fixture.sample("heif-exif-6.heic")))
    #expect(try CLI.run(["edit", turned, "--filter", "tone exposure=0.15"]).status == 0)
    let tags = try CLI.run(
      ["-s3", "-Orientation#", "-Make", "-Model", "-ImageSize", turned],
      executable: "/usr/bin/exiftool")
    #expect(tags.stdout == "1\nDarkroom\nHEIF Sample\n600x400\n", "\(tags.stdout)")
    let xmp = try CLI.run(["-b", "-XMP", turned], executable: "/usr/bin/exiftool")
    #expect(xmp.stdout.contains("darkroom:AdjustmentData"))
    #expect(try Editor().adjustments(turned)?.result.effort == 6)

    // A re-run skips what is current: at the effort it would write now.
    let batch = folder.file("batch")
    try FileManager.default.createDirectory(atPath: batch, withIntermediateDirectories: true)
    let rerun = try heic(50, preset: "ultrafast", in: folder, name: "batch/r.heic")
    let two = try CLI.run(["apply", batch, "--filter", "noir", "--effort", "2"])
    #expect(two.status == 0, "\(two.stderr)")
    #expect(try Editor().adjustments(rerun)?.result.effort == 2)
    let again = try CLI.run(["apply", batch, "--filter", "noir", "--progress", "none"])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(try Editor().adjustments(rerun)?.result.effort == 6, "re-encoded at the default")
    let third = try CLI.run(["apply", batch, "--filter", "noir", "--progress", "json"])
    #expect(third.stdout.contains("\"skipped\""), "now current: \(third.stdout)")

    // The library's edit by id (the server's) and a space's edit write the same.
    let library = try Library.create(at: folder.path)
    let fresh = try heic(50, preset: "slow", in: folder, name: "by-id.heic")
    _ = try await library.scan()
    let id = try #require(try library.asset(atPath: fresh)?.id)
    let byID = try await library.edit(id, with: try FilterGraph.parse(spec: "noir")).result
    #expect(byID.quality == 50 && byID.effort == 6)
    let space = Library(
      space: try Space.create(
        at: folder.file("S"), password: Array("pw".utf8),
        kdf: KDFParameters(ops: 1, memory: 8 << 20)))
    let (asset, _) = try space.add(
      file: try heic(50, preset: "slow", in: folder, name: "sealed.heic"))
    let sealed = try await space.edit(asset.id, with: try FilterGraph.parse(spec: "noir")).result
    #expect(sealed.quality == 50 && sealed.effort == 6)
    space.close()
  }

  @Test(
    "an AVIF's quality is read back from its first frame header within a point (libvips at efforts 0 and 4); an edit is written at it, at the effort for its size unless --effort says otherwise"
  )
  func avif() throws {
    let folder = try TemporaryFolder()
    let scene = try scene(in: folder)
    for effort in [0, 4] {
      for quality in [20, 50, 90] {
        let path = folder.file("e\(effort)-q\(quality).avif")
        let made = try CLI.run(
          ["copy", scene, "\(path)[Q=\(quality),compression=av1,effort=\(effort)]"],
          executable: "/usr/bin/vips")
        #expect(made.status == 0, "\(made.stderr)")
        let estimate = try #require(AV1Quality.estimate(try Fixture.bytes(path)))
        #expect(abs(estimate - quality) <= 1, "effort \(effort) Q\(quality): \(estimate)")
      }
    }
    #expect(AV1Quality.estimate(try Fixture.bytes(Fixture.sample("heif-exif-6.heic"))) == nil)
    #expect(
      AV1Quality.estimate(Array(try Fixture.bytes(folder.file("e0-q50.avif")).prefix(400))) == nil)

    // libavif's own encoder (its quantizers, not libheif's quality): an estimate all the same.
    let avif = folder.file("a.avif")
    let made = try CLI.run(
      ["--min", "20", "--max", "30", scene, avif], executable: "/usr/bin/avifenc")
    #expect(made.status == 0, "\(made.stderr)")
    let own = try #require(AV1Quality.estimate(try Fixture.bytes(avif)))
    #expect((50...70).contains(own), "\(own)")
    // A grid of tiles (as phones write large photos) is read through its first tile: the same
    // encoder settings, the same estimate. HEIC grids are found the same way.
    let grid = folder.file("grid.avif")
    let tiled = try CLI.run(
      ["--grid", "2x2", "--min", "20", "--max", "30", scene, grid], executable: "/usr/bin/avifenc")
    #expect(tiled.status == 0, "\(tiled.stderr)")
    #expect(AV1Quality.estimate(try Fixture.bytes(grid)) == own)
    let before = try Fixture.bytes(avif).count
    let copy = try folder.write("b.avif", Fixture.bytes(avif))
    #expect(try CLI.run(["edit", avif, "--filter", "tone exposure=0.15"]).status == 0)
    #expect(try CLI.run(["edit", copy, "--filter", "noir", "--effort", "0"]).status == 0)
    let edit = try #require(try Editor().adjustments(avif))
    #expect(edit.result.effort == 4, "1200x800: aom's speed 5, libvips' default")
    #expect(edit.result.format == "avif" && edit.result.quality == own)
    let after = try Fixture.bytes(avif).count
    let ratio = Double(after) / Double(before)
    #expect(ratio >= 0.5 && ratio <= 1.5, "\(before) -> \(after) bytes")
    #expect(try Editor().adjustments(copy)?.result.effort == 0)
    #expect(try Fixture.bytes(avif) != Fixture.bytes(copy))
  }

  @Test(
    "an edit's effort follows its size as measured (Benchmarks/encoder_rd.sh), and is the encoder setting it names: the pixels of the edit are heif-enc's at aom's speed or x265's preset for the same edited pixels"
  )
  func effortBySize() throws {
    // The steps: the larger the photo, the faster the setting; no effort for other formats.
    let sizes = [(1200, 800), (2592, 1944), (3456, 2764), (4032, 3024), (4896, 3264), (6000, 4000)]
    #expect(sizes.map { ImageFormat.avif.editEffort(pixels: $0.0 * $0.1) } == [4, 3, 3, 3, 2, 0])
    #expect(sizes.map { ImageFormat.heic.editEffort(pixels: $0.0 * $0.1) } == [6, 2, 1, 0, 0, 0])
    #expect(ImageFormat.jpeg.editEffort(pixels: 1200 * 800) == nil)
    #expect(ImageFormat.heic.takesEffort && !ImageFormat.png.takesEffort)

    let folder = try TemporaryFolder()
    let scene = try scene(in: folder)
    for (format, effort, setting) in [
      (ImageFormat.avif, 2, "speed=7"), (.avif, 4, "speed=5"), (.heic, 2, "preset=veryfast"),
    ] {
      let name = "\(format.rawValue)-\(effort)"
      let source = folder.file("\(name).\(format.fileExtension)")
      let made = try CLI.run(
        (format == .avif ? ["-A"] : []) + ["-q", "60", scene, "-o", source],
        executable: "/usr/bin/heif-enc")
      #expect(made.status == 0, "\(made.stderr)")
      // The lossless edit: the source's decoded pixels, edited as a PNG.
      let reference = folder.file("\(name).png")
      let copied = try CLI.run(["copy", source, reference], executable: "/usr/bin/vips")
      #expect(copied.status == 0, "\(copied.stderr)")
      #expect(try CLI.run(["edit", reference, "--filter", "noir"]).status == 0)
      // The edit at the effort its size gives (AVIF's 4) or one asked for.
      let asked = format == .avif && effort == 4 ? [] : ["--effort", String(effort)]
      let edited = try CLI.run(["edit", source, "--filter", "noir"] + asked)
      #expect(edited.status == 0, "\(edited.stderr)")
      let data = try #require(try Editor().adjustments(source))
      #expect(data.result.effort == effort)
      // heif-enc (libheif, as Darkroom and libvips use it) at the setting the effort names.
      let theirs = folder.file("\(name)-heif-enc.\(format.fileExtension)")
      let encoded = try CLI.run(
        (format == .avif ? ["-A"] : [])
          + ["-q", String(data.result.quality), "-p", setting, reference, "-o", theirs],
        executable: "/usr/bin/heif-enc")
      #expect(encoded.status == 0, "\(encoded.stderr)")
      // Their pixels, as libvips' vips command decodes them (libheif), byte for byte.
      var decoded: [[UInt8]] = []
      for file in [source, theirs] {
        let raw = file + ".raw"
        let saved = try CLI.run(["rawsave", file, raw], executable: "/usr/bin/vips")
        #expect(saved.status == 0, "\(saved.stderr)")
        decoded.append(try Fixture.bytes(raw))
      }
      #expect(decoded[0].count == 1200 * 800 * 3)
      // Compared outside #expect, which would print both 2.9 MB arrays on a failure.
      let differing = zip(decoded[0], decoded[1]).count { $0 != $1 }
      #expect(
        decoded[0].count == decoded[1].count && differing == 0,
        "\(name): the edit is heif-enc's \(setting) at Q\(data.result.quality)")
    }
  }
}
