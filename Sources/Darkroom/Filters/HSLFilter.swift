#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Hue, saturation and luminance of eight colour ranges (Lightroom's HSL panel), in OkLCh:
/// each range is a hue of Oklab, and a colour between two takes both, smoothly.
enum HSLFilter: FilterDefinition {
  static let name = "hsl"
  static let summary = "hue, saturation and luminance of eight colour ranges"
  static let space = FilterSpace.oklab
  static let since = 2
  /// The ranges and their Oklab hues in degrees (those of sRGB's red, yellow, green, cyan,
  /// blue and magenta, and orange and purple between).
  static let ranges: [(name: String, hue: Double)] = [
    ("red", 29), ("orange", 62), ("yellow", 110), ("green", 142), ("aqua", 195),
    ("blue", 264), ("purple", 296), ("magenta", 328),
  ]
  static let parameters = ranges.flatMap { range in
    [
      FilterParameter(
        "\(range.name)-hue", .number(-1...1), default: .number(0),
        "turns \(range.name)s by up to 30 degrees of hue"),
      FilterParameter(
        "\(range.name)-saturation", .number(-1...1), default: .number(0),
        "\(range.name)s' chroma: -1 grey, +1 twice"),
      FilterParameter(
        "\(range.name)-luminance", .number(-1...1), default: .number(0),
        "\(range.name)s darker (-) or lighter (+)"),
    ]
  }

  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]? {
    let values = parameters.map { arguments.number($0.name) ?? 0 }
    if values.allSatisfy({ $0 == 0 }) { return [] }
    return [.develop([DevelopStage(kind: .hsl, table: table(values))])]
  }

  /// Hue shift (degrees), chroma change and lightness change for each degree of hue:
  /// between two ranges' hues, a smooth step from one's values to the other's.
  static func table(_ values: [Double]) -> [Float] {
    let count = ranges.count
    var shift = [Float](repeating: 0, count: 360)
    var chroma = shift
    var lightness = shift
    for degree in 0..<360 {
      let hue = Double(degree)
      // The range at or below this hue (cyclically) and the next one.
      var lower = count - 1
      for (i, range) in ranges.enumerated() where range.hue <= hue { lower = i }
      let upper = (lower + 1) % count
      var span = ranges[upper].hue - ranges[lower].hue
      if span <= 0 { span += 360 }
      var t = hue - ranges[lower].hue
      if t < 0 { t += 360 }
      t /= span
      let s = t * t * (3 - 2 * t)
      func mix(_ k: Int) -> Float {
        Float(values[lower * 3 + k] * (1 - s) + values[upper * 3 + k] * s)
      }
      shift[degree] = mix(0) * 30
      chroma[degree] = mix(1)
      lightness[degree] = mix(2)
    }
    return shift + chroma + lightness
  }
}
