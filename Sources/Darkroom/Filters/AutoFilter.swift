#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Auto: looks at the photo (its average colour, its histogram, what is clipped) when an
/// edit is made, and writes the filters it chose, with their explicit values, in its place
/// in the adjustment data: `balance`, `tone exposure`, `light whites blacks`, `vibrance`.
/// A replay, a batch or a later edit is then exact, and a user can adjust from there. A
/// photo that needs nothing gets nothing: each correction has a dead zone.
enum AutoFilter: FilterDefinition {
  static let name = "auto"
  static let summary = "chooses white balance, exposure, black and white points and vibrance"
  static let space = FilterSpace.linear
  static let since = 2
  static let streams = false
  static let parameters = [
    FilterParameter(
      "strength", .number(0...1), default: .number(1), "how much of each correction to make")
  ]

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    throw DarkroomError(
      .engine, file: image.source, "auto is chosen when an edit is made, not rendered (a bug)")
  }

  /// The filters Auto chooses for these upright 8-bit RGB pixels (`rgb`: 3 bytes each).
  static func choose(rgb: [UInt8], strength: Double) throws(DarkroomError) -> [FilterNode] {
    let count = rgb.count / 3
    guard count > 0, strength > 0 else { return [] }
    var linear = (0..<count).map { i in
      (0..<3).map { ColourMath.decode(Double(rgb[3 * i + $0]) / 255) }
    }
    // Blown whites (every channel clipped) have lost their colour; a pixel with one channel
    // clipped still leans the way the light does, and counts.
    let unclipped = (0..<count).filter { i in
      !(0..<3).allSatisfy { rgb[3 * i + $0] >= 250 } && luminance(linear[i]) > 0.003
    }
    var nodes: [FilterNode] = []

    // White balance by grey world: the average of what is neither blown nor black,
    // corrected beyond a dead zone (a scene may be a little warm or green by nature).
    if !unclipped.isEmpty {
      var mean = [0.0, 0.0, 0.0]
      for i in unclipped { for c in 0..<3 { mean[c] += linear[i][c] } }
      let cast = ColourMath.chromaticity(ofLinear: mean)
      let offset = (u: cast.u - ColourMath.d65.u, v: cast.v - ColourMath.d65.v)
      let distance = (offset.u * offset.u + offset.v * offset.v).squareRoot()
      // None of a cast under 0.005 in uv (a scene's own leaning), all of one over 0.01,
      // and a ramp between.
      let deadZone = 0.005
      if distance > deadZone {
        let kept = strength * min(1, (distance - deadZone) / deadZone)
        let white = (u: ColourMath.d65.u + offset.u * kept, v: ColourMath.d65.v + offset.v * kept)
        let chosen = BalanceFilter.neutralizing(white: white)
        let kelvin = chosen.kelvin.rounded()
        let tint = (chosen.tint * 1000).rounded() / 1000
        if kelvin != 6500 || tint != 0 {
          nodes.append(
            try FilterNode(
              BalanceFilter.name, ["temperature": .number(kelvin), "tint": .number(tint)]))
          let m = BalanceFilter.matrix(kelvin, tint)
          linear = linear.map { ColourMath.apply(m, $0) }
        }
      }
    }

    // Exposure: the median luminance towards mid-grey (18%), beyond 0.7 stops.
    let sorted = linear.map(luminance).sorted()
    let median = max(1e-4, sorted[sorted.count / 2])
    let stops = log2(0.18 / median)
    let deadStops = 0.7
    if abs(stops) > deadStops {
      let exposure =
        (min(3, max(-3, (abs(stops) - deadStops) * (stops < 0 ? -1 : 1))) * strength * 100)
        .rounded() / 100
      if exposure != 0 {
        nodes.append(try FilterNode(ToneFilter.name, ["exposure": .number(exposure)]))
        let gain = pow(2, exposure)
        linear = linear.map { $0.map { min(1, $0 * gain) } }
      }
    }

    // Black and white points: the 2nd and 98th percentiles of the encoded luminance moved
    // near the ends when the tones span less than 85% of the range.
    let encoded = linear.map { ColourMath.encode(min(1, max(0, luminance($0)))) }.sorted()
    let low = encoded[Int(Double(encoded.count - 1) * 0.02)]
    let high = encoded[Int(Double(encoded.count - 1) * 0.98)]
    if high - low < 0.85 {
      var params: [String: FilterValue] = [:]
      if high < 0.94 {
        let whites = min(1, max(0, (1 - (high + 0.02)) / 0.5)) * strength
        params["whites"] = .number((whites * 1000).rounded() / 1000)
      }
      if low > 0.06 {
        let blacks = -min(1, max(0, (low - 0.02) / 0.5)) * strength
        params["blacks"] = .number((blacks * 1000).rounded() / 1000)
      }
      if !params.isEmpty { nodes.append(try FilterNode(LightFilter.name, params)) }
    }

    // Vibrance for a dull photo: its median chroma (Oklab) under 0.03.
    let chroma = linear.map { c -> Double in
      let lab = ColourMath.oklab(linear: c)
      return (lab[1] * lab[1] + lab[2] * lab[2]).squareRoot()
    }.sorted()
    let dull = chroma[chroma.count / 2]
    if dull < 0.03 {
      let amount = (min(0.3, (0.03 - dull) * 10) * strength * 100).rounded() / 100
      if amount > 0 {
        nodes.append(try FilterNode(VibranceFilter.name, ["amount": .number(amount)]))
      }
    }
    return nodes
  }

  private static func luminance(_ c: [Double]) -> Double {
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
  }
}
