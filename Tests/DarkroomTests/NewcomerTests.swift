import Foundation
import Testing

@testable import Darkroom

/// What a new user meets in the first hour: output folders, one error format, help at 80
/// columns, histories that can go forward again.
@Suite("A newcomer's first hour", .timeLimit(.minutes(10)), .offThePool)
struct NewcomerTests {
  @Test("render -o DIR/ makes the folder; several inputs to a name without extension too")
  func renderMakesOutputFolders() throws {
    let folder = try Fixture.temporaryFolder()
    let inputs = [Fixture.sample("orientation-1.jpg"), Fixture.sample("gps.jpg")]
    let thumbs = folder.file("thumbs")
    let slash = try CLI.run(
      ["render", "--rep", "thumbnail", "--no-cache"] + inputs + ["-o", thumbs + "/"])
    #expect(slash.status == 0, "\(slash.stderr)")
    #expect(
      slash.stdout == "\(thumbs)/orientation-1.thumbnail.jpg\n\(thumbs)/gps.thumbnail.jpg\n",
      "one slash between folder and name")
    #expect(FileManager.default.fileExists(atPath: thumbs + "/gps.thumbnail.jpg"))

    let o9 = folder.file("o9")
    let bare = try CLI.run(
      ["render", "--rep", "aspect-thumbnail", "--no-cache"] + inputs + ["-o", o9])
    #expect(bare.status == 0, "\(bare.stderr)")
    #expect(bare.stdout.hasPrefix("\(o9)/orientation-1.aspect-thumbnail.jpg\n"))

    let gif = try CLI.run(["render", "--rep", "thumbnail", inputs[0], "-o", folder.file("t.gif")])
    #expect(gif.status == 2)
    #expect(
      gif.stderr.hasPrefix(
        "darkroom: Darkroom does not write GIF ('\(folder.file("t.gif"))'): it writes JPEG, PNG, WebP, AVIF, HEIC and TIFF\n"
      ))
    let unknown = try CLI.run(["render", "--rep", "thumbnail", inputs[0], "-o", folder.file("t")])
    #expect(unknown.status == 2)
    #expect(unknown.stderr.contains("Cannot tell the output format from '\(folder.file("t"))'"))
  }

  @Test("cache commands at a library's top folder act on its .darkroom/cache")
  func cacheAtLibraryTop() throws {
    let (folder, paths) = try workspace("gps.jpg")
    defer { withExtendedLifetime(folder) {} }
    try Editor().edit(paths[0], with: graph("noir"))
    let stats = try CLI.run(["cache", "stats", "--json"], cwd: folder.path)
    #expect(stats.status == 0)
    let object = try #require(
      try JSONSerialization.jsonObject(with: stats.stdoutData) as? [String: Any])
    let expected = URL(fileURLWithPath: folder.path).standardizedFileURL
      .appendingPathComponent(".darkroom/cache").path
    #expect(object["folder"] as? String == expected)
  }

  @Test(
    "every command reports a missing file the same way: darkroom: FILE: no such file, exit 1",
    arguments: [["history"], ["adjustments"], ["revert"], ["info"], ["edit", "--filter", "noir"]])
  func oneErrorFormat(command: [String]) throws {
    let folder = try Fixture.temporaryFolder()
    let result = try CLI.run(command + ["nope.jpg"], cwd: folder.path)
    #expect(result.status == 1)
    #expect(result.stderr == "darkroom: nope.jpg: no such file\n")
  }

  @Test(
    "every command's help wraps as prose at 80 and at 120 columns: no line longer, no paragraph broken where the next word would have fit, a default said once",
    arguments: [
      [], ["info"], ["render"], ["edit"], ["apply"], ["revert"], ["history"], ["adjustments"],
      ["filters"], ["cache"], ["cache", "stats"], ["cache", "prune"], ["cache", "clear"],
      ["check"], ["scan"], ["list"], ["albums"], ["album"], ["favourite"], ["share"],
      ["duplicates"], ["trash"], ["meta"], ["watch"], ["serve"], ["space"], ["space", "create"],
      ["space", "add"], ["space", "list"], ["space", "export"], ["space", "passwd"],
      ["space", "remove"], ["thumbnails"], ["catalog"], ["catalog", "init"],
      ["catalog", "copy"],
    ])
  func helpWraps(command: [String]) throws {
    for width in [80, 120] {
      let help = try CLI.run(command + ["--help"], environment: ["COLUMNS": "\(width)"])
      #expect(help.status == 0)
      let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        .map(String.init)
      for line in lines {
        #expect(line.count <= width, "\(command) at \(width): \(line)")
        #expect(
          line.components(separatedBy: "(default:").count <= 2, "a default said once: \(line)")
      }
      // The overview and the discussion (above USAGE): a line of prose is followed by the
      // next of its paragraph only when the next one's first word would not fit after it.
      // (Examples, lists and columns are kept as written.)
      let verbatim = { (line: String) in
        line.isEmpty || line.first == " " || line.hasPrefix("- ") || line.contains("   ")
          || line.hasSuffix(":")
      }
      let top = Array(lines.prefix { !$0.hasPrefix("USAGE:") })
      for (line, next) in zip(top, top.dropFirst()) where !verbatim(line) && !verbatim(next) {
        let word = next.split(separator: " ").first.map(String.init) ?? ""
        #expect(
          line.count + 1 + word.count >= width,
          "\(command) at \(width): broken before \"\(word)\": \(line)")
      }
    }
    let apply = try CLI.run(["apply", "--help"], environment: ["COLUMNS": "80"])
    #expect(!apply.stdout.contains("cores). (default:"), "apply --jobs: its default in words only")
  }

  @Test("a negative number is checked as a number, not taken for a flag")
  func negativeNumbers() throws {
    let photo = Fixture.sample("gps.jpg")
    let size = try CLI.run(["render", "--rep", "thumbnail", "--size", "-5", photo])
    #expect(size.status == 2)
    #expect(
      size.stderr.hasPrefix(
        "darkroom: Expected integer between 1 and 100000 for --size but received -5\n"))
    let jobs = try CLI.run(["apply", "--filter", "noir", "--jobs", "-1", photo])
    #expect(
      jobs.stderr.hasPrefix("darkroom: Expected integer of at least 1 for --jobs but received -1\n")
    )
  }

  @Test("apply over a folder with no images says so (and with no videos, for a graph videos take)")
  func applyNoImages() throws {
    let folder = try Fixture.temporaryFolder()
    _ = try folder.write("notes.txt", Array("no photos here".utf8))
    let result = try CLI.run(["apply", "--filter", "noir", folder.path])
    #expect(
      result.stderr.hasPrefix("apply: no images or videos found in \(folder.path)\n"),
      "\(result.stderr)")
    let auto = try CLI.run(["apply", "--filter", "auto", folder.path])
    #expect(
      auto.stderr.hasPrefix("apply: no images found in \(folder.path)\n"), "\(auto.stderr)")
  }

  @Test("revert --to 1 keeps version 2 reachable until a new edit branches off")
  func historyGoesForward() throws {
    let (folder, paths) = try workspace("orientation-1.jpg")
    defer { withExtendedLifetime(folder) {} }
    let editor = Editor()
    let first = try editor.edit(paths[0], with: graph("noir"))
    let second = try editor.edit(paths[0], with: graph("rotate 90"))
    try editor.revert(paths[0], to: 1)
    var history = try editor.editHistory(paths[0])
    #expect(history.versions.map(\.version) == [1, 2])
    #expect(history.current == 1)
    let text = try CLI.run(["history", paths[0]])
    #expect(text.stdout.contains("*1  "), "\(text.stdout)")
    #expect(text.stdout.contains(" 2  ") && text.stdout.contains("noir | rotate angle=90"))

    #expect(
      try editor.revert(paths[0], to: 2)
        == .restoredVersion(2, sha256: second.adjustment.result.sha256))
    try editor.revert(paths[0])
    history = try editor.editHistory(paths[0])
    #expect(
      history.current == 0 && history.versions.map(\.version) == [1, 2], "from the original too")

    try editor.revert(paths[0], to: 1)
    let branch = try editor.edit(paths[0], with: graph("flip"))
    history = try editor.editHistory(paths[0])
    #expect(
      history.versions.map(\.result.sha256) == [
        first.adjustment.result.sha256, branch.adjustment.result.sha256,
      ])
    #expect(branch.adjustment.graph.nodes.map(\.text) == ["noir", "flip direction=horizontal"])
  }

  @Test("info names a camera once, though many cameras repeat the make in the model")
  func cameraName() throws {
    var metadata = try AssetMetadata.read(path: Fixture.sample("gps.jpg"))
    metadata.cameraMake = "Canon"
    metadata.cameraModel = "Canon EOS 40D"
    #expect(metadata.cameraName == "Canon EOS 40D")
    metadata.cameraMake = "NIKON CORPORATION"
    metadata.cameraModel = "NIKON D850"
    #expect(metadata.cameraName == "NIKON D850")
    metadata.cameraMake = "Darkroom"
    metadata.cameraModel = "Field Camera"
    #expect(metadata.cameraName == "Darkroom Field Camera")
    metadata.cameraModel = nil
    #expect(metadata.cameraName == "Darkroom")
  }

  @Test("a TIFF's own Orientation tag is read, 1 as well as 6")
  func tiffOrientation() throws {
    let folder = try Fixture.temporaryFolder()
    for n in [1, 6] {
      let tiff = try VipsImage.open(
        path: Fixture.sample("orientation-\(n).jpg"), sequential: false
      ).encode(suffix: ".tif")
      let path = try folder.write("o\(n).tif", tiff)
      let metadata = try AssetMetadata.read(path: path)
      #expect(metadata.orientation == .valid(Orientation(rawValue: n) ?? .up), "\(n)")
    }
  }
}
