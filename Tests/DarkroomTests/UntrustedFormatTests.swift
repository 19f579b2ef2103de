import Foundation
import Testing

@testable import Darkroom

/// Formats outside the trusted list that a person allowed are parsed and decoded in
/// sandboxed workers only, by every command, even for one file: a loader that hangs or
/// crashes in a header costs that file one line, never the process.
@Suite("Allowed untrusted formats stay in workers", .timeLimit(.minutes(10)), .offThePool)
struct UntrustedFormatTests {
  static let svg = Array(
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\"><rect width=\"40\" height=\"20\" fill=\"#ff0000\"/></svg>"
      .utf8)

  /// A folder with an SVGZ whose loader hangs and a JPEG 2000 file whose loader crashes
  /// (the test switch, at the header read), and a photo that is fine.
  static func files() throws -> (TemporaryFolder, hangs: String, crashes: String, fine: String) {
    let folder = try Fixture.temporaryFolder()
    try FileManager.default.createDirectory(
      atPath: folder.file("in"), withIntermediateDirectories: true)
    let plain = try folder.write("plain.svg", svg)
    let gzip = try CLI.run(["-c", plain], executable: "/usr/bin/gzip").stdoutData
    try FileManager.default.removeItem(atPath: plain)
    let hangs = try folder.write("in/drawing-hangs.svgz", Array(gzip))
    // The JPEG 2000 signature box, then junk: the loader is chosen by these bytes.
    let crashes = try folder.write(
      "in/scan-crashes.jp2",
      [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]
        + Array(repeating: 0x42, count: 500))
    let fine = try folder.write("in/photo.jpg", Fixture.bytes(Fixture.sample("orientation-6.jpg")))
    return (folder, hangs, crashes, fine)
  }

  static let faults = ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs,crash=crashes"]
  // The time limit that ends a hanging decoder: long enough for the fine photo beside it on a
  // machine busy with the other tests (1 s was not, once, in CI: the fine photo was stopped).
  static let allow = ["--allow-format", "svg", "--allow-format", "jp2k", "--timeout", "5"]

  static func hangLine(_ file: String) -> String {
    "darkroom: \(file): stopped after 5 s: the decoder took longer than the time limit\n"
  }
  static func crashLine(_ file: String) -> String {
    "darkroom: \(file): the decoder crashed (signal 6)\n"
  }

  @Test("info, render and edit of one hostile file: its one line, exit 1, nothing written")
  func oneFile() throws {
    let (folder, hangs, crashes, _) = try Self.files()
    let before = try [hangs, crashes].map { try Fixture.bytes($0) }
    for (file, line) in [(hangs, Self.hangLine(hangs)), (crashes, Self.crashLine(crashes))] {
      for command in [
        ["info"], ["info", "--json"], ["render", "--rep", "thumbnail", "--no-cache"],
        ["edit", "--filter", "noir"],
      ] {
        let output = command.first == "render" ? ["-o", folder.file("out.jpg")] : []
        let result = try CLI.run(
          command + Self.allow + [file] + output, environment: Self.faults)
        #expect(result.status == 1, "\(command) \(file)")
        #expect(result.stderr == line, "\(command) \(file)")
      }
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("out.jpg")))
    #expect(try [hangs, crashes].map { try Fixture.bytes($0) } == before, "originals unchanged")
    // No edit was kept: the store holds no original, no adjustment data.
    let kept =
      (try? FileManager.default.subpathsOfDirectory(atPath: folder.file("in/.darkroom")))?
      .filter { $0.hasPrefix("originals/") || $0.hasPrefix("adjustments/") } ?? []
    #expect(kept.isEmpty, "\(kept)")
  }

  @Test("apply and render over several files: one line for each hostile file, the rest done")
  func severalFiles() throws {
    let (folder, hangs, crashes, fine) = try Self.files()
    let apply = try CLI.run(
      ["apply", "--filter", "noir", "--jobs", "2"] + Self.allow
        + [folder.file("in"), "-o", folder.file("out")], environment: Self.faults)
    #expect(apply.status == 1)
    #expect(apply.stderr.contains(Self.hangLine(hangs)), "\(apply.stderr)")
    #expect(apply.stderr.contains(Self.crashLine(crashes)), "\(apply.stderr)")
    #expect(apply.stderr.contains("apply: 1 done, 0 skipped, 2 failed"), "\(apply.stderr)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).filter {
        !$0.hasPrefix(".")
      } == ["photo.jpg"])

    let render = try CLI.run(
      ["render", "--rep", "thumbnail", "--no-cache"] + Self.allow
        + [hangs, crashes, fine, "-o", folder.file("thumbs/")], environment: Self.faults)
    #expect(render.status == 1)
    #expect(render.stderr.contains(Self.hangLine(hangs)), "\(render.stderr)")
    #expect(render.stderr.contains(Self.crashLine(crashes)), "\(render.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("thumbs")).count == 1)
  }

  @Test(
    "JPEG XL is read without being allowed, in a worker; a scan catalogues it; --deny-format refuses any format"
  )
  func jpegXLByDefault() throws {
    let folder = try Fixture.temporaryFolder()
    let jxl = folder.file("made.jxl")
    let made = try CLI.run(["copy", Fixture.sample("gps.jpg"), jxl], executable: "/usr/bin/vips")
    #expect(made.status == 0, "\(made.stderr)")
    let info = try CLI.run(["info", "--json", jxl])
    #expect(info.status == 0, "\(info.stderr)")
    let described = try #require(
      (try JSONSerialization.jsonObject(with: info.stdoutData) as? [[String: Any]])?.first)
    #expect(described["format"] as? String == "jxl")
    #expect(described["width"] as? Int == 600 && described["height"] as? Int == 400)
    // The same picture as the JPEG it was made from.
    let (fromJXL, fromJPEG) = (folder.file("jxl.png"), folder.file("jpeg.png"))
    for (source, out) in [(jxl, fromJXL), (Fixture.sample("gps.jpg"), fromJPEG)] {
      let run = try CLI.run(["render", "--no-cache", "--rep", "thumbnail", source, "-o", out])
      #expect(run.status == 0, "\(run.stderr)")
    }
    let (a, b) = (try centrePixel(Fixture.bytes(fromJXL)), try centrePixel(Fixture.bytes(fromJPEG)))
    #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 6 }, "\(a) against \(b)")
    // Decoded in a worker: a decoder that crashes costs the file a line, not the process.
    let crashed = try CLI.run(
      ["info", jxl], environment: ["DARKROOM_TEST_DECODER_FAULT": "crash=made"])
    #expect(crashed.status == 1)
    #expect(crashed.stderr == Self.crashLine(jxl))
    // A scan catalogues it beside the JPEG.
    let library = folder.file("library")
    try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: jxl, toPath: library + "/made.jxl")
    try FileManager.default.copyItem(
      atPath: Fixture.sample("gps.jpg"), toPath: library + "/gps.jpg")
    let scan = try CLI.run(["scan", library])
    #expect(scan.status == 0, "\(scan.stderr)")
    #expect(scan.stderr.contains(": 2 added, 0 changed"), "\(scan.stderr)")
    // Refused by name, trusted or not: one line, exit 1, nothing written.
    let denied = try CLI.run(["info", "--deny-format", "jxl", jxl])
    #expect(denied.status == 1)
    #expect(denied.stderr == "darkroom: \(jxl): jxl is refused (--deny-format)\n")
    let out = folder.file("denied.jpg")
    let jpeg = Fixture.sample("gps.jpg")
    let refused = try CLI.run(
      ["render", "--no-cache", "--deny-format", "jpeg", jpeg, "-o", out])
    #expect(refused.status == 1)
    #expect(refused.stderr == "darkroom: \(jpeg): jpeg is refused (--deny-format)\n")
    #expect(!FileManager.default.fileExists(atPath: out))
  }

  @Test("an allowed SVGZ that is fine is described and rendered right, in a worker")
  func allowedFormatRenders() throws {
    let (folder, hangs, _, _) = try Self.files()
    let drawing = folder.file("in/drawing.svgz")
    try FileManager.default.moveItem(atPath: hangs, toPath: drawing)
    let info = try CLI.run(["info", "--json", "--allow-format", "svg", drawing])
    #expect(info.status == 0, "\(info.stderr)")
    let described = try #require(
      (try JSONSerialization.jsonObject(with: info.stdoutData) as? [[String: Any]])?.first)
    #expect(described["format"] as? String == "svg")
    #expect(described["width"] as? Int == 40 && described["height"] as? Int == 20)
    let out = folder.file("drawing.png")
    let render = try CLI.run(
      ["render", "--rep", "full", "--no-cache", "--allow-format", "svg", drawing, "-o", out])
    #expect(render.status == 0, "\(render.stderr)")
    let pixel = try centrePixel(Fixture.bytes(out))
    #expect(pixel.prefix(3) == [255, 0, 0], "\(pixel)")
  }

  @Test("SIGTERM while a header read hangs in a worker: ends after the grace, 143, no process left")
  func stopWhileHeaderHangs() throws {
    let (folder, _, _, _) = try Self.files()
    let marker = UUID().uuidString
    let run = try RunningCLI(
      ["apply", "--filter", "noir", "--grace", "1", "--timeout", "600", "--allow-format", "svg"]
        + [folder.file("in/drawing-hangs.svgz"), "-o", folder.file("out")],
      environment: Self.faults.merging(["DARKROOM_TEST_RUN": marker]) { $1 })
    // The worker reading the header is running (a process marked with this run's marker
    // besides darkroom itself) before the signal.
    #expect(run.wait(upTo: 60) { processes(marked: "DARKROOM_TEST_RUN=\(marker)").count >= 2 })
    run.signal(SIGTERM)
    #expect(
      run.wait(upTo: 30) { !run.process.isRunning }, "a stuck header read does not hold a stop")
    run.process.waitUntilExit()
    #expect(run.process.terminationStatus == 143)
    #expect(processes(marked: "DARKROOM_TEST_RUN=\(marker)").isEmpty, "no process left")
  }
}
