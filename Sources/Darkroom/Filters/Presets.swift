/// Named graphs made of the built-in filters. The built-in ones are the JSON files in the
/// repository's `Filters/` folder, compiled in (see `Presets+Generated.swift`).
public enum Presets {
  public static var names: [String] { builtInJSON.map(\.name) }

  /// The built-in preset called `name`, or nil.
  public static func named(_ name: String) -> FilterGraph? {
    guard let entry = builtInJSON.first(where: { $0.name == name.lowercased() }) else { return nil }
    return try? FilterGraph.decode(
      json: Array(entry.json.utf8), source: "Filters/\(entry.name).json")
  }

  /// Every built-in preset, decoded.
  public static var all: [(name: String, graph: FilterGraph)] {
    builtInJSON.compactMap { entry in named(entry.name).map { (entry.name, $0) } }
  }
}
