/// Where an image's bytes come from: a file, or memory (standard input, an upload).
public enum ImageSource: Sendable {
  case file(String)
  /// Bytes in memory, with a name for messages (`-` for standard input).
  case data([UInt8], name: String)

  /// The name errors and outputs use.
  public var name: String {
    switch self {
    case .file(let path): path
    case .data(_, let name): name
    }
  }
}
