import Foundation
import Testing

@testable import Darkroom

/// Decoded output, for checking pixels.
func decode(_ rendition: Rendition) throws -> VipsImage {
  try VipsImage.open(buffer: PinnedBytes(rendition.bytes), name: "output", sequential: false)
}

func expectColour(
  _ image: VipsImage, x: Int, y: Int, _ expected: [Double], tolerance: Double = 14,
  _ comment: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let got = Array(try image.pixel(x: x, y: y).prefix(3))
  let close = zip(got, expected).allSatisfy { abs($0 - $1) <= tolerance }
  #expect(close, "\(comment): got \(got), expected \(expected)", sourceLocation: sourceLocation)
}

/// Checks the four corner colours of the upright sample scene, scaled to `image`'s size.
func expectUprightCorners(_ image: VipsImage, _ comment: String) throws {
  let (w, h) = (image.width, image.height)
  let inset = max(3, min(w, h) / 20)
  let points = [
    (inset, inset), (w - 1 - inset, inset), (inset, h - 1 - inset), (w - 1 - inset, h - 1 - inset),
  ]
  for ((name, rgb), (x, y)) in zip(Fixture.corners, points) {
    try expectColour(image, x: x, y: y, rgb, "\(comment) \(name)")
  }
}

/// The EXIF of encoded JPEG bytes, parsed by libexif.
func exif(of bytes: [UInt8]) throws -> ExifDocument? {
  try ContainerHeader.parse(ByteSource(memory: bytes))?.exif.flatMap(ExifDocument.init(block:))
}

@Suite("Representations", .timeLimit(.minutes(10)), .offThePool)
struct RenderTests {
  let renderer = Renderer()

  @Test(
    "fullscreen, thumbnail and aspect-thumbnail are upright, exactly sized, Orientation 1",
    arguments: 1...8)
  func uprightForEveryOrientation(n: Int) throws {
    let source = ImageSource.file(Fixture.sample("orientation-\(n).jpg"))

    let fullscreen = try renderer.render(source, RenditionSpec(.fullscreen))
    #expect((fullscreen.width, fullscreen.height) == (600, 400), "never upscaled")
    try expectUprightCorners(try decode(fullscreen), "fullscreen \(n)")

    var small = RenditionSpec(.fullscreen)
    (small.screenWidth, small.screenHeight) = (300, 300)
    let fitted = try renderer.render(source, small)
    #expect((fitted.width, fitted.height) == (300, 200))

    let aspect = try renderer.render(source, RenditionSpec(.aspectThumbnail))
    #expect((aspect.width, aspect.height) == (256, 171))
    try expectUprightCorners(try decode(aspect), "aspect-thumbnail \(n)")

    let square = try renderer.render(source, RenditionSpec(.thumbnail))
    #expect((square.width, square.height) == (256, 256))
    // The centre square shows the "F": its stem on the left, its top bar to the right.
    let image = try decode(square)
    let white: [Double] = [255, 255, 255]
    try expectColour(image, x: 109, y: 192, white, tolerance: 30, "thumbnail \(n): F stem")
    try expectColour(image, x: 173, y: 77, white, tolerance: 30, "thumbnail \(n): F top bar")
    let stemMirror = try image.pixel(x: 147, y: 192)
    #expect(stemMirror[2] < 200, "thumbnail \(n): no stem on the right")
    let barMirror = try image.pixel(x: 173, y: 179)
    #expect(barMirror[2] < 200, "thumbnail \(n): no bar at the bottom")

    for rendition in [fullscreen, aspect, square] {
      let metadata = try AssetMetadata.read(.data(rendition.bytes, name: "out"))
      #expect(metadata.orientation == .valid(.up) || metadata.orientation == .absent)
      #expect(metadata.width == rendition.width && metadata.height == rendition.height)
    }
  }

  @Test("the screen box turns to match a portrait photo")
  func portraitScreen() throws {
    // The stored pixels of orientation-6.jpg, labelled upright: a 400x600 portrait.
    let stored = try Fixture.bytes(Fixture.sample("orientation-6.jpg"))
    let portrait = ExifBuilder.jpeg(
      stored, replacingExifWith: ExifBuilder.block([ExifBuilder.short(0x0112, 1)]))
    var spec = RenditionSpec(.fullscreen)
    (spec.screenWidth, spec.screenHeight) = (300, 200)
    let out = try renderer.render(.data(portrait, name: "portrait.jpg"), spec)
    #expect((out.width, out.height) == (200, 300))
  }

  @Test("Display P3 source: fullscreen pixels match libvips' own conversion to sRGB")
  func iccConvertedToSRGB() throws {
    let path = Fixture.sample("display-p3.jpg")
    let out = try renderer.render(.file(path), RenditionSpec(.fullscreen))
    let image = try decode(out)
    let reference = try VipsImage.open(path: path, sequential: false).iccTransform(to: "srgb")
    for (x, y) in [(20, 20), (579, 20), (20, 379), (579, 379), (300, 50), (270, 250)] {
      let expected = try reference.pixel(x: x, y: y)
      try expectColour(
        image, x: x, y: y, Array(expected.prefix(3)), tolerance: 4, "P3 at \(x),\(y)")
    }
    // Unconverted P3 values of the red corner would be about (202, 54, 44).
    try expectColour(image, x: 20, y: 20, [220, 30, 30], tolerance: 6, "red corner in sRGB")
    let profile = try AssetMetadata.read(.data(out.bytes, name: "out")).iccProfile
    #expect(profile == nil || Renderer.isSRGB(profile!), "never the P3 profile on sRGB pixels")
  }

  @Test("metadata: kept with Orientation 1 and no EXIF thumbnail; strip-location; strip")
  func metadataPolicies() throws {
    let source = ImageSource.file(Fixture.sample("gps.jpg"))
    #expect(try exif(of: Fixture.bytes(Fixture.sample("gps.jpg")))?.thumbnailByteCount ?? 0 > 0)

    let kept = try renderer.render(source, RenditionSpec(.fullscreen))
    let keptMeta = try AssetMetadata.read(.data(kept.bytes, name: "kept"))
    #expect(keptMeta.location?.latitude == -22.951916)
    #expect(keptMeta.cameraModel == "Field Camera")
    #expect(keptMeta.orientation == .valid(.up))
    #expect(try exif(of: kept.bytes)?.thumbnailByteCount == 0)

    var spec = RenditionSpec(.fullscreen)
    spec.metadata = .stripLocation
    let noGPS = try AssetMetadata.read(.data(try renderer.render(source, spec).bytes, name: "s"))
    #expect(noGPS.location == nil)
    #expect(noGPS.cameraModel == "Field Camera")
    #expect(noGPS.captureDate?.iso8601 == "2023-12-31T23:59:58.250-03:00")

    spec.metadata = .strip
    let stripped = try renderer.render(.file(Fixture.sample("display-p3.jpg")), spec)
    let strippedMeta = try AssetMetadata.read(.data(stripped.bytes, name: "s"))
    #expect(strippedMeta.location == nil && strippedMeta.captureDate == nil)
    #expect(strippedMeta.iccProfile == nil)
    try expectColour(
      try decode(stripped), x: 20, y: 20, [220, 30, 30], tolerance: 6, "stripped P3 still converted"
    )
  }

  @Test("full: byte-exact copy in the source's format; re-encoded keeps stored orientation")
  func full() throws {
    let path = Fixture.sample("orientation-6.jpg")
    let copy = try renderer.render(.file(path), RenditionSpec(.full))
    #expect(ContentHash.of(bytes: copy.bytes) == (try ContentHash.of(file: path)))
    var spec = RenditionSpec(.full)
    spec.format = .png
    let png = try renderer.render(.file(path), spec)
    #expect((png.width, png.height) == (400, 600), "stored pixels, not turned")
    #expect(png.format == .png)
  }

  @Test("alpha survives where the format has it", arguments: [ImageFormat.png, .webp, .jpeg])
  func alpha(format: ImageFormat) throws {
    var spec = RenditionSpec(.thumbnail)
    spec.format = format
    let out = try renderer.render(.file(Fixture.sample("alpha.png")), spec)
    let image = try decode(out)
    #expect(image.hasAlpha == format.supportsAlpha)
    if format.supportsAlpha {
      #expect(try image.pixel(x: 2, y: 2).last == 0, "transparent border stays transparent")
    }
  }

  @Test("same source and spec give identical bytes every time")
  func deterministic() throws {
    let a = try renderer.render(
      .file(Fixture.sample("orientation-7.jpg")), RenditionSpec(.fullscreen))
    let b = try renderer.render(
      .file(Fixture.sample("orientation-7.jpg")), RenditionSpec(.fullscreen))
    #expect(a.bytes == b.bytes)
  }

  @Test("an image over the pixel limit is refused from its header, before decoding")
  func pixelLimit() throws {
    var limited = Renderer()
    limited.maxPixels = 100_000
    #expect(
      throws: DarkroomError(
        .tooLarge, file: Fixture.sample("gps.jpg"),
        "image is 600x400, over the limit of 100000 pixels")
    ) {
      try limited.render(.file(Fixture.sample("gps.jpg")), RenditionSpec(.thumbnail))
    }
  }

  @Test("a truncated JPEG fails with an error naming it, not a grey image")
  func truncatedSource() throws {
    let folder = try Fixture.temporaryFolder()
    let jpeg = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let path = try folder.write("cut.jpg", Array(jpeg.prefix(jpeg.count * 2 / 3)))
    let error = #expect(throws: DarkroomError.self) {
      try renderer.render(.file(path), RenditionSpec(.fullscreen))
    }
    #expect(error?.file == path)
    #expect(error?.kind == .truncated)
  }
}
