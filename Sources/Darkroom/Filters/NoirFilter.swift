/// Black and white with a film-like contrast curve, in the spirit of Core Image's
/// CIPhotoEffectNoir: Rec. 709 luminance, then an S-curve, blended by `intensity`.
enum NoirFilter: FilterDefinition {
  static let name = "noir"
  static let space = FilterSpace.encoded
  static let summary = "black and white with a film-like contrast curve"
  static let parameters = [
    FilterParameter(
      "intensity", .number(0...1), default: .number(1),
      "how far towards noir (0 leaves the image as it is)")
  ]

  /// Rec. 709 luma weights, applied to the encoded values as most photo tools do.
  static let luma = [0.2126, 0.7152, 0.0722]

  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]? {
    let intensity = arguments.number("intensity") ?? 1
    if intensity == 0 { return [] }
    // Fully noir, every band is the luminance: one grey band carries it.
    if intensity == 1 { return [.grey(luma), .table(curve(intensity: 1))] }
    // Each output band: (1 - i) * itself + i * luminance.
    var matrix = [Double](repeating: 0, count: 9)
    for row in 0..<3 {
      for column in 0..<3 {
        matrix[row * 3 + column] = intensity * luma[column] + (row == column ? 1 - intensity : 0)
      }
    }
    return [.matrix(matrix), .table(curve(intensity: intensity))]
  }

  /// A smooth S-curve (deeper shadows, brighter highlights), blended with the identity.
  static func curve(intensity: Double) -> [UInt8] {
    (0..<256).map { level in
      let x = Double(level) / 255
      let s = x < 0.5 ? 2 * x * x : 1 - 2 * (1 - x) * (1 - x)  // smoothstep-like
      let y = (1 - intensity) * x + intensity * (0.35 * x + 0.65 * s)
      return UInt8(clamping: Int((y * 255).rounded()))
    }
  }
}
