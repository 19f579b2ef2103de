import Foundation
import Testing

@testable import Darkroom

/// Videos in an encrypted space: taken in as photos are (a file, bytes, an upload as it
/// arrives), their poster, playback version and edits made from the video decrypted into
/// memory and sealed again, and no plaintext byte of any of them under the space's folder.
/// The clips are made here by the `ffmpeg` command and read back with `ffprobe`.
@Suite("Videos in a space", .timeLimit(.minutes(10)), .offThePool)
struct SpaceVideoTests {
  /// Pieces of `bytes` (32 bytes at its start, middle and end) that no file under a space's
  /// folder may hold.
  static func needles(_ bytes: [UInt8]) -> [[UInt8]] {
    [0, bytes.count / 2, bytes.count - 32].map { Array(bytes[$0..<$0 + 32]) }
  }

  /// The files under `folder` holding any of `needles`.
  static func holders(of needles: [[UInt8]], under folder: String) throws -> [String] {
    try filesUnder(folder).filter { _, bytes in needles.contains { contains(bytes, $0) } }.keys
      .sorted()
  }

  @Test(
    "an HEVC clip in a space: a video asset, its poster, a playback version made in memory and sealed (cached, ranges, streamed), noir and a byte-exact revert, the command line's render and edit; no plaintext under the folder"
  )
  func videoInSpace() async throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try VideoEditTests.hevcClip(in: folder)  // a MOV, shown 360x640, 2 s, AAC
    let original = try Fixture.bytes(clip)
    let dir = folder.file("S")
    let library = Library(
      space: try Space.create(at: dir, password: pw("alpha"), kdf: testKDF))
    let (asset, added) = try library.add(file: clip)
    #expect(added && asset.mediaType == .video && asset.format == "mov")
    #expect((asset.displayWidth, asset.displayHeight) == (360, 640))
    #expect(abs((asset.duration ?? 0) - 2) < 0.05, "\(String(describing: asset.duration))")
    var videos = AssetQuery()
    videos.album = .smart(.videos)
    #expect(Array(try library.assets(matching: videos)) == [asset.id])
    videos = AssetQuery()
    videos.mediaType = .photo
    #expect(try library.assets(matching: videos).isEmpty)

    // Its poster: upright (portrait), in colour.
    let poster = try library.render(asset.id, RenditionSpec(.aspectThumbnail))
    #expect(poster.height > poster.width)
    #expect(VideoEditTests.colourfulness(try decode(poster).pixels()) > 100)

    // A playback version: H.264 and AAC in MP4, upright, as long; made once, one new object.
    let objectsBefore = try filesUnder(dir + "/objects").count
    let made = try library.playback(of: asset.id, quality: .fast)
    #expect(!made.isOriginal && !made.cached && made.mediaType == "video/mp4")
    #expect((made.width, made.height) == (360, 640))
    let bytes = try library.playbackBytes(made)
    #expect(bytes.count == made.byteSize)
    #expect(try filesUnder(dir + "/objects").count == objectsBefore + 1)
    let written = try folder.write("fast.mp4", bytes)
    let probe = try VideoEditTests.probe(written)
    #expect(probe.video?["codec_name"] as? String == "h264")
    #expect(probe.video?["width"] as? Int == 360 && probe.video?["height"] as? Int == 640)
    #expect(probe.audio?["codec_name"] as? String == "aac")
    #expect(abs(probe.duration - 2.0) <= 0.1, "\(probe.duration)")
    let again = try library.playback(of: asset.id, quality: .fast)
    #expect(again.cached && again.source == made.source && again.byteSize == made.byteSize)
    #expect(try library.playbackBytes(again, part: 100..<300) == Array(bytes[100..<300]))

    // Streamed while it is made (medium), then the same bytes from the space.
    guard case .growing(let growing) = try library.playbackStream(of: asset.id) else {
      Issue.record("a playback not made yet is streamed as it is made")
      return
    }
    var streamed: [UInt8] = []
    while true {
      let piece = try await growing.read(from: streamed.count, count: 1 << 16)
      if piece.isEmpty { break }
      streamed += piece
    }
    let medium = try library.playback(of: asset.id)
    #expect(medium.cached && !medium.isOriginal)
    #expect(try library.playbackBytes(medium) == streamed)

    // The command line's render, from another process: the same sealed rendition's bytes.
    let passwordFile = try folder.write("password", Array("alpha".utf8))
    let out = folder.file("out/clip.playback.mp4")
    let render = try CLI.run(
      [
        "render", "--space", dir, "--password-file", passwordFile, "--rep", "playback",
        "clip.mov", "-o", folder.path + "/out/",
      ])
    #expect(render.status == 0, "\(render.stderr)")
    #expect(render.stdout == out + "\n")
    #expect(try Fixture.bytes(out) == streamed)

    // noir: every frame grey, its sound kept; the playback of the edit is made anew.
    try library.editBlocking(asset.id, with: graph("noir"))
    let editedBytes = try library.bytes(of: asset.id)
    let editedFile = try folder.write("edited.mov", editedBytes)
    let editedProbe = try VideoEditTests.probe(editedFile)
    #expect(editedProbe.video?["codec_name"] as? String == "h264")
    #expect(editedProbe.audio?["codec_name"] as? String == "aac")
    for frame in try VideoEditTests.frames(editedFile, at: [0.2, 1.5], in: folder) {
      #expect(VideoEditTests.colourfulness(frame.pixels) < 2)
    }
    #expect(try library.editHistory(asset.id).versions.map(\.graph) == [graph("noir")])
    let greyPoster = try library.render(asset.id, RenditionSpec(.aspectThumbnail))
    #expect(VideoEditTests.colourfulness(try decode(greyPoster).pixels()) < 3)
    let editedPlayback = try library.playback(of: asset.id, quality: .fast)
    #expect(!editedPlayback.cached && editedPlayback.source != made.source)
    let greyFile = try folder.write("grey.mp4", try library.playbackBytes(editedPlayback))
    for frame in try VideoEditTests.frames(greyFile, at: [1.0], in: folder) {
      #expect(VideoEditTests.colourfulness(frame.pixels) < 3)
    }

    // Back to the original, byte for byte.
    try library.revertBlocking(asset.id)
    #expect(try library.bytes(of: asset.id) == original)

    // A turn: the asset's row says the turned frames' size, as the edited file's is; a revert
    // the original's again.
    func shown() throws -> [Int] {
      let row = try library.asset(asset.id)
      return [row.width, row.height, row.displayWidth, row.displayHeight]
    }
    try library.editBlocking(asset.id, with: graph("rotate angle=90"))
    #expect(try shown() == [640, 360, 640, 360])
    try library.revertBlocking(asset.id)
    #expect(try shown() == [asset.width, asset.height, 360, 640])

    // The command line's edit and revert, through the same engine.
    let edit = try CLI.run(
      ["edit", "--space", dir, "--password-file", passwordFile, "--filter", "noir", "clip.mov"])
    #expect(edit.status == 0, "\(edit.stderr)")
    #expect(edit.stdout == "clip.mov: edited (version 1: noir)\n")
    let revert = try CLI.run(
      ["revert", "--space", dir, "--password-file", passwordFile, "clip.mov"])
    #expect(revert.stdout == "clip.mov: restored the original\n", "\(revert.stderr)")
    try library.space?.reload()
    #expect(try library.bytes(of: asset.id) == original)

    // Nothing under the folder holds a byte of the clip, its playback versions or its edit.
    let secrets =
      Self.needles(original) + Self.needles(bytes) + Self.needles(streamed)
      + Self.needles(editedBytes)
    #expect(try Self.holders(of: secrets, under: dir).isEmpty)
    #expect(try plaintextFound(under: dir, names: ["clip.mov", "clip.playback"]).isEmpty)
    library.close()
  }

  @Test(
    "a space's video is decoded and encoded by the space's own workers, handed the decrypted video as a sealed file in memory; a renderer given no workers in a process that routes to workers gets the space's own"
  )
  func ownWorkers() throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try VideoEditTests.hevcClip(in: folder)
    let space = try Space.create(at: folder.file("S"), password: pw("alpha"), kdf: testKDF)
    let (asset, _) = try space.add(file: clip)
    let shared = WorkerPool(.init(executable: CLI.binary))
    defer { shared.shutDown() }
    var settings = PixelSettings()
    settings.workers = shared
    let poster = try space.render(asset, RenditionSpec(.thumbnail), settings: settings)
    #expect(VideoEditTests.colourfulness(try decode(poster).pixels()) > 100)
    let edited = try space.edit(asset, graph: graph("noir"), settings: settings)
    let file = try folder.write("edited.mov", try space.current(edited))
    for frame in try VideoEditTests.frames(file, at: [1.0], in: folder) {
      #expect(VideoEditTests.colourfulness(frame.pixels) < 2)
    }
    #expect(shared.counts.started == 0)
    // One for the poster; one for the encode, started with its own CPU limit and retired
    // after it.
    let own = try #require(space.ownWorkers)
    #expect(own.counts.started == 2)
    space.close()
    #expect(own.counts.running == 0)

    // Which workers a space's renderer gets.
    let routed = WorkerPool.Configuration(executable: "/usr/local/bin/darkroom")
    #expect(Space.ownConfiguration(Renderer(), routed: routed)?.executable == routed.executable)
    #expect(Space.ownConfiguration(Renderer(), routed: nil) == nil)
    #expect(Space.ownConfiguration(Renderer(settings), routed: routed)?.executable == CLI.binary)
  }

  @Test("a memory file, once sealed, cannot be written, grown or shrunk by anyone it is handed to")
  func memoryFileSealed() throws {
    let file = try MemoryFile.sealed(name: "clip.mov", length: 10 << 20) { offset, count in
      (offset..<offset + count).map { UInt8(truncatingIfNeeded: $0 / 7) }
    }
    #expect(file.size == 10 << 20)
    #expect(
      try file.read(at: 5 << 20, count: 4)
        == (5 << 20..<(5 << 20) + 4).map {
          UInt8(truncatingIfNeeded: $0 / 7)
        })
    let byte: [UInt8] = [1]
    let wrote = byte.withUnsafeBytes { pwrite(file.descriptor, $0.baseAddress, 1, 0) }
    #expect(wrote == -1 && errno == EPERM)
    #expect(ftruncate(file.descriptor, 0) == -1 && errno == EPERM)
    #expect(ftruncate(file.descriptor, 20 << 20) == -1 && errno == EPERM)
    // In memory, named in no folder.
    let target = try FileManager.default.destinationOfSymbolicLink(
      atPath: "/proc/self/fd/\(file.descriptor)")
    #expect(target.hasPrefix("/memfd:darkroom-decrypted"), "\(target)")
  }

  @Test(
    "a rendition sealed by two makers keeps the first (a reader never reads across a replacement); one that does not open is replaced"
  )
  func renditionKeepsFirst() throws {
    let folder = try Fixture.temporaryFolder()
    let space = try Space.create(at: folder.file("S"), password: pw("alpha"), kdf: testKDF)
    let name = Space.newName()
    try space.prepare(name)
    let path = space.objectPath(name)
    func seal(_ byte: UInt8) throws {
      try SpaceObject.write(
        name: name, length: 100_000, to: path, keys: space.keys,
        partial: Space.uniquePartial(path), keepingFirst: true
      ) { _, count in [UInt8](repeating: byte, count: count) }
    }
    func content() throws -> [UInt8] {
      try SpaceObjectReader(path: path, name: name, keys: space.keys, label: "r").readAll()
    }
    try seal(1)
    try seal(2)
    #expect(try content() == [UInt8](repeating: 1, count: 100_000))
    // A damaged one (its header's nonce changed) does not open: the next maker's replaces it.
    var damaged = try Fixture.bytes(path)
    damaged[3] ^= 0xFF
    try Data(damaged).write(to: URL(fileURLWithPath: path))
    #expect((try? content()) == nil)
    try seal(3)
    #expect(try content() == [UInt8](repeating: 3, count: 100_000))
    // No partial file is left by either maker.
    let left = try FileManager.default.contentsOfDirectory(
      atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    #expect(left == [name])
  }

  @Test(
    "locking a space while its video's playback version is made stops the encode and seals nothing; its keys are zeroed when the work has ended, not under it"
  )
  func lockDuringEncode() throws {
    let folder = try Fixture.temporaryFolder()
    let clip = try VideoEditTests.hevcClip(in: folder)
    let dir = folder.file("S")
    let space = try Space.create(at: dir, password: pw("alpha"), kdf: testKDF)
    let library = Library(space: space)
    let (asset, _) = try library.add(file: clip)
    let before = try filesUnder(dir).keys.sorted()
    let reports = Locked(0)
    #expect {
      _ = try library.playback(of: asset.id, quality: .fast) { _, _ in
        reports.withLock { $0 += 1 }
        space.close()
        return true
      }
    } throws: { error in
      (error as? DarkroomError)?.message == "stopped: asked to stop before the encode ended"
    }
    #expect(reports.withLock { $0 } == 1)
    #expect(try filesUnder(dir).keys.sorted() == before, "nothing sealed, nothing partial")
    #expect(space.keys.space.isWiped && space.keys.objects.isWiped)

    // The keys are kept while work that holds them runs, and zeroed when it ends.
    let other = try Space.create(
      at: folder.file("T"), password: pw("beta"), kdf: testKDF)
    try other.using { () throws(DarkroomError) in
      other.close()
      #expect(!other.keys.objects.isWiped && !other.keys.catalog.isWiped)
      #expect(other.isClosed)
    }
    #expect(other.keys.objects.isWiped && other.keys.catalog.isWiped)
    #expect {
      try other.using { () throws(DarkroomError) in }
    } throws: { error in
      (error as? DarkroomError)?.message == "the space is locked"
    }
  }

  @Test(
    "a video uploaded as it arrives whose index is at its end, past the first bytes: read from the sealed object; a cut-off video is refused and leaves nothing"
  )
  func uploadIndexAtEnd() async throws {
    let folder = try Fixture.temporaryFolder()
    // Two seconds of noise, lossless: about 13 MB, with its `moov` written last.
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "nullsrc=size=640x360:rate=30:duration=2", "-vf",
        "geq=lum='random(1)*255':cb=128:cr=128", "-c:v", "libx264", "-qp", "0", "noise.mp4",
      ], in: folder)
    let bytes = try Fixture.bytes(folder.file("noise.mp4"))
    let index = try #require(
      (0..<bytes.count - 4).last { Array(bytes[$0..<$0 + 4]) == Array("moov".utf8) })
    #expect(index > Space.streamedHeaderBytes, "the index is past the first bytes read")
    let dir = folder.file("S")
    let library = Library(space: try Space.create(at: dir, password: pw("alpha"), kdf: testKDF))
    defer { library.close() }
    func pieces(_ bytes: [UInt8]) -> AsyncStream<[UInt8]> {
      AsyncStream { continuation in
        for start in stride(from: 0, to: bytes.count, by: 1 << 20) {
          continuation.yield(Array(bytes[start..<min(bytes.count, start + (1 << 20))]))
        }
        continuation.finish()
      }
    }
    let (asset, added) = try await library.add(
      streaming: pieces(bytes), length: bytes.count, name: "noise.mp4", limits: Upload.Limits())
    #expect(added && asset.mediaType == .video && asset.format == "mp4")
    #expect((asset.width, asset.height) == (640, 360))
    #expect(abs((asset.duration ?? 0) - 2) < 0.05)
    #expect(try library.bytes(of: asset.id) == bytes)

    // Cut before its index: refused with the video's name, and nothing is left.
    let objects = try filesUnder(dir + "/objects").count
    let cut = Array(bytes[..<index])
    await #expect {
      _ = try await library.add(
        streaming: pieces(cut), length: cut.count, name: "cut.mp4", limits: Upload.Limits())
    } throws: { error in
      (error as? DarkroomError)?.file == "cut.mp4"
    }
    #expect(try filesUnder(dir + "/objects").count == objects)
    #expect(Array(try library.assets(matching: AssetQuery())) == [asset.id])
  }
}
