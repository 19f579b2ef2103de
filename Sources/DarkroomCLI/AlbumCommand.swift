import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct AlbumCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "album",
    abstract: "Make and change user albums.",
    usage: "darkroom album <action> [<arguments> ...] [--clear] [<options>]",
    discussion: prose(
      """
        darkroom album create "Best of 2024"
        darkroom album add "Best of 2024" IMG_0001.jpg 01JD3ZQ4N8W5XK2M7P9R1T6V0B
        darkroom album remove "Best of 2024" IMG_0001.jpg
        darkroom album poster "Best of 2024" IMG_0042.jpg   (--clear: newest again)
        darkroom album rename "Best of 2024" "2024"
        darkroom album delete "2024"                          (the photos stay)
        darkroom album list                                   (user albums and counts)

      Items are files of the library or asset ids. An album keeps the order
      assets were added in; darkroom list --album TITLE prints them in it.
      """))

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
