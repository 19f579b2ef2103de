#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Exposure, contrast, brightness, highlights, shadows, saturation and warmth. All zero is
/// the identity. The pointwise parts fold into one 256-entry table, the colour parts into
/// one 3x3 matrix, so the whole filter is two cheap libvips operations (or none).
enum ToneFilter: FilterDefinition {
  static let name = "tone"
  static let space = FilterSpace.encoded
  static let summary = "exposure, contrast, brightness, highlights, shadows, saturation, warmth"
  static let parameters = [
    FilterParameter(
      "exposure", .number(-4...4), default: .number(0),
      "stops, applied in linear light (+1 doubles the light)"),
    FilterParameter(
      "contrast", .number(-1...1), default: .number(0), "steeper (+) or flatter (-) around mid-grey"
    ),
    FilterParameter(
      "brightness", .number(-1...1), default: .number(0),
      "lifts (+) or lowers (-) the midtones, keeping black and white"),
    FilterParameter(
      "highlights", .number(-1...1), default: .number(0),
      "brightens (+) or recovers (-) the bright tones"),
    FilterParameter(
      "shadows", .number(-1...1), default: .number(0), "opens (+) or deepens (-) the dark tones"),
    FilterParameter(
      "saturation", .number(-1...1), default: .number(0), "colour intensity; -1 is greyscale"),
    FilterParameter(
      "warmth", .number(-1...1), default: .number(0), "towards amber (+) or blue (-)"),
  ]

  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]? {
    var steps: [PointwiseStep] = []
    let table = self.table(arguments)
    if table != identityTable { steps.append(.table(table)) }
    let matrix = self.matrix(arguments)
    if matrix != identityMatrix { steps.append(.matrix(matrix)) }
    return steps
  }

  static let identityTable = (0..<256).map { UInt8($0) }
  static let identityMatrix: [Double] = [1, 0, 0, 0, 1, 0, 0, 0, 1]

  /// The pointwise tone curve, per 8-bit level.
  static func table(_ arguments: FilterArguments) -> [UInt8] {
    let exposure = arguments.number("exposure") ?? 0
    let contrast = arguments.number("contrast") ?? 0
    let brightness = arguments.number("brightness") ?? 0
    let highlights = arguments.number("highlights") ?? 0
    let shadows = arguments.number("shadows") ?? 0
    let gain = pow(2, exposure)
    return (0..<256).map { level in
      var x = Double(level) / 255
      if exposure != 0 { x = encode(min(1, decode(x) * gain)) }
      if brightness != 0 { x = pow(x, pow(2, -brightness)) }  // gamma: 0 and 1 stay put
      if contrast != 0 {
        let k = 1 + contrast
        x = min(1, max(0, 0.5 + (x - 0.5) * k))
      }
      // Bumps that peak at a third and two thirds of the range and keep 0 and 1 in place.
      if shadows != 0 { x += 0.25 * shadows * x * (1 - x) * (1 - x) * 6.75 }
      if highlights != 0 { x += 0.25 * highlights * x * x * (1 - x) * 6.75 }
      return UInt8(clamping: Int((min(1, max(0, x)) * 255).rounded()))
    }
  }

  /// Saturation (around Rec. 709 luma) and warmth (red up, blue down) as one 3x3 matrix.
  static func matrix(_ arguments: FilterArguments) -> [Double] {
    let saturation = 1 + (arguments.number("saturation") ?? 0)
    let warmth = arguments.number("warmth") ?? 0
    let luma = NoirFilter.luma
    var m = [Double](repeating: 0, count: 9)
    for row in 0..<3 {
      for column in 0..<3 {
        m[row * 3 + column] = (1 - saturation) * luma[column] + (row == column ? saturation : 0)
      }
    }
    let gains = [1 + 0.12 * warmth, 1 + 0.02 * warmth, 1 - 0.12 * warmth]
    return (0..<9).map { m[$0] * gains[$0 / 3] }
  }

  /// sRGB transfer function and its inverse.
  static func decode(_ v: Double) -> Double {
    v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
  }

  static func encode(_ v: Double) -> Double {
    v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055
  }
}
