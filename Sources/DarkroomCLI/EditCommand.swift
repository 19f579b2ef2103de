import ArgumentParser
import Darkroom
import FoundationEssentials

struct EditCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "edit",
    abstract: "Apply filters to files in place, non-destructively.",
    discussion: """
      The original bytes go into the library's store (.darkroom/ in the nearest folder
      above the file, created beside it if there is none) and are on disk before the
      rendered result replaces the file. The result keeps the source's format and metadata,
      with Orientation 1 (its pixels are upright) and the adjustment data as XMP.

      Editing an edited file renders from its original again, with the new filters after
      the old ones (--replace: instead of them), so there is no generation loss.
      `darkroom revert` restores the original byte for byte.

      --filter takes a preset name (darkroom filters lists them), a path to a graph .json
      file, or OP key=value ...; repeat it to chain filters, applied in order.

      Examples:
        darkroom edit IMG_0001.jpg --filter noir
        darkroom edit IMG_0001.jpg --filter 'tone exposure=0.5 contrast=0.2' --filter 'crop aspect=4:5'
        darkroom edit IMG_0002.jpg --adjustment <(darkroom adjustments IMG_0001.jpg)
      """)

  @Argument(help: "Files to edit in place.")
  var files: [String]

  @Option(
    name: .customLong("filter"),
    help: ArgumentHelp("A filter or preset; repeat to chain.", valueName: "spec"))
  var filters: [String] = []

  @Option(
    help: ArgumentHelp(
      "Apply the graph of stored adjustment data (replacing the current edit).", valueName: "file"))
  var adjustment: String?

  @Flag(help: "Replace the current edit's filters instead of adding to them.")
  var replace = false

  @Option(help: "Encoder quality of the result, 1-100.")
  var quality: Int = 92

  @Flag(help: "Print one JSON object per file (its adjustment data).")
  var json = false

  @OptionGroup var limits: LimitOptions

  func validate() throws {
    guard (1...100).contains(quality) else {
      throw ValidationError(
        "Expected integer between 1 and 100 for --quality but received \(quality)")
    }
    if filters.isEmpty && adjustment == nil {
      throw ValidationError("Nothing to do: give --filter SPEC or --adjustment FILE")
    }
    if !filters.isEmpty && adjustment != nil {
      throw ValidationError("Give --filter or --adjustment, not both")
    }
  }

  func run() throws {
    // Every filter is checked before any pixel moves or any file is touched.
    let graph: FilterGraph
    let mode: Editor.Mode
    do {
      if let adjustment {
        graph = try AdjustmentData.decode(json: Array(readFile(adjustment)), source: adjustment)
          .graph
        mode = .replace
      } else {
        graph = try FilterGraph.parse(specs: filters)
        mode = replace ? .replace : .append
      }
    } catch {
      reportError(error)
      throw WorkFailed(status: 2)
    }
    var editor = Editor()
    editor.quality = quality
    editor.renderer = limits.apply(to: editor.renderer)
    var failed = false
    for file in files {
      do {
        let result = try editor.edit(file, with: graph, mode: mode)
        if json {
          print(String(decoding: result.adjustment.canonicalJSON, as: UTF8.self))
        } else {
          print(
            "\(file): edited (version \(result.adjustment.version): \(result.adjustment.graph.nodes.map(\.text).joined(separator: " | ")))"
          )
        }
      } catch {
        failed = true
        reportError(error)
      }
    }
    if failed { throw WorkFailed() }
  }
}

/// Reads a small input file (graph or adjustment data), `-` for standard input.
func readFile(_ path: String) throws -> [UInt8] {
  path == "-" ? try StandardInput.readAll() : try readWholeFile(path)
}
