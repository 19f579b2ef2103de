import ArgumentParser
import Darkroom
import FoundationEssentials

struct RevertCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "revert",
    abstract: "Restore edited files to their original bytes, or to a version.",
    usage: "darkroom revert <files> ... [--to <version>] [--json] [<options>]",
    discussion: prose(
      """
      The original comes from the library's store and is checked against its SHA-256
      before it replaces the file. A file is recognised by its content, so revert
      works after it was renamed or moved inside its library. Reverting a file that
      is not an edit says so and changes nothing. If the store has lost the
      original, nothing changes either.

      Examples:
        darkroom revert IMG_0001.jpg
        darkroom revert --to 1 IMG_0001.jpg      # the first edit (0 is the original)
      """))

  @Argument(help: "Edited files, or folders (walked for images).")
  var files: [String]

  @Option(
    parsing: .unconditional,
    help: "Version to restore: 0 is the original (default); see darkroom history.")
  var to: Int?

  @Flag(help: "Print one JSON object per file.")
  var json = false

  @OptionGroup var graceOption: GraceOption

  @OptionGroup var spaceOption: SpaceOption

  @OptionGroup var catalog: CatalogOption

  func run() throws {
    var missing: [DarkroomError] = []
    let items: JobItems
    var library: Library?
    if let (ids, space) = try spaceOption.assets(files) {
      (items, library) = (.assets(ids), space)
    } else {
      let (found, notFound) = BatchInputs.collect(try resolveItems(files))
      (items, missing) = (.files(found), notFound)
    }
    missing.forEach(reportError)
    let json = json
    let end = try runJob(
      JobRequest(.revert(to: to), on: items, in: library), grace: graceOption.grace,
      command: "revert"
    ) { outcome, _ in
      guard let reverted = outcome.reverted, outcome.failure == nil else {
        return reportFailure(outcome)
      }
      let (status, message): (String, String) =
        switch reverted {
        case .restoredOriginal: ("reverted", "restored the original")
        case .restoredVersion(let n, _): ("reverted", "restored version \(n)")
        case .notEdited: ("not-edited", "not edited; nothing to revert")
        case .alreadyAtVersion(let n): ("unchanged", "already at version \(n)")
        }
      if json {
        printLine((try? jsonText(["file": outcome.file, "status": status], pretty: false)) ?? "")
      } else {
        printLine("\(outcome.file): \(message)")
      }
    }
    try end.check(failed: !missing.isEmpty)
  }
}
