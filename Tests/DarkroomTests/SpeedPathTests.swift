import Foundation
import Testing

@testable import Darkroom

@Suite("Fast paths give the same picture")
struct SpeedPathTests {
  /// A 1600x2400 JPEG stored with EXIF orientation 6 (the sample scene, scaled up), so that
  /// display representations shrink it on load.
  static func largeRotatedJPEG() throws -> [UInt8] {
    var options = VipsImage.ThumbnailOptions(width: 2400, height: 2400)
    options.size = 1  // up
    options.autoRotate = false
    let large = try VipsImage.thumbnail(path: Fixture.sample("orientation-6.jpg"), options)
    return try large.encode(suffix: ".jpg[Q=90]")
  }

  /// The mean absolute difference of two images' bands over a 24x24 grid of points.
  static func meanDifference(_ a: VipsImage, _ b: VipsImage) throws -> Double {
    var total = 0.0
    var count = 0
    for row in 0..<24 {
      for column in 0..<24 {
        let x = (column * 2 + 1) * a.width / 48
        let y = (row * 2 + 1) * a.height / 48
        let pa = try a.pixel(x: x, y: y)
        let pb = try b.pixel(x: x, y: y)
        for (va, vb) in zip(pa, pb) {
          total += abs(va - vb)
          count += 1
        }
      }
    }
    return total / Double(count)
  }

  @Test(
    "JPEG shrink-on-load to just above the box: same size and metadata, pixels within 3 levels",
    arguments: [Representation.fullscreen, .thumbnail, .aspectThumbnail])
  func jpegShrinkMatchesFullDecode(representation: Representation) throws {
    let bytes = try Self.largeRotatedJPEG()
    var spec = RenditionSpec(representation)
    spec.size = 200
    (spec.screenWidth, spec.screenHeight) = (900, 600)
    let renderer = Renderer()
    let metadata = try AssetMetadata.read(.data(bytes, name: "large.jpg"))
    let box = renderer.box(spec, metadata)
    let shrink = Renderer.jpegShrink(metadata, box, fill: representation == .thumbnail)
    #expect(shrink >= 2, "the test exercises the fast path")

    // What the renderer did before: libvips' thumbnail, which decodes every pixel.
    var options = VipsImage.ThumbnailOptions(width: box.width, height: box.height)
    if representation == .thumbnail {
      options.crop = spec.crop.vipsInteresting
      options.size = 0
    }
    let full = try VipsImage.thumbnail(buffer: PinnedBytes(bytes), name: "full", options)
    let fast = try renderer.render(.data(bytes, name: "large.jpg"), spec)
    let decoded = try VipsImage.open(
      buffer: PinnedBytes(fast.bytes), name: "fast", sequential: false)
    #expect((fast.width, fast.height) == (full.width, full.height))
    #expect(try Self.meanDifference(full, decoded) < 3)
    let described = try AssetMetadata.read(.data(fast.bytes, name: "fast"))
    #expect(described.orientation == .valid(.up))
    #expect(described.cameraName == metadata.cameraName)
  }

  @Test("the shrink is the largest power of two that still covers the output")
  func shrinkChoice() throws {
    var metadata = try AssetMetadata.read(path: Fixture.sample("orientation-1.jpg"))
    (metadata.width, metadata.height) = (6000, 4000)
    metadata.orientation = .valid(.right)  // shown 4000x6000
    #expect(Renderer.jpegShrink(metadata, (1080, 1920), fill: false) == 2)  // 3.7x
    #expect(Renderer.jpegShrink(metadata, (256, 256), fill: true) == 8)  // 15.6x
    #expect(Renderer.jpegShrink(metadata, (256, 256), fill: false) == 8)  // 23x
    #expect(Renderer.jpegShrink(metadata, (3000, 5000), fill: false) == 1)  // 1.2x
    #expect(Renderer.jpegShrink(metadata, (8000, 8000), fill: false) == 1)  // no upscale
  }
}
