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
      "Apply the graph of stored adjustment data (it replaces the current edit).", valueName: "file"
    ))
  var adjustment: String?

  @Option(
    parsing: .unconditional,
    help: "Encoder quality of the results, 1-100 (default: the source's own, else 92).")
  var quality: Int?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Encoder effort of HEIC and AVIF results, 0 (fastest) to 9 (smallest files; default 0).",
      discussion: "HEIC: x265's presets, ultrafast (0) to placebo (9); AVIF: aom's speeds."))
  var effort: Int?

  func validate() throws {
    if let quality, !(1...100).contains(quality) {
      throw ValidationError(
        "Expected integer between 1 and 100 for --quality but received \(quality)")
    }
    if let effort, !ImageFormat.efforts.contains(effort) {
      throw ValidationError("Expected integer between 0 and 9 for --effort but received \(effort)")
    }
    if filters.isEmpty && adjustment == nil {
      throw ValidationError("Nothing to do: give --filter SPEC or --adjustment FILE")
    }
    if !filters.isEmpty && adjustment != nil {
      throw ValidationError("Give --filter or --adjustment, not both")
    }
  }

  /// The graph, checked before any pixel moves or any file is touched: a bad spec is a usage
  /// error (exit 2).
  func graph() throws -> FilterGraph {
    do {
      if let adjustment {
        return try AdjustmentData.decode(json: readFile(adjustment), source: adjustment).graph
      }
      return try FilterGraph.parse(specs: filters)
    } catch {
      reportError(error)
      throw WorkFailed(status: 2)
    }
  }

  /// Pixel settings with this quality and `limits`.
  func settings(_ limits: LimitOptions) -> PixelSettings {
    var settings = limits.settings()
    settings.quality = quality
    settings.effort = effort
    return settings
  }
}
