import Foundation
import Testing

@testable import Darkroom

/// Videos' display representations: a representative frame, upright, in sRGB, tone-mapped
/// when HDR, made by FFmpeg's libraries in the workers. The videos are made here by the
/// `ffmpeg` command (Debian's), from pictures the tests draw.
@Suite("Video posters", .timeLimit(.minutes(10)))
struct VideoTests {
  /// The quadrants of the test picture, as stored: top-left, top-right, bottom-right,
  /// bottom-left (clockwise).
  static let quadrants: [[Double]] = [
    [220, 30, 30], [30, 200, 30], [240, 240, 240], [30, 30, 220],
  ]

  /// Runs ffmpeg, which must succeed.
  static func ffmpeg(_ arguments: [String], in folder: TemporaryFolder) throws {
    let run = try CLI.run(
      ["-v", "error", "-y"] + arguments, cwd: folder.path, executable: "/usr/bin/ffmpeg")
    #expect(run.status == 0, "ffmpeg \(arguments): \(run.stderr)")
  }

  /// A 640x360 picture of four coloured quadrants, as a PNG in `folder`.
  static func quadrantPicture(in folder: TemporaryFolder) throws -> String {
    var pixels = [UInt8](repeating: 0, count: 640 * 360 * 3)
    for y in 0..<360 {
      for x in 0..<640 {
        let quadrant = y < 180 ? (x < 320 ? 0 : 1) : (x < 320 ? 3 : 2)
        for band in 0..<3 { pixels[(y * 640 + x) * 3 + band] = UInt8(quadrants[quadrant][band]) }
      }
    }
    let image = try VipsImage.fromPixels(pixels, width: 640, height: 360, bands: 3)
    return try folder.write("quadrants.png", try image.encode(suffix: ".png"))
  }

  /// A phone-style clip: one second of black, then two of the quadrants, H.264, its track
  /// matrix turned by ffmpeg's `rotate` tag (degrees counter-clockwise, as ffmpeg 5 writes it).
  static func clip(rotate: Int, in folder: TemporaryFolder) throws -> String {
    let picture = try quadrantPicture(in: folder)
    let plain = folder.file("plain.mp4")
    if !FileManager.default.fileExists(atPath: plain) {
      try ffmpeg(
        [
          "-f", "lavfi", "-i", "color=c=black:s=640x360:r=30:d=1", "-loop", "1", "-framerate", "30",
          "-t", "2", "-i", picture, "-filter_complex",
          "[0:v]format=yuv420p[a];[1:v]format=yuv420p[b];[a][b]concat=n=2:v=1[v]", "-map", "[v]",
          "-c:v", "libx264", "-pix_fmt", "yuv420p", plain,
        ], in: folder)
    }
    let name = folder.file("rotate-\(rotate).mp4")
    try ffmpeg(
      ["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=\(rotate)", name], in: folder)
    return name
  }

  /// The mean colour of a `size`x`size` patch of `image` at (x, y).
  static func patch(_ image: VipsImage, _ x: Int, _ y: Int, size: Int = 8) throws -> [Double] {
    var sum = [0.0, 0.0, 0.0]
    for dy in 0..<size {
      for dx in 0..<size {
        let pixel = try image.pixel(x: x + dx, y: y + dy)
        for band in 0..<3 { sum[band] += pixel[band] }
      }
    }
    return sum.map { $0 / Double(size * size) }
  }

  static func near(_ a: [Double], _ b: [Double], within tolerance: Double = 24) -> Bool {
    zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
  }

  /// The colours at an image's corners: top-left, top-right, bottom-right, bottom-left.
  static func corners(_ image: VipsImage) throws -> [[Double]] {
    let (w, h) = (image.width - 12, image.height - 12)
    return [
      try patch(image, 4, 4), try patch(image, w, 4), try patch(image, w, h),
      try patch(image, 4, h),
    ]
  }

  @Test(
    "a portrait clip whose first second is black: fullscreen and thumbnail upright (as ffmpeg shows it) and not black, at 0, 90, 180 and 270 degrees"
  )
  func rotations() throws {
    let folder = try Fixture.temporaryFolder()
    for rotate in [0, 90, 180, 270] {
      let clip = try Self.clip(rotate: rotate, in: folder)
      let header = try VideoHeader.read(path: clip)
      #expect(header.rotation == (360 - rotate) % 360, "\(rotate)")
      // What ffmpeg itself shows 1.5 s in (it turns frames by the matrix too).
      let shownByFFmpeg = folder.file("ffmpeg-\(rotate).png")
      try Self.ffmpeg(["-ss", "1.5", "-i", clip, "-frames:v", "1", shownByFFmpeg], in: folder)
      let expected = try Self.corners(pixels(shownByFFmpeg))

      let screen = folder.file("screen-\(rotate).jpg")
      let rendered = try CLI.run(["render", "--rep", "fullscreen", clip, "-o", screen])
      #expect(rendered.status == 0, "\(rendered.stderr)")
      #expect(rendered.stdout == screen + "\n")
      let image = try pixels(screen)
      let portrait = rotate % 180 != 0
      let size = portrait ? [360, 640] : [640, 360]
      #expect([image.width, image.height] == size, "\(rotate)")
      let corners = try Self.corners(image)
      for (corner, want) in zip(corners, expected) {
        #expect(Self.near(corner, want), "\(rotate): \(corners) against ffmpeg's \(expected)")
      }
      // The stored quadrants, turned clockwise by the header's rotation.
      let turns = header.rotation / 90
      for index in 0..<4 {
        let want = Self.quadrants[(index - turns + 4) % 4]
        #expect(Self.near(corners[index], want), "\(rotate): corner \(index) \(corners[index])")
      }

      let thumbnail = folder.file("thumbnail-\(rotate).jpg")
      let small = try CLI.run([
        "render", "--rep", "thumbnail", "--size", "128", clip, "-o", thumbnail,
      ])
      #expect(small.status == 0, "\(small.stderr)")
      let thumb = try pixels(thumbnail)
      #expect(thumb.width == 128 && thumb.height == 128)
      // Cropped from the centre of the upright frame: the quadrants meet in the middle.
      let centre = try Self.corners(thumb)
      for index in 0..<4 {
        let want = Self.quadrants[(index - turns + 4) % 4]
        #expect(Self.near(centre[index], want), "\(rotate): thumbnail corner \(index)")
      }
    }
  }
}
