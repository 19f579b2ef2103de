/// What is wrong with an asset's file, as the scan found it: a photo cut short by an
/// interrupted copy, a header that makes no sense, a video whose boxes run past its end.
///
/// Such a file is still an asset (PhotoKit's library shows every file it holds): it is in
/// the timeline and its folder, shown with what can be decoded (the top of a JPEG cut
/// short) or a placeholder that says ``problem``, listed in the Problems album
/// (`smart:problems`, `list --damaged`) and reported by ``Library/check(searching:repair:)``.
/// `AssetDamage` is a `Sendable` value type.
package struct AssetDamage: Sendable, Equatable, Codable {
  /// What kind of damage: `truncated`, `corrupt`, `empty`, `unsupported-format` (a form of
  /// its format no decoder here reads) or `too-large` (more pixels than the library renders),
  /// as ``DarkroomError/Kind`` names them.
  package var kind: DarkroomError.Kind
  /// What the reader said, for logs and `info` (decoder's words; not for a gallery's cell).
  package var detail: String
  /// Whether the file is a video's (the sentence names a video, not a photo).
  var isVideo = false

  /// The kinds of error that say something about the file itself, not about the machine
  /// reading it: a file that fails with one of them is damaged; any other failure (a worker
  /// that died, a read error, a time limit) is tried again by the next scan.
  package static let kinds: Set<DarkroomError.Kind> = [
    .empty, .truncated, .corrupt, .unsupportedFormat, .tooLarge,
  ]

  /// The damage an error describes, or nil for an error that says nothing of the file.
  package init?(_ error: DarkroomError, video: Bool = false) {
    guard Self.kinds.contains(error.kind) else { return nil }
    (kind, detail, isVideo) = (error.kind, error.message, video)
  }

  init(kind: DarkroomError.Kind, detail: String, video: Bool) {
    (self.kind, self.detail, isVideo) = (kind, detail, video)
  }

  /// One short sentence for people: "This photo's file is cut short".
  package var problem: String { Self.problem(kind, video: isVideo) }

  /// The sentence for a file that fails with `kind` (a render's error too): about a photo's
  /// or a video's file, or (nil) a file of either.
  package static func problem(_ kind: DarkroomError.Kind, video: Bool? = false) -> String {
    let (noun, file) =
      switch video {
      case false?: ("photo", "This photo's file")
      case true?: ("video", "This video's file")
      case nil: ("file", "This file")
      }
    return switch kind {
    case .truncated: "\(file) is cut short"
    case .corrupt: "\(file) is damaged"
    case .empty: "\(file) is empty"
    case .unsupportedFormat: "\(file) is in a form Darkroom cannot read"
    case .tooLarge: "This \(noun) is larger than this library shows"
    case .timedOut: "This \(noun) took too long to decode"
    case .unreadable: "\(file) cannot be read"
    default: "\(file) cannot be decoded"
    }
  }

  enum CodingKeys: String, CodingKey { case kind, detail, problem }

  /// Reads `kind` and `detail` (a photo's damage: ``Asset`` says which its file is).
  package init(from decoder: Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    kind = try container.decode(DarkroomError.Kind.self, forKey: .kind)
    detail = try container.decode(String.self, forKey: .detail)
  }

  /// `kind`, `detail` and `problem` (the sentence), as the API and `--json` show it.
  package func encode(to encoder: Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(kind, forKey: .kind)
    try container.encode(detail, forKey: .detail)
    try container.encode(problem, forKey: .problem)
  }
}
