/// Named graphs made of the built-in filters. The built-in ones are the JSON files in the
/// repository's `Filters/` folder, compiled in (see `Presets+Generated.swift`).
///
/// ```swift
/// for (name, graph) in Presets.all { print(name, "-", graph.description ?? "") }
/// if let sepia = Presets.named("sepia") { try Editor().edit("IMG_0001.jpg", with: sepia) }
/// ```
///
/// ``FilterGraph/parse(spec:)`` takes a preset's name as a whole spec. The presets are
/// constants: read them from any thread.
package enum Presets {
  /// The names of the built-in presets, such as `chrome`, `mono`, `noir` and `sepia`.
  package static var names: [String] { builtInJSON.map(\.name) }

  /// The built-in preset called `name`, or nil.
  package static func named(_ name: String) -> FilterGraph? {
    guard let entry = builtInJSON.first(where: { $0.name == name.lowercased() }) else { return nil }
    return try? FilterGraph.decode(
      json: Array(entry.json.utf8), source: "Filters/\(entry.name).json")
  }

  /// Every built-in preset, decoded.
  package static var all: [(name: String, graph: FilterGraph)] {
    builtInJSON.compactMap { entry in named(entry.name).map { (entry.name, $0) } }
  }
}
