/// White balance: the colour of the light a photo was taken in, corrected by Bradford
/// adaptation in linear light (as Lightroom's Temperature and Tint, and darktable's
/// `temperature`, correct it). The photo as it is counts as balanced for 6500 K.
enum BalanceFilter: FilterDefinition {
  static let name = "balance"
  static let summary = "white balance: the light's colour temperature and tint, corrected"
  static let space = FilterSpace.linear
  static let since = 2
  static let parameters = [
    FilterParameter(
      "temperature", .number(2000...25000), default: .number(6500),
      "kelvin of the light to correct for: 6500 changes nothing, lower cools, higher warms"),
    FilterParameter(
      "tint", .number(-1...1), default: .number(0),
      "green light to correct for: + adds magenta, - adds green"),
  ]

  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]? {
    let kelvin = arguments.number("temperature") ?? 6500
    let tint = arguments.number("tint") ?? 0
    if kelvin == 6500 && tint == 0 { return [] }
    return [.develop([DevelopStage(kind: .linearMatrix, numbers: matrix(kelvin, tint))])]
  }

  /// The linear-sRGB matrix that makes the light `kelvin`, `tint` neutral.
  static func matrix(_ kelvin: Double, _ tint: Double) -> [Double] {
    ColourMath.adaptation(from: ColourMath.lightWhite(kelvin: kelvin, tint: tint))
  }

  /// The temperature and tint whose correction makes a colour of this linear-sRGB average
  /// neutral (a grey card's, or a photo's average for grey world): the light whose white
  /// is its chromaticity, searched in mireds and tint, clamped to the ranges.
  static func neutralizing(linear rgb: [Double]) -> (kelvin: Double, tint: Double) {
    neutralizing(white: ColourMath.chromaticity(ofLinear: rgb))
  }

  /// The temperature and tint of the light whose white is `target` (uv).
  static func neutralizing(white target: (u: Double, v: Double)) -> (kelvin: Double, tint: Double) {
    func miss(_ mired: Double, _ tint: Double) -> Double {
      let white = ColourMath.lightWhite(kelvin: 1e6 / mired, tint: tint)
      let (du, dv) = (white.u - target.u, white.v - target.v)
      return du * du + dv * dv
    }
    // A coarse grid, then halving steps around the best.
    var best = (mired: 1e6 / 6500, tint: 0.0)
    var bestMiss = miss(best.mired, best.tint)
    for mired in stride(from: 40.0, through: 500, by: 10) {
      for tint in stride(from: -1.0, through: 1, by: 0.1) where miss(mired, tint) < bestMiss {
        best = (mired, tint)
        bestMiss = miss(mired, tint)
      }
    }
    var step = (mired: 5.0, tint: 0.05)
    for _ in 0..<40 {
      var moved = false
      for (dm, dt) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
        let candidate = (
          mired: min(500, max(40, best.mired + dm * step.mired)),
          tint: min(1, max(-1, best.tint + dt * step.tint))
        )
        let m = miss(candidate.mired, candidate.tint)
        if m < bestMiss {
          best = candidate
          bestMiss = m
          moved = true
        }
      }
      if !moved { step = (step.mired / 2, step.tint / 2) }
    }
    return (min(25000, max(2000, 1e6 / best.mired)), best.tint)
  }
}
