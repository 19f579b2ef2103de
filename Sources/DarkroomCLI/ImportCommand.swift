import ArgumentParser
import Darkroom
import FoundationEssentials

struct ImportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "import",
    abstract: "Copy photos and videos into a library, and catalogue them.",
    usage: "darkroom import <files> ... [--into <folder>] [--move] [<options>]",
    discussion: """
      Each file is copied into the library's Uploads folder (or --into FOLDER), never over \
      a file (a second IMG_1.jpg becomes IMG_1-2.jpg), made durable and catalogued, as \
      an upload to darkroom serve is. A file whose bytes the library has already is not \
      copied again: it is named as the asset that has them. With --move, each file is \
      removed once its copy is durable, and only if it did not change meanwhile. A file \
      inside the library is refused: scan it instead. Into a space: darkroom space add.
      """)

  @Argument(help: "Image and video files.")
  var files: [String]

  @Option(
    name: .customLong("into"),
    help: ArgumentHelp(
      "The folder of the library to copy them into (default: Uploads).", valueName: "folder"))
  var folder: String?

  @Flag(help: "Remove each file once its copy is durable in the library.")
  var move = false

  @Flag(help: "Print one JSON object per file.")
  var json = false

  @OptionGroup var libraryOption: LibraryOption

  func run() throws {
    let library = try libraryOption.library()
    try eachReportingFailures(files) { file in
      let (asset, added) = try library.add(file: file, move: move, into: folder)
      if json {
        printLine(
          try jsonText(
            [
              "file": file, "id": asset.id.rawValue, "path": asset.path,
              "status": added ? "added" : "duplicate",
            ], pretty: false))
      } else {
        printLine("\(file): \(added ? "added as" : "already in the library as") \(asset.path)")
      }
    }
  }
}
