import Foundation
import Testing

@testable import Darkroom

/// A tree with subfolders, images of several formats, a non-image, a broken JPEG and a
/// symbolic link back up the tree.
func batchTree() throws -> (TemporaryFolder, images: [String]) {
  let folder = try Fixture.temporaryFolder()
  let fm = FileManager.default
  for sub in ["in/a", "in/a/b", "in/c"] {
    try fm.createDirectory(atPath: folder.file(sub), withIntermediateDirectories: true)
  }
  var images: [String] = []
  for (n, place) in [(1, "in"), (3, "in/a"), (6, "in/a/b"), (8, "in/c")] {
    images.append(
      try folder.write(
        "\(place)/photo-\(n).jpg", Fixture.bytes(Fixture.sample("orientation-\(n).jpg"))))
  }
  images.append(try folder.write("in/c/no-extension", Fixture.bytes(Fixture.sample("gps.jpg"))))
  images.append(try folder.write("in/a/alpha.png", Fixture.bytes(Fixture.sample("alpha.png"))))
  _ = try folder.write("in/README.txt", Array("not an image".utf8))
  let jpeg = try Fixture.bytes(Fixture.sample("orientation-2.jpg"))
  _ = try folder.write("in/a/broken.jpg", Array(jpeg.prefix(jpeg.count / 2)))
  try fm.createSymbolicLink(atPath: folder.file("in/a/b/up"), withDestinationPath: "../..")
  return (folder, images)
}

func jsonLines(_ text: String) throws -> [[String: Any]] {
  try text.split(separator: "\n").map {
    try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
  }
}

@Suite("darkroom apply", .timeLimit(.minutes(10)), .offThePool)
struct ApplyTests {
  @Test("-o DIR: mirrored outputs, non-images left out, a broken file reported, exit 1, revertible")
  func intoFolder() throws {
    let (folder, images) = try batchTree()
    let result = try CLI.run(
      [
        "apply", "--filter", "noir", folder.file("in"), "-o", folder.file("out"), "--progress",
        "json",
      ], cwd: folder.path)
    #expect(result.status == 1)
    let lines = try jsonLines(result.stdout)
    #expect(lines.count == images.count + 1, "every image once, the loop walked once")
    #expect(lines.filter { $0["status"] as? String == "done" }.count == images.count)
    let failed = lines.filter { $0["status"] as? String == "failed" }
    #expect(failed.count == 1 && (failed[0]["file"] as? String)?.hasSuffix("broken.jpg") == true)
    #expect(result.stderr.contains("broken.jpg: truncated JPEG"))
    #expect(result.stderr.contains("apply: \(images.count) done, 0 skipped, 1 failed"))
    for image in images {
      let relative = String(image.dropFirst(folder.file("in/").count))
      let output = folder.file("out/" + relative)
      let pixel = try pixels(output).pixel(x: 30, y: 30)
      #expect(pixel[0] == pixel[1] && pixel[1] == pixel[2], "\(relative) is noir")
      #expect(
        try ContentHash.of(file: image) == ContentHash.of(bytes: Fixture.bytes(image)),
        "input untouched")
    }
    let out = folder.file("out/a/b/photo-6.jpg")
    #expect(try CLI.run(["revert", out]).status == 0)
    #expect(try ContentHash.of(file: out) == ContentHash.of(file: images[2]))
    #expect(!FileManager.default.fileExists(atPath: folder.file("out/README.txt")))
  }

  @Test("in place: every image edited, then a re-run skips them all; revert DIR restores the tree")
  func inPlaceAndIdempotent() throws {
    let (folder, images) = try batchTree()
    let before = try images.map { try ContentHash.of(file: $0) }
    let first = try CLI.run(["apply", "--filter", "sepia", folder.file("in")])
    #expect(first.status == 1)
    #expect(try images.map { try ContentHash.of(file: $0) } != before)
    let again = try CLI.run(["apply", "--filter", "sepia", folder.file("in"), "--progress", "json"])
    let statuses = try jsonLines(again.stdout).map { $0["status"] as? String }
    #expect(statuses.filter { $0 == "skipped" }.count == images.count)
    #expect(statuses.filter { $0 == "done" }.isEmpty)
    let revert = try CLI.run(["revert", folder.file("in")])
    #expect(
      revert.stdout.components(separatedBy: "restored the original").count - 1 == images.count)
    #expect(try images.map { try ContentHash.of(file: $0) } == before)
  }

  @Test("a list on standard input, NUL-separated, names with spaces and newlines")
  func nulSeparatedList() throws {
    let folder = try Fixture.temporaryFolder()
    let names = ["a b.jpg", "line\nbreak.jpg", "ü.jpg"]
    let paths = try names.map {
      try folder.write($0, Fixture.bytes(Fixture.sample("orientation-4.jpg")))
    }
    let list = Data(paths.joined(separator: "\0").utf8 + [0])
    let result = try CLI.run(
      ["apply", "-0", "-", "--filter", "mono", "-o", folder.file("out"), "--progress", "json"],
      stdin: list)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try jsonLines(result.stdout).count == 3)
    for name in names {
      #expect(FileManager.default.fileExists(atPath: folder.file("out/" + name)))
    }
  }

  @Test("a batch killed halfway and run again finishes, with nothing done twice or lost")
  func resumeAfterKill() throws {
    let (folder, images) = try batchTree()
    let killed = try CLI.run(
      ["apply", "--filter", "noir", folder.file("in"), "-o", folder.file("out"), "--jobs", "1"],
      environment: ["DARKROOM_FAULT": "after-replace:3"])
    #expect(killed.status == 128 + 9)
    let rerun = try CLI.run([
      "apply", "--filter", "noir", folder.file("in"), "-o", folder.file("out"), "--jobs", "1",
      "--progress", "json",
    ])
    let lines = try jsonLines(rerun.stdout)
    let count = { (status: String) in lines.filter { $0["status"] as? String == status }.count }
    #expect(count("skipped") == 3, "the three finished before the kill")
    #expect(count("done") == images.count - 3)
    #expect(count("failed") == 1)
    let leftovers = try FileManager.default.subpathsOfDirectory(atPath: folder.file("out")).filter {
      $0.hasSuffix(".tmp")
    }
    #expect(leftovers.isEmpty, "\(leftovers)")
  }

  @Test("shards 0..n-1 cover every input exactly once, whatever the input order")
  func shards() throws {
    let (folder, images) = try batchTree()
    let n = 3
    var seen: [String] = []
    for i in 0..<n {
      let result = try CLI.run([
        "apply", "--filter", "noir", folder.file("in"), "-o", folder.file("out"), "--shard",
        "\(i)/\(n)", "--progress", "json", "--force",
      ])
      seen += try jsonLines(result.stdout).compactMap { $0["file"] as? String }
    }
    #expect(seen.count == images.count + 1)
    #expect(Set(seen).count == seen.count)
    // Listed one by one, forwards or backwards: the same share for each shard.
    let all = images + [folder.file("in/a/broken.jpg")]
    var covered: [String] = []
    for i in 0..<n {
      var shares: [Set<String>] = []
      for order in [all, all.reversed()] {
        let result = try CLI.run(
          [
            "apply", "-", "--filter", "noir", "-o", folder.file("listed"), "--shard", "\(i)/\(n)",
            "--progress", "json", "--force",
          ],
          stdin: Data(order.joined(separator: "\n").utf8))
        shares.append(Set(try jsonLines(result.stdout).compactMap { $0["file"] as? String }))
      }
      #expect(shares[0] == shares[1], "shard \(i) is the same for either order")
      covered += shares[0]
    }
    #expect(covered.sorted() == all.sorted())
  }

  @Test("--report records every file; usage errors exit 2")
  func reportAndUsage() throws {
    let (folder, images) = try batchTree()
    let report = folder.file("report.json")
    _ = try CLI.run([
      "apply", "--filter", "fade", folder.file("in"), "-o", folder.file("out"), "--report", report,
    ])
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: report.asURL)) as? [String: Any])
    let files = try #require(document["files"] as? [[String: Any]])
    #expect(files.count == images.count + 1)
    #expect(files.allSatisfy { $0["ms"] is Double })
    let done = files.filter { $0["status"] as? String == "done" }
    #expect(
      done.allSatisfy {
        ($0["sourceSHA256"] as? String)?.count == 64 && ($0["resultSHA256"] as? String)?.count == 64
      })
    let summary = try #require(document["summary"] as? [String: Any])
    #expect(summary["done"] as? Int == images.count && summary["failed"] as? Int == 1)

    #expect(try CLI.run(["apply", folder.file("in")]).status == 2, "no filter")
    #expect(
      try CLI.run(["apply", "--filter", "noir", "--shard", "3/3", folder.file("in")]).status == 2)
    #expect(try CLI.run(["apply", "--filter", "tone exposure=5", folder.file("in")]).status == 2)
  }
}
