import Foundation
import Testing

@testable import Darkroom

@Suite("darkroom render", .timeLimit(.minutes(10)), .offThePool)
struct RenderCommandTests {
  @Test("without -o the output goes beside the input as NAME.<rep>.<ext> and its path is printed")
  func besideInput() throws {
    let folder = try Fixture.temporaryFolder()
    let input = try folder.write(
      "IMG 1.jpg", try Fixture.bytes(Fixture.sample("orientation-6.jpg")))
    let result = try CLI.run(["render", "--rep", "fullscreen", input, "--no-cache"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == folder.file("IMG 1.fullscreen.jpg") + "\n")
    let made = try AssetMetadata.read(path: folder.file("IMG 1.fullscreen.jpg"))
    #expect((made.width, made.height) == (600, 400))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
        "IMG 1.fullscreen.jpg", "IMG 1.jpg",
      ])
  }

  @Test("stdin to stdout; the second run is served from the cache")
  func pipes() throws {
    let folder = try Fixture.temporaryFolder()
    let input = Data(try Fixture.bytes(Fixture.sample("alpha.png")))
    let arguments = [
      "render", "-", "--rep", "aspect-thumbnail", "--size", "100", "-o", "-", "--cache-dir",
      folder.path,
    ]
    let first = try CLI.run(arguments, stdin: input)
    #expect(first.status == 0, "\(first.stderr)")
    let image = try AssetMetadata.read(.data(Array(first.stdoutData), name: "out"))
    #expect(image.format == "png" && image.hasAlpha && (image.width, image.height) == (100, 67))
    let second = try CLI.run(arguments + ["--json"], stdin: input)
    #expect(second.stdoutData.starts(with: first.stdoutData))
    #expect(second.stdout.contains("\"cached\":true"))
  }

  @Test("format from -o's extension; --json reports what was written")
  func formatFromExtension() throws {
    let folder = try Fixture.temporaryFolder()
    let out = folder.file("t.webp")
    let result = try CLI.run([
      "render", Fixture.sample("orientation-2.jpg"), "--rep", "thumbnail", "--size", "64", "-o",
      out, "--json", "--no-cache",
    ])
    #expect(result.status == 0)
    let record = try #require(
      try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any])
    #expect(record["format"] as? String == "webp")
    #expect(record["width"] as? Int == 64 && record["height"] as? Int == 64)
    #expect(record["output"] as? String == out)
    #expect(try AssetMetadata.read(path: out).format == "webp")
  }

  @Test(
    "usage errors exit 2 with a message that says what was expected and what came",
    arguments: [
      (["--quality", "120"], "Expected integer between 1 and 100 for --quality but received 120"),
      (["--screen", "wide"], "Expected WxH (such as 1920x1080) for --screen but received wide"),
      (["--rep", "poster"], "poster"),
      (["-o", "out.bmp"], "Darkroom does not write BMP ('out.bmp')"),
    ])
  func usageErrors(extra: [String], message: String) throws {
    let result = try CLI.run(["render", Fixture.sample("gps.jpg")] + extra)
    #expect(result.status == 2)
    #expect(result.stderr.contains(message), "\(result.stderr)")
  }

  @Test("failures exit 1, name the file, and leave no output or temporary file behind")
  func failuresLeaveNothing() throws {
    let folder = try Fixture.temporaryFolder()
    let jpeg = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let cut = try folder.write("cut.jpg", Array(jpeg.prefix(jpeg.count / 2)))
    let text = try folder.write("notes.jpg", Array("not a photo".utf8))
    for input in [cut, text, folder.file("missing.jpg")] {
      let result = try CLI.run(["render", input, "--no-cache"])
      #expect(result.status == 1)
      #expect(result.stderr.hasPrefix("darkroom: \(input): "), "\(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1)
    }
    let missingFolder = folder.file("nowhere/out.jpg")
    let result = try CLI.run([
      "render", Fixture.sample("gps.jpg"), "-o", missingFolder, "--no-cache",
    ])
    #expect(result.status == 1)
    #expect(
      result.stderr == "darkroom: \(missingFolder): cannot write: the folder does not exist\n")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
        "cut.jpg", "notes.jpg",
      ])
  }

  @Test("the output may not replace the input")
  func refusesToOverwriteInput() throws {
    let folder = try Fixture.temporaryFolder()
    let input = try folder.write("a.jpg", try Fixture.bytes(Fixture.sample("gps.jpg")))
    let before = try ContentHash.of(file: input)
    let result = try CLI.run(["render", input, "-o", input, "--no-cache"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("the output would replace the input"))
    #expect(try ContentHash.of(file: input) == before)
  }

  @Test("cache stats, prune and clear")
  func cacheCommand() throws {
    let folder = try Fixture.temporaryFolder()
    for n in 1...3 {
      _ = try CLI.run([
        "render", Fixture.sample("orientation-\(n).jpg"), "-o", folder.file("o\(n).jpg"),
        "--cache-dir", folder.file("c"),
      ])
    }
    let stats = try CLI.run(["cache", "stats", "--json", "--cache-dir", folder.file("c")])
    let object = try #require(
      try JSONSerialization.jsonObject(with: stats.stdoutData) as? [String: Any])
    #expect(object["entries"] as? Int == 3)
    _ = try CLI.run(["cache", "prune", "--cache-limit", "20K", "--cache-dir", folder.file("c")])
    #expect(RenditionCache(folder: folder.file("c").asURL).stats().bytes <= 20 << 10)
    _ = try CLI.run(["cache", "clear", "--cache-dir", folder.file("c")])
    #expect(RenditionCache(folder: folder.file("c").asURL).stats().entries == 0)
  }
}
