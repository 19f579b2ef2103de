import ArgumentParser
import Darkroom
import Dispatch
import FoundationEssentials

struct DuplicatesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "duplicates",
    abstract: "Find duplicate photos: the same bytes, or with --near the same picture.",
    discussion: prose(
      """
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
      """),
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

  @OptionGroup var libraryOption: LibraryFolder

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
