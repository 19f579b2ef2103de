/// What went wrong, for which file: the one error type Darkroom's API throws.
///
/// `description` reads as one line, `FILE: problem`, which is what the CLI prints.
public struct DarkroomError: Error, Sendable, Equatable, CustomStringConvertible {
  /// A machine-readable category, stable across releases (it appears in `--json` output).
  public enum Kind: String, Sendable, Codable {
    case notFound = "not-found"
    case isDirectory = "is-directory"
    case unreadable
    case empty
    case unsupportedFormat = "unsupported-format"
    case truncated
    case corrupt
    case tooLarge = "too-large"
    case timedOut = "timed-out"
    case invalidArgument = "invalid-argument"
    case io
    case engine
  }

  public var kind: Kind
  /// The file the problem is about, when there is one.
  public var file: String?
  /// What happened, without the file name.
  public var message: String

  public init(_ kind: Kind, file: String? = nil, _ message: String) {
    self.kind = kind
    self.file = file
    self.message = message
  }

  public var description: String {
    guard let file else { return message }
    return "\(file): \(message)"
  }

  /// The same error, about `file`.
  func about(_ file: String) -> DarkroomError {
    var copy = self
    copy.file = file
    return copy
  }
}
