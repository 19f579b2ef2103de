import ArgumentParser
import Darkroom

struct FiltersCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "filters",
    abstract: "List the built-in filters, their parameters, and the presets.",
    discussion: """
      A --filter is written `OP key=value ...`; values without a key fill the
      parameters in the order listed. Presets are graphs of these filters, kept in
      Filters/*.json.

      Each filter says where it works: in linear light (where light adds up:
      exposure, white balance, vignette), on sRGB's encoded values (close to how
      lightness is seen: curves, levels, detail), in Oklab (where hue and chroma
      are each one direction: vibrance, HSL), or on geometry. `auto` looks at the
      photo when the edit is made and is stored as the filters it chose.
      """)

  @Flag(help: "Print JSON.")
  var json = false

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
    }
    var filters: [Filter]
    var presets: [Preset]
  }

  func run() throws {
    let listing = Listing(
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
    for preset in listing.presets {
      print("  \(preset.name): \(preset.description)  [\(preset.filters.joined(separator: " | "))]")
    }
  }
}
