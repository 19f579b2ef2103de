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
      let stopped = BackgroundThumbnails.stop(library)
      print(
        stopped.map { "thumbnails: asked the pass in the background (pid \($0)) to stop" }
          ?? "thumbnails: no pass is running in the background for \(library.root.path)")
      return
    }
    if background {
      let pid = try BackgroundThumbnails.start(library, densities: density)
      printError(
        "thumbnails: making the gallery's thumbnails in the background (pid \(pid), log \(BackgroundThumbnails.logPath(library))); darkroom thumbnails --stop stops it\n"
      )
      return
    }
    if lowPriority { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19) }
    BackgroundThumbnails.recordPID(library)
    defer { BackgroundThumbnails.forgetPID(library) }
    let stopping = StopFlag()
    let signals = StopSignals.install(grace: grace, stop: { stopping.set() }, abandon: {})
    // Every photo is decoded in a sandboxed worker, as the server's are.
    Containment.useThisProgram(for: .everyFile, idle: 1)
    var options = GridThumbnailOptions()
    options.densities = density
    options.limit = limit
    options.shouldStop = { stopping.isSet }
    let lines = progress == .json
    let summary = try library.makeGridThumbnails(options) { state in
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

/// Whether the environment turns thumbnails in the background off (`DARKROOM_NO_BACKGROUND`
/// set to anything but `0`): for scripts and tests that want no process left behind.
var backgroundTurnedOff: Bool {
  guard let value = getenv("DARKROOM_NO_BACKGROUND") else { return false }
  return String(cString: value) != "0"
}

/// The pass in the background: started detached by `scan` and `thumbnails --background`,
/// stopped by `thumbnails --stop`. Its process id is kept in `.darkroom/locks/thumbnails.pid`
/// while it runs, its output in `.darkroom/thumbnails.log`.
enum BackgroundThumbnails {
  static func logPath(_ library: Library) -> String {
    library.metadataFolder.path + "/thumbnails.log"
  }

  private static func pidPath(_ library: Library) -> String {
    library.metadataFolder.path + "/locks/thumbnails.pid"
  }

  /// Starts `darkroom thumbnails ROOT --low-priority` in a session of its own (a closed
  /// terminal does not end it), its output appended to the log; its process id.
  static func start(_ library: Library, densities: [Double] = [2]) throws -> pid_t {
    let program = Containment.thisProgram()
    let log = logPath(library)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
      &actions, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // POSIX_SPAWN_SETSID (glibc 2.26; a `_GNU_SOURCE` macro, not exported to Swift).
    posix_spawnattr_setflags(&attributes, 0x80)
    let arguments =
      [program, "thumbnails", library.root.path, "--low-priority"]
      + densities.flatMap { ["--density", "\($0)"] }
    var pointers = arguments.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, program, &actions, &attributes, pointers, environ)
    guard status == 0 else {
      throw DarkroomError(
        .io, file: program, "cannot start the thumbnail pass: \(String(cString: strerror(status)))")
    }
    return pid
  }

  /// Asks the running pass to stop (SIGTERM); its process id, or nil when none runs.
  static func stop(_ library: Library) -> pid_t? {
    guard let text = try? String(contentsOfFile: pidPath(library), encoding: .utf8),
      let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
      isThumbnailPass(pid)
    else { return nil }
    return kill(pid, SIGTERM) == 0 ? pid : nil
  }

  static func recordPID(_ library: Library) {
    _ = FileManager.default.createFile(
      atPath: pidPath(library), contents: Data("\(getpid())\n".utf8))
  }

  static func forgetPID(_ library: Library) {
    guard let text = try? String(contentsOfFile: pidPath(library), encoding: .utf8),
      pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) == getpid()
    else { return }
    unlink(pidPath(library))
  }

  /// Whether `pid` is a `darkroom thumbnails` process (not one that took a dead pass's id).
  private static func isThumbnailPass(_ pid: pid_t) -> Bool {
    guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else {
      return false
    }
    let words = bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    return words.count > 1 && words[1] == "thumbnails"
  }
}
