import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// The grid's thumbnail pass in a process of its own, for a library no server keeps
/// (``keepThumbnails(yieldingTo:logger:)`` is the server's): started detached by `darkroom
/// scan` and `darkroom thumbnails --background`, stopped by `darkroom thumbnails --stop`. Its
/// process id is kept in `.darkroom/locks/thumbnails.pid` while it runs, its output in
/// `.darkroom/thumbnails.log`; one pass a library at a time (``makeGridThumbnails(_:progress:)``).
extension Library {
  /// Whether the environment turns thumbnails in the background off (`DARKROOM_NO_BACKGROUND`
  /// set to anything but `0`): for scripts and tests that want no process left behind.
  package static var backgroundTurnedOff: Bool {
    guard let value = getenv("DARKROOM_NO_BACKGROUND") else { return false }
    return String(cString: value) != "0"
  }

  /// Where the pass in the background writes its output.
  package var backgroundThumbnailsLog: String { metadataFolder.path + "/thumbnails.log" }

  private var thumbnailPassPID: String { metadataFolder.path + "/locks/thumbnails.pid" }

  /// The process id the record names, if it holds one.
  private var recordedPass: pid_t? {
    (try? String(contentsOfFile: thumbnailPassPID, encoding: .utf8)).flatMap {
      pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
  }

  /// Starts `PROGRAM thumbnails ROOT --low-priority` (this program by default) in a session of
  /// its own, so that a closed terminal does not end it, with its output appended to
  /// ``backgroundThumbnailsLog``; its process id.
  ///
  /// - Throws: `io` naming the program when it cannot be started.
  package func startBackgroundThumbnails(
    densities: [Double] = [2], program: String = Containment.thisProgram()
  ) throws(DarkroomError) -> Int32 {
    try DetachedProcess.start(
      [program, "thumbnails", rootPath, "--low-priority"]
        + densities.flatMap { ["--density", "\($0)"] },
      log: backgroundThumbnailsLog, what: "the thumbnail pass")
  }

  /// After a scan: starts the pass in the background when the scan found new, changed or
  /// moved photos and was not stopped, unless the environment turns it off
  /// (``backgroundTurnedOff``); its process id, or nil when none was started.
  package func startBackgroundThumbnails(after scan: ScanSummary) throws(DarkroomError) -> Int32? {
    guard !scan.stopped, !Self.backgroundTurnedOff, scan.added + scan.changed + scan.moved > 0
    else { return nil }
    return try startBackgroundThumbnails()
  }

  /// Asks the pass running for this library (in the background or not) to stop, with
  /// SIGTERM; its process id, or nil when none runs.
  package func stopBackgroundThumbnails() -> Int32? {
    guard let pid = recordedPass, pid > 0, Self.isThumbnailPass(pid) else { return nil }
    return kill(pid, SIGTERM) == 0 ? pid : nil
  }

  /// ``makeGridThumbnails(_:progress:)`` as the pass's own process runs it: at the lowest
  /// CPU priority when `lowPriority` (the one started in the background), with its process
  /// id recorded while it holds the library so that ``stopBackgroundThumbnails()`` finds it.
  package func runThumbnailPass(
    lowPriority: Bool, _ options: GridThumbnailOptions,
    progress: (@Sendable (GridThumbnailSummary) -> Void)? = nil
  ) throws(DarkroomError) -> GridThumbnailSummary {
    if lowPriority { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19) }
    var options = options
    options.recordsProcess = true
    return try makeGridThumbnails(options, progress: progress)
  }

  /// Runs `body` with this process recorded as the library's pass: called under the pass's
  /// lock, so a second pass, which finds the library busy, never takes the record from the
  /// first. The record is removed after, while it still names this process.
  func recordedAsThePass(_ body: () throws(DarkroomError) -> Void) throws(DarkroomError) {
    let pidFile = thumbnailPassPID
    _ = FileManager.default.createFile(atPath: pidFile, contents: Data("\(getpid())\n".utf8))
    defer { if recordedPass == getpid() { unlink(pidFile) } }
    try body()
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
