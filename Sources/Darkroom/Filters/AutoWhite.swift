#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The colour of the light, as Auto reads it from a photo's near-neutral surfaces: the
/// densest cluster of colours near the daylight axis, trusted only where a cast of the light
/// and not the scene's own colour can have put it (``AutoFilter/neutralCluster(rgb:linear:)``
/// says how).
struct AutoWhite {
  /// A counted pixel (neither dark nor blown): its chromaticity's offset from D65 (CIE 1960
  /// uv), its weight (the square root of its luminance), and whether it is a white with a
  /// channel cut (one at 240 or more, none under 128), which understates the light's colour.
  private struct Point {
    let du: Double
    let dv: Double
    let weight: Double
    let clippedWhite: Bool
  }

  private let points: [Point]
  /// How the average colour of every pixel leans from D65, and that of the pixels with no
  /// channel at 240 or more.
  private let leaning: (u: Double, v: Double)
  private let unclippedLeaning: (u: Double, v: Double)

  /// From D65 towards the locus's 3000 K: the axis of the casts of warm and cool light.
  private static let axis = (u: 0.830, v: 0.558)
  private static let step = 0.0025
  /// The cluster: the pixels within this distance of the histogram's peak.
  private static let near = 0.01

  init(rgb: [UInt8], linear: [[Double]]) {
    var points: [Point] = []
    var mean = [0.0, 0.0, 0.0]
    var unclipped = [0.0, 0.0, 0.0]
    for (i, colour) in linear.enumerated() {
      let bytes = rgb[(3 * i)..<(3 * i + 3)]
      for k in 0..<3 { mean[k] += colour[k] }
      if bytes.allSatisfy({ $0 < 240 }) { for k in 0..<3 { unclipped[k] += colour[k] } }
      let y = AutoFilter.luminance(colour)
      guard y > 0.02, !AutoFilter.isBlown(rgb, i) else { continue }
      let uv = ColourMath.chromaticity(ofLinear: colour)
      points.append(
        Point(
          du: uv.u - ColourMath.d65.u, dv: uv.v - ColourMath.d65.v, weight: y.squareRoot(),
          clippedWhite: bytes.contains { $0 >= 240 } && bytes.allSatisfy { $0 >= 128 }))
    }
    self.points = points
    func offset(_ sum: [Double]) -> (u: Double, v: Double) {
      guard sum.contains(where: { $0 > 0 }) else { return (0, 0) }
      let uv = ColourMath.chromaticity(ofLinear: sum)
      return (uv.u - ColourMath.d65.u, uv.v - ColourMath.d65.v)
    }
    leaning = offset(mean)
    unclippedLeaning = offset(unclipped)
  }

  /// Along the axis (+ warm) and across it (+ green).
  private static func axes(_ du: Double, _ dv: Double) -> (along: Double, across: Double) {
    (du * axis.u + dv * axis.v, dv * axis.u - du * axis.v)
  }

  /// Whether (du, dv) lies in the ellipse about D65 of half axes `long` along the axis and
  /// `short` across it.
  private static func within(_ du: Double, _ dv: Double, _ long: Double, _ short: Double) -> Bool {
    let (a, b) = axes(du, dv)
    return (a / long) * (a / long) + (b / short) * (b / short) <= 1
  }

  /// The light's chromaticity, or nil when the photo shows no surface to trust.
  ///
  /// First the search about D65 (``daylight(withoutClippedWhites:)``). When most of its
  /// cluster is whites with a channel cut, which understate the light, the same search
  /// without them is taken if it lies further out the same way. Where the first search
  /// trusts nothing, one reaching further towards warm light (``warm()``), with stricter
  /// tests out there.
  func white() -> (u: Double, v: Double)? {
    guard let first = daylight(withoutClippedWhites: false) else {
      return warm().map { (ColourMath.d65.u + $0.du, ColourMath.d65.v + $0.dv) }
    }
    var white = first
    if share(ofClippedWhitesNear: first, among: points) > 0.5,
      let again = daylight(withoutClippedWhites: true)
    {
      let (before, after) = (
        Self.axes(first.du, first.dv).along, Self.axes(again.du, again.dv).along
      )
      if (before > 0 && after >= before + 0.005) || (before < 0 && after <= before - 0.005) {
        white = again
      }
    }
    return (ColourMath.d65.u + white.du, ColourMath.d65.v + white.dv)
  }

  /// The search about D65: a histogram inside an ellipse 0.05 along the axis each way and
  /// 0.028 across; its peak trusted in the ellipse's inner 60%, with 5% of the weight
  /// within 0.01 of it, leaning with the average.
  private func daylight(withoutClippedWhites: Bool) -> (du: Double, dv: Double)? {
    func inside(_ du: Double, _ dv: Double) -> Bool { Self.within(du, dv, 0.05, 0.028) }
    let counted = withoutClippedWhites ? points.filter { !$0.clippedWhite } : points
    let total = counted.reduce(0) { $0 + $1.weight }
    let candidates = counted.filter { inside($0.du, $0.dv) }
    guard total > 0, let peak = Self.peak(of: candidates, half: 20, inside: inside),
      Self.within(peak.du, peak.dv, 0.05 * 0.6, 0.028 * 0.6),
      let white = Self.cluster(candidates, at: peak, needing: 0.05 * total),
      leansWithAverage(white)
    else { return nil }
    return white
  }

  /// The search reaching further towards warm light (tungsten's cast lies 0.05 to 0.06 out
  /// along the axis): a histogram inside an ellipse 0.075 towards warm, 0.05 towards cool
  /// and 0.028 across; its peak trusted in the daylight search's region or in a band 0.055
  /// along the warm side and 0.014 across, with a larger share of the weight the further
  /// out it lies (5% up to 0.03, 25% from 0.055), leaning with the average; a white more
  /// than 0.02 out must also lie within half the distance of the average of the unclipped
  /// pixels (a cast moves everything; an autumn or a yellow wall leans alone).
  private func warm() -> (du: Double, dv: Double)? {
    func inside(_ du: Double, _ dv: Double) -> Bool {
      Self.within(du, dv, Self.axes(du, dv).along > 0 ? 0.075 : 0.05, 0.028)
    }
    func trusted(_ du: Double, _ dv: Double) -> Bool {
      Self.within(du, dv, 0.03, 0.0168)
        || (Self.axes(du, dv).along > 0 && Self.within(du, dv, 0.055, 0.014))
    }
    let total = points.reduce(0) { $0 + $1.weight }
    let candidates = points.filter { inside($0.du, $0.dv) }
    guard total > 0, var peak = Self.peak(of: candidates, half: 30, inside: inside) else {
      return nil
    }
    if !trusted(peak.du, peak.dv), share(ofClippedWhitesNear: peak, among: candidates) > 0.5,
      let again = Self.peak(of: candidates.filter { !$0.clippedWhite }, half: 30, inside: inside)
    {
      let (before, after) = (Self.axes(peak.du, peak.dv).along, Self.axes(again.du, again.dv).along)
      if before > 0 && after >= before + 0.01 { peak = again }
    }
    guard trusted(peak.du, peak.dv) else { return nil }
    let out = Self.axes(peak.du, peak.dv).along
    let need = 0.05 + 0.20 * min(1, max(0, (out - 0.03) / 0.025))
    guard let white = Self.cluster(candidates, at: peak, needing: need * total),
      leansWithAverage(white)
    else { return nil }
    if Self.axes(white.du, white.dv).along > 0.02 {
      let (u, v) = unclippedLeaning
      let apart = ((u - white.du) * (u - white.du) + (v - white.dv) * (v - white.dv)).squareRoot()
      guard apart <= 0.5 * (u * u + v * v).squareRoot() else { return nil }
    }
    return white
  }

  /// The highest point of the smoothed histogram (bins of 0.0025, a Gaussian of 1.5 bins)
  /// of `points` among the bins `inside` takes, the first in scan order; nil if empty.
  private static func peak(
    of points: [Point], half: Int, inside: (Double, Double) -> Bool
  ) -> (du: Double, dv: Double)? {
    let side = 2 * half + 1
    var histogram = [Double](repeating: 0, count: side * side)
    for p in points {
      let (x, z) = (Int((p.du / step).rounded()) + half, Int((p.dv / step).rounded()) + half)
      guard (0..<side).contains(x), (0..<side).contains(z) else { continue }
      histogram[x * side + z] += p.weight
    }
    let kernel = (-4...4).map { exp(-0.5 * pow(Double($0) / 1.5, 2)) }
    let norm = kernel.reduce(0, +)
    func smooth(_ h: [Double], _ index: (Int, Int) -> Int) -> [Double] {
      var out = [Double](repeating: 0, count: h.count)
      for a in 0..<side {
        for b in 0..<side {
          var sum = 0.0
          for (k, w) in kernel.enumerated() where b + k - 4 >= 0 && b + k - 4 < side {
            sum += w * h[index(a, b + k - 4)]
          }
          out[index(a, b)] = sum / norm
        }
      }
      return out
    }
    let smoothed = smooth(smooth(histogram) { $0 * side + $1 }) { $1 * side + $0 }
    var peak = (du: 0.0, dv: 0.0, value: 0.0)
    for x in 0..<side {
      for z in 0..<side where smoothed[x * side + z] > peak.value {
        let (du, dv) = (Double(x - half) * step, Double(z - half) * step)
        if inside(du, dv) { peak = (du, dv, smoothed[x * side + z]) }
      }
    }
    return peak.value > 0 ? (peak.du, peak.dv) : nil
  }

  /// The weighted mean of the points within 0.01 of `peak`, if they weigh `needing` or more.
  private static func cluster(
    _ points: [Point], at peak: (du: Double, dv: Double), needing: Double
  ) -> (du: Double, dv: Double)? {
    var sum = (du: 0.0, dv: 0.0, weight: 0.0)
    for p in points where isNear(p, peak) {
      sum = (sum.du + p.du * p.weight, sum.dv + p.dv * p.weight, sum.weight + p.weight)
    }
    guard sum.weight > 0, sum.weight >= needing else { return nil }
    return (sum.du / sum.weight, sum.dv / sum.weight)
  }

  private static func isNear(_ p: Point, _ peak: (du: Double, dv: Double)) -> Bool {
    (p.du - peak.du) * (p.du - peak.du) + (p.dv - peak.dv) * (p.dv - peak.dv) < near * near
  }

  /// The share of the weight within 0.01 of `at` that is clipped whites.
  private func share(ofClippedWhitesNear at: (du: Double, dv: Double), among points: [Point])
    -> Double
  {
    var (clipped, all) = (0.0, 0.0)
    for p in points where Self.isNear(p, at) {
      all += p.weight
      if p.clippedWhite { clipped += p.weight }
    }
    return all > 0 ? clipped / all : 0
  }

  /// A white within the dead zone (0.005) needs no direction; any other leans with the
  /// average colour, within 60 degrees, which leans at least half as far: a cast of the
  /// light moves both, while a surface that only looks grey (the wood of a pier in a blue
  /// scene, a blue sky under warm light) leans apart.
  private func leansWithAverage(_ white: (du: Double, dv: Double)) -> Bool {
    let size = (white.du * white.du + white.dv * white.dv).squareRoot()
    let far = (leaning.u * leaning.u + leaning.v * leaning.v).squareRoot()
    return size < 0.005
      || (far >= size / 2 && (white.du * leaning.u + white.dv * leaning.v) / (size * far) > 0.5)
  }
}
