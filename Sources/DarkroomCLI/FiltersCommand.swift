import ArgumentParser
import Darkroom

struct FiltersCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "filters",
    abstract: "List the filters and presets; save an edit as a preset.",
    usage: """
      darkroom filters [--json]
      darkroom filters --save <name> --from <file|id> [--description <text>]
      darkroom filters --delete <name>
      """,
    discussion: prose(
      """
      A --filter is written `OP key=value ...`; values without a key fill the
      parameters in the order listed. Presets are graphs of these filters, kept in
      Filters/*.json.

      Each filter says where it works: in linear light (where light adds up:
      exposure, white balance, vignette), on sRGB's encoded values (close to how
      lightness is seen: curves, levels, detail), in Oklab (where hue and chroma
      are each one direction: vibrance, HSL), or on geometry. `auto` looks at the
      photo when the edit is made and is stored as the filters it chose.

      --save NAME --from FILE|ID keeps the current edit of an edited file (or
      asset id) as a preset of the library holding it (.darkroom/presets/), usable
      wherever a built-in preset is: `darkroom apply --filter NAME`, the API and
      the gallery's batch menu. --delete NAME removes one. The listing shows the
      presets of the library holding the current folder.
        darkroom edit IMG_0001.jpg --filter 'tone exposure=0.3' --filter vibrance
        darkroom filters --save bright --from IMG_0001.jpg --description 'a lift'
        darkroom apply --filter bright holiday/
      """))

  @Flag(help: "Print JSON.")
  var json = false

  @Option(
    help: ArgumentHelp("Save the edit of --from as a preset of this name.", valueName: "name"))
  var save: String?

  @Option(
    help: ArgumentHelp("The edited file or asset id whose edit --save keeps.", valueName: "file|id")
  )
  var from: String?

  @Option(help: ArgumentHelp("A one-line description for --save.", valueName: "text"))
  var description: String?

  @Option(
    help: ArgumentHelp("Remove the preset of this name from the library here.", valueName: "name"))
  var delete: String?

  func validate() throws {
    if save != nil && from == nil { throw ValidationError("--save NAME needs --from FILE|ID") }
    if from != nil && save == nil { throw ValidationError("--from needs --save NAME") }
    if description != nil && save == nil { throw ValidationError("--description goes with --save") }
    if save != nil && delete != nil { throw ValidationError("Give --save or --delete, not both") }
  }

  private struct Listing: Encodable {
    struct Parameter: Encodable {
      var name, takes, doc: String
      var defaultValue: FilterValue?
      enum CodingKeys: String, CodingKey {
        case name, takes, doc
        case defaultValue = "default"
      }
    }
    struct Filter: Encodable {
      var name, summary, space: String
      var parameters: [Parameter]
    }
    struct Preset: Encodable {
      var name, description: String
      var filters: [String]
      var user = false
    }
    var filters: [Filter]
    var presets: [Preset]
  }

  func run() throws {
    if let save, let from {
      try savePreset(save, from: from)
      return
    }
    if let delete {
      guard let library = Library.containing("."), try library.deletePreset(delete) else {
        reportError(DarkroomError(.notFound, "no preset '\(delete)' in the library here"))
        throw WorkFailed()
      }
      printLine("deleted preset \(delete.lowercased())")
      return
    }
    var listing = Listing(
      filters: Filters.catalog.map { filter in
        .init(
          name: filter.name, summary: filter.summary, space: filter.space.rawValue,
          parameters: filter.parameters.map {
            .init(name: $0.name, takes: $0.expectation, doc: $0.doc, defaultValue: $0.defaultValue)
          })
      },
      presets: Presets.all.map {
        .init(
          name: $0.name, description: $0.graph.description ?? "",
          filters: $0.graph.nodes.map(\.text))
      })
    for preset in Library.containing(".")?.userPresets() ?? [] {
      listing.presets.append(
        .init(
          name: preset.name, description: preset.graph.description ?? "",
          filters: preset.graph.nodes.map(\.text), user: true))
    }
    if json {
      print(try jsonText(listing))
      return
    }
    print("Filters:")
    for filter in listing.filters {
      print("  \(filter.name): \(filter.summary)  [\(filter.space)]")
      for p in filter.parameters {
        let fallback = p.defaultValue.map { " (default \($0))" } ?? " (optional)"
        print("      \(p.name)  \(p.takes)\(fallback): \(p.doc)")
      }
    }
    print("\nPresets:")
    for preset in listing.presets where !preset.user {
      print("  \(preset.name): \(preset.description)  [\(preset.filters.joined(separator: " | "))]")
    }
    let own = listing.presets.filter(\.user)
    if !own.isEmpty {
      print("\nThis library's presets:")
      for preset in own {
        let about = preset.description.isEmpty ? "" : "\(preset.description)  "
        print("  \(preset.name): \(about)[\(preset.filters.joined(separator: " | "))]")
      }
    }
  }

  private func savePreset(_ name: String, from item: String) throws {
    do {
      let path = try Library.resolve(item)
      guard let library = Library.containing(path) else {
        throw DarkroomError(.invalidArgument, file: path, "is in no library to keep a preset in")
      }
      guard let edit = try Library.adjustments(ofFile: path) else {
        throw DarkroomError(.invalidArgument, file: path, "not edited: there is no edit to save")
      }
      let preset = try library.savePreset(name, graph: edit.graph, description: description)
      printLine(
        "saved preset \(preset.name) in \(library.rootPath): \(preset.graph.nodes.map(\.text).joined(separator: " | "))"
      )
    } catch {
      reportError(error)
      throw WorkFailed()
    }
  }
}
