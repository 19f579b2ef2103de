import ArgumentParser
import Darkroom
import Dispatch
import FoundationEssentials

struct DuplicatesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "duplicates",
    abstract: "Find duplicate photos: the same bytes, or with --near the same picture.",
    discussion: """
      Prints each group of duplicates as its assets' paths, one a line, groups
      separated by a blank line (--json: an array of groups). With --near, photos
      that are the same picture resized, recompressed, converted, lightly cropped or
      brightened are grouped too, by perceptual fingerprints made on first need and
      kept in the catalog. --threshold is the largest number of the fingerprints'
      64 bits that may differ (12 by default; lower is stricter; the hashes of the
      photos' central quarters may differ by 2 more).

      darkroom duplicates keep ITEMS... remembers that these are not duplicates of
      each other: they are not grouped again.

      Examples:
        darkroom duplicates --near
        darkroom duplicates keep IMG_0001.jpg IMG_0001-edit.jpg
      """,
    subcommands: [DuplicatesList.self, DuplicatesKeep.self],
    defaultSubcommand: DuplicatesList.self)
}

struct DuplicatesList: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "List groups of duplicates (the default).")

  @Flag(help: "Also group the same picture in other sizes, qualities and formats.")
  var near = false

  @Option(help: "Fingerprint bits that may differ, 0 to 32.")
  var threshold: Int = Library.nearDuplicateThreshold

  @Flag(help: "Print a JSON array of groups.")
  var json = false

  @OptionGroup var libraryOption: LibraryOption

  func validate() throws {
    guard (0...32).contains(threshold) else {
      throw ValidationError("--threshold must be between 0 and 32, not \(threshold)")
    }
  }

  func run() throws {
    let library = try libraryOption.library()
    let failures = Locked()
    let groups = try library.duplicates(near: near, threshold: threshold) { error in
      failures.note()
      reportError(error)
    }
    let paths = try groups.map { group in
      try group.assets.map { try library.path(of: library.asset($0)) }
    }
    if json {
      struct Group: Encodable {
        var exact: Bool
        var assets: [AssetID]
        var files: [String]
      }
      print(
        try jsonText(
          zip(groups, paths).map { Group(exact: $0.exact, assets: $0.assets, files: $1) }))
    } else {
      print(paths.map { $0.joined(separator: "\n") }.joined(separator: "\n\n"))
    }
    if failures.count > 0 { throw WorkFailed() }
  }

  /// Counts failures reported from several threads.
  final class Locked: @unchecked Sendable {
    private let queue = DispatchQueue(label: "darkroom.failures")
    private var value = 0
    func note() { queue.sync { value += 1 } }
    var count: Int { queue.sync { value } }
  }
}

struct DuplicatesKeep: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keep", abstract: "Remember that these assets are not duplicates.")

  @Argument(help: "Files or asset ids, two or more.")
  var items: [String]

  @OptionGroup var libraryOption: LibraryOption

  func validate() throws {
    guard items.count >= 2 else { throw ValidationError("keep takes two or more items") }
  }

  func run() throws {
    let library = try libraryOption.library()
    try library.keepApart(try library.assetIDs(items))
  }
}

struct TrashCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "trash",
    abstract: "Move assets to the library's trash; list, restore or empty it.",
    discussion: """
      darkroom trash ITEMS... moves files (with their edit history) into
      .darkroom/trash/, out of every list but --album smart:trash.
      darkroom trash restore ITEMS... puts them back where they were, with their ids,
      albums and favourites. darkroom trash empty deletes them for good, with the
      originals and adjustment data nothing else in the library refers to
      (--older-than 30d: only those trashed at least 30 days ago).

      Examples:
        darkroom trash IMG_0001.jpg 01KAX3ZQ4N8W5XK2M7P9R1T6V0
        darkroom trash list --json
        darkroom trash empty --older-than 30d
      """,
    subcommands: [TrashMove.self, TrashList.self, TrashRestore.self, TrashEmpty.self],
    defaultSubcommand: TrashMove.self)
}

struct TrashMove: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "move", abstract: "Move assets to the trash (the default).")

  @Argument(help: "Files or asset ids.")
  var items: [String]

  @OptionGroup var libraryOption: LibraryOption

  @OptionGroup var spaceOption: SpaceOption

  func run() throws {
    if let space = try spaceOption.open() {
      return try move(.trash, .space(space, try items.map { try space.asset($0) }), nil)
    }
    let library = try libraryOption.library()
    try move(.trash, .assets(try library.assetIDs(items)), library)
  }
}

struct TrashList: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "List the trash: id, where it was, when it went.")

  @Flag(help: "Print a JSON array of assets.")
  var json = false

  @OptionGroup var libraryOption: LibraryOption

  func run() throws {
    let library = try libraryOption.library()
    let assets = try library.trashedAssets()
    if json {
      print(try jsonText(assets.map { ListedAsset($0, library: library) }))
      return
    }
    for asset in assets {
      let when = Date(timeIntervalSince1970: asset.trashedAt ?? 0).formatted(.iso8601)
      printLine("\(asset.id)  \(asset.trashedFrom ?? asset.path)  \(when)")
    }
  }
}

struct TrashRestore: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "restore", abstract: "Put trashed assets back where they were.")

  @Argument(help: "Asset ids (or their paths before the trash).")
  var items: [String]

  @OptionGroup var libraryOption: LibraryOption

  @OptionGroup var spaceOption: SpaceOption

  func run() throws {
    if let space = try spaceOption.open() {
      return try move(.restore, .space(space, try items.map { try space.asset($0) }), nil)
    }
    let library = try libraryOption.library()
    let trashed = try library.trashedAssets()
    var ids: [AssetID] = []
    for item in items {
      let place = library.relativePath(item)
      if let found = trashed.first(where: { $0.id.rawValue == item || $0.trashedFrom == place }) {
        ids.append(found.id)
      } else {
        throw DarkroomError(.notFound, file: item, "is not in the trash")
      }
    }
    try move(.restore, .assets(ids), library)
  }
}

/// Moves items to the trash or out of it, a line each: `PATH: in the trash (ID)`.
private func move(_ action: JobAction, _ items: JobItems, _ library: Library?) throws {
  let said = if case .trash = action { "in the trash" } else { "restored" }
  let end = try runJob(JobRequest(action, on: items, in: library), grace: 10, command: "trash") {
    outcome, _ in
    guard outcome.failure == nil else { return reportFailure(outcome) }
    printLine("\(outcome.file): \(said) (\(outcome.id ?? ""))")
  }
  try end.check()
}

struct TrashEmpty: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "empty", abstract: "Delete what is in the trash, for good.")

  @Option(
    help: ArgumentHelp("Only what went in at least this long ago (30d, 12h).", valueName: "age"))
  var olderThan: String?

  @Flag(help: "Print what was removed as JSON.")
  var json = false

  @OptionGroup var libraryOption: LibraryOption

  func age() throws -> Double? {
    guard let olderThan else { return nil }
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
    guard let unit = olderThan.last.flatMap({ units[$0] }),
      let number = Double(olderThan.dropLast()), number >= 0
    else {
      throw ValidationError(
        "--older-than takes a number and s, m, h, d or w (30d); not \(olderThan)")
    }
    return number * unit
  }

  func validate() throws { _ = try age() }

  func run() throws {
    let library = try libraryOption.library()
    let emptied = try library.emptyTrash(olderThan: try age())
    if json {
      print(try jsonText(emptied))
    } else {
      printLine(
        "trash: deleted \(emptied.assets.count) asset(s) and \(emptied.storeEntries) store entries nothing referred to"
      )
    }
  }
}

struct WatchCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "watch",
    abstract: "Keep a library's catalog current as files change, and print each change.",
    discussion: """
      Scans the folder once, then follows the kernel's notices of changed files
      (inotify): the folders they name are scanned again, and each change the
      catalog records is printed after it is committed, one line each (--json: one
      JSON object a line, {"sequence", "kind", "id", "path", "oldPath", "at"}, kind
      inserted, changed, removed or moved). When the kernel's queue overflows, the
      whole folder is scanned again, so nothing is missed. Changes made by other
      processes (edits, another scan) are printed too. Ctrl-C or SIGTERM end it.

      darkroom watch --since N prints the changes after sequence number N and
      exits: what a client that was away missed.
      """)

  @Argument(help: "The library's folder, or a folder inside it.")
  var folder: String = "."

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
    Containment.useWorkers(workerConfiguration(jobs: ProcessorCount.value), for: .everyFile)
    let watcher = try LibraryWatcher(library: library, folder: folder)
    // Ctrl-C and SIGTERM are how a watch ends: it stops within a moment, and exits 0.
    let signals = StopSignals.install(
      grace: 0, announce: false, cutOff: false, stop: { watcher.stop() }, abandon: {})
    try watcher.run(
      ready: { printError("watch: watching \(library.root.path); Ctrl-C ends it\n") }, print)
    withExtendedLifetime(signals) {}
  }
}
