import Foundation
import Testing

@testable import Darkroom

@Suite("darkroom edit, revert, history", .timeLimit(.minutes(10)), .offThePool)
struct EditCommandTests {
  @Test(
    "SIGKILL at each step of an edit: the file is untouched or fully edited, and revert recovers it",
    arguments: [
      "after-original", "before-rename", "after-adjustment", "before-replace", "after-replace",
    ])
  func crashSafety(point: String) throws {
    let (folder, paths) = try workspace("orientation-6.jpg")
    defer { withExtendedLifetime(folder) {} }
    let original = try ContentHash.of(file: paths[0])
    let killed = try CLI.run(
      ["edit", paths[0], "--filter", "noir"], environment: ["DARKROOM_FAULT": point])
    #expect(killed.status == 128 + 9, "killed at \(point)")
    let now = try ContentHash.of(file: paths[0])
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasSuffix(".tmp")
    }
    #expect(leftovers.isEmpty || point == "before-replace", "\(leftovers)")
    if now == original {
      #expect(point != "after-replace")
    } else {
      // Fully edited: a complete result whose adjustment data and original are stored.
      let data = try #require(try Editor().adjustments(paths[0]))
      #expect(data.result.sha256 == now.hex)
      #expect(try AssetMetadata.read(path: paths[0]).width == 600)
    }
    let revert = try CLI.run(["revert", paths[0]])
    #expect(revert.status == 0, "\(revert.stderr)")
    #expect(try ContentHash.of(file: paths[0]) == original)
    let after = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasSuffix(".tmp")
    }
    #expect(after.isEmpty, "the next write removes what a killed writer left: \(after)")
    // And the edit can be made again, cleanly.
    #expect(try CLI.run(["edit", paths[0], "--filter", "noir"]).status == 0)
  }

  @Test("a bad filter is a usage error: exit 2, the message, and nothing written")
  func badFilterWritesNothing() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    let before = try ContentHash.of(file: paths[0])
    let result = try CLI.run(["edit", paths[0], "--filter", "noir", "--filter", "tone exposure=9"])
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "darkroom: Expected number between -4 and 4 for tone.exposure but received 9\n")
    #expect(try ContentHash.of(file: paths[0]) == before)
    #expect(!FileManager.default.fileExists(atPath: folder.file(".darkroom")))
  }

  @Test("adjustments copied from one file and pasted onto another give it the same graph")
  func copyPaste() throws {
    let (folder, paths) = try workspace("orientation-1.jpg", "orientation-7.jpg")
    defer { withExtendedLifetime(folder) {} }
    _ = try CLI.run(["edit", paths[0], "--filter", "chrome", "--filter", "crop aspect=1:1"])
    let data = try CLI.run(["adjustments", paths[0]])
    #expect(data.status == 0)
    let file = try folder.write("data.json", Array(data.stdoutData))
    let pasted = try CLI.run(["edit", paths[1], "--adjustment", file, "--json"])
    #expect(pasted.status == 0, "\(pasted.stderr)")
    let a = try #require(try Editor().adjustments(paths[0]))
    let b = try #require(try Editor().adjustments(paths[1]))
    #expect(a.graph == b.graph)
    #expect(a.original.sha256 != b.original.sha256)
    let square = try AssetMetadata.read(path: paths[1])
    #expect(square.width == square.height)
  }

  @Test("representations show the edit; --original shows the original")
  func renderEdited() throws {
    let (folder, paths) = try workspace("orientation-8.jpg")
    defer { withExtendedLifetime(folder) {} }
    _ = try CLI.run(["edit", paths[0], "--filter", "crop aspect=1:1", "--filter", "noir"])
    let edited = try CLI.run([
      "render", paths[0], "--rep", "fullscreen", "-o", folder.file("e.png"), "--json",
    ])
    #expect(edited.status == 0, "\(edited.stderr)")
    let e = try pixels(folder.file("e.png"))
    #expect((e.width, e.height) == (400, 400))
    let p = try e.pixel(x: 10, y: 10)
    #expect(p[0] == p[1] && p[1] == p[2])
    let original = try CLI.run([
      "render", paths[0], "--rep", "fullscreen", "--original", "-o", folder.file("o.png"),
    ])
    #expect(original.status == 0, "\(original.stderr)")
    let o = try pixels(folder.file("o.png"))
    #expect((o.width, o.height) == (600, 400))
    try expectColour(o, x: 20, y: 20, [220, 30, 30], "original, upright, in colour")
  }

  @Test("history lists versions; revert --to 1; reverting an unedited file says so")
  func historyAndRevert() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    _ = try CLI.run(["edit", paths[0], "--filter", "fade"])
    _ = try CLI.run(["edit", paths[0], "--filter", "rotate 180"])
    let history = try CLI.run(["history", paths[0], "--json"])
    let versions = try #require(
      try JSONSerialization.jsonObject(with: history.stdoutData) as? [[String: Any]])
    #expect(versions.map { $0["version"] as? Int } == [1, 2])
    let text = try CLI.run(["history", paths[0]])
    #expect(
      text.stdout.contains("2  ") && text.stdout.contains("tone")
        && text.stdout.contains("rotate angle=180"))
    let back = try CLI.run(["revert", "--to", "1", paths[0]])
    #expect(back.stdout == "\(paths[0]): restored version 1\n")
    _ = try CLI.run(["revert", paths[0]])
    let again = try CLI.run(["revert", paths[0]])
    #expect(again.status == 0)
    #expect(again.stdout == "\(paths[0]): already at version 0\n")
    let bad = try CLI.run(["revert", "--to", "7", paths[0]])
    #expect(bad.status == 1)
    #expect(
      bad.stderr == "darkroom: \(paths[0]): no version 7: versions are 0 (the original) to 2\n")
    let unedited = try folder.write("plain.jpg", Fixture.bytes(Fixture.sample("alpha.png")))
    let none = try CLI.run(["revert", unedited])
    #expect(none.stdout == "\(unedited): not edited; nothing to revert\n")
  }
}

/// Edits are written at their source's quality, so that a tone edit of a JPEG comes out about
/// as large as the file it replaces (at a fixed 92, JPEGs of quality 65-86 came out 1.2-1.8x
/// larger).
@Suite("edit quality", .timeLimit(.minutes(5)), .offThePool)
struct EditQualityTests {
  /// The sample, re-encoded by libvips at `quality` (its tables are libjpeg's, scaled).
  private func jpeg(_ quality: Int, in folder: TemporaryFolder, name: String) throws -> String {
    let path = folder.file(name)
    let made = try CLI.run(
      [
        "render", "--rep", "fullscreen", "--no-cache", "--quality", String(quality),
        Fixture.sample("display-p3.jpg"), "-o", path,
      ])
    #expect(made.status == 0, "\(made.stderr)")
    return path
  }

  @Test("a JPEG's quality is read back exactly from libjpeg's tables; no tables, no guess")
  func estimate() throws {
    let folder = try TemporaryFolder()
    for quality in [1, 10, 25, 50, 64, 75, 85, 92, 95, 100] {
      let path = try jpeg(quality, in: folder, name: "q\(quality).jpg")
      #expect(JPEGQuality.estimate(try Fixture.bytes(path)) == quality, "Q\(quality)")
    }
    let png = try Fixture.bytes(Fixture.sample("alpha.png"))
    #expect(JPEGQuality.estimate(png) == nil)
    let whole = try Fixture.bytes(folder.file("q75.jpg"))
    // Cut inside its first table, or its DQT segment's length past the end: no estimate.
    let dqt = try #require(whole.indices.first { whole[$0] == 0xFF && whole[$0 + 1] == 0xDB })
    #expect(JPEGQuality.estimate(Array(whole[..<(dqt + 30)])) == nil)
    var long = whole
    (long[dqt + 2], long[dqt + 3]) = (0xFF, 0xFF)
    #expect(JPEGQuality.estimate(long) == nil)
    #expect(JPEGQuality.estimate([0xFF, 0xD8, 0xFF, 0xDB, 0x00]) == nil)
  }

  @Test(
    "a tone edit of JPEGs of quality 50, 75 and 95 is written at that quality and within 10% of the source's size, through every door"
  )
  func sourceQuality() async throws {
    let folder = try TemporaryFolder()
    for quality in [50, 75, 95] {
      let path = try jpeg(quality, in: folder, name: "q\(quality).jpg")
      let before = try Fixture.bytes(path).count
      let edited = try CLI.run(["edit", path, "--filter", "tone exposure=0.15", "--json"])
      #expect(edited.status == 0, "\(edited.stderr)")
      let data = try #require(try Editor().adjustments(path))
      #expect(data.result.quality == quality)
      let after = try Fixture.bytes(path)
      #expect(JPEGQuality.estimate(after) == quality)
      let ratio = Double(after.count) / Double(before)
      #expect(abs(ratio - 1) <= 0.10, "Q\(quality): \(before) -> \(after.count) bytes")
      // A second edit renders from the original, at the original's quality.
      _ = try CLI.run(["edit", path, "--filter", "noir"])
      #expect(try Editor().adjustments(path)?.result.quality == quality)
    }

    // Asked for, a quality wins.
    let asked = try jpeg(75, in: folder, name: "asked.jpg")
    let sixty = try CLI.run(["edit", asked, "--filter", "noir", "--quality", "60"])
    #expect(sixty.status == 0, "\(sixty.stderr)")
    #expect(try Editor().adjustments(asked)?.result.quality == 60)
    #expect(JPEGQuality.estimate(try Fixture.bytes(asked)) == 60)

    // A re-run skips what is current: at the quality it would write now, not another.
    let batch = folder.file("batch")
    try FileManager.default.createDirectory(atPath: batch, withIntermediateDirectories: true)
    let rerun = try jpeg(75, in: folder, name: "batch/r.jpg")
    let forty = try CLI.run(["apply", batch, "--filter", "noir", "--quality", "40"])
    #expect(forty.status == 0, "\(forty.stderr)")
    #expect(try Editor().adjustments(rerun)?.result.quality == 40)
    let again = try CLI.run(["apply", batch, "--filter", "noir", "--progress", "none"])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(try Editor().adjustments(rerun)?.result.quality == 75, "re-encoded at its own")
    let third = try CLI.run(["apply", batch, "--filter", "noir", "--progress", "json"])
    #expect(third.stdout.contains("\"skipped\""), "now current: \(third.stdout)")

    // The library's edit by id (the server's) and a space's edit write the same quality.
    let library = try Library.create(at: folder.path)
    let fresh = try jpeg(75, in: folder, name: "by-id.jpg")
    _ = try await library.scan()
    let id = try #require(try library.asset(atPath: fresh)?.id)
    #expect(
      try await library.edit(id, with: try FilterGraph.parse(spec: "noir")).result.quality == 75)
    let space = Library(
      space: try Space.create(
        at: folder.file("S"), password: Array("pw".utf8),
        kdf: KDFParameters(ops: 1, memory: 8 << 20)))
    let (asset, _) = try space.add(file: try jpeg(75, in: folder, name: "sealed.jpg"))
    #expect(
      try await space.edit(asset.id, with: try FilterGraph.parse(spec: "noir")).result.quality == 75
    )
    space.close()
  }
}
