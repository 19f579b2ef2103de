import ArgumentParser
import Darkroom
import Dispatch
import FoundationEssentials

struct WatchCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "watch",
    abstract: "Keep a library's catalog current as files change, and print each change.",
    usage: "darkroom watch [<folder>] [--since N] [--json] [<options>]",
    discussion: prose(
      """
      Scans the folder once, then follows the kernel's notices of changed files
      (inotify): the folders they name are scanned again, and each change the
      catalog records is printed after it is committed, one line each (--json: one
      JSON object a line, {"sequence", "kind", "id", "path", "oldPath", "at"}, kind
      inserted, changed, removed or moved). When the kernel's queue overflows, the
      whole folder is scanned again, so nothing is missed. Changes made by other
      processes (edits, another scan) are printed too. Ctrl-C or SIGTERM end it.

      darkroom watch --since N prints the changes after sequence number N and
      exits: what a client that was away missed.
      """))

  @OptionGroup var place: LibraryFolder

  /// The library's folder, or a folder inside it.
  var folder: String { place.path }

  @Flag(help: "Print one JSON object a line.")
  var json = false

  @Option(
    help: ArgumentHelp("Print the changes after this sequence number, and exit.", valueName: "n"))
  var since: Int64?

  func run() throws {
    guard let library = Library.containing(folder) else {
      throw DarkroomError(
        .notFound, file: folder, "no library here (darkroom scan DIR makes one)")
    }
    let print: (CatalogChange) -> Void = { change in
      if json, let line = try? jsonText(change, pretty: false) {
        printLine(line)
      } else {
        let from = change.oldPath.map { " (from \($0))" } ?? ""
        printLine("\(change.sequence) \(change.kind.rawValue) \(change.id) \(change.path)\(from)")
      }
    }
    if let since {
      var sequence = since
      while true {
        let changes = try library.catalog().changes(since: sequence, limit: 1000)
        guard let last = changes.last else { return }
        changes.forEach(print)
        sequence = last.sequence
      }
    }
    // Every file's header is parsed in a sandboxed worker, never in this process.
    Containment.useThisProgram(for: .everyFile, idle: ProcessorCount.value)
    let watcher = try LibraryWatcher(library: library, folder: folder)
    // Ctrl-C and SIGTERM are how a watch ends: it stops within a moment, and exits 0.
    let signals = StopSignals.install(
      grace: 0, announce: false, cutOff: false, stop: { watcher.stop() }, abandon: {})
    try watcher.run(
      ready: { printError("watch: watching \(library.root.path); Ctrl-C ends it\n") }, print)
    withExtendedLifetime(signals) {}
  }
}
