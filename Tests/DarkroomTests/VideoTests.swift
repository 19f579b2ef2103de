import Foundation
import HummingbirdTesting
import Testing

@testable import Darkroom

/// Videos' display representations: a representative frame, upright, in sRGB, tone-mapped
/// when HDR, made by FFmpeg's libraries in the workers. The videos are made here by the
/// `ffmpeg` command (Debian's), from pictures the tests draw.
@Suite("Video posters", .timeLimit(.minutes(10)), .offThePool)
struct VideoTests {
  /// The quadrants of the test picture, as stored: top-left, top-right, bottom-right,
  /// bottom-left (clockwise).
  static let quadrants: [[Double]] = [
    [220, 30, 30], [30, 200, 30], [240, 240, 240], [30, 30, 220],
  ]

  /// Runs ffmpeg, which must succeed, on one thread (x264 at its fastest preset), so that
  /// making the clips takes one core of the two the other tests share (a server test's
  /// 20-second client timeout once ran out beside encoders on every core). x265 keeps its
  /// preset: the HDR clips' levels are compared within a few levels.
  static func ffmpeg(_ arguments: [String], in folder: TemporaryFolder) throws {
    var arguments = arguments
    if let codec = arguments.firstIndex(of: "-c:v") {
      if arguments[codec + 1] == "libx264" {
        arguments.insert(contentsOf: ["-preset", "ultrafast", "-threads", "1"], at: codec)
      }
      if let params = arguments.firstIndex(of: "-x265-params") {
        arguments[params + 1] += ":pools=1:frame-threads=1"
      }
    }
    let run = try CLI.run(
      ["-v", "error", "-y", "-threads", "1"] + arguments, cwd: folder.path,
      executable: "/usr/bin/ffmpeg")
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
    "a poster past a fade: the first frame, then the keyframe at the fade's end sought to through B-frames' reorder delay, each decoded alone (two frames in all); without a keyframe there, decoding goes on to it",
    arguments: [true, false])
  func fadePosterDecodes(keyframeAtEnd: Bool) throws {
    let folder = try Fixture.temporaryFolder()
    let picture = try Self.quadrantPicture(in: folder)
    // B-frames (x264's default three): a frame's decoding time runs two frames ahead of its
    // presentation time, which is what a seek by the index's decoding time missed.
    try Self.ffmpeg(
      [
        "-f", "lavfi", "-i", "color=c=black:s=640x360:r=30:d=1", "-loop", "1", "-framerate", "30",
        "-t", "2", "-i", picture, "-filter_complex",
        "[0:v][1:v]concat=n=2:v=1,format=yuv420p[v]", "-map", "[v]", "-c:v", "libx264",
        "-preset", "veryfast", "-bf", "3", "-sc_threshold", "0", "-g", "300",
      ] + (keyframeAtEnd ? ["-force_key_frames", "0,1"] : []) + ["fade.mp4"], in: folder)
    let file = try InputFile(folder.file("fade.mp4"))
    let frame = try VideoFrame.decode(
      .file(file), name: "fade.mp4", box: (320, 180), maxPixels: 1 << 30)
    #expect(abs(frame.time - 1.0) < 0.001, "\(frame.time)")
    #expect(frame.spread > 10)
    #expect(frame.pixels[0] > 150 && frame.pixels[1] < 80, "the red quadrant's corner")
    if keyframeAtEnd {
      #expect(frame.framesLookedAt == 2 && frame.framesDecoded == 2, "\(frame)")
    } else {
      // 0 s (alone), then on from the start to 0.5 s and 1 s: more than a second's frames
      // that anything refers to, fewer than all 31 (B-frames nothing refers to are skipped).
      #expect(frame.framesLookedAt == 3, "\(frame.framesLookedAt)")
      #expect(frame.framesDecoded > 2 && frame.framesDecoded < 31, "\(frame.framesDecoded)")
    }
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
      let rendered = try CLI.run([
        "render", "--no-cache", "--rep", "fullscreen", clip, "-o", screen,
      ])
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
        "render", "--no-cache", "--rep", "thumbnail", "--size", "128", clip, "-o", thumbnail,
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

extension VideoTests {
  /// The luma (BT.709 weights) of every pixel of an 8-bit RGB image, sorted.
  static func sortedLuma(_ path: String) throws -> [Double] {
    let image = try pixels(path)
    let bytes = try image.pixels()
    let bands = image.bands
    var luma: [Double] = []
    for start in stride(from: 0, to: bytes.count, by: bands) {
      let (r, g, b) = (Double(bytes[start]), Double(bytes[start + 1]), Double(bytes[start + 2]))
      luma.append(0.2126 * r + 0.7152 * g + 0.0722 * b)
    }
    return luma.sorted()
  }

  static func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p / 100))]
  }

  @Test(
    "an HLG and a PQ clip (10-bit HEVC, BT.2020) get posters as bright as the SDR encode of the same frames, where a decode without tone mapping is washed out"
  )
  func hdrPosters() throws {
    let folder = try Fixture.temporaryFolder()
    let source = ["-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=1"]
    try Self.ffmpeg(
      source + [
        "-c:v", "libx264", "-pix_fmt", "yuv420p", "-colorspace", "bt709", "-color_primaries",
        "bt709", "-color_trc", "bt709", "sdr.mp4",
      ], in: folder)
    // The same frames as HDR: the SDR signal's light with its white at 203 cd/m2, BT.2020.
    for (name, transfer) in [("hlg", "arib-std-b67"), ("pq", "smpte2084")] {
      try Self.ffmpeg(
        source + [
          "-vf",
          "zscale=tin=bt709:min=bt709:pin=bt709:rin=full:t=\(transfer):m=bt2020nc:p=bt2020:r=limited:npl=203,format=yuv420p10le",
          "-c:v", "libx265", "-x265-params",
          "log-level=error:colorprim=bt2020:transfer=\(transfer):colormatrix=bt2020nc",
          "-pix_fmt", "yuv420p10le", "\(name).mp4",
        ], in: folder)
    }
    func poster(_ name: String) throws -> [Double] {
      let out = folder.file("\(name).png")
      let run = try CLI.run(
        [
          "render", "--no-cache", "--rep", "aspect-thumbnail", "--size", "640",
          folder.file("\(name).mp4"), "-o",
          out,
        ])
      #expect(run.status == 0, "\(run.stderr)")
      return try Self.sortedLuma(out)
    }
    let sdr = try poster("sdr")
    // What a decoder that ignores the transfer function shows: the HLG signal as if sRGB.
    try Self.ffmpeg(["-i", "hlg.mp4", "-frames:v", "1", "naive.png"], in: folder)
    let naive = try Self.sortedLuma(folder.file("naive.png"))
    let (sdr50, sdr95) = (Self.percentile(sdr, 50), Self.percentile(sdr, 95))
    func close(_ luma: [Double]) -> Bool {
      abs(Self.percentile(luma, 50) - sdr50) <= 16 && abs(Self.percentile(luma, 95) - sdr95) <= 24
    }
    let (naive50, naive95) = (Self.percentile(naive, 50), Self.percentile(naive, 95))
    #expect(!close(naive), "an untone-mapped decode: p50 \(naive50), p95 \(naive95)")
    // The header says how each is coded (its sample entry's colr box).
    for (name, described) in [
      ("hlg", "BT.2020, HLG"), ("pq", "BT.2020, PQ"), ("sdr", "BT.709, BT.709"),
    ] {
      let info = try CLI.run(["info", folder.file("\(name).mp4")])
      #expect(info.stdout.contains("Coded colour  \(described)\n"), "\(info.stdout)")
    }
    let json = try CLI.run(["info", "--json", folder.file("hlg.mp4")])
    let described = (try JSONSerialization.jsonObject(with: json.stdoutData) as? [[String: Any]])?
      .first
    let colour = described?["codedColour"] as? [String: Any]
    #expect(colour?["cicp"] as? [Int] == [9, 18, 9] && colour?["transfer"] as? String == "HLG")
    for name in ["hlg", "pq"] {
      let luma = try poster(name)
      let (p50, p95) = (Self.percentile(luma, 50), Self.percentile(luma, 95))
      let fits = close(luma)
      #expect(fits, "\(name): p50 \(p50), p95 \(p95); SDR p50 \(sdr50), p95 \(sdr95)")
    }
  }

  @Test(
    "a damaged video is one line naming it, a non-zero exit, and nothing written; the file is unchanged"
  )
  func damage() throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.clip(rotate: 0, in: folder)
    let fast = folder.file("fast.mp4")
    try Self.ffmpeg(["-i", clip, "-c", "copy", "-movflags", "+faststart", fast], in: folder)
    var bytes = try Fixture.bytes(fast)
    let mdat = try #require(
      (0..<bytes.count - 4).first { Array(bytes[$0..<$0 + 4]) == Array("mdat".utf8) })
    for index in (mdat + 4)..<bytes.count { bytes[index] = index % 3 == 0 ? 0 : 0xFF }
    let cases: [(name: String, bytes: [UInt8], message: String)] = [
      (
        "garbled.mp4", bytes,
        "damaged video: no frame can be decoded (Invalid data found when processing input)"
      ),
      (
        "header-only.mp4", Array(bytes[..<(mdat + 4)]),
        "damaged video: no frame can be decoded (no frame)"
      ),
      (
        "truncated.mp4", Array(try Fixture.bytes(clip).prefix(2000)),
        "damaged MP4 header: box 'mdat' runs past the end of the file"
      ),
    ]
    for (name, content, message) in cases {
      let path = try folder.write(name, content)
      let out = folder.file("\(name).jpg")
      let run = try CLI.run(["render", "--rep", "thumbnail", name, "-o", out], cwd: folder.path)
      #expect(run.status == 1, "\(name)")
      #expect(run.stderr == "darkroom: \(name): \(message)\n")
      #expect(!FileManager.default.fileExists(atPath: out))
      #expect(try Fixture.bytes(path) == content)
    }
    // An edit of a damaged video fails the same way, and leaves it as it was.
    for (name, content, _) in cases {
      let edit = try CLI.run(["edit", name, "--filter", "noir"], cwd: folder.path)
      #expect(edit.status == 1, "\(name)")
      #expect(edit.stderr.hasPrefix("darkroom: \(name): "), "\(edit.stderr)")
      #expect(edit.stderr.split(separator: "\n").count == 1, "\(edit.stderr)")
      #expect(try Fixture.bytes(folder.file(name)) == content)
    }
    let full = try CLI.run(["render", "--rep", "full", clip, "-o", folder.file("full.jpg")])
    #expect(full.status != 0)
    #expect(
      full.stderr
        == "darkroom: \(clip): is a video: its full representation is the file itself, not an image\n"
    )
  }

  /// `GET /api/assets/ID/full` sends `file` whole, as MP4 with ranges accepted, and `range`
  /// as a 206 (asked for open-ended when it runs to the end, as players ask).
  static func sendsFile(
    _ client: any TestClientProtocol, _ id: AssetID, _ file: [UInt8], range: Range<Int>,
    rep: String = "full", type: String = "video/mp4"
  ) async throws {
    let whole = try await client.execute(
      uri: "/api/assets/\(id)/\(rep)", method: .get, headers: ServedLibrary.read)
    #expect(whole.status == .ok)
    #expect(whole.headers[.contentType] == type)
    #expect(whole.headers[.acceptRanges] == "bytes")
    #expect(whole.headers[.contentLength] == String(file.count))
    #expect(whole.bytes == file)
    var ranged = ServedLibrary.read
    let last = range.upperBound == file.count ? "" : String(range.upperBound - 1)
    ranged[.range] = "bytes=\(range.lowerBound)-\(last)"
    let part = try await client.execute(
      uri: "/api/assets/\(id)/\(rep)", method: .get, headers: ranged)
    #expect(part.status == .partialContent)
    #expect(
      part.headers[.contentRange]
        == "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(file.count)")
    #expect(part.bytes == Array(file[range]))
  }

  @Test(
    "a catalogued video's thumbnail is the same through the engine, the API and the cache; a damaged one is a 4xx JSON error"
  )
  func everyDoor() async throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.clip(rotate: 90, in: folder)
    try FileManager.default.copyItem(atPath: clip, toPath: served.root + "/clip.mp4")
    _ = try await served.library.scan()
    let id = try #require(try served.library.asset(atPath: served.root + "/clip.mp4")?.id)
    var spec = RenditionSpec(.aspectThumbnail)
    spec.size = 256
    let first = try served.library.render(id, spec)
    #expect(!first.fromCache)
    #expect(first.format == .jpeg && first.width == 144 && first.height == 256)
    let again = try served.library.render(id, spec)
    #expect(again.fromCache && again.bytes == first.bytes)
    let written = try folder.write("engine.jpg", first.bytes)
    let corners = try Self.corners(pixels(written))
    for index in 0..<4 {
      #expect(Self.near(corners[index], Self.quadrants[(index - 3 + 4) % 4]), "\(corners)")
    }
    try FileManager.default.copyItem(
      atPath: folder.file("rotate-90.mp4"), toPath: served.root + "/broken.mp4")
    let broken = served.root + "/broken.mp4"
    _ = try await served.library.scan()
    let brokenID = try #require(try served.library.asset(atPath: broken)?.id)
    // Garbled after the scan: the header still reads, no frame decodes.
    var bytes = try Fixture.bytes(broken)
    let mdat = try #require(
      (0..<bytes.count - 4).first { Array(bytes[$0..<$0 + 4]) == Array("mdat".utf8) })
    // Its frames, not its header (the moov box after them): the whole mdat box's payload.
    let size = bytes[(mdat - 4)..<mdat].reduce(0) { $0 << 8 | Int($1) }
    for index in (mdat + 4)..<(mdat - 4 + size) { bytes[index] = index % 3 == 0 ? 0 : 0xFF }
    try Data(bytes).write(to: URL(fileURLWithPath: broken))
    try await served.test { client, _ in
      let response = try await client.execute(
        uri: "/api/assets/\(id)/aspect-thumbnail?size=256", method: .get,
        headers: ServedLibrary.read)
      #expect(response.status == .ok)
      #expect(response.headers[.contentType] == "image/jpeg")
      #expect(response.bytes == first.bytes)
      // Its full representation is its file, whole or in ranges (as a player asks).
      try await Self.sendsFile(
        client, id, Fixture.bytes(served.root + "/clip.mp4"), range: 100..<200)
    }
    // A large video is sent a chunk at a time: whole, and a range across chunks.
    try Self.ffmpeg(
      [
        "-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=3,noise=alls=40:allf=t", "-c:v",
        "libx264", "-b:v", "20M", "-pix_fmt", "yuv420p", served.root + "/large.mp4",
      ], in: folder)
    _ = try await served.library.scan()
    let largeID = try #require(try served.library.asset(atPath: served.root + "/large.mp4")?.id)
    let large = try Fixture.bytes(served.root + "/large.mp4")
    #expect(large.count > 5 << 20, "\(large.count)")
    try await served.test { client, _ in
      try await Self.sendsFile(client, largeID, large, range: 1000..<large.count)
      let damaged = try await client.execute(
        uri: "/api/assets/\(brokenID)/thumbnail", method: .get, headers: ServedLibrary.read)
      #expect((400..<500).contains(damaged.status.code), "\(damaged.status) \(damaged.text)")
      #expect(damaged.errorKind != nil, "\(damaged.text)")
    }
    // The background pass makes the grid's thumbnails of videos too (the damaged one fails).
    let pass = try served.library.makeGridThumbnails()
    #expect(pass.assets == 4 && pass.made == 3 && pass.failed == 1, "\(pass)")
    #expect(pass.problems.first?.contains("broken.mp4: damaged video") == true, "\(pass.problems)")
    let asset = try served.library.asset(id)
    let grid = GridThumbnail.spec(for: asset, density: 2)
    let cached = Representations(cache: RenditionCache(folder: served.library.cacheFolder))
      .cachedRendition(ofFile: served.root + "/clip.mp4", grid)
    #expect(cached?.format == .jpeg)
  }
}
