import ArgumentParser
import Darkroom

/// `--filter`, `--adjustment`, `--quality` and `--effort`, shared by `edit` and `apply`.
struct FilterOptions: ParsableArguments {
  @Option(
    name: .customLong("filter"),
    help: ArgumentHelp(
      "A filter or preset; repeat to chain (see darkroom filters).", valueName: "spec"))
  var filters: [String] = []

  @Option(
    help: ArgumentHelp(
      "Apply the graph of stored adjustment data (it replaces the current edit).",
      discussion:
        "JSON adjustment data, or an .xmp: Darkroom's adjustment data in it, else Lightroom's crs: settings.",
      valueName: "file"))
  var adjustment: String?

  @Flag(
    name: .customLong("from-xmp"),
    help: ArgumentHelp(
      "Take over each file's Lightroom edit (crs: settings in its XMP or sidecar) as its edit.",
      discussion:
        "The edit replaces the current one and can be reverted as any edit; `darkroom info` shows what is rendered, approximated or not understood."
    ))
  var fromXMP = false

  @Option(
    parsing: .unconditional,
    help: "Encoder quality of the results, 1-100 (default: the source's own, else 92).")
  var quality: Int?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Encoder effort of HEIC and AVIF results, 0 (fastest) to 9 (smallest files).",
      discussion: """
        HEIC: x265's presets, ultrafast (0) to placebo (9); AVIF: aom's speeds (9 minus the \
        effort). Unless given, the effort follows the photo's size: a phone's 12 megapixels \
        are written at 3 (AVIF) or 0 (HEIC), smaller photos at more, larger at less \
        (docs/command-line.md has the table).
        """))
  var effort: Int?

  func validate() throws {
    if let quality, !(1...100).contains(quality) {
      throw ValidationError(
        "Expected integer between 1 and 100 for --quality but received \(quality)")
    }
    if let effort, !ImageFormat.efforts.contains(effort) {
      throw ValidationError("Expected integer between 0 and 9 for --effort but received \(effort)")
    }
    let given = [!filters.isEmpty, adjustment != nil, fromXMP].filter { $0 }.count
    if given == 0 {
      throw ValidationError("Nothing to do: give --filter SPEC, --adjustment FILE or --from-xmp")
    }
    if given > 1 {
      throw ValidationError("Give one of --filter, --adjustment and --from-xmp")
    }
  }

  /// The graph, checked before any pixel moves or any file is touched: a bad spec is a usage
  /// error (exit 2). A preset name may be one saved in the library holding `near` (the
  /// first input) or the current folder.
  func graph(near: String? = nil) throws -> FilterGraph {
    do {
      if fromXMP { return FilterGraph(nodes: []) }
      if let adjustment {
        let bytes = try readFile(adjustment)
        if adjustment.lowercased().hasSuffix(".xmp") {
          return try ForeignEdit.graph(xmp: bytes, source: adjustment)
        }
        return try AdjustmentData.decode(json: bytes, source: adjustment).graph
      }
      var presets = Library.userPresets(near: ".")
      if let near { presets.merge(Library.userPresets(near: near)) { _, nearer in nearer } }
      return try FilterGraph.parse(specs: filters, presets: presets)
    } catch {
      reportError(error)
      throw WorkFailed(status: 2)
    }
  }

  /// How the graph combines with a file's edit: each file's own Lightroom edit (--from-xmp)
  /// or the graph given, replacing the edit (pasted adjustment data; `replace`) or after it.
  func mode(replace: Bool) -> EditMode {
    fromXMP ? .foreign : replace || adjustment != nil ? .replace : .append
  }

  /// Pixel settings with this quality and `limits`.
  func settings(_ limits: LimitOptions) -> PixelSettings {
    var settings = limits.settings()
    settings.quality = quality
    settings.effort = effort
    return settings
  }
}
