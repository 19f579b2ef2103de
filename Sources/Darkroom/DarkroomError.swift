/// What went wrong, for which file: the one error type Darkroom's API throws.
///
/// `description` reads as one line, `FILE: problem`, which is what the CLI prints.
///
/// Darkroom's throwing functions declare `throws(DarkroomError)`, so in a `do` block whose
/// calls all throw it, `catch` receives a `DarkroomError`. (`Codable` conformances and the
/// stream of ``Library/changes(of:every:)`` are declared untyped.) Branch on ``kind``, which
/// is stable across releases, rather than on ``message``, whose wording may change:
///
/// ```swift
/// do {
///   let screen = try await library.image(for: id, RenditionSpec(.fullscreen))
///   print(screen.width, screen.height)
/// } catch {
///   switch error.kind {
///   case .notFound, .isDirectory, .unreadable: print("cannot open:", error)
///   case .empty, .truncated, .corrupt, .unsupportedFormat: print("not an image:", error)
///   default: print(error)  // "IMG_0001.jpg: ..."
///   }
/// }
/// ```
///
/// A `DarkroomError` is a `Sendable` value: it can cross tasks and threads freely.
public struct DarkroomError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
  /// A machine-readable category, stable across releases (it appears in `--json` output).
  public enum Kind: String, Sendable, Codable {
    /// No such file; or a library has lost an edited file's original, or the adjustment data
    /// of the version asked for.
    case notFound = "not-found"
    /// A folder was given where an image file was expected.
    case isDirectory = "is-directory"
    /// The file exists, but this process may not read it.
    case unreadable
    /// The file or the bytes in memory are empty (0 bytes).
    case empty
    /// Not an image in a format Darkroom reads (or not a regular file), a format that is not
    /// trusted and was not allowed (see `TrustedFormats`), or a format an edit cannot be
    /// written in.
    case unsupportedFormat = "unsupported-format"
    /// A JPEG or PNG cut short: it ends inside its header or has no end marker. (A file cut
    /// short in a format libvips reads for Darkroom, or in its pixel data, fails as ``engine``.)
    case truncated
    /// Damaged data: a JPEG or PNG header that makes no sense, a library's copy of an original
    /// whose SHA-256 no longer matches, or adjustment data that names no valid original.
    case corrupt
    /// The image has more pixels than `Renderer.maxPixels` allows.
    case tooLarge = "too-large"
    /// The pixel work ran longer than `Renderer.timeLimit` and was stopped.
    case timedOut = "timed-out"
    /// An argument Darkroom cannot use: an unknown filter or parameter, a value out of range,
    /// a filter graph or adjustment data that is not valid (or is newer than this build reads),
    /// or a version of an edit that does not exist.
    case invalidArgument = "invalid-argument"
    /// Reading or writing failed: a full disk, a read-only or missing folder, an I/O error.
    case io
    /// libvips failed (pixel data it cannot decode, say) or lacks what the work needs (a
    /// loader, lcms, libexif; see `LibvipsCapabilities`); also an old version of an edit that
    /// no longer renders to the bytes it had.
    case engine
    /// Too much work is waiting already (a server's render queue is full): try again soon.
    case busy
    /// The asset is not in a state that allows it now: in the trash (restore it first).
    case conflict
  }

  /// What kind of problem this is: branch on it, not on ``message``.
  public var kind: Kind
  /// The file the problem is about, when there is one.
  public var file: String?
  /// What happened, without the file name.
  public var message: String
  /// What the caller can do about it, when there is something: a command line turns it into
  /// its own flag (the engine's messages name no flags).
  public var remedy: Remedy?

  /// Ways out of an error that the caller controls.
  public enum Remedy: Sendable, Equatable, Codable {
    /// The file's format is outside `TrustedFormats.trusted`; `TrustedFormats.allow(_:)`
    /// with this name lets it through.
    case allowFormat(String)
  }

  /// Creates an error of `kind`, about `file` when there is one.
  ///
  /// - Parameters:
  ///   - kind: The category of the problem.
  ///   - file: The file it is about, or nil.
  ///   - message: What happened, without the file name (``description`` adds it).
  public init(_ kind: Kind, file: String? = nil, _ message: String) {
    self.kind = kind
    self.file = file
    self.message = message
  }

  /// The same error, with a remedy.
  public func with(_ remedy: Remedy) -> DarkroomError {
    var copy = self
    copy.remedy = remedy
    return copy
  }

  /// The error in one line: `FILE: message`, or the message alone when no file is known.
  public var description: String {
    guard let file else { return message }
    return "\(file): \(message)"
  }

  /// A file whose work ran past its time limit, in every path's words (a worker killed, the
  /// watchdog, a process's deadline).
  public static func timedOut(_ file: String?, after limit: Duration) -> DarkroomError {
    let seconds =
      Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
    let text = seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    return DarkroomError(
      .timedOut, file: file, "stopped after \(text): the decoder took longer than the time limit")
  }

  /// An encode (a video's edit) stopped by whoever asked for it (a job's stop, a task's
  /// cancellation, a space's lock), before it began or at a progress report.
  static func stopped(_ file: String?) -> DarkroomError {
    DarkroomError(.engine, file: file, "stopped: asked to stop before the encode ended")
  }

  /// The same error, about `file`.
  func about(_ file: String) -> DarkroomError {
    var copy = self
    copy.file = file
    return copy
  }
}

extension DarkroomError {
  /// A file added that does not read as a photo or video, in the words every door says it
  /// (a folder's upload and import, a space's add): `error`, the reader's, kept as the reason.
  static func notAPhoto(_ error: DarkroomError, name: String) -> DarkroomError {
    guard [.corrupt, .unsupportedFormat, .truncated].contains(error.kind) else { return error }
    return DarkroomError(
      .unsupportedFormat, file: name, "is not a photo or video Darkroom reads (\(error.message))")
  }
}
