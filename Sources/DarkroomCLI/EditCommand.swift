import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct EditCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "edit",
    abstract: "Apply filters to files in place, non-destructively.",
    usage: "darkroom edit <files> ... --filter <spec> ... [<options>]",
    discussion: prose(
      """
      The original bytes go into the library's store (.darkroom/ in the nearest
      folder above the file, created beside it if there is none) and are on disk
      before the rendered result replaces the file. The result keeps the source's
      format and metadata, with Orientation 1 (its pixels are upright) and the
      adjustment data as XMP.

      Editing an edited file renders from its original again, with the new filters
      after the old ones (--replace: instead of them), so there is no generation
      loss. `darkroom revert` restores the original byte for byte.

      A camera RAW (DNG, CR3, NEF, ...) is kept as the camera wrote it: its edit
      is a JPEG beside it, NAME-Edit.jpg, developed by LibRaw, whose original the
      RAW is. Editing the RAW again goes on with that edit; `darkroom revert
      NAME-Edit.jpg` removes it (the RAW is the original). A NAME-Edit.jpg that
      is not Darkroom's edit of the RAW is never replaced.

      --filter takes a preset name (darkroom filters lists them), a path to a graph
      .json file, or OP key=value ...; repeat it to chain filters, applied in order.

      Examples:
        darkroom edit IMG_0001.jpg --filter noir
        darkroom edit IMG_0001.jpg --filter 'tone exposure=0.5 contrast=0.2' \\
          --filter 'crop aspect=4:5'
        darkroom edit IMG_0002.jpg --adjustment <(darkroom adjustments IMG_0001.jpg)
        darkroom edit IMG_0003.jpg --from-xmp     # its Lightroom edit
      """))

  @Argument(help: "Files to edit in place.")
  var files: [String]

  @OptionGroup var filterOptions: FilterOptions

  @Flag(help: "Replace the current edit's filters instead of adding to them.")
  var replace = false

  @Flag(help: "Print one JSON object per file (its adjustment data).")
  var json = false

  @OptionGroup var limits: LimitOptions

  @OptionGroup var graceOption: GraceOption

  @OptionGroup var spaceOption: SpaceOption

  @OptionGroup var catalog: CatalogOption

  func run() throws {
    limits.formats.allow()  // before folders are listed: allowed formats are inputs too
    let graph = try filterOptions.graph(near: files.first)
    // Pasted adjustment data replaces the edit; filters add to it unless --replace.
    let mode = filterOptions.mode(replace: replace)
    let space = try spaceOption.assets(files)
    let items: JobItems =
      try space.map { .assets($0.ids) }
      ?? .files(try resolveItems(files).map { BatchInput(path: $0, relativePath: $0) })
    var request = JobRequest(.edit(graph, mode: mode), on: items, in: space?.library)
    request.settings = filterOptions.settings(limits)
    request.workers = .contained
    // A video's edit says how far it is, on a terminal: one line, rewritten.
    let terminal = isatty(STDERR_FILENO) != 0
    if terminal {
      request.videoProgress = { progress in
        writeAll(STDERR_FILENO, Array("\r\(progress.line)\u{1B}[K".utf8))
      }
    }
    let json = json
    let end = try runJob(request, grace: graceOption.grace, command: "edit") { outcome, _ in
      if terminal { writeAll(STDERR_FILENO, Array("\r\u{1B}[K".utf8)) }
      guard let adjustment = outcome.adjustment, outcome.failure == nil else {
        return reportFailure(outcome)
      }
      if json {
        printLine(String(decoding: adjustment.canonicalJSON, as: UTF8.self))
      } else {
        let filters = adjustment.graph.nodes.map(\.text).joined(separator: " | ")
        // A camera RAW's edit is a file of its own, beside it.
        let into = outcome.output.map { $0 == outcome.file ? "" : " into \($0)" } ?? ""
        printLine("\(outcome.file): edited\(into) (version \(adjustment.version): \(filters))")
      }
    }
    try end.check()
  }
}

/// Reads a small input file (graph or adjustment data), `-` for standard input.
func readFile(_ path: String) throws -> [UInt8] {
  path == "-" ? try StandardInput.readAll() : try readWholeFile(path)
}
