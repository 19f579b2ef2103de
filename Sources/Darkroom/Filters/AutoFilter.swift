#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Auto: looks at the photo (its near-neutral surfaces, its histogram, what is clipped) when
/// an edit is made, and writes the filters it chose, with their explicit values, in its
/// place in the adjustment data: `balance`, `tone exposure`, `light whites blacks`,
/// `vibrance`. A replay, a batch or a later edit is then exact, and a user can adjust from
/// there. A photo that needs nothing gets nothing: each correction has a dead zone, and a
/// photo's own colour (a blue sky, a forest, a sunset) is not taken for a cast of the light.
/// Benchmarks/auto.sh measures it on real photos.
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
    var nodes: [FilterNode] = []

    // White balance from the photo's own greys: the densest cluster of near-neutral
    // colours (a white wall, clouds, stone, grey shadows under a cast), not the average of
    // everything, which a blue sky, a forest or a sunset pulls to its own colour.
    if let white = neutralCluster(rgb: rgb, linear: linear) {
      let offset = (u: white.u - ColourMath.d65.u, v: white.v - ColourMath.d65.v)
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

    // Exposure, up when the highlights leave headroom unused (the 99th percentile of
    // luminance under 80%) and the median is under mid-grey (18%), by the smaller of the
    // two: a dark scene whose highlights reach white (a forest, a night) is left as it is.
    // Down, by at most 2 stops, when the median is over mid-grey and a twentieth of the
    // photo is blown (every channel clipped; a bright snowy or misty photo with a channel
    // clipped here and there is left as it is).
    let sorted = linear.map(luminance).sorted()
    let median = max(1e-4, sorted[sorted.count / 2])
    let highlight = max(1e-4, sorted[Int(Double(sorted.count - 1) * 0.99)])
    let clipped =
      Double((0..<count).filter { isBlown(rgb, $0) }.count)
      / Double(count)
    var stops = 0.0
    let up = min(log2(0.8 / highlight), log2(0.18 / median))
    let down = log2(0.18 / median)
    // (An image all but black has no highlights to read, one all but blown no midtones.)
    if up > 0 && highlight > 0.002 {
      stops = up
    } else if down < 0 && clipped > 0.05 && clipped < 0.9 {
      stops = max(-2, down)
    }
    // None under half a stop, all of it over 0.8, and a ramp between.
    let ramp = min(1, max(0, (abs(stops) - 0.5) / 0.3))
    let exposure = (min(3, max(-3, stops)) * ramp * strength * 100).rounded() / 100
    if exposure != 0 {
      nodes.append(try FilterNode(ToneFilter.name, ["exposure": .number(exposure)]))
      let gain = pow(2, exposure)
      linear = linear.map { $0.map { min(1, $0 * gain) } }
    }

    // Black and white points: when the 2nd to 98th percentiles of the encoded luminance
    // span less than 80% of the range, the levels that stretch them to 85%, the room left
    // shared between the ends as it was (a misty photo stays light, a night dark).
    let encoded = linear.map { ColourMath.encode(min(1, max(0, luminance($0)))) }.sorted()
    let low = encoded[Int(Double(encoded.count - 1) * 0.02)]
    let high = encoded[Int(Double(encoded.count - 1) * 0.98)]
    let span = high - low
    if span < 0.8 && span > 0.01 {
      // All of the stretch under a span of 0.75, none at 0.8, and a ramp between.
      let ramp = min(1, (0.8 - span) / 0.05)
      let target = span + (0.85 - span) * strength * ramp
      let below = low * (1 - target) / (1 - span)
      let width = span / target
      let planned = low - below * width
      // The black point stays under half of the darkest channel's 1st percentile (a level
      // near a coloured shadow's weakest channel empties it and turns the shadow's hue);
      // the white point takes the rest of the stretch, down to the 98th percentile (the
      // brightest 2% may clip), and the stretch falls short of 85% only past that.
      let floor =
        (0..<3).map { c in
          linear.map { ColourMath.encode(min(1, max(0, $0[c]))) }.sorted()[(count - 1) / 100]
        }.min() ?? 0
      let black = min(0.5, max(-0.5, min(floor / 2, planned)))
      let white = min(1.5, max(0.5, black + width, high))
      var params: [String: FilterValue] = [:]
      let whites = ((2 * (1 - white)) * 1000).rounded() / 1000
      let blacks = ((-2 * black) * 1000).rounded() / 1000
      if whites != 0 { params["whites"] = .number(whites) }
      if blacks != 0 { params["blacks"] = .number(blacks) }
      if !params.isEmpty { nodes.append(try FilterNode(LightFilter.name, params)) }
    }

    // Vibrance for a dull photo: its median chroma (Oklab) under 0.03.
    let chroma = linear.map { c -> Double in
      let lab = ColourMath.oklab(linear: c)
      return (lab[1] * lab[1] + lab[2] * lab[2]).squareRoot()
    }.sorted()
    let dull = chroma[chroma.count / 2]
    // A black-and-white photo (its 95th percentile of chroma under 0.01) has no colour to
    // bring out.
    let monochrome = chroma[Int(Double(chroma.count - 1) * 0.95)] < 0.01
    if dull < 0.03 && !monochrome {
      let amount = (min(0.3, (0.03 - dull) * 10) * strength * 100).rounded() / 100
      if amount > 0 {
        nodes.append(try FilterNode(VibranceFilter.name, ["amount": .number(amount)]))
      }
    }
    return nodes
  }

  /// The white of the photo's near-neutral surfaces, as a light's chromaticity (CIE 1960
  /// uv), or nil when it shows none that Auto can trust (``AutoWhite``).
  ///
  /// The pixels neither dark (noise) nor blown (every channel clipped; a white with one
  /// channel clipped still leans the way the light does) are counted, each weighted by the
  /// square root of its luminance, in a histogram of chromaticity inside an ellipse about
  /// D65, long along the daylight locus (0.05 towards warm and cool light, 0.028 across,
  /// towards green and magenta), smoothed by a Gaussian of 1.5 bins. Its highest peak is
  /// the white when it lies in the ellipse's inner 60% (a peak further out is the edge of
  /// a coloured scene's spread, not a grey under a cast), at least 5% of the weight lies
  /// within 0.01 of it (the white is their weighted mean), and that white leans the way
  /// the photo's average colour does, within 60 degrees and at least half as far: a cast
  /// of the light moves both, while a surface that only looks grey (the wood of a pier in
  /// a blue scene, a blue sky under warm light) leans apart. When most of that cluster is
  /// whites with a channel cut (which understate the light), the same search without them
  /// is taken if it lies further out the same way.
  ///
  /// Where that search trusts nothing, a second one reaches further towards warm light (to
  /// 0.055 along the axis, about 3300 K under a daylight setting), with a larger share of
  /// the weight asked the further out its peak lies and the unclipped pixels' average
  /// leaning the same way: a cast moves everything, an autumn scene or a yellow wall leans
  /// alone. Cool casts are corrected to about 11,000 K and green or magenta ones to 0.017
  /// across; a stronger cast (tungsten at 2700 to 3000 K) is left for `balance` by hand.
  static func neutralCluster(rgb: [UInt8], linear: [[Double]]) -> (u: Double, v: Double)? {
    AutoWhite(rgb: rgb, linear: linear).white()
  }

  /// Whether pixel `i` is blown: every channel clipped (a white with one channel clipped
  /// still leans the way the light does).
  static func isBlown(_ rgb: [UInt8], _ i: Int) -> Bool {
    (0..<3).allSatisfy { rgb[3 * i + $0] >= 250 }
  }

  /// Rec. 709 luminance of a linear colour.
  static func luminance(_ c: [Double]) -> Double {
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
  }
}
