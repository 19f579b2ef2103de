import ArgumentParser
import Darkroom
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

struct ApplyCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "apply",
    abstract: "Apply filters to many files, in place or into a mirrored folder.",
    discussion: prose(
      """
      INPUTS are files, folders (walked recursively; images are recognised by their
      content, and videos too unless a filter looks at one photo (auto) or
      --from-xmp takes over another program's edit; hidden files and .darkroom/ are
      skipped) or - for a list of paths on standard input, one a line (-0:
      NUL-separated, as from find -print0).

      Without -o, each file is edited in place, non-destructively, as `darkroom edit
      --replace` does: its edit becomes this graph. With -o DIR, outputs go to DIR
      under their paths relative to the input they came from; DIR becomes a library
      that keeps each output's original, so `darkroom revert` works on the outputs.

      Re-running the same command skips files already carrying this edit of the same
      source (--force redoes them), so a batch that was killed can simply be run
      again. A failing file does not stop the batch (--fail-fast does); each failure
      is one line on standard error, and the exit status is 1. SIGTERM or Ctrl-C
      starts no more files and gives those running --grace seconds (10) to finish;
      then they are abandoned (a second Ctrl-C abandons at once). The summary is
      printed and the exit status is 143 (SIGTERM) or 130 (SIGINT). Nothing
      half-written is left, and running the command again resumes.

      --shard i/n takes a deterministic share of the inputs, by a hash of each
      relative path, whatever order they were listed in: run shards 0..n-1 on n
      machines (a Kubernetes indexed Job, a Slurm array, GNU parallel) and together
      they cover every file once.

      Examples:
        darkroom apply --filter noir photos/
        darkroom apply --filter mono --filter 'crop aspect=1:1' photos/ \\
          -o squares/ --jobs 4
        find photos -name '*.jpg' -print0 |
          darkroom apply -0 - --filter chrome --progress json
        darkroom apply --filter sepia photos/ -o out/ \\
          --shard $JOB_COMPLETION_INDEX/8 --report r.json
      """))

  @Argument(help: "Files, folders, or - for a list on standard input.")
  var inputs: [String]

  @OptionGroup var filterOptions: FilterOptions

  @Option(
    name: [.short, .customLong("output")],
    help: ArgumentHelp("Output folder (mirrors the inputs' paths).", valueName: "dir"))
  var output: String?

  @Flag(name: .customShort("0"), help: "The list on standard input is NUL-separated.")
  var nulSeparated = false

  @Option(
    name: .customLong("jobs"), parsing: .unconditional,
    help: ArgumentHelp("Files processed at once (default: the number of cores).", valueName: "n"))
  var jobsOption: Int?

  /// --jobs, or the number of cores.
  var jobs: Int { jobsOption ?? ProcessorCount.value }

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "libvips threads per file (default: the cores divided by the files at once).",
      valueName: "n")
  )
  var vipsThreads: Int?

  @Option(
    help:
      "auto (a bar when standard error is a terminal), bar, json (a line per file on standard output) or none."
  )
  var progress: ProgressMode = .auto

  @Flag(
    help:
      "Decode in this process, not in sandboxed workers: a crashing decoder then ends the batch.")
  var inProcess = false

  @Flag(help: "Stop at the first failure (running files still finish).")
  var failFast = false

  @Option(
    help: ArgumentHelp(
      "Write every file's status, time, output and hashes to this JSON file.", valueName: "file"))
  var report: String?

  @Flag(help: "Redo files that already carry this edit.")
  var force = false

  @Flag(
    name: .customLong("write-xmp"),
    help: ArgumentHelp(
      "Write each result's edit beside it as an XMP sidecar Lightroom reads (NAME.xmp).",
      discussion:
        "As `darkroom adjustments --xmp` prints it; a sidecar Darkroom did not write is never replaced."
    ))
  var writeXMP = false

  @Option(help: ArgumentHelp("Process only share i of n (0 <= i < n).", valueName: "i/n"))
  var shard: String?

  @OptionGroup var limits: LimitOptions

  @OptionGroup var graceOption: GraceOption

  @OptionGroup var spaceOption: SpaceOption

  @OptionGroup var catalog: CatalogOption

  func validate() throws {
    if writeXMP && spaceOption.folder != nil {
      throw ValidationError("--write-xmp writes files in the clear: not for a space's assets")
    }
    guard jobs >= 1 else {
      throw ValidationError("Expected integer of at least 1 for --jobs but received \(jobs)")
    }
    if let vipsThreads, vipsThreads < 1 {
      throw ValidationError(
        "Expected integer of at least 1 for --vips-threads but received \(vipsThreads)")
    }
    if let shard, Shard(shard) == nil {
      throw ValidationError("Expected i/n with 0 <= i < n for --shard but received \(shard)")
    }
    if inputs.filter({ $0 == "-" }).count > 1 {
      throw ValidationError("Standard input (-) can be read only once")
    }
  }

  func run() throws {
    limits.formats.allow()  // before folders are listed: allowed formats are inputs too
    let (graph, mode) = (
      try filterOptions.graph(near: inputs.first), filterOptions.mode(replace: true)
    )
    let items: JobItems
    let total: Int
    var library: Library?
    var missing: [DarkroomError] = []
    if let (ids, space) = try spaceOption.assets(inputs) {
      // In a space, apply edits the assets (all but the trash, without arguments).
      (items, total, library) = (.assets(ids), ids.count, space)
    } else {
      var arguments = inputs.filter { $0 != "-" }
      if inputs.contains("-") {
        arguments += BatchInputs.parseList(try StandardInput.readAll(), nulSeparated: nulSeparated)
      }
      let collected: [BatchInput]
      let videos = Library.takesVideos(graph, mode: mode)
      (collected, missing) = BatchInputs.collect(arguments, videos: videos)
      missing.forEach(reportError)
      var selected = collected
      if let shard = shard.flatMap(Shard.init) { selected = selected.filter(shard.contains) }
      let files = videos ? "images or videos" : "images"
      if collected.isEmpty && missing.isEmpty {
        printError("apply: no \(files) found in \(arguments.joined(separator: " "))\n")
      } else if selected.isEmpty {
        printError("apply: shard \(shard ?? "") holds none of the \(collected.count) \(files)\n")
      }
      (items, total) = (.files(selected), selected.count)
    }

    var request = JobRequest(
      .edit(graph, mode: mode),
      on: items,
      in: library)
    request.output = output
    request.skipCurrent = !force
    request.jobs = jobs
    request.failFast = failFast
    request.settings = filterOptions.settings(limits)
    request.vipsThreads = vipsThreads
    request.writeXMP = writeXMP
    // Pixel work runs in worker processes: a decoder that crashes or hangs costs one file.
    request.workers = inProcess ? .given : .isolated
    let display = ProgressDisplay(
      mode: progress, total: total, keepOutcomes: report != nil)
    if display.bar { request.videoProgress = { display.encoding($0) } }
    let end = try runJob(
      request, grace: graceOption.grace, command: "apply", progress: display.update)
    let (counts, signal) = (end.counts, end.signal)
    display.finish(counts)
    if let signal {
      printError(
        "apply: stopped by \(signal == 143 ? "SIGTERM" : "SIGINT"); run it again to resume\n")
    }
    if let report {
      let document = BatchReport(
        command: CommandLine.arguments.joined(separator: " "), shard: shard, summary: counts,
        files: display.outcomes)
      do {
        try AtomicFile.write(Array(try jsonText(document).utf8) + [10], to: report)
      } catch {
        reportError(error)
      }
    }
    try end.check(failed: !missing.isEmpty)
  }
}

enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
  case auto, bar, json, none
}

private struct BatchReport: Encodable {
  var command: String
  var shard: String?
  var summary: BatchCounts
  var files: [BatchOutcome]
}

/// Progress on standard error (a bar on a terminal), or JSON lines on standard output, and
/// one line per failure on standard error in every mode.
final class ProgressDisplay: @unchecked Sendable {
  let bar: Bool
  private let json: Bool
  private let total: Int
  private let keepOutcomes: Bool
  // Touched under `lock`: outcomes come from the job's callback, a video's encode from the
  // item's thread.
  private let lock = Mutex(())
  private var keptOutcomes: [BatchOutcome] = []
  private var line = ""
  var outcomes: [BatchOutcome] { lock.withLock { _ in keptOutcomes } }

  init(mode: ProgressMode, total: Int, keepOutcomes: Bool) {
    let terminal = isatty(STDERR_FILENO) != 0
    bar = mode == .bar || (mode == .auto && terminal)
    json = mode == .json
    self.total = total
    self.keepOutcomes = keepOutcomes
  }

  /// A video's encode, after the bar: "clip.mov: 1.3 s of 2.0 s (65%)".
  func encoding(_ progress: EncodeProgress) {
    lock.withLock { _ in
      printError("\r" + line + (line.isEmpty ? "" : "  ") + progress.line + "\u{1B}[K")
    }
  }

  func update(_ outcome: BatchOutcome, _ counts: BatchCounts) {
    lock.withLock { _ in show(outcome, counts) }
  }

  private func show(_ outcome: BatchOutcome, _ counts: BatchCounts) {
    if keepOutcomes { keptOutcomes.append(outcome) }
    if outcome.status == .failed {
      if bar { printError("\r\u{1B}[K") }
      printError(
        "darkroom: \(outcome.failure.map(commandLineText) ?? outcome.error ?? outcome.file)\n")
    }
    if json, let line = try? jsonText(outcome, pretty: false) {
      writeAll(STDOUT_FILENO, Array((line + "\n").utf8))
    }
    if bar {
      let width = 30
      let filled = total == 0 ? width : width * counts.finished / total
      let rate = counts.seconds > 0 ? Double(counts.finished) / counts.seconds : 0
      let left = rate > 0 ? Int(Double(total - counts.finished) / rate) : 0
      line =
        "[\(String(repeating: "#", count: filled))\(String(repeating: "-", count: width - filled))] "
        + "\(counts.finished)/\(total)  \(fixed(rate, 1)) files/s  \(left / 60):\(left % 60 < 10 ? "0" : "")\(left % 60) left"
      printError("\r" + line + "\u{1B}[K")
    }
  }

  func finish(_ counts: BatchCounts) {
    if bar { printError("\r\u{1B}[K") }
    let rate = counts.seconds > 0 ? fixed(Double(counts.done) / counts.seconds, 2) : "0"
    var summary =
      "apply: \(counts.done) done, \(counts.skipped) skipped, \(counts.failed) failed in \(fixed(counts.seconds, 1)) s (\(rate) files/s)"
    if counts.notStarted > 0 { summary += "; stopped with \(counts.notStarted) not started" }
    printError(summary + "\n")
  }
}
