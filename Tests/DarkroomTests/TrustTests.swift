import Foundation
import Testing

@testable import Darkroom

/// What `stat` says of a file: the attributes a user's photo must keep.
struct FileStat: Equatable {
  var mode: mode_t
  var links: Int
  var user: uid_t
  var group: gid_t
  var modifiedNanoseconds: Int64
  var inode: UInt64

  init(_ path: String) throws {
    var info = stat()
    try #require(stat(path, &info) == 0, "stat \(path)")
    mode = info.st_mode & 0o7777
    links = Int(info.st_nlink)
    user = info.st_uid
    group = info.st_gid
    modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    inode = UInt64(info.st_ino)
  }
}

/// A spec with the fields these tests set.
func spec(
  _ representation: Representation, size: Int? = nil, screen: (Int, Int)? = nil,
  format: ImageFormat? = nil
) -> RenditionSpec {
  var spec = RenditionSpec(representation)
  if let size { spec.size = size }
  if let screen { (spec.screenWidth, spec.screenHeight) = screen }
  spec.format = format
  return spec
}

/// Replaces a file's content in place (same inode), as an editor or a sync tool might.
func overwriteInPlace(_ path: String, with bytes: [UInt8]) throws {
  let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
  try handle.truncate(atOffset: 0)
  try handle.write(contentsOf: Data(bytes))
  try handle.close()
}

/// A PNG whose header is whole and whose pixel data is damaged: libvips fails on it every
/// time, at fail_on=error.
func damagedPNG() throws -> [UInt8] {
  var bytes = try Fixture.bytes(Fixture.sample("alpha.png"))
  let data = (bytes.firstRange(of: Array("IDAT".utf8))?.lowerBound ?? 0) + 100
  for index in data..<data + 500 { bytes[index] = 0x55 }
  return bytes
}

@Suite("Originals stay as they were", .timeLimit(.minutes(10)), .offThePool)
struct TrustTests {
  let editor = Editor()

  @Test(
    "a photo keeps its mode and owner through edit, re-edit and revert",
    arguments: [mode_t(0o644), 0o600, 0o664])
  func modesKept(mode: mode_t) throws {
    let (folder, paths) = try workspace("orientation-6.jpg")
    defer { withExtendedLifetime(folder) {} }
    let photo = paths[0]
    chmod(photo, mode)
    let owned = geteuid() == 0 && chown(photo, 1234, 5678) == 0
    try editor.edit(photo, with: graph("noir"))
    var after = try FileStat(photo)
    #expect(after.mode == mode)
    #expect(after.links == 1)
    if owned { #expect((after.user, after.group) == (1234, 5678)) }
    try editor.edit(photo, with: graph("crop aspect=1:1"))
    after = try FileStat(photo)
    #expect(after.mode == mode)
    try editor.revert(photo)
    after = try FileStat(photo)
    #expect(after.mode == mode)
    #expect(after.links == 1)
    if owned { #expect((after.user, after.group) == (1234, 5678)) }
    let store = folder.file(".darkroom/originals")
    for name in try FileManager.default.contentsOfDirectory(atPath: store) {
      let entry = try FileStat(store + "/" + name)
      #expect(entry.mode == 0o444 && entry.links == 1, "the store's own read-only copy")
    }
  }

  @Test("apply -o leaves its inputs' mode, link count, mtime and bytes as they were")
  func applyLeavesInputsAlone() throws {
    let folder = try Fixture.temporaryFolder()
    try FileManager.default.createDirectory(
      atPath: folder.file("in"), withIntermediateDirectories: true)
    let inputs = try ["orientation-1.jpg", "gps.jpg"].map {
      try folder.write("in/" + $0, Fixture.bytes(Fixture.sample($0)))
    }
    chmod(inputs[1], 0o600)
    let before = try inputs.map { try (FileStat($0), ContentHash.of(file: $0)) }
    let result = try CLI.run([
      "apply", "--filter", "noir", folder.file("in"), "-o", folder.file("out"),
    ])
    #expect(result.status == 0, "\(result.stderr)")
    for (input, (stat, hash)) in zip(inputs, before) {
      #expect(try FileStat(input) == stat)
      #expect(try ContentHash.of(file: input) == hash)
    }

    // The output library's original is its own: changing the input later loses nothing.
    try overwriteInPlace(inputs[0], with: Fixture.bytes(Fixture.sample("orientation-3.jpg")))
    let revert = try CLI.run(["revert", folder.file("out/orientation-1.jpg")])
    #expect(revert.status == 0, "\(revert.stderr)")
    #expect(try ContentHash.of(file: folder.file("out/orientation-1.jpg")) == before[0].1)
  }

  @Test("a damaged store entry of the right size is replaced before the photo is touched")
  func damagedStoreEntryReplaced() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    let original = try Fixture.bytes(paths[0])
    let hash = ContentHash.of(bytes: original)
    let store = folder.file(".darkroom/originals")
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
    var wrong = original
    wrong[wrong.count / 2] ^= 0xFF
    let entry = try folder.write(".darkroom/originals/\(hash.hex)", wrong)
    chmod(entry, 0o444)

    try editor.edit(paths[0], with: graph("noir"))
    #expect(try ContentHash.of(file: entry) == hash, "the entry holds the original again")
    #expect(try editor.revert(paths[0]) == .restoredOriginal(sha256: hash.hex))
    #expect(try Fixture.bytes(paths[0]) == original)
  }

  @Test("a file changed between hashing and rendering is never cached under the old hash")
  func cacheStoresOnlyWhatWasRendered() throws {
    // A full PNG rendition reads the file once: what was read is hashed and rendered.
    try replacedMidRender(spec(.full, format: .png), streamed: false)
    // A thumbnail of a JPEG is decoded from the file as it is read, beside the hash: a file
    // replaced meanwhile is rendered as it is now, and that render is cached under no hash.
    try replacedMidRender(spec(.thumbnail, size: 64), streamed: true)
  }

  func replacedMidRender(_ rendition: RenditionSpec, streamed: Bool) throws {
    let folder = try Fixture.temporaryFolder()
    let first = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let second = try Fixture.bytes(Fixture.sample("orientation-3.jpg"))
    let path = try folder.write("photo.jpg", first)
    let cache = RenditionCache(folder: URL(fileURLWithPath: folder.file("cache")))
    let representations = Representations(cache: cache)
    let uncached = Representations(cache: nil)
    let expectedFirst = try uncached.rendition(of: .data(first, name: "first"), rendition).bytes
    let expectedSecond = try uncached.rendition(of: .data(second, name: "second"), rendition).bytes
    #expect(expectedFirst != expectedSecond)

    // The file is replaced (a new inode, as an edit elsewhere does) right after its hash
    // began.
    let served = try FaultInjection.whenReached(
      "after-source-hash", file: path,
      {
        _ = FileManager.default.createFile(atPath: path + ".new", contents: Data(second))
        rename(path + ".new", path)
      },
      during: { try representations.rendition(of: .file(path), rendition) })
    #expect(cache.entries(of: ContentHash.of(bytes: second)).isEmpty)
    if streamed {
      #expect(served.bytes == expectedSecond, "rendered as the file is now")
      #expect(cache.entries(of: ContentHash.of(bytes: first)).isEmpty)
    } else {
      #expect(served.bytes == expectedFirst, "what was read is what was rendered")
      for entry in cache.entries(of: ContentHash.of(bytes: first)) {
        #expect(cache.read(entry) == expectedFirst)
      }
    }

    let now = try representations.rendition(of: .file(path), rendition)
    #expect(now.bytes == expectedSecond)
    #expect(!now.fromCache)
    // Back to the first bytes: the first rendition is served (from the cache when the one
    // read stored it), and it is the right one.
    try overwriteInPlace(path, with: first)
    let again = try representations.rendition(of: .file(path), rendition)
    #expect(again.bytes == expectedFirst)
    #expect(again.fromCache != streamed)
    #expect(try representations.rendition(of: .file(path), rendition).fromCache)
  }

  @Test("a HEIC whose EXIF says 6: info, fullscreen, thumbnail and crop follow the pixels")
  func heifOrientationFromPixels() throws {
    let heic = Fixture.sample("heif-exif-6.heic")
    let metadata = try AssetMetadata.read(path: heic)
    #expect(metadata.orientation == .ignored(raw: 6))
    #expect((metadata.displayWidth, metadata.displayHeight) == (600, 400))
    let info = try CLI.run(["info", "--json", heic])
    let object = try #require(
      try JSONSerialization.jsonObject(with: info.stdoutData) as? [[String: Any]]
    ).first
    #expect(object?["orientation"] as? Int == 1)
    #expect(object?["orientationStatus"] as? String == "ignored")
    #expect(object?["orientationRaw"] as? Int == 6)
    #expect(object?["displayWidth"] as? Int == 600)

    let renderer = Renderer()
    let fullscreen = try renderer.render(
      .file(heic), spec(.fullscreen, screen: (300, 200), format: .png))
    #expect((fullscreen.width, fullscreen.height) == (300, 200), "landscape, as decoded")
    let thumbnail = try renderer.render(
      .file(heic), spec(.aspectThumbnail, size: 150, format: .png))
    #expect((thumbnail.width, thumbnail.height) == (150, 100))
    let image = try VipsImage.open(
      buffer: PinnedBytes(thumbnail.bytes), name: "t", sequential: false)
    let topLeft = try image.pixel(x: 3, y: 3)
    #expect(abs(topLeft[0] - 220) < 40 && topLeft[2] < 90, "red top-left: not turned")

    let (folder, paths) = try workspace("heif-exif-6.heic")
    defer { withExtendedLifetime(folder) {} }
    let preview = try editor.preview(.file(paths[0]), graph: graph("crop aspect=1:2"))
    let cropped = try VipsImage.open(buffer: PinnedBytes(preview), name: "p", sequential: false)
    #expect((cropped.width, cropped.height) == (200, 400), "1:2 of the upright 600x400")
  }

  @Test("stored adjustment data with an unknown filter and an out-of-range value still reverts")
  func lenientStoredDocuments() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    let original = try ContentHash.of(file: paths[0])
    let edit = try editor.edit(paths[0], with: graph("tone exposure=0.5"))
    let document = folder.file(".darkroom/adjustments/\(edit.adjustment.result.sha256).json")
    var text = String(decoding: try Fixture.bytes(document), as: UTF8.self)
    text = text.replacingOccurrences(of: "\"exposure\":0.5", with: "\"exposure\":9")
    text = text.replacingOccurrences(
      of: "\"nodes\":[", with: "\"nodes\":[{\"op\":\"glow\",\"params\":{\"amount\":0.5}},")
    try Data(text.utf8).write(to: URL(fileURLWithPath: document))

    let history = try CLI.run(["history", paths[0]])
    #expect(history.status == 0, "\(history.stderr)")
    #expect(history.stdout.contains("glow amount=0.5"))
    #expect(history.stdout.contains("exposure=9"))
    let reEdit = try CLI.run(["edit", paths[0], "--filter", "noir"])
    #expect(reEdit.status == 1)
    #expect(
      reEdit.stderr.contains(
        "version 2 of this edit cannot be rendered by this darkroom: Unknown filter 'glow'"),
      "\(reEdit.stderr)")
    let revert = try CLI.run(["revert", paths[0]])
    #expect(revert.status == 0, "\(revert.stderr)")
    #expect(try ContentHash.of(file: paths[0]) == original)
    // What a user hands in is still checked strictly.
    let pasted = try CLI.run(["edit", paths[0], "--adjustment", document])
    #expect(pasted.status == 2)
    #expect(pasted.stderr.contains("Unknown filter 'glow'"), "\(pasted.stderr)")
  }
}

@Suite(
  "libvips: errors attributed, version and abilities checked", .timeLimit(.minutes(10)), .offThePool
)
struct LibvipsTrustTests {
  /// Valid photos between damaged PNG, WebP and TIFF files, whose libvips messages differ.
  static func mixedFolder() throws -> (TemporaryFolder, valid: [String], damaged: [String: String])
  {
    let folder = try Fixture.temporaryFolder()
    let scene = Fixture.sample("orientation-1.jpg")
    let webp = try Representations(cache: nil).rendition(
      of: .file(scene), spec(.full, format: .webp)
    ).bytes
    let tiff = try VipsImage.open(path: scene, sequential: false).encode(
      suffix: ".tif[compression=deflate]")
    let sources: [(String, [UInt8], String)] = [
      ("png", try damagedPNG(), "png"), ("webp", webp, "webp"), ("tif", tiff, "tiff"),
    ]
    var valid: [String] = []
    var damagedFiles: [String: String] = [:]
    for round in 0..<4 {
      for (index, source) in sources.enumerated() {
        valid.append(
          try folder.write(
            "v\(round)\(index).jpg", Fixture.bytes(Fixture.sample("orientation-\(index + 1).jpg"))))
        var bytes = source.1
        // Inside the compressed pixel data, past the headers.
        if source.0 != "png" {
          let start = source.0 == "tif" ? 2000 : bytes.count / 3
          for offset in start..<min(start + 1500, bytes.count - 16) { bytes[offset] = 0x33 }
        }
        damagedFiles[try folder.write("d\(round)\(index).\(source.0)", bytes)] = source.2
      }
    }
    return (folder, valid, damagedFiles)
  }

  /// Every damaged file has exactly one line, naming it and only it, with its own format's
  /// cause; no valid file has one.
  static func expectAttributed(_ stderr: String, damaged: [String: String], valid: [String]) {
    let lines = stderr.split(separator: "\n").map(String.init)
    let signatures = ["png": "png", "webp": "webp", "tiff": "tiff"]
    for (file, format) in damaged {
      let mine = lines.filter { $0.hasPrefix("darkroom: \(file): ") }
      #expect(mine.count == 1, "\(file): \(mine)")
      guard let line = mine.first else { continue }
      let cause = String(line.dropFirst("darkroom: \(file): ".count)).lowercased()
      #expect(cause.contains(signatures[format] ?? format), "\(line)")
      #expect(!cause.contains("bad seek") && !cause.contains("source:"), "\(line)")
      for (other, otherFormat) in signatures where other != format {
        #expect(!cause.contains(otherFormat), "another format's cause in: \(line)")
      }
      for other in Array(damaged.keys) + valid where other != file {
        #expect(!line.contains(FilePath(other).name), "another file named in: \(line)")
      }
    }
    #expect(lines.filter { $0.hasPrefix("darkroom: ") }.count == damaged.count, "\(lines)")
  }

  @Test("apply --jobs 2 over valid and damaged files: one line per damaged file, its own")
  func applyAttributesErrors() throws {
    let (folder, valid, damagedFiles) = try Self.mixedFolder()
    // libheif leaves a "bad seek" line in libvips' buffer while decoding a sound HEIC.
    let heic = try folder.write("a.heic", Fixture.bytes(Fixture.sample("heif-exif-6.heic")))
    let inputs = [heic] + (0..<valid.count).flatMap { [valid[$0], damagedFiles.keys.sorted()[$0]] }
    let result = try CLI.run(
      ["apply", "--jobs", "2", "--filter", "noir"] + inputs + ["-o", folder.file("out")])
    #expect(result.status == 1)
    Self.expectAttributed(result.stderr, damaged: damagedFiles, valid: valid + [heic])
  }

  @Test("render of several inputs, a HEIC among them: each failure names only its own file")
  func renderAttributesErrors() throws {
    let (folder, valid, damagedFiles) = try Self.mixedFolder()
    let heic = try folder.write("a.heic", Fixture.bytes(Fixture.sample("heif-exif-6.heic")))
    let inputs = [heic] + (0..<valid.count).flatMap { [valid[$0], damagedFiles.keys.sorted()[$0]] }
    try FileManager.default.createDirectory(
      atPath: folder.file("out"), withIntermediateDirectories: true)
    let result = try CLI.run(
      ["render", "--rep", "fullscreen", "--no-cache"] + inputs + ["-o", folder.file("out")])
    #expect(result.status == 1)
    Self.expectAttributed(result.stderr, damaged: damagedFiles, valid: valid + [heic])
  }

  @Test("an older libvips is refused with a message naming what was found and what is needed")
  func versionChecked() throws {
    let photo = Fixture.sample("orientation-6.jpg")
    let folder = try Fixture.temporaryFolder()
    let old = try CLI.run(
      ["render", "--rep", "thumbnail", "--no-cache", photo, "-o", folder.file("t.jpg")],
      environment: ["DARKROOM_TEST_LIBVIPS": "version=8.9.2"])
    #expect(old.status == 1)
    #expect(
      old.stderr
        == "darkroom: \(photo): cannot start libvips: libvips 8.9.2 was found; Darkroom needs libvips 8.10 or later\n"
    )
    #expect(!FileManager.default.fileExists(atPath: folder.file("t.jpg")))
    // Metadata needs no libvips for a JPEG: info still works.
    let info = try CLI.run(
      ["info", photo], environment: ["DARKROOM_TEST_LIBVIPS": "version=8.9.2"])
    #expect(info.status == 0)

    // 8.11 has no fail_on: the loaders fall back to `fail`, and damage is still refused.
    let fallback = ["DARKROOM_TEST_LIBVIPS": "version=8.11.0"]
    let good = try CLI.run(
      ["render", "--rep", "thumbnail", "--no-cache", photo, "-o", folder.file("t.jpg")],
      environment: fallback)
    #expect(good.status == 0, "\(good.stderr)")
    let png = try folder.write("d.png", damagedPNG())
    let bad = try CLI.run(
      ["edit", png, "--filter", "noir"], environment: fallback)
    #expect(bad.status == 1, "\(bad.stdout)")
    #expect(bad.stderr.hasPrefix("darkroom: \(png): cannot render: "), "\(bad.stderr)")
  }

  @Test(
    "a libvips without lcms, libexif or a loader says so instead of rendering wrong",
    arguments: [
      (
        "no-lcms", "display-p3.jpg",
        "cannot convert its colour profile (sP3C) to sRGB: the libvips found (8.14.1) was built without lcms; install a libvips built with lcms"
      ),
      (
        "no-exif", "orientation-6.jpg",
        "cannot turn it upright (EXIF orientation 6): the libvips found (8.14.1) was built without libexif; install a libvips built with libexif"
      ),
      (
        "no-loader=heifload", "heif-exif-6.heic",
        "the libvips found (8.14.1) has no heif loader; install a libvips built with heif support"
      ),
    ])
  func capabilitiesChecked(pretend: String, sample: String, message: String) throws {
    let found = try LibvipsCapabilities.current()
    let expected = message.replacingOccurrences(of: "8.14.1", with: found.version)
    let folder = try Fixture.temporaryFolder()
    let photo = Fixture.sample(sample)
    let result = try CLI.run(
      ["render", "--rep", "fullscreen", "--no-cache", photo, "-o", folder.file("f.jpg")],
      environment: ["DARKROOM_TEST_LIBVIPS": pretend])
    #expect(result.status == 1)
    #expect(result.stderr == "darkroom: \(photo): \(expected)\n")
    #expect(!FileManager.default.fileExists(atPath: folder.file("f.jpg")))
    #expect(found.missingLoaders.isEmpty && found.colourProfiles && found.exifOrientation)
  }
}

@Suite("darkroom check", .timeLimit(.minutes(10)), .offThePool)
struct CheckCommandTests {
  @Test("--repair turns a library with hard-linked originals into a sound one, photos writable")
  func repairsOldLibrary() throws {
    let folder = try Fixture.temporaryFolder()
    let edited = try folder.write("edited.jpg", Fixture.bytes(Fixture.sample("orientation-6.jpg")))
    try Editor().edit(edited, with: graph("noir"))
    chmod(edited, 0o444)  // what 0.1.0 left: the result took the store's mode

    // What 0.1.0's apply -o did: the input itself, linked into the store and made 0444.
    try FileManager.default.createDirectory(
      atPath: folder.file("in"), withIntermediateDirectories: true)
    let input = try folder.write("in/input.jpg", Fixture.bytes(Fixture.sample("gps.jpg")))
    let hash = try ContentHash.of(file: input)
    let entry = folder.file(".darkroom/originals/\(hash.hex)")
    try #require(link(input, entry) == 0)
    chmod(entry, 0o444)

    let check = try CLI.run(["check", folder.path])
    #expect(check.status == 1)
    #expect(check.stdout.contains("\(entry): the original shares its inode with \(input)"))
    #expect(check.stdout.contains("\(edited): edited file is read-only (0444)"))

    let repair = try CLI.run(["check", "--repair", folder.path])
    #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
    let mask = umask(0)
    umask(mask)
    for file in [edited, input] {
      let stat = try FileStat(file)
      #expect(stat.mode == 0o666 & ~mask, "\(file) writable again")
      #expect(stat.links == 1)
    }
    let store = try FileStat(entry)
    #expect(store.mode == 0o444 && store.links == 1)
    #expect(try ContentHash.of(file: entry) == hash)
    #expect(try ContentHash.of(file: input) == hash)

    let again = try CLI.run(["check", folder.path])
    #expect(again.status == 0)
    #expect(again.stdout.hasSuffix(": sound\n"), "\(again.stdout)")
    #expect(try Editor().revert(edited) != .notEdited)
  }

  @Test("a damaged original and an edit whose original is missing are reported, exit 1")
  func reportsDamage() throws {
    let (folder, paths) = try workspace("gps.jpg", "orientation-1.jpg")
    defer { withExtendedLifetime(folder) {} }
    let first = try Editor().edit(paths[0], with: graph("noir"))
    let second = try Editor().edit(paths[1], with: graph("noir"))
    let damagedEntry = folder.file(".darkroom/originals/\(first.adjustment.original.sha256)")
    chmod(damagedEntry, 0o644)
    try overwriteInPlace(damagedEntry, with: Array("not the original".utf8))
    try FileManager.default.removeItem(
      atPath: folder.file(".darkroom/originals/\(second.adjustment.original.sha256)"))
    let result = try CLI.run(["check", "--repair", folder.path])
    #expect(result.status == 1)
    #expect(
      result.stdout.contains(
        "\(damagedEntry): the original's bytes no longer match its SHA-256; edits of it cannot be reverted"
      ))
    #expect(result.stdout.contains("which the store lacks"))
    #expect(result.stdout.hasSuffix("2 problem(s)\n"), "\(result.stdout)")
  }
}
