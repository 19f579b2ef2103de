import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct FavouriteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "favourite",
    abstract: "Mark assets as favourites (or, with --remove, not).",
    usage: "darkroom favourite <items> ... [--remove] [<options>]",
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
