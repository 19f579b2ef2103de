import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct ListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "List a library's assets, filtered and sorted.",
    discussion: prose(
      """
      Prints one path a line (relative to the current folder when inside it), or
      with --json an array of asset objects, or with -0 NUL-separated absolute
      paths for another command:

        darkroom list --edited -0 | darkroom apply -0 - --filter noir -o out/
        darkroom list --album "Best of 2024" --json
        darkroom list --type video --min-duration 10 --sort -date --limit 20
        darkroom list --near 48.8584,2.2945,5 --from 2024-06-01 --to 2024-06-30

      Dates are the capture date, or the file's modification time without one.
      Hidden and trashed assets are left out (--album smart:trash lists the trash).
      --damaged lists the files the scan found damaged (cut short, a header that
      makes no sense), each as PATH: what is wrong (what the decoder said).

      Albums: a user album's title; folder:PATH; smart:all, smart:favourites,
      smart:edited, smart:videos, smart:with-location, smart:recently-added,
      smart:trash, smart:problems (darkroom albums lists them).
      """))

  @OptionGroup var libraryOption: LibraryFolder

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

  @Option(
    help: ArgumentHelp(
      "Taken in this month, on the clock where it was taken (the gallery's month groups).",
      valueName: "YYYY-MM"))
  var month: String?

  @Option(
    help: ArgumentHelp(
      "Taken on this day of any year (on this day: with --to before this year).",
      valueName: "MM-DD"))
  var day: String?

  @Option(help: "A camera make or model containing this text.")
  var camera: String?

  @Flag(inversion: .prefixedNo, help: "Only edited (or, with --no-edited, unedited) assets.")
  var edited: Bool?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "A rating: 4, '>=4', '<=2' or 3-5 (0 is none, -1 rejected).", valueName: "stars"))
  var rating: String?

  @Option(help: "A keyword the asset has (whole, any case).")
  var keyword: String?

  @Option(help: "Text in the name, caption, keywords, people, camera or place (any case).")
  var text: String?

  @Option(help: "A place, region or country, whole (any case): Boulder, Colorado, Germany.")
  var place: String?

  @Flag(inversion: .prefixedNo, help: "Only favourites (or only the others).")
  var favourite: Bool?

  @Flag(
    inversion: .prefixedNo,
    help: "Only damaged files, each with its problem (or, with --no-damaged, whole ones).")
  var damaged: Bool?

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
    add("month", month)
    add("day", day)
    add("camera", camera)
    add("rating", rating)
    add("keyword", keyword)
    add("place", place)
    add("text", text)
    add("edited", edited.map(String.init))
    add("favourite", favourite.map(String.init))
    add("damaged", damaged.map(String.init))
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
    if let space = try spaceOption.library() {
      return try SpaceList.print(space, try query(), json: json)
    }
    let library = try libraryOption.library()
    let assets: [Asset]
    if let limit {
      assets = try library.assets(matching: try query(), offset: offset, limit: limit)
    } else {
      let result = try library.assets(matching: try query())
      assets = offset < result.count ? try result.assets(in: offset..<result.count) : []
    }
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
        text += path.hasPrefix(here) ? String(path.dropFirst(here.count)) : path
        if damaged == true, let damage = asset.damage {
          text += ": \(damage.problem) (\(damage.detail))"
        }
        text += "\n"
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
