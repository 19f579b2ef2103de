import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct ScanCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "scan",
    abstract: "Catalog the photos and videos of a library folder (incremental).",
    usage: "darkroom scan [<folder>] [--jobs <n>] [--json] [<options>]",
    discussion: prose(
      """
      Makes DIR a library (DIR/.darkroom/) if it is in none, then brings the catalog
      (.darkroom/catalog.sqlite) up to date: new and changed files are read once
      (hashed, header described), unchanged ones (same inode, size and times) are
      not opened. A renamed or moved file keeps its asset id. Files gone from a
      folder leave the catalog; a folder that is missing or empty (an unmounted
      disk) leaves its assets offline instead, until their files are back
      (--forget-offline drops them).

      Ctrl-C or SIGTERM stop it between batches of files; what was written stays,
      and the next scan goes on from there.

      Examples:
        darkroom scan ~/Photos
        darkroom scan ~/Photos/2024 --progress json
      """))

  @OptionGroup var place: LibraryFolder

  /// The library's folder, or a folder inside it.
  var folder: String { place.path }

  @Option(help: "Files read at once (default: one per core).")
  var jobs: Int?

  @Flag(
    help: "Remove assets whose folder is gone from the catalog, instead of keeping them offline.")
  var forgetOffline = false

  @Option(
    help:
      "auto (a bar when standard error is a terminal), bar, json (lines on standard error) or none."
  )
  var progress: ProgressMode = .auto

  @Flag(help: "Print the summary as JSON.")
  var json = false

  @Flag(
    help:
      "Start no thumbnail pass in the background when done (started by default when photos came or changed; also DARKROOM_NO_BACKGROUND=1)."
  )
  var noBackground = false

  @Option(help: .hidden)
  var batchSize: Int?

  func validate() throws {
    if let batchSize, batchSize < 1 { throw ValidationError("--batch-size must be 1 or more") }
    if let jobs, jobs < 1 { throw ValidationError("--jobs must be 1 or more, not \(jobs)") }
  }

  func run() throws {
    var isFolder = false
    let exists = FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder)
    if exists && !isFolder {
      throw DarkroomError(.invalidArgument, file: folder, "is a file; scan takes a folder")
    }
    let library: Library
    if let found = Library.containing(folder) {
      library = found
    } else if exists {
      library = try Library.create(at: folder)
    } else {
      throw DarkroomError(.notFound, file: folder, "no such folder")
    }
    let stopping = StopFlag()
    let signals = StopSignals.install(
      grace: 0, cutOff: false, stop: { stopping.set() }, abandon: {})
    var options = ScanOptions()
    if let jobs { options.jobs = jobs }
    // Headers are read here (formats outside the trusted list in workers, as in every
    // command): a worker's round trip per file made a first scan 1.4x slower (README).
    options.forgetOffline = forgetOffline
    if let batchSize { options.batchSize = batchSize }
    options.shouldStop = { stopping.isSet }
    let terminal = isatty(STDERR_FILENO) != 0
    let bar = progress == .bar || (progress == .auto && terminal)
    let lines = progress == .json
    let summary = try library.scanBlocking(folder, options: options) { state in
      if lines, let line = try? jsonText(state, pretty: false) { printError(line + "\n") }
      if bar {
        let megabytes = fixed(Double(state.bytesRead) / 1_048_576, 0)
        printError(
          "\r\u{1B}[Kscan: \(state.found) files found, \(state.read)/\(state.toRead) read (\(megabytes) MB)"
        )
      }
    }
    if bar { printError("\r\u{1B}[K") }
    for problem in summary.problems { printError("darkroom: \(problem)\n") }
    if json {
      print(try jsonText(summary))
    } else {
      var parts = [
        "\(summary.added) added", "\(summary.changed) changed", "\(summary.moved) moved",
        "\(summary.removed) removed", "\(summary.unchanged) unchanged",
      ]
      if summary.offline > 0 { parts.append("\(summary.offline) offline") }
      if summary.online > 0 { parts.append("\(summary.online) back online") }
      if summary.liveVideos > 0 {
        parts.append("\(summary.liveVideos) Live Photo video\(summary.liveVideos == 1 ? "" : "s")")
      }
      if summary.skipped > 0 { parts.append("\(summary.skipped) not photos or videos") }
      if summary.damaged > 0 {
        parts.append("\(summary.damaged) damaged (darkroom list --damaged)")
      }
      if !summary.problems.isEmpty { parts.append("\(summary.problems.count) unreadable") }
      printError(
        "scan: \(summary.files) files in \(library.root.path): \(parts.joined(separator: ", ")) in \(fixed(summary.seconds, 2)) s\n"
      )
    }
    if summary.stopped {
      printError("scan: stopped; run it again to go on\n")
    } else if !noBackground {
      // The gallery's thumbnails, made at the lowest priority while the user goes on.
      do {
        if let pid = try library.startBackgroundThumbnails(after: summary), !json {
          printError(
            "scan: making the gallery's thumbnails in the background (pid \(pid)); darkroom thumbnails --stop stops it\n"
          )
        }
      } catch {
        printError("darkroom: \(error)\n")
      }
    }
    if let status = signals.status { throw WorkFailed(status: status) }
    if !summary.problems.isEmpty { throw WorkFailed() }
  }
}
