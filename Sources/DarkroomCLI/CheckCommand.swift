import ArgumentParser
import Darkroom
import FoundationEssentials

struct CheckCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "check",
    abstract: "Verify a library's originals and catalog; repair what can be.",
    usage: "darkroom check [<folder>] [--repair] [--search <dir> ...] [--json]",
    discussion: prose(
      """
      Checks every original's SHA-256, that every edit's original is in the store,
      that no original shares its inode (a hard link) with a photo outside
      .darkroom/, and that no edited photo was left read-only. Libraries written by
      darkroom 0.1.0 have the last two problems; --repair gives each original a file
      of its own and makes the photos writable again (0666 less the umask). A
      damaged or missing original cannot be repaired: it is reported, and the edits
      that need it still refuse to revert. The catalog (.darkroom/catalog.sqlite),
      when there is one, must pass SQLite's integrity_check and foreign_key_check;
      one in PostgreSQL (--catalog), keep month counts that agree with its rows.

      Exit status: 0 if the library is sound (or was repaired), 1 if a problem
      remains.

      Examples:
        darkroom check photos/
        darkroom check --repair photos/
        darkroom check --repair out/ --search in/    # inputs of an old apply -o
      """))

  @OptionGroup var place: LibraryFolder

  var folder: String { place.path }

  @Flag(help: "Separate shared inodes and make read-only edits writable again.")
  var repair = false

  @Option(help: "Also look here for photos that share an inode with an original.")
  var search: [String] = []

  @Flag(help: "Print the report as JSON.")
  var json = false

  func run() throws {
    guard let library = Library.containing(folder) else {
      reportError(
        DarkroomError(.notFound, file: folder, "no library here (.darkroom/ in it or above it)"))
      throw WorkFailed()
    }
    let report = library.check(searching: search, repair: repair)
    if json {
      print(try jsonText(report))
    } else {
      for finding in report.findings { print(finding) }
      let problems = report.findings.filter { !$0.repaired }.count
      let summary =
        "\(report.originals) original(s), \(report.adjustments) adjustment document(s): "
        + (report.findings.isEmpty
          ? "sound"
          : problems == 0
            ? "repaired \(report.findings.count) problem(s)" : "\(problems) problem(s)")
      print(summary)
    }
    if !report.isSound { throw WorkFailed() }
  }
}
