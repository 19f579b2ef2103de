import Foundation
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// Videos as assets: a playback version every browser plays (H.264 and AAC in MP4, upright,
/// HDR tone-mapped), and the filter graph on a video with adjustment data, as a photo's. The
/// clips are made here by the `ffmpeg` command; what is written is read back with `ffprobe`
/// and decoded by `ffmpeg`, not by Darkroom.
@Suite("Videos: playback and edits", .timeLimit(.minutes(10)), .offThePool)
struct VideoEditTests {
  /// What ffprobe says of a file: its streams and format.
  struct Probe {
    var streams: [[String: Any]]
    var format: [String: Any]

    var video: [String: Any]? { streams.first { $0["codec_type"] as? String == "video" } }
    var audio: [String: Any]? { streams.first { $0["codec_type"] as? String == "audio" } }
    var duration: Double { Double(format["duration"] as? String ?? "") ?? -1 }
  }

  static func probe(_ path: String) throws -> Probe {
    let run = try CLI.run(
      ["-v", "error", "-print_format", "json", "-show_streams", "-show_format", path],
      executable: "/usr/bin/ffprobe")
    #expect(run.status == 0, "ffprobe \(path): \(run.stderr)")
    let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    return Probe(
      streams: object?["streams"] as? [[String: Any]] ?? [],
      format: object?["format"] as? [String: Any] ?? [:])
  }

  /// `render --rep playback` of `name` in `folder`, which must succeed: the output's path
  /// (NAME.playback.mp4) and what ffprobe says of it.
  static func playback(of name: String, in folder: TemporaryFolder) throws -> (String, Probe) {
    let out = folder.file(
      URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent
        + ".playback.mp4")
    let run = try CLI.run(["render", "--rep", "playback", folder.file(name), "-o", out])
    #expect(run.status == 0, "\(run.stderr)")
    return (out, try probe(out))
  }

  /// A two-second 640x360 (or `size`) HEVC clip with a 440 Hz tone (AAC), in a MOV whose
  /// track matrix turns it a quarter (`rotate=90`: shown 360x640), as phones record.
  static func hevcClip(
    in folder: TemporaryFolder, name: String = "clip.mov", size: String = "640x360"
  ) throws -> String {
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30:duration=2", "-f", "lavfi", "-i",
        "sine=frequency=440:duration=2", "-c:v", "libx265", "-x265-params", "log-level=error",
        "-tag:v", "hvc1", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "plain.mov",
      ], in: folder)
    try VideoTests.ffmpeg(
      ["-i", "plain.mov", "-c", "copy", "-metadata:s:v:0", "rotate=90", name], in: folder)
    return folder.file(name)
  }

  /// Frames of `path` at `times` (seconds), as ffmpeg decodes and turns them: RGB bytes and
  /// the frame's size.
  static func frames(_ path: String, at times: [Double], in folder: TemporaryFolder) throws
    -> [(pixels: [UInt8], width: Int, height: Int)]
  {
    try times.enumerated().map { index, time in
      let png = folder.file("frame-\(index).png")
      try VideoTests.ffmpeg(["-ss", String(time), "-i", path, "-frames:v", "1", png], in: folder)
      let image = try VipsImage.open(path: png, sequential: false)
      return (try image.pixels(), image.width, image.height)
    }
  }

  /// How far apart two pictures of the same scene at different sizes are: the mean
  /// difference of the mean colours of a 6x10 grid of cells over each.
  static func cellDifference(
    _ a: (pixels: [UInt8], width: Int, height: Int), _ b: (pixels: [UInt8], width: Int, height: Int)
  ) -> Double {
    func cells(_ p: (pixels: [UInt8], width: Int, height: Int)) -> [Double] {
      var out: [Double] = []
      for row in 0..<10 {
        for column in 0..<6 {
          var sum = [0.0, 0.0, 0.0]
          let (x0, x1) = (column * p.width / 6, (column + 1) * p.width / 6)
          let (y0, y1) = (row * p.height / 10, (row + 1) * p.height / 10)
          for y in y0..<y1 {
            for x in x0..<x1 {
              for band in 0..<3 { sum[band] += Double(p.pixels[(y * p.width + x) * 3 + band]) }
            }
          }
          out += sum.map { $0 / Double((x1 - x0) * (y1 - y0)) }
        }
      }
      return out
    }
    let (ca, cb) = (cells(a), cells(b))
    return zip(ca, cb).reduce(0.0) { $0 + abs($1.0 - $1.1) } / Double(ca.count)
  }

  /// The largest difference between two bands of any pixel.
  static func colourfulness(_ pixels: [UInt8]) -> Int {
    stride(from: 0, to: pixels.count - 2, by: 3).reduce(0) { most, i in
      let (r, g, b) = (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2]))
      return max(most, abs(r - g), abs(g - b))
    }
  }

  @Test(
    "an HEVC clip turned 90 with sound: the playback version is H.264 High, yuv420p, AAC in MP4, upright at the size asked, as long, its frames as ffmpeg shows the original; cached for the next request; an H.264 MP4 is played as it is"
  )
  func playback() async throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.hevcClip(in: folder, size: "960x540")
    var made = try Library.create(at: folder.path)
    made.catalogURL = nil
    let library = made
    _ = try await library.scan()
    let id = try #require(try library.asset(atPath: clip)?.id)

    // The library's door, at fast (854x480, turned: a 540x960 portrait fits as 480x853,
    // its sides even for 4:2:0).
    let first = try library.playback(of: id, quality: .fast)
    #expect(!first.isOriginal && !first.cached)
    #expect(first.width == 480 && first.height == 852)
    guard case .rendition(let path) = first.source else {
      Issue.record("not a rendition: \(first)")
      return
    }
    let probe = try Self.probe(path)
    #expect(probe.video?["codec_name"] as? String == "h264")
    #expect(probe.video?["profile"] as? String == "High")
    #expect(probe.video?["pix_fmt"] as? String == "yuv420p")
    #expect(probe.video?["width"] as? Int == 480 && probe.video?["height"] as? Int == 852)
    #expect(probe.audio?["codec_name"] as? String == "aac")
    #expect(abs(probe.duration - 2.0) <= 1.0 / 30, "\(probe.duration)")
    // Upright: the same picture as ffmpeg shows the original (it turns by the matrix too).
    let shown = try Self.frames(clip, at: [1.0], in: folder)[0]
    let played = try Self.frames(path, at: [1.0], in: folder)[0]
    let error = Self.cellDifference(shown, played)
    #expect(error < 8, "mean difference \(error) from the original as ffmpeg shows it")

    // Asked again: the cache's, the same bytes.
    let again = try library.playback(of: id, quality: .fast)
    #expect(again.cached && again.source == first.source)
    let cachedBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    #expect(try library.playbackBytes(again) == cachedBytes)

    // The API's door: the same rendition, with ranges.
    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      let whole = try await client.execute(
        uri: "/api/assets/\(id)/playback?delivery=fast", method: .get, headers: ServedLibrary.read)
      #expect(whole.status == .ok)
      #expect(whole.headers[.contentType] == "video/mp4")
      #expect(whole.bytes == (try library.playbackBytes(again)))
      var ranged = ServedLibrary.read
      ranged[.range] = "bytes=0-7"
      let part = try await client.execute(
        uri: "/api/assets/\(id)/playback?delivery=fast", method: .get, headers: ranged)
      #expect(part.status == .partialContent)
      #expect(part.bytes == Array(whole.bytes.prefix(8)))
      let bad = try await client.execute(
        uri: "/api/assets/\(id)/playback?delivery=huge", method: .get, headers: ServedLibrary.read)
      #expect(bad.status == .badRequest, "\(bad.text)")
      // Not made yet: the rendition as it is made, streamed; what it streamed is what the
      // cache then has.
      let streamed = try await client.execute(
        uri: "/api/assets/\(id)/playback?delivery=medium", method: .get, headers: ServedLibrary.read
      )
      #expect(streamed.status == .ok)
      let medium = try library.playback(of: id, quality: .medium)
      #expect(medium.cached && !medium.isOriginal && medium.height == 960)
      #expect(streamed.bytes == (try library.playbackBytes(medium)))
    }

    // The command line's door, for a file in no catalog.
    let out = folder.file("out/clip.mp4")
    try FileManager.default.createDirectory(
      atPath: folder.file("out"), withIntermediateDirectories: true)
    let run = try CLI.run(["render", "--rep", "playback", "--delivery", "fast", clip, "-o", out])
    #expect(run.status == 0 && run.stdout == out + "\n", "\(run.stderr)")
    #expect(try Self.probe(out).video?["width"] as? Int == 480)

    // An H.264 MP4 within the size is played as it is.
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=1", "-c:v", "libx264",
        "-pix_fmt", "yuv420p", "small.mp4",
      ], in: folder)
    _ = try await library.scan()
    let small = try #require(try library.asset(atPath: folder.file("small.mp4"))?.id)
    let asIs = try library.playback(of: small, quality: .fast)
    #expect(asIs.isOriginal && asIs.source == .asset(small))
    let smallBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file("small.mp4"))))
    #expect(try library.playbackBytes(asIs) == smallBytes)
  }

  @Test(
    "a 10-bit HLG clip's playback is SDR BT.709 with its white near white, not the washed-out signal"
  )
  func hdrPlayback() throws {
    let folder = try Fixture.temporaryFolder()
    // White and a mid grey side by side, as HLG (BT.2020): white's signal is far above
    // diffuse white, and is shown as white once tone-mapped.
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "color=c=white:s=320x180:r=30:d=1", "-vf",
        "zscale=tin=bt709:min=bt709:pin=bt709:rin=full:t=arib-std-b67:m=bt2020nc:p=bt2020:r=limited:npl=203,format=yuv420p10le",
        "-c:v", "libx265", "-x265-params",
        "log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc",
        "-pix_fmt", "yuv420p10le", "hlg.mp4",
      ], in: folder)
    let (out, probe) = try Self.playback(of: "hlg.mp4", in: folder)
    #expect(probe.video?["color_transfer"] as? String == "bt709")
    #expect(probe.video?["color_primaries"] as? String == "bt709")
    func mean(_ pixels: [UInt8]) -> Double {
      Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
    }
    let shown = mean(try Self.frames(out, at: [0.5], in: folder)[0].pixels)
    // The signal read as if it were SDR, as a player that ignores HLG shows it: grey.
    let naive = mean(try Self.frames(folder.file("hlg.mp4"), at: [0.5], in: folder)[0].pixels)
    #expect(shown > 225, "white comes out at \(shown)")
    #expect(naive < 200, "the signal read as SDR is \(naive)")
  }

  @Test(
    "apply DIR takes the folder's videos too when every filter means the same on each frame: the clip grey, its original kept, revert byte-exact; with auto the folder's videos are not inputs and stay as they were; an M4A (sound alone) is never one"
  )
  func applyFolder() throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.hevcClip(in: folder)
    try FileManager.default.removeItem(atPath: folder.file("plain.mov"))
    let photo = try folder.write("photo.jpg", Fixture.bytes(Fixture.sample("gps.jpg")))
    // Sound alone in an MP4 container (an M4A): no video, so no input of either kind.
    try VideoTests.ffmpeg(
      ["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", "tone.m4a"],
      in: folder)
    let (clipBefore, photoBefore) = (
      try ContentHash.of(file: clip), try ContentHash.of(file: photo)
    )

    // auto looks at one photo: the clip is no input (not failed, not skipped: not there).
    let auto = try CLI.run(["apply", folder.path, "--filter", "auto", "--progress", "json"])
    #expect(auto.status == 0, "\(auto.stderr)")
    #expect(!auto.stdout.contains("clip.mov"), "\(auto.stdout)")
    #expect(try ContentHash.of(file: clip) == clipBefore)
    #expect(try CLI.run(["revert", photo]).status == 0)
    #expect(try ContentHash.of(file: photo) == photoBefore)

    // noir: both, each reported.
    let noir = try CLI.run(["apply", folder.path, "--filter", "noir", "--progress", "json"])
    #expect(noir.status == 0, "\(noir.stderr)")
    let lines = noir.stdout.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    let done = lines.filter { $0["status"] as? String == "done" }.compactMap {
      $0["file"] as? String
    }
    #expect(Set(done) == [clip, photo], "\(noir.stdout)")
    #expect(noir.stderr.hasPrefix("apply: 2 done, 0 skipped, 0 failed"), "\(noir.stderr)")
    for frame in try Self.frames(clip, at: [0.5, 1.5], in: folder) {
      #expect(Self.colourfulness(frame.pixels) < 2)
    }
    #expect(
      try ContentHash.of(file: folder.file(".darkroom/originals/" + clipBefore.hex)) == clipBefore)
    #expect(try CLI.run(["revert", clip]).status == 0)
    #expect(try ContentHash.of(file: clip) == clipBefore)
  }

  @Test(
    "edit --filter noir of an HEVC clip: every sampled frame grey, upright, as long, its sound kept, the original in the store; revert is byte-exact; trim keeps the length asked; the API edits and reverts the same"
  )
  func edit() async throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.hevcClip(in: folder)
    // A mode and group of the user's own: the edit keeps them, as a photo's does (root, who
    // runs the tests, ignores modes: they are checked with stat).
    #expect(chmod(clip, 0o640) == 0 && chown(clip, 0, 12) == 0)
    let before = try ContentHash.of(file: clip)
    let attributes = try FileStat(clip)
    let edit = try CLI.run(["edit", "--filter", "noir", clip])
    #expect(edit.status == 0, "\(edit.stderr)")
    #expect(edit.stdout == clip + ": edited (version 1: noir)\n")
    let edited = try FileStat(clip)
    #expect(edited.mode == 0o640 && edited.links == 1, "\(edited)")
    #expect(edited.user == attributes.user && edited.group == attributes.group, "\(edited)")
    // The original in the store is a file of its own: the clip's inode is not shared.
    #expect(try FileStat(folder.file(".darkroom/originals/" + before.hex)).links == 1)
    var probe = try Self.probe(clip)
    #expect(probe.video?["codec_name"] as? String == "h264")
    #expect(probe.video?["width"] as? Int == 360 && probe.video?["height"] as? Int == 640)
    #expect(probe.audio?["codec_name"] as? String == "aac")
    #expect(abs(probe.duration - 2.0) <= 1.0 / 30, "\(probe.duration)")
    for frame in try Self.frames(clip, at: [0.1, 0.9, 1.8], in: folder) {
      #expect(Self.colourfulness(frame.pixels) < 2)
    }
    let original = folder.file(".darkroom/originals/" + before.hex)
    #expect(try ContentHash.of(file: original) == before)
    // On a terminal (script(1) gives it one), the edit says how far it is as it goes.
    let revertFirst = try CLI.run(["revert", clip])
    #expect(revertFirst.status == 0, "\(revertFirst.stderr)")
    let shown = try CLI.run(
      ["-qec", "\(CLI.binary) edit --filter noir \(clip)", "/dev/null"],
      executable: "/usr/bin/script")
    #expect(shown.status == 0, "\(shown.stdout)")
    for seconds in ["0.2", "0.5", "0.8", "1.0", "1.3", "1.6", "1.8"] {  // every 8th frame of 60
      #expect(shown.stdout.contains("\(clip): \(seconds) s of 2.0 s ("), "\(shown.stdout)")
    }
    #expect(shown.stdout.contains("\r\u{1B}[K\(clip): edited (version 1: noir)"), "\(shown.stdout)")
    // apply too, after its bar.
    #expect(try CLI.run(["revert", clip]).status == 0)
    let applied = try CLI.run(
      ["-qec", "\(CLI.binary) apply --filter noir \(clip)", "/dev/null"],
      executable: "/usr/bin/script")
    #expect(applied.status == 0, "\(applied.stdout)")
    for seconds in ["0.2", "1.0", "1.8"] {
      #expect(applied.stdout.contains("\(clip): \(seconds) s of 2.0 s ("), "\(applied.stdout)")
    }
    #expect(applied.stdout.contains("apply: 1 done, 0 skipped, 0 failed in "), "\(applied.stdout)")
    let history = try CLI.run(["history", clip])
    #expect(history.stdout.contains("noir"), "\(history.stdout)")

    let revert = try CLI.run(["revert", clip])
    #expect(revert.stdout == clip + ": restored the original\n", "\(revert.stderr)")
    #expect(try ContentHash.of(file: clip) == before)
    let reverted = try FileStat(clip)
    #expect(reverted.mode == 0o640 && reverted.links == 1, "\(reverted)")
    #expect(reverted.user == attributes.user && reverted.group == attributes.group)

    // trim: 0.5 s to 1.5 s is one second long.
    let trim = try CLI.run(["edit", "--filter", "trim start=0.5 end=1.5", clip])
    #expect(trim.status == 0, "\(trim.stderr)")
    probe = try Self.probe(clip)
    let videoLength = Double(probe.video?["duration"] as? String ?? "") ?? 0
    #expect(abs(videoLength - 1.0) <= 1.0 / 30 + 1e-6, "\(videoLength)")
    #expect(try CLI.run(["revert", clip]).status == 0)
    #expect(try ContentHash.of(file: clip) == before)

    // The API: the same edit, then a revert, on the catalogued clip.
    var made = try Library.create(at: folder.path)
    made.catalogURL = nil
    let library = made
    _ = try await library.scan()
    let id = try #require(try library.asset(atPath: clip)?.id)
    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      let edited = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["filters": ["noir"]]))
      #expect(edited.status == .ok, "\(edited.text)")
      for frame in try Self.frames(clip, at: [1.0], in: folder) {
        #expect(Self.colourfulness(frame.pixels) < 2)
      }
      let reverted = try await client.execute(
        uri: "/api/assets/\(id)/revert", method: .post, headers: ServedLibrary.write,
        body: jsonBody([:]))
      #expect(reverted.status == .ok, "\(reverted.text)")
    }
    #expect(try ContentHash.of(file: clip) == before)
  }

  @Test(
    "a MOV with 24-bit PCM sound at 192 kHz: its playback version's sound is AAC at 48 kHz, as long"
  )
  func pcmSound() throws {
    let folder = try Fixture.temporaryFolder()
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=2", "-f", "lavfi", "-i",
        "sine=frequency=440:duration=2:sample_rate=192000", "-c:v", "libx264", "-pix_fmt",
        "yuv420p", "-c:a", "pcm_s24le", "pcm.mov",
      ], in: folder)
    let (_, probe) = try Self.playback(of: "pcm.mov", in: folder)
    #expect(probe.audio?["codec_name"] as? String == "aac")
    #expect(probe.audio?["sample_rate"] as? String == "48000")
    let length = Double(probe.audio?["duration"] as? String ?? "") ?? 0
    #expect(abs(length - 2.0) < 0.05, "\(length)")
  }

  @Test(
    "SIGKILL at each step of a video's edit: the clip untouched or fully edited, no part of one; check names only the encode's temporary, --repair removes it and the library is sound; revert gives the original back",
    arguments: ["after-original", "after-adjustment", "before-replace", "after-replace"])
  func crashSafety(point: String) throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.hevcClip(in: folder)
    let original = try ContentHash.of(file: clip)
    let attributes = try FileStat(clip)
    let killed = try CLI.run(
      ["edit", clip, "--filter", "noir"], environment: ["DARKROOM_FAULT": point])
    #expect(killed.status == 128 + 9, "killed at \(point): \(killed.stderr)")
    let now = try ContentHash.of(file: clip)
    if now == original {
      #expect(try FileStat(clip) == attributes, "untouched: the same inode, mode and mtime")
    } else {
      #expect(point == "after-replace")
      let data = try #require(try Editor().adjustments(clip))
      #expect(data.result.sha256 == now.hex)
    }
    // The one thing a kill can leave: the hidden temporary of the encode, which check names
    // and --repair (or the next write to the clip) removes.
    let check = try CLI.run(["check", folder.path])
    let findings = check.stdout.split(separator: "\n").filter { !$0.contains("original(s)") }
    #expect(
      findings.allSatisfy { $0.hasSuffix(": a temporary file whose writer is gone") },
      "\(check.stdout)\(check.stderr)")
    #expect(check.status == (findings.isEmpty ? 0 : 1))
    #expect(try CLI.run(["check", "--repair", folder.path]).status == 0)
    #expect(try CLI.run(["check", folder.path]).status == 0)
    #expect(try CLI.run(["revert", clip]).status == 0)
    #expect(try ContentHash.of(file: clip) == original)
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasSuffix(".tmp")
    }
    #expect(left.isEmpty, "the next write removes what a killed writer left: \(left)")
  }

  @Test(
    "a video cut short: render --rep playback and edit fail with one line naming the file and a non-zero exit; nothing written, the file untouched"
  )
  func damaged() async throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.hevcClip(in: folder)
    // Cut at two thirds: the index (at the end of ffmpeg's MOV) is gone.
    let bytes = try Data(contentsOf: URL(fileURLWithPath: clip))
    let cut = try folder.write("cut.mov", Array(bytes.prefix(bytes.count * 2 / 3)))
    let cutHash = try ContentHash.of(file: cut)
    let cutStat = try FileStat(cut)
    let out = folder.file("cut.playback.mp4")
    let run = try CLI.run(["render", "--rep", "playback", cut, "-o", out])
    #expect(run.status != 0)
    #expect(run.stderr.hasPrefix("darkroom: \(cut): "), "\(run.stderr)")
    #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: out))
    let edit = try CLI.run(["edit", "--filter", "noir", cut])
    #expect(edit.status != 0)
    #expect(try ContentHash.of(file: cut) == cutHash)
    #expect(try FileStat(cut) == cutStat, "mode, links, owner, mtime and inode as they were")

    // Its header whole, its frames gone (cut inside the media data, the index first): it is
    // catalogued, and its playback is a 422 with the reason; nothing is cached.
    let faststart = folder.file("faststart.mp4")
    try VideoTests.ffmpeg(
      ["-i", clip, "-c", "copy", "-movflags", "+faststart", faststart], in: folder)
    let whole = try Data(contentsOf: URL(fileURLWithPath: faststart))
    let damagedName = "damaged.mp4"
    _ = try folder.write(damagedName, Array(whole.prefix(whole.count / 3)))
    try FileManager.default.removeItem(atPath: faststart)
    var made = try Library.create(at: folder.path)
    made.catalogURL = nil
    let library = made
    _ = try await library.scan()
    let damaged = try #require(try library.asset(atPath: folder.file(damagedName))?.id)
    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      let response = try await client.execute(
        uri: "/api/assets/\(damaged)/playback", method: .get, headers: ServedLibrary.read)
      #expect(response.status == .unprocessableContent, "\(response.text)")
      #expect(response.errorKind == "corrupt", "\(response.text)")
    }
    let cached =
      FileManager.default.enumerator(atPath: library.cacheFolder.path)?
      .compactMap { $0 as? String }.filter { $0.hasSuffix(".mp4") || $0.hasSuffix(".tmp") } ?? []
    #expect(cached.isEmpty, "\(cached)")
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    #expect(names.filter { $0.hasSuffix(".tmp") }.isEmpty, "\(names)")
  }
}

extension VideoEditTests {
  @Test(
    "an async edit of a video whose task is cancelled stops its encode at its next frame: it throws \"stopped\", the file and its history are as they were, no temporary is left; the same edit uncancelled lands"
  )
  func editCancelled() async throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.hevcClip(in: folder, size: "320x240")
    let before = try Fixture.bytes(clip)
    var made = try Library.create(at: folder.path)
    made.catalogURL = nil
    let library = made
    _ = try await library.scan()
    let id = try #require(try library.asset(atPath: clip)?.id)
    let noir = try FilterGraph.parse(spec: "noir")
    // Cancelled before it starts (no timing): its first frame's report stops it.
    let stopped = await Task { () -> DarkroomError? in
      withUnsafeCurrentTask { $0?.cancel() }
      do throws(DarkroomError) {
        _ = try await library.edit(id, with: noir)
        return nil
      } catch {
        return error
      }
    }.value
    #expect(stopped?.message == "stopped: asked to stop before the encode ended")
    #expect(try Fixture.bytes(clip) == before)
    #expect(try await library.history(of: id).versions.isEmpty)
    // Stopped before it began: not even its original was copied into the store.
    let originals = library.metadataFolder.appendingPathComponent("originals").path
    #expect((try? FileManager.default.contentsOfDirectory(atPath: originals)) ?? [] == [])
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    #expect(names.filter { $0.hasSuffix(".tmp") || $0.hasPrefix(".") && $0 != ".darkroom" } == [])
    let landed = try await library.edit(id, with: noir)
    #expect(landed.version == 1)
    #expect(try Fixture.bytes(clip) != before)
  }

  @Test(
    "a video's edit as an API job says how far its encode has got: the job's events carry the asset, its path and the seconds encoded of its length, rising by whole percents, and none once it is done"
  )
  func encodeProgress() throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try Self.hevcClip(in: folder)
    #expect(unlink(folder.file("plain.mov")) == 0)
    let scan = try CLI.run(["scan", folder.path, "--no-background"])
    #expect(scan.status == 0, "\(scan.stderr)")
    let listed = try CLI.run(["list", "--library", folder.path, "--json"])
    let assets = try #require(
      try JSONSerialization.jsonObject(with: listed.stdoutData) as? [[String: Any]])
    let id = try #require(assets.first?["id"] as? String)
    // While the gate file exists the job's item waits: its stream is followed from the start.
    let gates = try TemporaryFolder()
    let gate = try gates.write("gate", [1])
    let server = try ServeProcess(folder.path, environment: ["DARKROOM_TEST_JOB_GATE": gate])
    defer { _ = server.stop() }
    let body = try JSONSerialization.data(withJSONObject: [
      "action": "apply", "filters": ["noir"], "ids": [id],
    ])
    let started = try server.request("POST", "/api/jobs", body: Array(body))
    #expect(started.status == 202, "\(started.text)")
    let job = try #require(ServeProcess.json(started.text)["id"] as? String)
    let all = try server.jobEvents(job) { _ in unlink(gate) }
    // Each event's data, in order: the progress events' statuses, then the end's.
    var events: [(name: String, data: [String: Any])] = []
    var name = ""
    for line in all.split(whereSeparator: \.isNewline) {  // (chunked: "\r\n" too)
      if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
      if line.hasPrefix("data: "),
        let data = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8))
          as? [String: Any]
      {
        events.append((name, data))
      }
    }
    let encodings = events.filter { $0.name == "progress" }.compactMap {
      (($0.data["status"] as? [String: Any])?["encoding"] as? [[String: Any]])?.first
    }
    #expect(encodings.count >= 5, "\(all)")
    #expect(
      encodings.allSatisfy { $0["id"] as? String == id && $0["file"] as? String == "clip.mov" })
    #expect(encodings.allSatisfy { $0["duration"] as? Double == 2 })
    let seconds = encodings.compactMap { $0["encoded"] as? Double }
    #expect(seconds.count == encodings.count && seconds == seconds.sorted(), "\(seconds)")
    #expect(Set(seconds).count == seconds.count && seconds.allSatisfy { $0 > 0 && $0 <= 2 })
    let end = try #require(events.last)
    #expect(end.name == "done" && end.data["done"] as? Int == 1 && end.data["encoding"] == nil)
    for frame in try Self.frames(clip, at: [1.0], in: folder) {
      #expect(Self.colourfulness(frame.pixels) < 2)
    }
  }
}

extension VideoEditTests {
  @Test(
    "noir on a video looks as noir on the same frame as a photo on both its routes: a BT.601 clip's frames through RGB and the graph, a BT.709 clip's luma through noir's table",
    arguments: ["bt470bg", "bt709"])
  func noirLikeAPhoto(matrix: String) throws {
    let folder = try Fixture.temporaryFolder()
    let tags =
      matrix == "bt709" ? ["bt709", "bt709", "bt709"] : ["bt470bg", "bt470bg", "smpte170m"]
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=1", "-vf",
        "scale=out_color_matrix=\(matrix == "bt709" ? "bt709" : "bt601")", "-c:v", "libx265",
        "-x265-params", "log-level=error", "-colorspace", tags[0], "-color_primaries", tags[1],
        "-color_trc", tags[2], "-tag:v", "hvc1", "-pix_fmt", "yuv420p", "clip.mov",
      ], in: folder)
    // Coded with the matrix it is tagged with (ffmpeg codes with BT.601's unless told): its
    // colours are inside RGB's, where a grey from the luma plane is the grey from RGB.
    let clip = folder.file("clip.mov")
    #expect(try Self.probe(clip).video?["color_space"] as? String == matrix)
    let times = [0.2, 0.7]
    let originals = try Self.frames(clip, at: times, in: folder)
    let noir = try FilterGraph.parse(spec: "noir")
    // Which route the frames take, as the transcode counts them: all through the luma table
    // for BT.709, none for BT.601 (noir's weights are BT.709's).
    let out = open(folder.file("routed.mov"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    defer { close(out) }
    var settings = TranscodeSettings(maxPixels: 1 << 24)
    (settings.preset, settings.container) = ("ultrafast", "mov")
    let outcome = try VideoTranscode.run(
      .file(try InputFile(clip)), name: clip, settings, graph: noir,
      write: { offset, bytes in VideoTranscode.write(bytes, at: offset, to: out) },
      progress: { _, _ in true })
    #expect(outcome.frames == 30)
    #expect(outcome.greyFrames == (matrix == "bt709" ? 30 : 0))
    let edit = try CLI.run(["edit", "--filter", "noir", clip])
    #expect(edit.status == 0, "\(edit.stderr)")
    for (original, shown) in zip(originals, try Self.frames(clip, at: times, in: folder)) {
      #expect(shown.width == original.width && shown.height == original.height)
      let photo = try noir.apply(
        to: VipsImage.fromPixels(
          original.pixels, width: original.width, height: original.height, bands: 3)
      ).pixels()
      #expect(Self.colourfulness(shown.pixels) < 2)
      // x264's loss (CRF 20) is most of what differs, pixel by pixel; the look, cell by cell,
      // is the photo's within a level.
      let cells = Self.cellDifference((photo, original.width, original.height), shown)
      let mean =
        zip(photo, shown.pixels).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) }
        / Double(photo.count)
      #expect(cells < 1 && mean < 3, "cells \(cells), pixels \(mean)")
    }
  }

  @Test(
    "a graph is a grey table only when it is a grey band of the weights asked and tables after it: noir, noir and tone's curve; not other weights, noir in part or twice, noir and a colour matrix or a crop, tone alone"
  )
  func greyTable() throws {
    let curve = NoirFilter.curve(intensity: 1)
    let noir = try FilterGraph.parse(spec: "noir")
    #expect(noir.greyTable(weights: NoirFilter.luma) == curve)
    #expect(noir.greyTable(weights: [0.299, 0.587, 0.114]) == nil)
    let toned = try FilterGraph.parse(specs: ["noir", "tone contrast=0.3"])
    let tone = ToneFilter.table(FilterArguments(values: ["contrast": .number(0.3)]))
    #expect(toned.greyTable(weights: NoirFilter.luma) == curve.map { tone[Int($0)] })
    #expect(tone != ToneFilter.identityTable)
    for specs in [
      ["noir intensity=0.5"], ["noir", "noir"], ["noir", "tone warmth=0.5"],
      ["noir", "crop aspect=1:1"], ["tone contrast=0.3"],
    ] {
      let graph = try FilterGraph.parse(specs: specs)
      #expect(graph.greyTable(weights: NoirFilter.luma) == nil, "\(specs)")
    }
  }

  @Test(
    "a transcode runs in a worker of its own whose CPU limit grows with the longest video it takes: a pool whose workers may use 1 CPU second still encodes a clip that costs more"
  )
  func transcodeCPULimit() throws {
    let folder = try Fixture.temporaryFolder()
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30:duration=2", "-c:v", "libx264",
        "-pix_fmt", "yuv420p", "clip.mp4",
      ], in: folder)
    var configuration = WorkerPool.Configuration(executable: CLI.binary)
    configuration.cpuSeconds = 1
    let pool = WorkerPool(configuration)
    defer { pool.shutDown() }
    var renderer = Renderer()
    renderer.workers = pool
    // An edit's encode (x264 at preset medium, CRF 20) of 60 frames of 1080p: several CPU
    // seconds, past the pool's 1.
    var settings = TranscodeSettings(maxPixels: renderer.maxPixels)
    (settings.preset, settings.crf, settings.threads) = ("medium", 20, 4)
    let out = folder.file("out.mp4")
    let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    defer { close(fd) }
    // What its worker used: reaped children's CPU time, before and after (other tests'
    // children may add to it, never take from it).
    let childCPU = { () -> Double in
      var usage = rusage()
      _ = getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
      return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
    let before = childCPU()
    let outcome = try renderer.transcode(
      .file(try InputFile(folder.file("clip.mp4"))), name: "clip.mp4", into: fd, settings,
      graph: nil, progress: { _, _ in true })
    #expect(outcome.width == 1920 && outcome.height == 1080)
    let cpu = childCPU() - before
    #expect(cpu >= 1, "the clip cost \(cpu) CPU seconds: not past the limit, so it proves nothing")
    let probe = try Self.probe(out)
    #expect(probe.video?["codec_name"] as? String == "h264")
    #expect(abs(probe.duration - 2.0) <= 1.0 / 30, "\(probe.duration)")
    #expect(WorkerPool.transcodeCPUSeconds(settings, base: 1) == 115_200)
    #expect(WorkerPool.transcodeCPUSeconds(settings, base: 0) == 0)
    // Any length (0, or not a number): no limit; a huge one: the largest there is.
    for (longest, budget) in [(0.0, 0), (.nan, 0), (.infinity, 0), (1e12, Int(Int32.max))] {
      settings.maxSeconds = longest
      #expect(WorkerPool.transcodeCPUSeconds(settings, base: 3600) == budget, "\(longest)")
    }
  }

  @Test(
    "a range of a playback still being made: its bytes as soon as they are written, its size once it is whole; a seek's open range gets what is written; a range past the end none; the Range header read as a player sends it"
  )
  func growingRanges() async throws {
    let folder = try Fixture.temporaryFolder()
    let path = folder.file("growing.mp4")
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    defer { close(fd) }
    let all = (0..<2000).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 251) }
    func append(_ range: Range<Int>) {
      let written = all[range].withUnsafeBytes {
        pwrite(fd, $0.baseAddress, $0.count, off_t(range.lowerBound))
      }
      #expect(written == range.count)
    }
    let growing = GrowingPlayback()
    growing.attach(fd)
    append(0..<1000)
    // Bytes 900...1099: the first hundred are written, the rest come after it asks.
    async let asked = growing.part(from: 900, through: 1099)
    append(1000..<2000)
    let (bytes, total) = try await asked
    #expect(bytes == Array(all[900...1099]) && total == nil)
    let seek = try await growing.part(from: 1500, through: nil)
    #expect(seek.bytes == Array(all[1500..<2000]) && seek.total == nil)

    let made = Playback(
      source: .rendition(path: path), byteSize: 2000, mediaType: "video/mp4", width: 64,
      height: 36, cached: false)
    growing.finish(.success(made))
    let last = try await growing.part(from: 1990, through: 2100)
    #expect(last.bytes == Array(all[1990..<2000]) && last.total == 2000)
    let past = try await growing.part(from: 2000, through: nil)
    #expect(past.bytes.isEmpty && past.total == 2000)
    #expect(try await growing.whole() == made)

    #expect(API.growingRange("bytes=0-") == .fromStart)
    #expect(API.growingRange("bytes=100-199") == .part(start: 100, end: 199))
    #expect(API.growingRange("bytes=4096-") == .part(start: 4096, end: nil))
    #expect(API.growingRange("bytes=-500") == .atTheEnd)
    #expect(API.growingRange("bytes=0-1,5-9") == .fromStart)
    #expect(API.growingRange("bytes=9-5") == .fromStart)
    #expect(API.growingRange("items=0-5") == .fromStart)
  }
}
