import Foundation
import Testing

@testable import Darkroom

/// Byte surgery on samples, for damaged and hostile files.
enum Hostile {
  static func jpeg(_ name: String = "orientation-1.jpg") throws -> [UInt8] {
    try Fixture.bytes(Fixture.sample(name))
  }

  /// Offset of the first marker `marker` (0xFF, marker) in a JPEG.
  static func marker(_ marker: UInt8, in bytes: [UInt8]) -> Int? {
    (2..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == marker }
  }

  /// A JPEG whose frame header claims `width` x `height`.
  static func jpegClaiming(width: Int, height: Int) throws -> [UInt8] {
    var bytes = try jpeg()
    let sof = try #require(marker(0xC0, in: bytes) ?? marker(0xC2, in: bytes))
    bytes[sof + 5] = UInt8(height >> 8)
    bytes[sof + 6] = UInt8(height & 0xFF)
    bytes[sof + 7] = UInt8(width >> 8)
    bytes[sof + 8] = UInt8(width & 0xFF)
    return bytes
  }

  /// A PNG whose header claims `width` x `height` (its CRC no longer matches).
  static func pngClaiming(width: UInt32, height: UInt32) throws -> [UInt8] {
    var bytes = try Fixture.bytes(Fixture.sample("alpha.png"))
    for (i, shift) in [24, 16, 8, 0].enumerated() {
      bytes[16 + i] = UInt8((width >> UInt32(shift)) & 0xFF)
      bytes[20 + i] = UInt8((height >> UInt32(shift)) & 0xFF)
    }
    return bytes
  }

  /// A JPEG with its Huffman tables overwritten with noise.
  static func scrambledHuffman() throws -> [UInt8] {
    var bytes = try jpeg()
    var position = 2
    var generator = SystemRandomNumberGenerator()
    while let dht = (position..<bytes.count - 1).first(where: {
      bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC4
    }) {
      let length = Int(bytes[dht + 2]) << 8 | Int(bytes[dht + 3])
      for i in (dht + 5)..<(dht + 2 + length) {
        bytes[i] = UInt8.random(in: 0...255, using: &generator)
      }
      position = dht + 2 + length
    }
    return bytes
  }
}

@Suite("Hostile inputs", .timeLimit(.minutes(5)), .offThePool)
struct HostileInputTests {
  /// Runs a command that must fail on `input`: exit 1 (never a signal), one stderr line naming
  /// the file, nothing new in the folder, the input unchanged, in bounded time.
  func expectCleanFailure(
    _ arguments: [String], input: String, in folder: TemporaryFolder, words: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let before = try FileManager.default.subpathsOfDirectory(atPath: folder.path).sorted()
    let hash = try? ContentHash.of(file: input)
    let result = try CLI.run(arguments, cwd: folder.path)
    #expect(result.status == 1, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
    #expect(
      lines.first?.hasPrefix("darkroom: \(input): ") == true, "\(result.stderr)",
      sourceLocation: sourceLocation)
    if let words {
      #expect(result.stderr.contains(words), "\(result.stderr)", sourceLocation: sourceLocation)
    }
    let after = try FileManager.default.subpathsOfDirectory(atPath: folder.path).sorted()
    let added = Set(after).subtracting(before).filter { !$0.hasPrefix(".darkroom") }
    #expect(added.isEmpty, "left behind: \(added)", sourceLocation: sourceLocation)
    if let hash {
      #expect((try? ContentHash.of(file: input)) == hash, sourceLocation: sourceLocation)
    }
  }

  @Test("JPEGs cut at many offsets: info, render, edit and apply all fail cleanly")
  func truncatedEverywhere() throws {
    let folder = try Fixture.temporaryFolder()
    let bytes = try Hostile.jpeg("orientation-6.jpg")
    let offsets = [
      1, 2, 3, 4, 20, 100, 400, 1000, 2000, 4000, 8000, 12000, bytes.count - 500, bytes.count - 3,
      bytes.count - 1,
    ]
    // Cut past the start-of-scan segment, the header is whole: info describes the file and
    // states the damage; cut before it, info fails cleanly.
    let sos = try #require(Hostile.marker(0xDA, in: bytes))
    let headerEnd = sos + 2 + (Int(bytes[sos + 2]) << 8 | Int(bytes[sos + 3]))
    for (index, offset) in offsets.enumerated() {
      let path = try folder.write("cut-\(index).jpg", Array(bytes.prefix(offset)))
      if offset > headerEnd {
        let info = try CLI.run(["info", "--json", path])
        #expect(info.status == 0, "\(offset): \(info.stderr)")
        #expect(info.stdout.contains("\"damage\" : \"truncated\""), "\(offset)")
      } else {
        try expectCleanFailure(["info", path], input: path, in: folder)
      }
      try expectCleanFailure(
        ["render", path, "--no-cache", "--rep", "thumbnail"], input: path, in: folder)
      if index % 3 == 0 {
        try expectCleanFailure(["edit", path, "--filter", "noir"], input: path, in: folder)
      }
    }
  }

  @Test("damaged JPEGs (corrupt markers, scrambled Huffman tables) fail cleanly when decoded")
  func corruptJPEGs() throws {
    let folder = try Fixture.temporaryFolder()
    var markers = try Hostile.jpeg()
    let sos = try #require(Hostile.marker(0xDA, in: markers))
    markers[sos + 1] = 0x00  // the start of scan is no marker any more
    let corrupt = try folder.write("markers.jpg", markers)
    try expectCleanFailure(["info", corrupt], input: corrupt, in: folder, words: "corrupt JPEG")
    try expectCleanFailure(["render", corrupt, "--no-cache"], input: corrupt, in: folder)
    for attempt in 0..<4 {
      let huffman = try folder.write("huffman-\(attempt).jpg", Hostile.scrambledHuffman())
      try expectCleanFailure(
        ["render", huffman, "--no-cache", "--rep", "fullscreen"], input: huffman, in: folder)
      try expectCleanFailure(["edit", huffman, "--filter", "noir"], input: huffman, in: folder)
    }
  }

  @Test("decompression bombs are refused from the header, before any pixel is decoded")
  func bombs() throws {
    let folder = try Fixture.temporaryFolder()
    let jpeg = try folder.write("bomb.jpg", Hostile.jpegClaiming(width: 65535, height: 65535))
    let png = try folder.write("bomb.png", Hostile.pngClaiming(width: 1_000_000, height: 1_000_000))
    // info only reads headers: it reports the claim.
    let info = try CLI.run(["info", "--json", jpeg])
    #expect(info.stdout.contains("\"width\" : 65535"))
    for path in [jpeg, png] {
      try expectCleanFailure(
        ["render", path, "--no-cache"], input: path, in: folder,
        words: "over the limit of 268402689 pixels")
      try expectCleanFailure(
        ["edit", path, "--filter", "noir"], input: path, in: folder, words: "over the limit")
    }
    let fine = try folder.write("fine.jpg", Hostile.jpeg())
    try expectCleanFailure(
      ["render", fine, "--no-cache", "--max-pixels", "1000"], input: fine, in: folder,
      words: "image is 600x400, over the limit of 1000 pixels")
  }

  @Test("text, a program, a folder, a path through a file, and empty input are not images")
  func notImages() throws {
    let folder = try Fixture.temporaryFolder()
    let text = try folder.write("notes.jpg", Array("just some words\n".utf8))
    let program = try folder.write("program.jpg", Fixture.bytes("/bin/true"))
    let empty = try folder.write("empty.png", [])
    let nested = text + "/inside.jpg"
    for (path, words) in [
      (text, "not an image"), (program, "not an image"), (empty, "empty file"),
      (nested, "Not a directory"),
    ] {
      try expectCleanFailure(["info", path], input: path, in: folder, words: words)
      try expectCleanFailure(["render", path, "--no-cache"], input: path, in: folder, words: words)
    }
    try FileManager.default.createDirectory(
      atPath: folder.file("photos.jpg"), withIntermediateDirectories: true)
    try expectCleanFailure(
      ["edit", folder.file("photos.jpg"), "--filter", "noir"], input: folder.file("photos.jpg"),
      in: folder, words: "is a directory")
    let stdin = try CLI.run(["render", "-", "-o", "-"], stdin: Data())
    #expect(stdin.status == 1 && stdin.stderr == "darkroom: -: standard input is empty\n")
  }

  @Test("hostile EXIF (bad orientations, looping IFDs) still renders upright, Orientation 1")
  func hostileExifRenders() throws {
    let folder = try Fixture.temporaryFolder()
    let base = try Hostile.jpeg()
    let blocks = [
      ExifBuilder.block([ExifBuilder.short(0x0112, 9)]),
      ExifBuilder.block([ExifBuilder.short(0x0112, 65535)]),
      ExifBuilder.block([ExifBuilder.short(0x0112, 6)], nextIFD: 8),
    ]
    for (index, block) in blocks.enumerated() {
      let path = try folder.write(
        "exif-\(index).jpg", ExifBuilder.jpeg(base, replacingExifWith: block))
      let out = folder.file("exif-\(index).out.jpg")
      let result = try CLI.run(["render", path, "--no-cache", "-o", out])
      #expect(result.status == 0, "\(result.stderr)")
      let m = try AssetMetadata.read(path: out)
      #expect(m.orientation == .valid(.up) || m.orientation == .absent)
      #expect(m.width == (index == 2 ? 400 : 600), "a valid 6 in a looping IFD is still applied")
    }
  }

  @Test("names with spaces, newlines and non-ASCII characters work end to end")
  func awkwardNames() throws {
    let folder = try Fixture.temporaryFolder()
    for name in ["with space.jpg", "new\nline.jpg", "ünïcödé 写真.jpg", "-dash.jpg"] {
      let path = try folder.write(name, Hostile.jpeg("orientation-5.jpg"))
      let original = try ContentHash.of(file: path)
      #expect(try CLI.run(["render", path, "--no-cache", "--rep", "thumbnail"]).status == 0)
      #expect(try CLI.run(["edit", path, "--filter", "noir"]).status == 0)
      #expect(try CLI.run(["revert", path]).status == 0)
      #expect(try ContentHash.of(file: path) == original)
    }
  }

  @Test("output into a missing or read-only folder: a clear error, nothing written")
  func unwritableOutputs() throws {
    let folder = try Fixture.temporaryFolder()
    let input = try folder.write("a.jpg", Hostile.jpeg())
    let missing = folder.file("no/such/folder/out.jpg")
    let result = try CLI.run(["render", input, "--no-cache", "-o", missing])
    #expect(result.status == 1)
    #expect(result.stderr == "darkroom: \(missing): cannot write: the folder does not exist\n")
    let readOnly = "/sys/darkroom-out.jpg"  // sysfs refuses new files, even to root
    let denied = try CLI.run(["render", input, "--no-cache", "-o", readOnly])
    #expect(denied.status == 1)
    #expect(denied.stderr.hasPrefix("darkroom: \(readOnly): cannot write: "), "\(denied.stderr)")
  }

  @Test("a full disk: a clear error, the original intact, no partial file", arguments: [1, 2])
  func fullDisk(failingWrite: Int) throws {
    let folder = try Fixture.temporaryFolder()
    let input = try folder.write("a.jpg", Hostile.jpeg("gps.jpg"))
    let original = try ContentHash.of(file: input)
    let result = try CLI.run(
      ["edit", input, "--filter", "noir"], environment: ["DARKROOM_FAULT": "enospc:\(failingWrite)"]
    )
    #expect(result.status == 1)
    #expect(
      result.stderr.hasSuffix("cannot write: no space left on the device\n"), "\(result.stderr)")
    #expect(try ContentHash.of(file: input) == original)
    let temporaries = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter {
      $0.hasSuffix(".tmp")
    }
    #expect(temporaries.isEmpty, "\(temporaries)")
    let render = try CLI.run(
      ["render", input, "--no-cache", "-o", folder.file("r.jpg")],
      environment: ["DARKROOM_FAULT": "enospc"])
    #expect(render.status == 1)
    #expect(!FileManager.default.fileExists(atPath: folder.file("r.jpg")))
  }

  @Test("a file whose pixel work runs past --timeout is stopped with a clear error")
  func timeLimit() throws {
    let folder = try Fixture.temporaryFolder()
    let input = try folder.write("a.jpg", Hostile.jpeg())
    // Upscaling to 12000x12000 takes far longer than 10 ms.
    let result = try CLI.run([
      "render", input, "--no-cache", "--rep", "thumbnail", "--size", "12000", "--timeout", "0.01",
      "-o", folder.file("big.png"),
    ])
    #expect(result.status == 1)
    #expect(result.stderr.contains("took longer than the time limit"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("big.png")))
  }

  @Test("an edit whose pixel work runs past --timeout stops, and the file is left as it was")
  func editTimeLimit() throws {
    let folder = try Fixture.temporaryFolder()
    // 24 megapixels stored sideways: the turn needs them all in memory, which takes far
    // longer than the watchdog's first look (20 ms).
    var options = VipsImage.ThumbnailOptions(width: 6000, height: 6000)
    options.size = 1  // up
    options.autoRotate = false
    let large = try VipsImage.thumbnail(path: Fixture.sample("orientation-6.jpg"), options)
    let input = try folder.write("big.jpg", try large.encode(suffix: ".jpg[Q=80]"))
    let before = try ContentHash.of(file: input)
    let result = try CLI.run([
      "edit", input, "--filter", "rotate 90", "--filter", "crop aspect=1:1", "--timeout", "0.001",
    ])
    #expect(result.status == 1)
    #expect(result.stderr.contains("took longer than the time limit"), "\(result.stderr)")
    #expect(try ContentHash.of(file: input) == before)
  }

}
