import ArgumentParser
import Darkroom
import Dispatch
import FoundationEssentials

struct TrashCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "trash",
    abstract: "Move assets to the library's trash; list, restore or empty it.",
    discussion: prose(
      """
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
      """),
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
    let library = try spaceOption.library() ?? libraryOption.library()
    try move(.trash, .assets(try library.assetIDs(items)), library)
  }
}

struct TrashList: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "List the trash: id, where it was, when it went.")

  @Flag(help: "Print a JSON array of assets.")
  var json = false

  @OptionGroup var libraryOption: LibraryFolder

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
    let library = try spaceOption.library() ?? libraryOption.library()
    try move(.restore, .assets(try library.trashedIDs(items)), library)
  }
}

/// Moves items to the trash or out of it, a line each: `PATH: in the trash (ID)`.
private func move(_ action: JobAction, _ items: JobItems, _ library: Library) throws {
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

  @OptionGroup var libraryOption: LibraryFolder

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
