/// How much damage a decoder accepts before it gives up, libvips' own levels: `none` renders
/// whatever can be decoded (grey where data is missing), `truncated` stops at a file cut
/// short, `error` (Darkroom's default) also at corrupt data, `warning` at anything a decoder
/// complains about. `error` is the default because a truncated or corrupt photo rendered
/// with a grey band looks like a success and spreads; minor warnings (extra bytes after the
/// image) are common in real cameras' files and are not refused.
package enum FailOn: String, Sendable, Codable, CaseIterable {
  /// The levels, from the most lenient to the strictest (see ``FailOn``). `FailOn` is a
  /// `Sendable` value type.
  case none, truncated, error, warning

  /// libvips' VipsFailOn value.
  var vipsValue: Int32 {
    switch self {
    case .none: 0
    case .truncated: 1
    case .error: 2
    case .warning: 3
    }
  }
}
