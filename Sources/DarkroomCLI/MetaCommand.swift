import ArgumentParser
import Darkroom
import FoundationEssentials

struct MetaCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "meta",
    abstract: "Set a photo's description, rating and keywords, in its XMP sidecar.",
    usage: "darkroom meta <items> ... [--rating N] [--keyword K ...] [<options>]",
    discussion: prose(
      """
      Writes FILE.EXT.xmp beside each photo, as darktable names it; exiftool, darktable
      and digiKam read it back, and Darkroom reads it over what the photo says. The photo
      itself is never changed. Every property of an existing sidecar that this command
      does not set is kept as it was, and the sidecar as it was is kept in the library's
      .darkroom/originals. A sidecar Darkroom cannot read is left alone, with an error.
      A photo in a library is read into its catalog again at once.

      Examples:
        darkroom meta IMG_0001.jpg --rating 4 --description "Longs Peak at dawn"
        darkroom meta IMG_0001.jpg IMG_0002.jpg --add-keyword Colorado --remove-keyword todo
        darkroom meta 01J9Z3K5... --no-keywords --json
      """))

  @OptionGroup var catalog: CatalogOption

  @Argument(help: "Photos, or asset ids of the library that contains the current folder.")
  var items: [String]

  @Option(help: ArgumentHelp("The description (\"\" takes the sidecar's away).", valueName: "text"))
  var description: String?

  @Option(
    help: ArgumentHelp(
      "Stars: 1 to 5, 0 for none, -1 for rejected.", valueName: "n"))
  var rating: Int?

  @Option(
    name: .customLong("keyword"),
    help: ArgumentHelp("Set the keywords to exactly these (repeat for each).", valueName: "k"))
  var keywords: [String] = []

  @Flag(help: "Take every keyword off.")
  var noKeywords = false

  @Option(name: .customLong("add-keyword"), help: ArgumentHelp("Add a keyword.", valueName: "k"))
  var add: [String] = []

  @Option(
    name: .customLong("remove-keyword"), help: ArgumentHelp("Take a keyword off.", valueName: "k"))
  var remove: [String] = []

  @Flag(help: "Print what each photo now says, as a JSON array.")
  var json = false

  var change: MetadataEdit {
    MetadataEdit(
      caption: description, rating: rating,
      keywords: noKeywords ? [] : keywords.isEmpty ? nil : keywords,
      addKeywords: add.isEmpty ? nil : add, removeKeywords: remove.isEmpty ? nil : remove)
  }

  func validate() throws {
    if noKeywords && !keywords.isEmpty {
      throw ValidationError("Give --keyword or --no-keywords, not both")
    }
    guard !change.isEmpty else {
      throw ValidationError("Nothing to change: give --description, --rating or keywords")
    }
    do {
      try change.validate()
    } catch {
      throw ValidationError(error.message.prefix(1).uppercased() + error.message.dropFirst())
    }
  }

  struct Entry: Encodable {
    var file: String
    var caption: String?
    var rating: Int?
    var keywords: [String]
    var sources: [String: String]
  }

  func run() throws {
    var failed = false
    var entries: [Entry] = []
    for file in try resolveItems(items) {
      do {
        let metadata = try Library.writeMetadata(change, toFile: file)
        let entry = Entry(
          file: file, caption: metadata.caption, rating: metadata.rating,
          keywords: metadata.keywords, sources: metadata.sources)
        if json {
          entries.append(entry)
        } else {
          var parts = ["rating \(entry.rating.map(String.init) ?? "none")"]
          parts.append(
            "keywords " + (entry.keywords.isEmpty ? "none" : entry.keywords.joined(separator: ", "))
          )
          if let caption = entry.caption { parts.append("description \"\(caption)\"") }
          print(file + ": " + parts.joined(separator: "; "))
        }
      } catch {
        failed = true
        reportError(error)
      }
    }
    if json { print(try jsonText(entries)) }
    if failed { throw WorkFailed() }
  }
}
