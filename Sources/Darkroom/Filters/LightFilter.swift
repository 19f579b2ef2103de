/// The Light group's adjustments that `tone` lacks: brilliance, and the black and white
/// points. One curve on encoded values, in the develop pass.
enum LightFilter: FilterDefinition {
  static let name = "light"
  static let summary = "brilliance, black point (blacks) and white point (whites)"
  static let space = FilterSpace.encoded
  static let since = 2
  static let parameters = [
    FilterParameter(
      "brilliance", .number(-1...1), default: .number(0),
      "brightens the dark tones and holds back the bright ones (+), or the reverse (-)"),
    FilterParameter(
      "whites", .number(-1...1), default: .number(0),
      "the white point: + brings it down to half the range (brighter, clips), - dims whites"),
    FilterParameter(
      "blacks", .number(-1...1), default: .number(0),
      "the black point: - raises it to half the range (deeper, clips), + lifts blacks"),
  ]

  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]? {
    let brilliance = arguments.number("brilliance") ?? 0
    let whites = arguments.number("whites") ?? 0
    let blacks = arguments.number("blacks") ?? 0
    if brilliance == 0 && whites == 0 && blacks == 0 { return [] }
    let n = DevelopStage.curveSamples
    var master = (0..<n).map {
      Float(curve(Double($0) / Double(n - 1), brilliance, whites, blacks))
    }
    // Monotone, whatever the settings: a tone never passes a brighter one.
    for i in 1..<n where master[i] < master[i - 1] { master[i] = master[i - 1] }
    return [.develop([DevelopStage(kind: .curves, table: master + CurveFilter.identityCurves(3))])]
  }

  /// The levels of the black and white points, then brilliance's two bumps (which keep 0
  /// and 1 in place), clamped to 0...1.
  static func curve(_ x: Double, _ brilliance: Double, _ whites: Double, _ blacks: Double)
    -> Double
  {
    let black = -0.5 * blacks
    let white = 1 - 0.5 * whites
    var y = (x - black) / (white - black)
    y = min(1, max(0, y))
    if brilliance != 0 {
      let shadows = 6.75 * y * (1 - y) * (1 - y)  // peaks at 1/3
      let highlights = 6.75 * y * y * (1 - y)  // peaks at 2/3
      y += brilliance * (0.14 * shadows - 0.1 * highlights)
    }
    return min(1, max(0, y))
  }
}
