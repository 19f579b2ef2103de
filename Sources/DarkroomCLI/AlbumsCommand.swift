import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct AlbumsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "albums",
    abstract: "List smart albums, folders and user albums, with counts and posters.",
    discussion: prose(
      """
      Each line: the name --album takes, the count, the poster asset's id (the one
      chosen with album poster, or else the newest). Folders are albums of the files
      directly in them; a folder's parent is the album it sits in.
      """))

  @OptionGroup var libraryOption: LibraryFolder

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
