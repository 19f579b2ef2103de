import FoundationEssentials

/// A preset a user saved in a library: a named graph, usable wherever a built-in preset is
/// (`apply --filter NAME`, the API's filters, the gallery's batch menu). Kept as a filter
/// graph document in `.darkroom/presets/NAME.json`, so a library carries its presets when it
/// moves. `UserPreset` is a `Sendable` value type.
public struct UserPreset: Sendable, Equatable {
  /// The name `--filter` takes: lowercase letters, digits and `-`, 1 to 40 of them.
  public let name: String
  /// The filters, and the description the user gave.
  public let graph: FilterGraph
}

extension Library {
  /// Where a library keeps its users' presets.
  var presetsFolder: URL { metadataFolder.appendingPathComponent("presets") }

  /// The presets saved in this library, by name (an unreadable file is left out).
  public func userPresets() -> [UserPreset] {
    guard keeps(.presets),
      let names = try? FileManager.default.contentsOfDirectory(atPath: presetsFolder.path)
    else { return [] }
    return names.sorted().compactMap { file in
      guard file.hasSuffix(".json") else { return nil }
      let name = String(file.dropLast(5))
      guard Self.isPresetName(name),
        let bytes = try? InputFile.readAll(presetsFolder.appendingPathComponent(file).path),
        bytes.count <= Self.presetLimit,
        let graph = try? FilterGraph.decode(json: bytes, source: file)
      else { return nil }
      return UserPreset(name: name, graph: graph)
    }
  }

  /// The largest preset document read (a graph is a few hundred bytes).
  static let presetLimit = 256 * 1024

  /// Saves `graph` as the preset `name` (replacing one of that name), with `description`.
  ///
  /// - Throws: `invalidArgument` for a name that is not lowercase letters, digits and `-`
  ///   (1 to 40), or that a built-in filter or preset has; for an empty graph, or one with
  ///   `auto` (a preset is what a photo's edit was, explicit); `io` when it cannot be written.
  @discardableResult
  public func savePreset(_ name: String, graph: FilterGraph, description: String? = nil)
    throws(DarkroomError) -> UserPreset
  {
    try require(.presets)
    let name = name.lowercased()
    guard Self.isPresetName(name) else {
      throw DarkroomError(
        .invalidArgument,
        "a preset's name is 1 to 40 lowercase letters, digits and -, starting with a letter: not '\(name.prefix(60))'"
      )
    }
    if Filters.named(name) != nil || Presets.named(name) != nil {
      throw DarkroomError(
        .invalidArgument,
        "'\(name)' is a built-in \(Filters.named(name) != nil ? "filter" : "preset"); choose another name"
      )
    }
    guard !graph.nodes.isEmpty else {
      throw DarkroomError(.invalidArgument, "a preset needs at least one filter")
    }
    if graph.nodes.contains(where: { $0.op == AutoFilter.name }) {
      throw DarkroomError(
        .invalidArgument, "a preset is explicit: save an edit made with auto, not auto itself")
    }
    let preset = FilterGraph(nodes: graph.nodes, description: description ?? graph.description)
    try Folders.create(presetsFolder.path)
    // Canonical JSON with the description (a graph's canonicalJSON leaves it out: it names
    // no pixels; a preset keeps it).
    let json = Canonical.json(preset)
    try AtomicFile.write(
      json, to: presetsFolder.appendingPathComponent(name + ".json").path, durable: true)
    return UserPreset(name: name, graph: preset)
  }

  /// Saves the current edit of the asset `id` as the preset `name` (see
  /// ``savePreset(_:graph:description:)``).
  ///
  /// - Throws: `invalidArgument` naming the file when it is not edited; what
  ///   ``savePreset(_:graph:description:)`` throws.
  @discardableResult
  public func savePreset(_ name: String, fromEditOf id: AssetID, description: String? = nil)
    throws(DarkroomError) -> UserPreset
  {
    let history = try editHistory(id)
    guard let current = history.versions.first(where: { $0.version == history.current }) else {
      throw DarkroomError(
        .invalidArgument, file: try path(of: asset(id)), "not edited: there is no edit to save")
    }
    return try savePreset(name, graph: current.graph, description: description)
  }

  /// Removes the preset `name`; false when there was none.
  @discardableResult
  public func deletePreset(_ name: String) throws(DarkroomError) -> Bool {
    let name = name.lowercased()
    guard Self.isPresetName(name) else { return false }
    let file = presetsFolder.appendingPathComponent(name + ".json").path
    guard FileManager.default.fileExists(atPath: file) else { return false }
    do {
      try FileManager.default.removeItem(atPath: file)
    } catch {
      throw DarkroomError(.io, file: file, "cannot remove: \(error.localizedDescription)")
    }
    return true
  }

  /// This library's presets by name, as ``FilterGraph/parse(specs:readingFiles:presets:)``
  /// takes them.
  package func presetsByName() -> [String: FilterGraph] { Self.byName(userPresets()) }

  /// `--filter` specs read as a graph, with this library's presets beside the built-in ones.
  ///
  /// - Throws: What ``FilterGraph/parse(specs:readingFiles:presets:)`` throws.
  package func filterGraph(specs: [String], readingFiles: Bool = false) throws(DarkroomError)
    -> FilterGraph
  {
    try FilterGraph.parse(specs: specs, readingFiles: readingFiles, presets: presetsByName())
  }

  /// The presets of the library holding `path` (a file or folder), by name; none outside a
  /// library. For a command's `--filter`, before it has a library open.
  package static func userPresets(near path: String) -> [String: FilterGraph] {
    byName(Library.containing(path)?.userPresets() ?? [])
  }

  static func byName(_ presets: [UserPreset]) -> [String: FilterGraph] {
    Dictionary(presets.map { ($0.name, $0.graph) }, uniquingKeysWith: { a, _ in a })
  }

  static func isPresetName(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    guard (1...40).contains(bytes.count), let first = bytes.first, (0x61...0x7A).contains(first)
    else { return false }
    return bytes.allSatisfy {
      (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D
    }
  }
}
