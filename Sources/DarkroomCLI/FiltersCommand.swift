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
      var name, summary: String
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
          name: filter.name, summary: filter.summary,
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
      print("  \(filter.name): \(filter.summary)")
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
