import Foundation
import Testing

@testable import Darkroom

/// HEICs decoded by FFmpeg's HEVC decoder, tile by tile (``HEVCStill``), against libheif's
/// decode of the same files (through libvips): the same size, upright, and SSIM >= 0.995.
/// The HEICs are made here by Scripts/make-heic.py (x265 through ffmpeg) as a phone lays
/// them out, since Debian's heif-enc writes no grids: tiles cut at the right and bottom,
/// the grid's description in `idat`, and each transform HEIF has.
@Suite("HEIC through FFmpeg", .timeLimit(.minutes(5)), .offThePool)
struct HEVCStillTests {
  /// Writes `name`.heic from `source` with make-heic.py's `options`.
  static func heic(
    _ name: String, from source: String = Fixture.sample("orientation-1.jpg"),
    _ options: [String], in folder: TemporaryFolder
  ) throws -> String {
    let path = folder.file("\(name).heic")
    let made = try CLI.run(
      [
        Fixture.root.appendingPathComponent("Scripts/make-heic.py").path,
        source, path,
      ] + options,
      executable: "/usr/bin/python3")
    try #require(made.status == 0, "\(made.stderr)")
    return path
  }

  /// libheif's decode of `path` through libvips (its transforms applied), as 8-bit sRGB.
  static func libheif(_ path: String, in folder: TemporaryFolder) throws -> VipsImage {
    let png = folder.file(URL(fileURLWithPath: path).lastPathComponent + ".libheif.png")
    let copy = try CLI.run(["colourspace", path, png, "srgb"], executable: "/usr/bin/vips")
    try #require(copy.status == 0, "\(copy.stderr)")
    return try pixels(png)
  }

  /// FFmpeg's decode of `path` (nil: HEVCStill does not take the file).
  static func ffmpeg(_ path: String) throws -> VipsImage? {
    try HEVCStill(Fixture.bytes(path))?.decode(name: path, maxPixels: 1 << 28, threads: 3)
  }

  /// `bytes` with the first occurrence of `pattern` replaced by `replacement`.
  static func patched(_ bytes: [UInt8], _ pattern: [UInt8], _ replacement: [UInt8]) throws
    -> [UInt8]
  {
    let at = try #require(
      (0...(bytes.count - pattern.count)).first {
        bytes[$0..<$0 + pattern.count].elementsEqual(pattern)
      })
    var out = bytes
    out.replaceSubrange(at..<at + pattern.count, with: replacement)
    return out
  }

  /// The mean structural similarity of two images' band `band` (luma, Rec. 601's weights,
  /// when `band` is nil): an 11-tap Gaussian window of sigma 1.5, as Wang et al. define it.
  static func ssim(_ a: VipsImage, _ b: VipsImage, band: Int? = nil) throws -> Double {
    #expect(a.width == b.width && a.height == b.height)
    func plane(_ image: VipsImage) throws -> [Double] {
      let bytes = try image.pixels()
      let bands = image.bands
      return (0..<image.width * image.height).map { i in
        if let band { return Double(bytes[i * bands + band]) }
        return 0.299 * Double(bytes[i * bands]) + 0.587 * Double(bytes[i * bands + 1])
          + 0.114 * Double(bytes[i * bands + 2])
      }
    }
    let (x, y) = (try plane(a), try plane(b))
    let (width, height) = (a.width, a.height)
    let kernel = (-5...5).map { exp(-Double($0 * $0) / (2 * 1.5 * 1.5)) }
    let total = kernel.reduce(0, +)
    func blur(_ values: [Double]) -> [Double] {
      // Valid region only: (width - 10) x (height - 10).
      var rows = [Double](repeating: 0, count: (width - 10) * height)
      for row in 0..<height {
        for column in 0..<width - 10 {
          var sum = 0.0
          for k in 0..<11 { sum += kernel[k] * values[row * width + column + k] }
          rows[row * (width - 10) + column] = sum / total
        }
      }
      var out = [Double](repeating: 0, count: (width - 10) * (height - 10))
      for row in 0..<height - 10 {
        for column in 0..<width - 10 {
          var sum = 0.0
          for k in 0..<11 { sum += kernel[k] * rows[(row + k) * (width - 10) + column] }
          out[row * (width - 10) + column] = sum / total
        }
      }
      return out
    }
    let (mx, my) = (blur(x), blur(y))
    let (xx, yy, xy) = (
      blur(x.map { $0 * $0 }), blur(y.map { $0 * $0 }), blur(zip(x, y).map { $0 * $1 })
    )
    let (c1, c2) = (0.01 * 255 * 0.01 * 255, 0.03 * 255 * 0.03 * 255)
    var sum = 0.0
    for i in 0..<mx.count {
      let (vx, vy, cov) = (xx[i] - mx[i] * mx[i], yy[i] - my[i] * my[i], xy[i] - mx[i] * my[i])
      sum +=
        ((2 * mx[i] * my[i] + c1) * (2 * cov + c2))
        / ((mx[i] * mx[i] + my[i] * my[i] + c1) * (vx + vy + c2))
    }
    return sum / Double(mx.count)
  }

  @Test(
    "grids cut at the edges, turned, mirrored and cropped match libheif's decode",
    arguments: [
      ("grid", ["--tile", "256"]),
      ("single", ["--single"]),
      ("turned", ["--tile", "256", "--rotate", "1"]),
      ("half-turned mirrored", ["--tile", "128", "--rotate", "2", "--mirror", "0"]),
      (
        "cropped turned mirrored",
        ["--tile", "256", "--clap", "401", "301", "--rotate", "3", "--mirror", "1"]
      ),
      ("cropped", ["--tile", "192", "--clap", "333", "222"]),
      ("10-bit", ["--tile", "256", "--depth", "10"]),
      ("limited range, no nclx", ["--tile", "256", "--limited", "--no-nclx"]),
    ])
  func matchesLibheif(name: String, options: [String]) throws {
    let folder = try Fixture.temporaryFolder()
    let path = try Self.heic(name.replacingOccurrences(of: " ", with: "-"), options, in: folder)
    let reference = try Self.libheif(path, in: folder)
    let decoded = try #require(try Self.ffmpeg(path), "HEVCStill takes \(name)")
    #expect((decoded.width, decoded.height) == (reference.width, reference.height))
    #expect(decoded.bands == 3)
    let similarity = try Self.ssim(decoded, reference)
    #expect(similarity >= 0.995, "\(name): SSIM \(similarity)")
    // Upright as libheif shows it, not merely similar in texture: the red corner patch of
    // the sample (top left before the transforms) is where libheif puts it.
    let reds = try [
      (0, 0), (decoded.width - 1, 0), (0, decoded.height - 1),
      (decoded.width - 1, decoded.height - 1),
    ].map { corner in
      (try decoded.pixel(x: corner.0, y: corner.1), try reference.pixel(x: corner.0, y: corner.1))
    }
    for (ours, theirs) in reds {
      #expect(zip(ours, theirs).allSatisfy { abs($0 - $1) <= 24 }, "\(name): \(ours) \(theirs)")
    }
  }

  @Test("an alpha plane, itself a grid, joins the colour (8 and 10 bits)", arguments: [8, 10])
  func alpha(depth: Int) throws {
    let folder = try Fixture.temporaryFolder()
    let path = try Self.heic(
      "alpha\(depth)", from: Fixture.sample("alpha.png"),
      ["--tile", "128", "--alpha", "--depth", "\(depth)"], in: folder)
    let reference = try Self.libheif(path, in: folder)
    let decoded = try #require(try Self.ffmpeg(path))
    #expect(decoded.bands == 4 && reference.bands == 4)
    #expect(try Self.ssim(decoded, reference, band: 3) >= 0.995)
    #expect(try Self.ssim(decoded, reference) >= 0.995)
    // The sample's corners are transparent, its middle opaque.
    #expect(try decoded.pixel(x: 2, y: 2)[3] <= 8)
    #expect(try decoded.pixel(x: 300, y: 200)[3] >= 247)
  }

  @Test("a clean aperture is cut where libheif cuts it: left rounded down, top to nearest")
  func cleanAperture() {
    typealias F = HEIFTransform.Fraction
    // 401 of 600 columns centred 7 right: first 306.5 - 200 = 106.5, rounded down.
    #expect(
      HEIFTransform.cleanAperture(
        size: F(numerator: 401, denominator: 1), offset: F(numerator: 14, denominator: 2),
        of: 600, top: false) == 106..<507)
    // 301 of 400 rows centred 5 down: first 204.5 - 150 = 54.5, rounded to 55.
    #expect(
      HEIFTransform.cleanAperture(
        size: F(numerator: 301, denominator: 1), offset: F(numerator: 5, denominator: 1),
        of: 400, top: true) == 55..<356)
    // Centred: 3 of 8 from (7 - 2) / 2 = 2.5, columns rounded down, rows to nearest.
    let three = F(numerator: 3, denominator: 1)
    let none = F(numerator: 0, denominator: 1)
    #expect(HEIFTransform.cleanAperture(size: three, offset: none, of: 8, top: false) == 2..<5)
    #expect(HEIFTransform.cleanAperture(size: three, offset: none, of: 8, top: true) == 3..<6)
    // Wholly outside: nothing (libheif refuses the file); partly: clamped to the picture.
    #expect(
      HEIFTransform.cleanAperture(
        size: F(numerator: 100, denominator: 1), offset: F(numerator: -300, denominator: 1),
        of: 200, top: false) == nil)
    #expect(
      HEIFTransform.cleanAperture(
        size: F(numerator: 100, denominator: 1), offset: F(numerator: -80, denominator: 1),
        of: 200, top: false) == 0..<70)
    // Other denominators are left to libheif.
    let clap =
      [UInt8](repeating: 0, count: 3) + [101] + [0, 0, 0, 3] + [0, 0, 0, 50]
      + [0, 0, 0, 1] + [UInt8](repeating: 0, count: 7) + [1] + [0, 0, 0, 0] + [0, 0, 0, 1]
    #expect(HEIFTransform.list([("clap", clap[...])], clap: true) == nil)
    #expect(HEIFTransform.list([("clap", clap[...])], clap: false) == nil)
  }

  @Test("hostile grids are left to libheif: a tile's size past its limit, a tile named twice")
  func hostile() throws {
    let folder = try Fixture.temporaryFolder()
    let path = try Self.heic("hostile", ["--tile", "256", "--thumbnail", "160"], in: folder)
    let bytes = try Fixture.bytes(path)
    #expect(HEVCStill(bytes)?.thumbnailSize?.width == 160)
    let ispe = Array("ispe".utf8) + [0, 0, 0, 0]
    // The tiles' size 0xFFFFFFFF square: not taken (and no size arithmetic overflows).
    let huge = try Self.patched(
      bytes, ispe + [0, 0, 1, 0, 0, 0, 1, 0], ispe + [UInt8](repeating: 0xFF, count: 8))
    #expect(HEVCStill(huge) == nil)
    // The thumbnail's size so: the photo is taken, its thumbnail is not counted.
    let thumb = try Self.patched(
      bytes, ispe + [0, 0, 0, 160, 0, 0, 0, 106], ispe + [UInt8](repeating: 0xFF, count: 8))
    let still = try #require(HEVCStill(thumb))
    #expect(still.thumbnailSize == nil)
    // The grid's second tile named as its first: not taken.
    let twice = try Self.patched(
      bytes, Array("dimg".utf8) + [0, 1, 0, 6, 0, 2, 0, 3],
      Array("dimg".utf8) + [0, 1, 0, 6, 0, 2, 0, 2])
    #expect(HEVCStill(twice) == nil)
    // Cut short: the last tiles' data is not in the file.
    #expect(HEVCStill(Array(bytes.prefix(bytes.count / 2))) == nil)
  }

  @Test("halved as it is converted: each 2x2 block averaged, no seam where tiles meet")
  func halved() throws {
    let folder = try Fixture.temporaryFolder()
    // 600x400 in tiles of 128: a cut column of 88 and a cut row of 16. Blurred, so that
    // no sharp colour edge (where 4:2:0's chroma makes the two ways differ) lies along a
    // tile's edge.
    let blurred = folder.file("blurred.png")
    let blur = try CLI.run(
      ["gaussblur", Fixture.sample("alpha.png"), blurred, "4"], executable: "/usr/bin/vips")
    try #require(blur.status == 0, "\(blur.stderr)")
    let path = try Self.heic("halved", from: blurred, ["--tile", "128", "--alpha"], in: folder)
    let still = try #require(HEVCStill(Fixture.bytes(path)))
    #expect(still.halves)
    let half = try still.decode(name: path, maxPixels: 1 << 28, threads: 2, halve: true)
    #expect((half.width, half.height, half.bands) == (300, 200, 4))
    // Against the full decode averaged in RGB by libvips' shrink: the same but for rounding
    // (the full decode interpolates 4:2:0's chroma across blocks), and it would differ all
    // along a tile's edge if a block straddled two tiles.
    let full = try folder.write(
      "full.png",
      still.decode(name: path, maxPixels: 1 << 28, threads: 2).encode(suffix: ".png"))
    let shrunk = folder.file("shrunk.png")
    let shrink = try CLI.run(["shrink", full, shrunk, "2", "2"], executable: "/usr/bin/vips")
    try #require(shrink.status == 0, "\(shrink.stderr)")
    let (ours, theirs) = (try half.pixels(), try pixels(shrunk).pixels())
    try #require(ours.count == theirs.count && ours.count == 300 * 200 * 4)
    func difference(_ x: Int, _ y: Int, _ band: Int) -> Int {
      abs(Int(ours[(y * 300 + x) * 4 + band]) - Int(theirs[(y * 300 + x) * 4 + band]))
    }
    let alpha = (0..<200).flatMap { y in (0..<300).map { x in difference(x, y, 3) } }
    #expect(alpha.max() ?? 0 <= 1)
    func mean(_ points: [(Int, Int)]) -> Double {
      let total = points.reduce(0.0) { sum, point in
        sum + Double((0..<3).map { difference(point.0, point.1, $0) }.reduce(0, +)) / 3
      }
      return total / Double(points.count)
    }
    let everywhere = mean((0..<200).flatMap { y in (0..<300).map { x in (x, y) } })
    #expect(everywhere < 0.6)
    // The columns and rows where tiles meet (64, 128, ... in the half) are no worse.
    for x in [63, 64, 127, 128, 191, 192, 255, 256] {
      let line = mean((0..<200).map { (x, $0) })
      #expect(line <= 2 * everywhere + 0.5, "column \(x): \(line) against \(everywhere)")
    }
    for y in [63, 64, 127, 128, 191, 192] {
      let line = mean((0..<300).map { ($0, y) })
      #expect(line <= 2 * everywhere + 0.5, "row \(y): \(line) against \(everywhere)")
    }
    // A clean aperture's edges are whole pixels of the full picture: not halved.
    let cropped = try Self.heic(
      "cropped-half", ["--tile", "128", "--clap", "301", "201"], in: folder)
    #expect(try #require(HEVCStill(Fixture.bytes(cropped))).halves == false)
  }

  @Test("renditions take this decoder; a thumbnail item that covers the size is used instead")
  func route() async throws {
    let folder = try Fixture.temporaryFolder()
    let path = try Self.heic("route", ["--tile", "256", "--thumbnail", "160"], in: folder)
    let renderer = Renderer()
    var spec = RenditionSpec(.fullscreen)
    spec.format = .png
    let shown = try pixels(folder.write("shown.png", renderer.render(.file(path), spec).bytes))
    let decoded = try #require(try Self.ffmpeg(path))
    #expect(try shown.pixels() == decoded.pixels(), "the fullscreen is FFmpeg's decode")
    #expect(try shown.pixels() != Self.libheif(path, in: folder).pixels())
    // A 64-pixel thumbnail is drawn from the 160-pixel thumbnail item, as vipsthumbnail does.
    var small = RenditionSpec(.aspectThumbnail)
    small.size = 64
    small.format = .png
    let thumbnail = try pixels(folder.write("small.png", renderer.render(.file(path), small).bytes))
    let vipsthumbnail = try VipsImage.thumbnail(
      path: path, VipsImage.ThumbnailOptions(width: 64, height: 64))
    #expect(try thumbnail.pixels() == vipsthumbnail.pixels())
  }

  @Test("a Display P3 profile (colr prof, as an iPhone writes) is converted to sRGB")
  func displayP3() throws {
    let folder = try Fixture.temporaryFolder()
    let source = Fixture.sample("display-p3.jpg")
    let profile = try #require(try pixels(source).blob(named: "icc-profile-data"))
    let icc = try folder.write("p3.icc", profile)
    let path = try Self.heic("p3", from: source, ["--tile", "256", "--icc", icc], in: folder)
    var spec = RenditionSpec(.fullscreen)
    spec.format = .png
    let shown = try pixels(folder.write("shown.png", Renderer().render(.file(path), spec).bytes))
    let decoded = try Self.libheif(path, in: folder)
    let reference = try decoded.iccTransform(to: "srgb")
    #expect(try shown.pixels() != decoded.pixels(), "FFmpeg's decode")
    #expect(try Self.ssim(shown, reference) >= 0.995)
    // The sample's saturated red is P3's: shown converted, it is sRGB's red, not P3's
    // numbers read as sRGB (which the unconverted decode has).
    let red = try VideoTests.patch(shown, 10, 10)
    let expected = try VideoTests.patch(reference, 10, 10)
    let unconverted = try VideoTests.patch(decoded, 10, 10)
    #expect(VideoTests.near(red, expected, within: 4), "\(red) \(expected)")
    #expect(!VideoTests.near(unconverted, expected, within: 8), "\(unconverted) \(expected)")
  }

  @Test("a tile that does not decode is named, the command fails, and nothing is written")
  func damagedTile() throws {
    let folder = try Fixture.temporaryFolder()
    let path = try Self.heic("damaged", ["--tile", "256"], in: folder)
    var bytes = try Fixture.bytes(path)
    // The first tile's first NAL unit says it is longer than the file.
    let mdat = try #require(ISOBoxes.topLevel("mdat", in: bytes))
    bytes.replaceSubrange(mdat.lowerBound..<mdat.lowerBound + 4, with: [0x7F, 0xFF, 0xFF, 0xF0])
    let damaged = try folder.write("damaged.heic", bytes)
    let output = folder.file("out.jpg")
    let result = try CLI.run(["render", damaged, "--rep", "fullscreen", "--no-cache", "-o", output])
    #expect(result.status == 1)
    #expect(
      result.stderr.contains("\(damaged): damaged image: tile 1 cannot be decoded"),
      "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: output))
    #expect(try Fixture.bytes(damaged) == bytes, "the file is left as it was")
  }

  @Test(
    "FFmpeg's decode of a HEIC's tiles keeps the render's time limit, which the Watchdog cannot: past it no tile starts, and the error is the time limit's, exactly"
  )
  func timeLimit() throws {
    let folder = try Fixture.temporaryFolder()
    let path = try Self.heic("limited", ["--tile", "128"], in: folder)
    let still = try #require(HEVCStill(Fixture.bytes(path)))
    // A limit already spent (no timing: the start is a minute ago).
    let spent = ContinuousClock.now - .seconds(60)
    #expect(
      throws: DarkroomError.timedOut(path, after: .seconds(30)),
      performing: {
        try Watchdog.keeping(.seconds(30), from: spent) { () throws(DarkroomError) in
          try still.decode(name: path, maxPixels: 1 << 28, threads: 2)
        }
      })
    // A limit not spent: the same pixels as with none.
    let limited = try Watchdog.keeping(.seconds(3600), from: .now) {
      () throws(DarkroomError) in try still.decode(name: path, maxPixels: 1 << 28, threads: 2)
    }
    let free = try still.decode(name: path, maxPixels: 1 << 28, threads: 2)
    #expect(try limited.pixels() == free.pixels())
  }
}
