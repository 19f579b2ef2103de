import Foundation
import Testing

@testable import Darkroom

/// The manual shows commands that work: every `darkroom` command in a fenced block of
/// `docs/*.md` is run, in the order the page gives them, in a folder of the page's own made
/// of the samples (the photos the examples name), and must succeed. A command the test cannot
/// run here is listed in ``notRun`` with the reason; values only the reader's library has (an
/// asset's id, a link's id) are the library's own, found as the page's reader would find them.
@Suite("The manual's examples run", .serialized, .timeLimit(.minutes(10)), .offThePool)
struct DocsExampleTests {
  /// A command the page shows.
  struct Example: CustomStringConvertible {
    var page: String
    var line: Int
    var command: String
    var description: String { "docs/\(page):\(line): \(command)" }
  }

  /// Every page of the manual.
  static let pages: [String] =
    ((try? FileManager.default.contentsOfDirectory(
      atPath: Fixture.root.appendingPathComponent("docs").path)) ?? [])
    .filter { $0.hasSuffix(".md") }.sorted()

  /// Commands not run here, by a part of their text, with why.
  static let notRun: [(part: String, why: String)] = [
    ("darkroom serve", "a server runs until it is stopped: ServeProcessTests starts and stops it"),
    ("darkroom watch", "runs until it is stopped: LibraryChangesTests follows a watch"),
    ("postgresql://", "needs a PostgreSQL server named db: PostgresCatalogTests copies a catalog"),
    (".CR3", "needs a camera's RAW file: RawTests renders and edits DNGs the same way"),
    ("grep Edited", "needs a photo Lightroom edited: ForeignEditTests writes Lightroom's XMP"),
    ("--from-xmp", "needs a photo Lightroom edited: ForeignEditTests writes Lightroom's XMP"),
    ("IMG_0001.xmp", "follows the Lightroom edit above it"),
    ("$SLURM_ARRAY_TASK_ID", "a Slurm job array's step: ApplyTests runs --shard and --report"),
    ("/media/card", "a camera card's files: LibraryAddTests imports through every door"),
  ]

  /// The commands of `page`: lines of its fenced blocks that start with `darkroom` (or pipe
  /// into it), without a prompt (`$ `; in a block with prompts only its prompted lines are
  /// commands, the rest is output), a trailing comment, or a line's continuation; synopsis
  /// lines (a placeholder such as `FILE...` or `stats|prune`) are left out.
  static func examples(of page: String) throws -> [Example] {
    let text = try String(
      contentsOfFile: Fixture.root.appendingPathComponent("docs/\(page)").path, encoding: .utf8)
    var examples: [Example] = []
    var block: [(Int, String)]? = nil
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
    {
      if line.hasPrefix("```") {
        if let lines = block { examples += commands(in: lines, page: page) }
        block = block == nil ? [] : nil
        continue
      }
      block?.append((index + 1, String(line)))
    }
    return examples
  }

  static func commands(in block: [(Int, String)], page: String) -> [Example] {
    let prompted = block.contains { $0.1.hasPrefix("$ ") }
    var joined: [(Int, String)] = []
    for (number, line) in block {
      if var last = joined.last, last.1.hasSuffix("\\") {
        last.1 =
          last.1.dropLast().trimmingCharacters(in: .whitespaces) + " "
          + line.trimmingCharacters(in: .whitespaces)
        joined[joined.count - 1] = last
      } else {
        joined.append((number, line))
      }
    }
    return joined.compactMap { number, line in
      if prompted && !line.hasPrefix("$ ") { return nil }
      var command = line.hasPrefix("$ ") ? String(line.dropFirst(2)) : line
      if let comment = command.range(of: #"\s+#\s.*$"#, options: .regularExpression) {
        command.removeSubrange(comment)
      }
      command = command.trimmingCharacters(in: .whitespaces)
      guard command.hasPrefix("darkroom ") || command.contains("| darkroom ") else { return nil }
      let words = command.split(separator: " ").map {
        $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
      }
      // A synopsis: placeholders, alternatives, or a description after a gap of spaces.
      let placeholder =
        command.contains("   ")
        || words.contains { word in
          (word.count > 1 && word.contains("|")) || word == "/"
            || word.range(of: #"^[A-Z]+(\.\.\.)?$"#, options: .regularExpression) != nil
        }
      return placeholder ? nil : Example(page: page, line: number, command: command)
    }
  }

  /// A library (scanned) with the photos the pages name: IMG_0001.jpg (EXIF 6), IMG_0002.jpg
  /// and a video, IMG_0002.MOV; photos/ with three more (one edited), 2024/06/IMG_0001.jpg, IMG_0001-print.jpg (the first's bytes),
  /// Samples/orientation-6.jpg, and passwords (pw.txt, pw2.txt) for a shared link and a space.
  static func library() throws -> TemporaryFolder {
    let folder = try Fixture.temporaryFolder()
    let manager = FileManager.default
    for name in ["photos", "2024/06", "Samples"] {
      try manager.createDirectory(
        atPath: folder.file(name), withIntermediateDirectories: true)
    }
    let copies = [
      ("orientation-6.jpg", "IMG_0001.jpg"), ("orientation-1.jpg", "IMG_0002.jpg"),
      ("orientation-6.jpg", "IMG_0001-print.jpg"), ("gps.jpg", "photos/IMG_1001.jpg"),
      ("orientation-3.jpg", "photos/IMG_1002.jpg"), ("display-p3.jpg", "photos/IMG_1003.jpg"),
      ("orientation-8.jpg", "2024/06/IMG_0001.jpg"),
      ("orientation-6.jpg", "Samples/orientation-6.jpg"), ("clip.mov", "IMG_0002.MOV"),
    ]
    for (sample, name) in copies {
      try manager.copyItem(atPath: Fixture.sample(sample), toPath: folder.file(name))
    }
    _ = try folder.write("pw.txt", Array("a password for visitors\n".utf8))
    _ = try folder.write("pw2.txt", Array("another password, as long\n".utf8))
    let scan = try CLI.run(["scan", folder.path, "--no-background"])
    #expect(scan.status == 0, "\(scan.stderr)")
    // One photo edited, for `list --edited`.
    let edit = try CLI.run(["edit", folder.file("photos/IMG_1002.jpg"), "--filter", "noir"])
    #expect(edit.status == 0, "\(edit.stderr)")
    return folder
  }

  @Test(
    "every darkroom command in a page of the manual succeeds, in order, in a library of the photos it names",
    arguments: DocsExampleTests.pages)
  func pageRuns(page: String) throws {
    let folder = try Self.library()
    let path = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
    let examples = try Self.examples(of: page)
    // A folder of the library's own, not /tmp's.
    var values = ["/tmp/noir": "noir"]
    var password = "pw.txt"
    for example in examples {
      if Self.notRun.contains(where: { example.command.contains($0.part) }) { continue }
      var command = example.command
      // The reader's own values: an asset's id from the catalog, a link's from `share`.
      if command.contains("01KAX3ZQ4N8W5XK2M7P9R1T6V0") {
        let id = try CLI.run(["list", "--json"], cwd: folder.path)
        let found = try #require(
          id.stdout.range(of: #"[0-9A-HJKMNP-TV-Z]{26}"#, options: .regularExpression))
        command = command.replacingOccurrences(
          of: "01KAX3ZQ4N8W5XK2M7P9R1T6V0", with: String(id.stdout[found]))
      }
      for (shown, own) in values { command = command.replacingOccurrences(of: shown, with: own) }
      // A space's password, asked on a terminal, comes from a file here (as a script gives it).
      if command.contains("darkroom space ") || command.contains(" --space ") {
        command += " --password-file \(password)"
        if command.contains("space passwd") {
          let next = password == "pw.txt" ? "pw2.txt" : "pw.txt"
          command += " --new-password-file \(next)"
          password = next
        }
      }
      // Nothing outside the folder: no absolute path or home, and the home is the folder.
      #expect(!command.contains(" /") && !command.contains("~"), "\(example): outside its folder")
      let run = try CLI.run(
        ["-o", "pipefail", "-c", command], cwd: folder.path,
        environment: [
          "PATH": path + ":/usr/bin:/bin", "HOME": folder.path,
          "XDG_CACHE_HOME": folder.file(".cache"),
        ], executable: "/bin/bash")
      #expect(run.status == 0, "\(example): \(run.stderr)")
      if command.hasPrefix("darkroom share \""),
        let link = run.stderr.range(of: #"\(id [0-9a-f]{12};"#, options: .regularExpression)
      {
        values["9f01241b5412"] = String(run.stderr[link].dropFirst(4).dropLast())
      }
    }
  }

  @Test(
    "the manual has its pages, and each command not run is still in one of them (no stale exemption)"
  )
  func exemptionsCurrent() throws {
    try #require(Self.pages.contains("command-line.md") && Self.pages.contains("spaces.md"))
    let commands = try Self.pages.flatMap { try Self.examples(of: $0) }.map(\.command)
    for (part, why) in Self.notRun {
      #expect(commands.contains { $0.contains(part) }, "\(part) (\(why)) is in no example")
    }
  }

  @Test(
    "the examples are found as a reader reads them: prompts dropped, output and synopses left out, comments and continuations handled"
  )
  func examplesFound() throws {
    let block = [
      (1, "$ darkroom info a.jpg   # a comment"), (2, "darkroom info: not a command"),
      (3, "$ darkroom list --edited -0 | darkroom apply -0 - --filter noir"),
    ]
    #expect(
      Self.commands(in: block, page: "p").map(\.command) == [
        "darkroom info a.jpg", "darkroom list --edited -0 | darkroom apply -0 - --filter noir",
      ])
    let plain = [
      (1, "darkroom info FILE... [--json]       dimensions"),
      (2, "darkroom cache stats|prune|clear"), (3, "darkroom apply --filter noir in \\"),
      (4, "  -o out --jobs 4"), (5, "cat a.jpg | darkroom render - -o - > b.jpg"),
    ]
    let found = Self.commands(in: plain, page: "p")
    #expect(
      found.map(\.command) == [
        "darkroom apply --filter noir in -o out --jobs 4",
        "cat a.jpg | darkroom render - -o - > b.jpg",
      ])
    #expect(found.map(\.line) == [3, 5])
  }
}
