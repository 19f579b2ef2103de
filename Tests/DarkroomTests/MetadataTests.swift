import Foundation
import Testing

@testable import Darkroom

@Suite("Metadata from headers", .timeLimit(.minutes(10)), .offThePool)
struct MetadataTests {
  @Test("every orientation sample: tag, stored and display size, capture date", arguments: 1...8)
  func orientationSample(n: Int) throws {
    let m = try AssetMetadata.read(path: Fixture.sample("orientation-\(n).jpg"))
    #expect(m.format == "jpeg")
    #expect(m.orientation == .valid(Orientation(rawValue: n)!))
    #expect(m.orientation.raw == n)
    let swapped = n >= 5
    #expect(m.width == (swapped ? 400 : 600))
    #expect(m.height == (swapped ? 600 : 400))
    #expect(m.displayWidth == 600 && m.displayHeight == 400)
    #expect(m.captureDate?.iso8601 == "2024-06-0\(n)T10:0\(n):00")
    #expect(m.location == nil)
    #expect(m.iccProfile == nil)
    #expect(m.cameraModel == "Sample Scene")
    #expect(m.hasAlpha == false)
    let size = try FileManager.default.attributesOfItem(atPath: m.file)[.size] as? Int
    #expect(m.byteSize == size)
  }

  @Test("GPS south and west are negative; date carries sub-seconds and offset; exposure")
  func gpsSample() throws {
    let m = try AssetMetadata.read(path: Fixture.sample("gps.jpg"))
    let place = try #require(m.location)
    #expect(abs(place.latitude - -22.951916) < 1e-6)
    #expect(abs(place.longitude - -43.210487) < 1e-6)
    #expect(place.altitude == 700)
    #expect(m.captureDate?.iso8601 == "2023-12-31T23:59:58.250-03:00")
    #expect(m.captureDate?.utcOffsetMinutes == -180)
    #expect(m.cameraMake == "Darkroom")
    #expect(m.cameraModel == "Field Camera")
    #expect(m.lensModel == "Prime 35mm F1.4")
    #expect(m.exposureTime == 1.0 / 250)
    #expect(m.fNumber == 5.6)
    #expect(m.iso == 100)
    #expect(m.focalLength == 35)
    #expect(m.orientation == .valid(.up))
    #expect(m.iccProfile == nil)
  }

  @Test("Display P3 sample: profile found and described; GPS north, east, below sea level")
  func iccSample() throws {
    let m = try AssetMetadata.read(path: Fixture.sample("display-p3.jpg"))
    let icc = try #require(m.iccProfile)
    #expect(icc.colorSpace == "RGB")
    #expect(icc.description?.contains("P3") == true)
    #expect(icc.byteSize > 128)
    let place = try #require(m.location)
    #expect(abs(place.latitude - 35.658581) < 1e-6)
    #expect(abs(place.longitude - 139.745433) < 1e-6)
    #expect(place.altitude == -10)
    // No offset tag: the offset is Tokyo's, from the zone at its GPS position.
    #expect(m.captureDate?.iso8601 == "2022-03-15T08:30:00+09:00")
    #expect(m.captureDate?.utcOffsetMinutes == 540)
    #expect(m.timeZone == "Asia/Tokyo" && m.sources["utcOffset"] == "GPS time zone")
  }

  @Test("PNG with alpha and no EXIF is normal: alpha yes, orientation absent")
  func alphaSample() throws {
    let m = try AssetMetadata.read(path: Fixture.sample("alpha.png"))
    #expect(m.format == "png")
    #expect(m.hasAlpha)
    #expect(m.width == 600 && m.height == 400)
    #expect(m.orientation == .absent)
    #expect(m.orientation.effective == .up)
    #expect(m.captureDate == nil && m.location == nil && m.cameraMake == nil)
  }

  @Test("formats other than JPEG and PNG are read through libvips' header load")
  func otherFormatsThroughLibvips() throws {
    let folder = try Fixture.temporaryFolder()
    let image = try VipsImage.thumbnail(
      path: Fixture.sample("orientation-6.jpg"), .init(width: 300, height: 300))
    for (suffix, format) in [(".webp", "webp"), (".tif", "tiff"), (".gif", "gif")] {
      let path = try folder.write("x\(suffix)", try image.encode(suffix: suffix))
      let m = try AssetMetadata.read(path: path)
      #expect(m.format == format)
      #expect(m.width == 300 && m.height == 200, "\(suffix): upright thumbnail fitted in 300x300")
    }
  }

  @Test(
    "orientation tags 0, 9 and 65535 are invalid, reported raw, and treated as upright",
    arguments: [0, 9, 65535])
  func invalidOrientation(raw: Int) throws {
    let folder = try Fixture.temporaryFolder()
    let exif = ExifBuilder.block([ExifBuilder.short(0x0112, UInt16(raw))])
    let jpeg = ExifBuilder.jpeg(
      try Fixture.bytes(Fixture.sample("orientation-1.jpg")), replacingExifWith: exif)
    let m = try AssetMetadata.read(path: try folder.write("bad.jpg", jpeg))
    #expect(m.orientation == .invalid(raw: raw))
    #expect(m.orientation.effective == .up)
    #expect(m.displayWidth == 600)
  }

  @Test("EXIF with a looping IFD chain or offsets past the end does not hang or crash")
  func hostileExif() throws {
    let folder = try Fixture.temporaryFolder()
    let base = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let blocks: [[UInt8]] = [
      ExifBuilder.block([ExifBuilder.short(0x0112, 6)], nextIFD: 8),  // IFD1 = IFD0: a loop
      ExifBuilder.block([
        .init(tag: 0x010F, type: 2, count: 0x7FFF_FFFF, value: ExifBuilder.le(UInt32(0xFFFF_FF00)))
      ]),
      // The EXIF sub-IFD pointer points back at IFD0.
      ExifBuilder.block([.init(tag: 0x8769, type: 4, count: 1, value: ExifBuilder.le(UInt32(8)))]),
      ExifBuilder.block([ExifBuilder.short(0x0112, 3)], nextIFD: 0xFFFF_FFF0),
      Array("Exif\0\0".utf8) + [0x4D, 0x4D, 0x00, 0x2A, 0xFF, 0xFF, 0xFF, 0xFF],
    ]
    for (index, block) in blocks.enumerated() {
      let path = try folder.write(
        "hostile-\(index).jpg", ExifBuilder.jpeg(base, replacingExifWith: block))
      let m = try AssetMetadata.read(path: path)
      #expect(m.width == 600 && m.height == 400)
      #expect(m.cameraMake == nil)
    }
  }

  @Test("bad inputs: a clear error naming the file and the problem")
  func badInputs() throws {
    let folder = try Fixture.temporaryFolder()
    let jpeg = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let png = try Fixture.bytes(Fixture.sample("alpha.png"))
    let cases: [(String, DarkroomError.Kind, String)] = [
      (folder.file("missing.jpg"), .notFound, "no such file"),
      (folder.path, .isDirectory, "is a directory"),
      (
        try folder.write("notes.txt", Array("hello, not a photo\n".utf8)), .unsupportedFormat,
        "not an image"
      ),
      (try folder.write("empty.jpg", []), .empty, "empty file"),
      (try folder.write("cut-header.jpg", Array(jpeg.prefix(300))), .truncated, "truncated JPEG"),
      (
        try folder.write(
          "garbage.jpg", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array(repeating: 0x41, count: 64)),
        .corrupt, "corrupt JPEG"
      ),
    ]
    for (path, kind, words) in cases {
      let error = #expect(throws: DarkroomError.self) { try AssetMetadata.read(path: path) }
      #expect(error?.kind == kind, "\(path)")
      #expect(error?.file == path)
      #expect(error?.description.hasPrefix("\(path): ") == true)
      #expect(error?.message.contains(words) == true, "\(path): \(error?.message ?? "")")
    }
    // Cut after a whole header: described, with the damage stated (decoding refuses it).
    let damaged = [
      (try folder.write("cut-scan.jpg", Array(jpeg.prefix(jpeg.count / 2))), "truncated JPEG"),
      (try folder.write("cut-end.jpg", Array(jpeg.dropLast(2))), "truncated JPEG"),
      (try folder.write("cut.png", Array(png.dropLast(20))), "truncated PNG"),
    ]
    for (path, words) in damaged {
      let metadata = try AssetMetadata.read(path: path)
      #expect((metadata.width, metadata.height) == (600, 400))
      #expect(metadata.damage?.kind == .truncated && metadata.damage?.file == path)
      #expect(metadata.damage?.message.contains(words) == true)
      let render = #expect(throws: DarkroomError.self) {
        try Renderer().render(.file(path), RenditionSpec(.thumbnail))
      }
      #expect(render == metadata.damage, "render refuses it with the same words")
    }
  }

  @Test("a JPEG with data appended after its end marker is complete, not truncated")
  func trailingData() throws {
    let folder = try Fixture.temporaryFolder()
    let jpeg = try Fixture.bytes(Fixture.sample("orientation-6.jpg"))
    let path = try folder.write("trailer.jpg", jpeg + Array(repeating: 0x55, count: 200_000))
    #expect(try AssetMetadata.read(path: path).orientation == .valid(.right))
  }

  @Test(
    "an unreadable file is reported as such", .enabled(if: getuid() != 0, "root reads anything"))
  func unreadable() throws {
    let folder = try Fixture.temporaryFolder()
    let path = try folder.write("secret.jpg", try Fixture.bytes(Fixture.sample("gps.jpg")))
    chmod(path, 0)
    #expect(throws: DarkroomError(.unreadable, file: path, "cannot read: Permission denied")) {
      try AssetMetadata.read(path: path)
    }
  }
}
