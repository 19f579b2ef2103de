import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct ThumbnailsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "thumbnails",
    abstract: "Make the gallery's grid thumbnails a library's cache lacks, newest first.",
    usage: "darkroom thumbnails [<folder>] [--density N ...] [--background | --stop]",
    discussion: prose(
      """
      What `darkroom scan` starts in the background when it is done (and `darkroom
      serve` runs itself), so that the gallery shows real thumbnails, not grey tiles:
      each visible photo's aspect thumbnail at the size the gallery asks for on a screen
      of --density (2: a laptop's or a phone's; a smaller size for another screen is made
      from it in milliseconds). One render at a time, in the sandboxed workers.

      Resumable: what the cache has is not made again, so a pass stopped or killed goes
      on where it was. One pass a library at a time: another finds it busy and ends.
      Ctrl-C or SIGTERM stop it after the photo in hand.

      Examples:
        darkroom thumbnails ~/Photos
        darkroom thumbnails ~/Photos --background     # low priority, detached
        darkroom thumbnails ~/Photos --stop           # stop the one in the background
      """))

  @OptionGroup var place: LibraryFolder

  @Option(help: "Screen densities to make thumbnails for (device pixels a CSS pixel), 1 to 4.")
  var density: [Double] = [2]

  @Option(help: "At most this many photos, newest first.")
  var limit: Int?

  @Option(help: "Seconds the photo in hand gets to finish after Ctrl-C or SIGTERM.")
  var grace: Double = 10

  @Option(help: "none, or json: a line on standard error after each photo.")
  var progress: ProgressMode = .none

  @Flag(help: "Start the pass detached, at the lowest CPU priority, and return at once.")
  var background = false

  @Flag(help: "Stop the pass running in the background for this library.")
  var stop = false

  @Flag(help: .hidden)
  var lowPriority = false

  @Flag(help: "Print the summary as JSON.")
  var json = false

  func validate() throws {
    if density.isEmpty || density.contains(where: { !(1...4).contains($0) }) {
      throw ValidationError("--density takes 1 to 4")
    }
    if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
    if !(0...3600).contains(grace) { throw ValidationError("--grace takes 0 to 3600 seconds") }
    if progress == .bar || progress == .auto {
      throw ValidationError("--progress takes none or json")
    }
    if background && stop { throw ValidationError("--background and --stop go alone") }
  }

  func run() throws {
    let library = try place.library()
    if stop {
      let stopped = library.stopBackgroundThumbnails()
      print(
        stopped.map { "thumbnails: asked the pass in the background (pid \($0)) to stop" }
          ?? "thumbnails: no pass is running in the background for \(library.root.path)")
      return
    }
    if background {
      let pid = try library.startBackgroundThumbnails(densities: density)
      printError(
        "thumbnails: making the gallery's thumbnails in the background (pid \(pid), log \(library.backgroundThumbnailsLog)); darkroom thumbnails --stop stops it\n"
      )
      return
    }
    let stopping = StopFlag()
    let signals = StopSignals.install(grace: grace, stop: { stopping.set() }, abandon: {})
    // Every photo is decoded in a sandboxed worker, as the server's are.
    Containment.useThisProgram(for: .everyFile, idle: 1)
    var options = GridThumbnailOptions()
    options.densities = density
    options.limit = limit
    options.shouldStop = { stopping.isSet }
    let lines = progress == .json
    let summary = try library.runThumbnailPass(lowPriority: lowPriority, options) { state in
      if lines, let line = try? jsonText(state, pretty: false) { printError(line + "\n") }
    }
    for problem in summary.problems { printError("darkroom: \(problem)\n") }
    if json {
      print(try jsonText(summary))
    } else if summary.busy {
      printError("thumbnails: another pass is making this library's thumbnails; nothing done\n")
    } else {
      printError(
        "thumbnails: \(summary.assets) photos: \(summary.made) made, \(summary.had) already cached, \(summary.failed) failed in \(fixed(summary.seconds, 2)) s\(summary.stopped ? "; stopped: run it again to go on" : "")\n"
      )
    }
    if let status = signals.status { throw WorkFailed(status: status) }
  }
}
