/// Tone curves through points, on encoded values (as Lightroom's and darktable's RGB
/// curves): one for every channel, then one for each channel.
enum CurveFilter: FilterDefinition {
  static let name = "curve"
  static let summary = "tone curves through points, for all channels and for each"
  static let space = FilterSpace.encoded
  static let since = 2
  static let parameters = [
    FilterParameter("rgb", .points, default: nil, "the curve of every channel, x:y,..."),
    FilterParameter("red", .points, default: nil, "red's own curve, after rgb"),
    FilterParameter("green", .points, default: nil, "green's own curve, after rgb"),
    FilterParameter("blue", .points, default: nil, "blue's own curve, after rgb"),
  ]

  static func validate(_ arguments: FilterArguments) throws(DarkroomError) {
    guard parameters.contains(where: { arguments.text($0.name) != nil }) else {
      throw DarkroomError(
        .invalidArgument,
        "curve needs points for rgb, red, green or blue, such as rgb=0:0,0.5:0.6,1:1")
    }
  }

  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]? {
    let curves = parameters.map { parameter in
      arguments.text(parameter.name).flatMap(FilterParameter.points).map {
        ColourMath.monotoneCurve($0, samples: DevelopStage.curveSamples)
      } ?? identityCurves(1)
    }
    let table = curves.flatMap { $0 }
    if table == identityCurves(4) { return [] }
    return [.develop([DevelopStage(kind: .curves, table: table)])]
  }

  /// `count` identity curves, end to end.
  static func identityCurves(_ count: Int) -> [Float] {
    let n = DevelopStage.curveSamples
    let one = (0..<n).map { Float(Double($0) / Double(n - 1)) }
    return Array((0..<count).map { _ in one }.joined())
  }
}
