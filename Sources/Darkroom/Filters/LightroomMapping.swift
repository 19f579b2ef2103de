import FoundationEssentials

/// Camera Raw's settings (`crs:`) and the Darkroom filter parameters they map onto, both
/// ways: a Lightroom edit read into a graph, and `adjustments --xmp` writing a graph back.
struct LightroomMapping: Sendable {
  /// Camera Raw's name, such as `Clarity2012`.
  let setting: String
  let filter: String
  let parameter: String
  /// Camera Raw's value is Darkroom's times this (100 for -100...100 against -1...1).
  let scale: Double
  /// Whether this setting makes the filter (a secondary one, such as a radius, only sets a
  /// parameter of a filter another setting made).
  let leads: Bool
  /// Whether Camera Raw writes it with a sign (`+20`).
  let signed: Bool

  init(
    _ setting: String, _ filter: String, _ parameter: String, _ scale: Double,
    leads: Bool = true, signed: Bool = true
  ) {
    self.setting = setting
    self.filter = filter
    self.parameter = parameter
    self.scale = scale
    self.leads = leads
    self.signed = signed
  }

  /// Darkroom's value for Camera Raw's.
  func value(_ setting: Double) -> Double {
    if filter == BalanceFilter.name, parameter == "temperature" {
      // Incremental temperature moves the white in mireds: +100 warms as a light of about
      // 4,500 K is corrected, -100 cools as 11,900 K.
      let mired = 1e6 / 6500 - setting * 0.7
      return (1e6 / max(40, mired)).rounded()
    }
    return setting / scale
  }

  /// Camera Raw's value for Darkroom's, rounded as it writes them; nil at its neutral.
  func setting(_ value: Double) -> Double? {
    if filter == BalanceFilter.name, parameter == "temperature" {
      guard value != 6500 else { return nil }
      return ((1e6 / 6500 - 1e6 / value) / 0.7).rounded()
    }
    let scaled = value * scale
    let rounded = scale >= 50 ? scaled.rounded() : (scaled * 100).rounded() / 100
    return leads && rounded == 0 ? nil : rounded
  }

  static let all: [LightroomMapping] = {
    var all = [
      LightroomMapping("Exposure2012", "tone", "exposure", 1),
      LightroomMapping("Contrast2012", "tone", "contrast", 100),
      LightroomMapping("Highlights2012", "tone", "highlights", 100),
      LightroomMapping("Shadows2012", "tone", "shadows", 100),
      LightroomMapping("Saturation", "tone", "saturation", 100),
      LightroomMapping("Whites2012", "light", "whites", 200),
      LightroomMapping("Blacks2012", "light", "blacks", 200),
      LightroomMapping("IncrementalTemperature", "balance", "temperature", 1),
      LightroomMapping("IncrementalTint", "balance", "tint", 100),
      LightroomMapping("Vibrance", "vibrance", "amount", 100),
      LightroomMapping("Clarity2012", "definition", "amount", 100),
      LightroomMapping("Texture", "texture", "amount", 100),
      LightroomMapping("Sharpness", "sharpen", "amount", 50, signed: false),
      LightroomMapping("SharpenRadius", "sharpen", "radius", 1, leads: false),
      LightroomMapping("SharpenDetail", "sharpen", "detail", 100, leads: false, signed: false),
      LightroomMapping("LuminanceSmoothing", "denoise", "luminance", 100, signed: false),
      LightroomMapping("ColorNoiseReduction", "denoise", "colour", 100, signed: false),
      LightroomMapping("PostCropVignetteAmount", "vignette", "amount", 100),
      LightroomMapping(
        "PostCropVignetteMidpoint", "vignette", "midpoint", 100, leads: false, signed: false),
      LightroomMapping(
        "PostCropVignetteFeather", "vignette", "feather", 100, leads: false, signed: false),
      LightroomMapping("PostCropVignetteRoundness", "vignette", "roundness", 100, leads: false),
      LightroomMapping("GrainAmount", "grain", "amount", 100, signed: false),
      LightroomMapping("PerspectiveVertical", "perspective", "vertical", -100),
      LightroomMapping("PerspectiveHorizontal", "perspective", "horizontal", -100),
    ]
    let ranges = [
      "Red", "Orange", "Yellow", "Green", "Aqua", "Blue", "Purple", "Magenta",
    ]
    for range in ranges {
      let name = range.lowercased()
      all += [
        LightroomMapping("HueAdjustment\(range)", "hsl", "\(name)-hue", 100),
        LightroomMapping("SaturationAdjustment\(range)", "hsl", "\(name)-saturation", 100),
        LightroomMapping("LuminanceAdjustment\(range)", "hsl", "\(name)-luminance", 100),
      ]
    }
    return all
  }()

  /// The tone curves (sequences of `x, y` points from 0 to 255) and `curve`'s parameters.
  static let curves = [
    ("ToneCurvePV2012", "rgb"), ("ToneCurvePV2012Red", "red"),
    ("ToneCurvePV2012Green", "green"), ("ToneCurvePV2012Blue", "blue"),
  ]

  /// The order Darkroom renders Lightroom's filters in, as Camera Raw's pipeline has them
  /// (perspective goes before the crop, which the crop's fractions are of).
  static let order = [
    "perspective", "balance", "tone", "light", "curve", "vibrance", "hsl", "definition",
    "texture", "denoise", "sharpen", "vignette", "grain",
  ]

  /// A curve's points (`0, 0;64, 60;255, 255`: items joined by `;`) as `curve` writes
  /// them; nil for points it does not take.
  static func curvePoints(_ text: String) -> String? {
    var points: [String] = []
    for item in text.split(separator: ";") {
      let parts = item.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
      guard parts.count == 2, let x = Double(parts[0]), let y = Double(parts[1]) else {
        return nil
      }
      func fraction(_ v: Double) -> FilterValue { .number(ForeignEdit.sixPlaces(v / 255)) }
      points.append("\(fraction(x)):\(fraction(y))")
    }
    let joined = points.joined(separator: ",")
    guard
      let checked = try? FilterParameter("p", .points, default: nil, "").check(
        .text(joined), filter: "curve")
    else { return nil }
    return checked.description
  }
}
