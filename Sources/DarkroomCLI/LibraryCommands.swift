import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// The library a catalog command works on: `--library DIR`, or the one containing the
/// current folder.
struct LibraryOption: ParsableArguments {
  @Option(
    name: .customLong("library"),
    help: ArgumentHelp(
      "The library (a folder holding .darkroom/; default: the one containing the current folder).",
      valueName: "dir"))
  var path: String?

  func library() throws -> Library { try Self.library(containing: path ?? ".") }

  /// The library with a catalog that contains `start`.
  static func library(containing start: String) throws -> Library {
    guard let library = Library.containing(start), library.hasCatalog else {
      throw DarkroomError(
        .notFound, file: start, "no library with a catalog here (darkroom scan DIR makes one)")
    }
    return library
  }
}

struct ScanCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "scan",
    abstract: "Catalog the photos and videos of a library folder (incremental).",
    usage: "darkroom scan [<folder>] [--jobs <n>] [--json] [<options>]",
    discussion: """
      Makes DIR a library (DIR/.darkroom/) if it is in none, then brings the catalog
      (.darkroom/catalog.sqlite) up to date: new and changed files are read once
      (hashed, header described), unchanged ones (same inode, size and times) are
      not opened. A renamed or moved file keeps its asset id. Files gone from a
      folder leave the catalog; a folder that is missing or empty (an unmounted
      disk) leaves its assets offline instead, until their files are back
      (--forget-offline drops them).

      Ctrl-C or SIGTERM stop it between batches of files; what was written stays,
      and the next scan goes on from there.

      Examples:
        darkroom scan ~/Photos
        darkroom scan ~/Photos/2024 --progress json
      """)

  @Argument(help: "The library's folder, or a folder inside it.")
  var folder: String = "."

  @Option(help: "Files read at once (default: one per core).")
  var jobs: Int?

  @Flag(
    help: "Remove assets whose folder is gone from the catalog, instead of keeping them offline.")
  var forgetOffline = false

  @Option(
    help:
      "auto (a bar when standard error is a terminal), bar, json (lines on standard error) or none."
  )
  var progress: ProgressMode = .auto

  @Flag(help: "Print the summary as JSON.")
  var json = false

  @Option(help: .hidden)
  var batchSize: Int?

  func validate() throws {
    if let batchSize, batchSize < 1 { throw ValidationError("--batch-size must be 1 or more") }
    if let jobs, jobs < 1 { throw ValidationError("--jobs must be 1 or more, not \(jobs)") }
  }

  func run() throws {
    var isFolder = false
    let exists = FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder)
    if exists && !isFolder {
      throw DarkroomError(.invalidArgument, file: folder, "is a file; scan takes a folder")
    }
    let library: Library
    if let found = Library.containing(folder) {
      library = found
    } else if exists {
      library = try Library.create(at: folder)
    } else {
      throw DarkroomError(.notFound, file: folder, "no such folder")
    }
    let stopping = StopFlag()
    let signals = StopSignals.install(
      grace: 0, cutOff: false, stop: { stopping.set() }, abandon: {})
    var options = ScanOptions()
    if let jobs { options.jobs = jobs }
    // Headers are read here (formats outside the trusted list in workers, as in every
    // command): a worker's round trip per file made a first scan 1.4x slower (README).
    options.forgetOffline = forgetOffline
    if let batchSize { options.batchSize = batchSize }
    options.shouldStop = { stopping.isSet }
    let terminal = isatty(STDERR_FILENO) != 0
    let bar = progress == .bar || (progress == .auto && terminal)
    let lines = progress == .json
    let summary = try library.scan(folder, options: options) { state in
      if lines, let line = try? jsonText(state, pretty: false) { printError(line + "\n") }
      if bar {
        let megabytes = fixed(Double(state.bytesRead) / 1_048_576, 0)
        printError(
          "\r\u{1B}[Kscan: \(state.found) files found, \(state.read)/\(state.toRead) read (\(megabytes) MB)"
        )
      }
    }
    if bar { printError("\r\u{1B}[K") }
    for problem in summary.problems { printError("darkroom: \(problem)\n") }
    if json {
      print(try jsonText(summary))
    } else {
      var parts = [
        "\(summary.added) added", "\(summary.changed) changed", "\(summary.moved) moved",
        "\(summary.removed) removed", "\(summary.unchanged) unchanged",
      ]
      if summary.offline > 0 { parts.append("\(summary.offline) offline") }
      if summary.online > 0 { parts.append("\(summary.online) back online") }
      if summary.skipped > 0 { parts.append("\(summary.skipped) not photos or videos") }
      if !summary.problems.isEmpty { parts.append("\(summary.problems.count) unreadable") }
      printError(
        "scan: \(summary.files) files in \(library.root.path): \(parts.joined(separator: ", ")) in \(fixed(summary.seconds, 2)) s\n"
      )
    }
    if summary.stopped {
      printError("scan: stopped; run it again to go on\n")
    }
    if let status = signals.status { throw WorkFailed(status: status) }
    if !summary.problems.isEmpty { throw WorkFailed() }
  }
}

struct ListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "List a library's assets, filtered and sorted.",
    discussion: """
      Prints one path a line (relative to the current folder when inside it), or
      with --json an array of asset objects, or with -0 NUL-separated absolute
      paths for another command:

        darkroom list --edited -0 | darkroom apply -0 - --filter noir -o out/
        darkroom list --album "Best of 2024" --json
        darkroom list --type video --min-duration 10 --sort -date --limit 20
        darkroom list --near 48.8584,2.2945,5 --from 2024-06-01 --to 2024-06-30

      Dates are the capture date, or the file's modification time without one.
      Hidden and trashed assets are left out (--album smart:trash lists the trash).

      Albums: a user album's title; folder:PATH; smart:all, smart:favourites,
      smart:edited, smart:videos, smart:with-location, smart:recently-added,
      smart:trash (darkroom albums lists them).
      """)

  @OptionGroup var libraryOption: LibraryOption

  @OptionGroup var spaceOption: SpaceOption

  @Option(
    help: ArgumentHelp("An album: a title, folder:PATH or smart:NAME.", valueName: "album"))
  var album: String?

  @Option(name: .customLong("type"), help: "photo or video.")
  var mediaType: MediaType?

  @Option(help: ArgumentHelp("From this date (YYYY-MM-DD or an ISO 8601 time).", valueName: "date"))
  var from: String?

  @Option(help: ArgumentHelp("To this date, included.", valueName: "date"))
  var to: String?

  @Option(help: "A camera make or model containing this text.")
  var camera: String?

  @Flag(inversion: .prefixedNo, help: "Only edited (or, with --no-edited, unedited) assets.")
  var edited: Bool?

  @Flag(inversion: .prefixedNo, help: "Only favourites (or only the others).")
  var favourite: Bool?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Within KM kilometres of a place.", valueName: "lat,lon,km"))
  var near: String?

  @Option(help: ArgumentHelp("Videos at least this long.", valueName: "seconds"))
  var minDuration: Double?

  @Option(help: ArgumentHelp("Videos at most this long.", valueName: "seconds"))
  var maxDuration: Double?

  @Option(
    parsing: .unconditional,
    help: "date, -date, name, size, or album (a user album's order).")
  var sort: AssetQuery.Sort?

  @Option(help: "At most this many.")
  var limit: Int?

  @Option(help: "Skip this many first.")
  var offset: Int = 0

  @Option(
    help: ArgumentHelp("Only what comes after this asset id (the next page).", valueName: "id"))
  var after: String?

  @Flag(help: "Print a JSON array of assets.")
  var json = false

  @Flag(name: .customShort("0"), help: "Print absolute paths, each followed by a NUL byte.")
  var nulSeparated = false

  func validate() throws {
    if json && nulSeparated { throw ValidationError("--json and -0 do not go together") }
    if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
    if offset < 0 { throw ValidationError("--offset must be 0 or more") }
    _ = try query()
  }

  func query() throws -> AssetQuery {
    var parameters: [(name: String, value: String)] = []
    func add(_ name: String, _ value: String?) {
      if let value { parameters.append((name, value)) }
    }
    add("album", album)
    add("type", mediaType?.rawValue)
    add("from", from)
    add("to", to)
    add("camera", camera)
    add("edited", edited.map(String.init))
    add("favourite", favourite.map(String.init))
    add("near", near)
    add("min-duration", minDuration.map { String($0) })
    add("max-duration", maxDuration.map { String($0) })
    add("sort", sort?.rawValue)
    add("after", after)
    do {
      return try AssetQuery(parameters: parameters)
    } catch {
      // The engine's message starts with the parameter's name, which is the option's.
      throw ValidationError("--" + error.message)
    }
  }

  func run() throws {
    if let space = try spaceOption.open() {
      return try SpaceList.print(space, trashed: false, json: json)
    }
    let library = try libraryOption.library()
    let result = try library.assets(matching: try query())
    let end = limit.map { min(result.count, offset + $0) } ?? result.count
    let assets = offset < end ? try result.assets(in: offset..<end) : []
    if json {
      print(try jsonText(assets.map { ListedAsset($0, library: library) }))
    } else if nulSeparated {
      var bytes: [UInt8] = []
      for asset in assets { bytes += Array(library.path(of: asset).utf8) + [0] }
      writeAll(STDOUT_FILENO, bytes)
    } else {
      let here = FileManager.default.currentDirectoryPath + "/"
      var text = ""
      for asset in assets {
        let path = library.path(of: asset)
        text += (path.hasPrefix(here) ? String(path.dropFirst(here.count)) : path) + "\n"
      }
      writeAll(STDOUT_FILENO, Array(text.utf8))
    }
  }
}

/// An asset as `list --json` prints it: the catalog's fields plus the absolute path.
struct ListedAsset: Encodable {
  var asset: Asset
  var file: String
  init(_ asset: Asset, library: Library) {
    self.asset = asset
    file = library.path(of: asset)
  }
  func encode(to encoder: Encoder) throws {
    try asset.encode(to: encoder)
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(file, forKey: .file)
  }
  enum Key: String, CodingKey { case file }
}

extension MediaType: ExpressibleByArgument {}
extension AssetQuery.Sort: ExpressibleByArgument {}

struct AlbumsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "albums",
    abstract: "List smart albums, folders and user albums, with counts and posters.",
    discussion: """
      Each line: the name --album takes, the count, the poster asset's id (the one
      chosen with album poster, or else the newest). Folders are albums of the files
      directly in them; a folder's parent is the album it sits in.
      """)

  @OptionGroup var libraryOption: LibraryOption

  @Flag(help: "Print a JSON array.")
  var json = false

  func run() throws {
    let albums = try libraryOption.library().albums()
    if json {
      print(try jsonText(albums))
      return
    }
    let width = min(40, albums.map(\.ref.count).max() ?? 0)
    var text = ""
    for album in albums {
      let name = album.ref.padding(
        toLength: max(width, album.ref.count), withPad: " ", startingAt: 0)
      text += "\(name)  \(album.count)\(album.poster.map { "  poster \($0)" } ?? "")\n"
    }
    writeAll(STDOUT_FILENO, Array(text.utf8))
  }
}

struct AlbumCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "album",
    abstract: "Make and change user albums.",
    discussion: """
      darkroom album create "Best of 2024"
      darkroom album add "Best of 2024" IMG_0001.jpg 01JD3ZQ4N8W5XK2M7P9R1T6V0B
      darkroom album remove "Best of 2024" IMG_0001.jpg
      darkroom album poster "Best of 2024" IMG_0042.jpg   (--clear: newest again)
      darkroom album rename "Best of 2024" "2024"
      darkroom album delete "2024"                          (the photos stay)
      darkroom album list                                   (user albums and counts)

      Items are files of the library or asset ids. An album keeps the order
      assets were added in; darkroom list --album TITLE prints them in it.
      """)

  @Argument(help: "What to do (see above).")
  var action: Action

  @Argument(help: "The album's title, then a new title or items.")
  var arguments: [String] = []

  @Flag(help: "With poster: go back to the newest asset.")
  var clear = false

  @OptionGroup var libraryOption: LibraryOption

  enum Action: String, ExpressibleByArgument, CaseIterable {
    case create, rename, delete, add, remove, poster, list
  }

  func validate() throws {
    let needed: ClosedRange<Int> =
      switch action {
      case .list: 0...0
      case .create, .delete: 1...1
      case .rename: 2...2
      case .poster: clear ? 1...1 : 2...2
      case .add, .remove: 2...Int.max
      }
    guard needed.contains(arguments.count) else {
      throw ValidationError("album \(action.rawValue): wrong number of arguments (see --help)")
    }
  }

  func run() throws {
    let library = try libraryOption.library()
    let title = arguments.first ?? ""
    let items = Array(arguments.dropFirst())
    switch action {
    case .list:
      for album in try library.albums() where album.kind == .user {
        printLine("\(album.title)\t\(album.count)")
      }
    case .create: try library.edit(.create(title))
    case .rename: try library.edit(.rename(title, to: arguments[1]))
    case .delete: try library.edit(.delete(title))
    case .add: try library.edit(.add(title, try library.assetIDs(items)))
    case .remove: try library.edit(.remove(title, try library.assetIDs(items)))
    case .poster:
      try library.edit(.poster(title, clear ? nil : try library.assetIDs(items).first))
    }
  }
}

struct FavouriteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "favourite",
    abstract: "Mark assets as favourites (or, with --remove, not).",
    discussion: "Items are files of the library or asset ids; smart:favourites lists them.")

  @Argument(help: "Files or asset ids.")
  var items: [String]

  @Flag(help: "Take the mark off instead.")
  var remove = false

  @OptionGroup var libraryOption: LibraryOption

  func run() throws {
    let library = try libraryOption.library()
    try library.edit(.favourite(try library.assetIDs(items), !remove))
  }
}

/// Asset ids among a command's files, turned into their files' paths (files as they are).
func resolveItems(_ items: [String]) throws -> [String] {
  try items.map { item in try Library.resolve(item) }
}
