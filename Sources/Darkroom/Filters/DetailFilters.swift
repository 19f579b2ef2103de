/// Clarity: contrast between an area and its surroundings (a blur 2% of the image's longer
/// side away), strongest in the midtones and limited at strong edges, so no halos.
enum DefinitionFilter: FilterDefinition {
  static let name = "definition"
  static let summary = "local contrast (clarity): more (+) or softer (-)"
  static let space = FilterSpace.encoded
  static let since = 2
  static let streams = false
  static let parameters = [
    FilterParameter("amount", .number(-1...1), default: .number(0.3), "how much")
  ]

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    // Its blur is wide: taken on a small copy of the whole image, read from memory.
    try localContrast(image, arguments, across: 0.02, gain: 1, limit: 0.08)
  }
}

/// Local contrast against a blur `across` times the image's longer side wide (so the same
/// at any size): definition's and texture's, which differ in width, gain and limit.
private func localContrast(
  _ image: VipsImage, _ arguments: FilterArguments, across: Double, gain: Double, limit: Double
) throws(DarkroomError) -> VipsImage {
  let amount = arguments.number("amount") ?? 0
  if amount == 0 { return image }
  let sigma = max(0.5, across * Double(max(image.width, image.height)))
  return try image.detailed(
    blurredBy: sigma, .localContrast, amount: gain * amount, threshold: limit)
}

/// Texture: contrast of fine detail (a blur 0.08% of the longer side away): + brings out
/// skin, bark and fabric, - smooths them, leaving edges and broad tones.
enum TextureFilter: FilterDefinition {
  static let name = "texture"
  static let summary = "fine detail brought out (+) or smoothed (-)"
  static let space = FilterSpace.encoded
  static let since = 2
  static let streams = false
  static let parameters = [
    FilterParameter("amount", .number(-1...1), default: .number(0.3), "how much")
  ]

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    try localContrast(image, arguments, across: 0.0008, gain: 1.5, limit: 0.1)
  }
}

/// Sharpening: an unsharp mask of the luminance (no colour fringes), as Lightroom's Detail
/// panel describes it: amount, radius, and detail (how little an edge must differ).
enum SharpenFilter: FilterDefinition {
  static let name = "sharpen"
  static let summary = "edges crisper: amount, radius and detail"
  static let space = FilterSpace.encoded
  static let since = 2
  static let streams = false
  static let parameters = [
    FilterParameter("amount", .number(0...3), default: .number(0.6), "how much crisper"),
    FilterParameter(
      "radius", .number(0.3...5), default: .number(1), "the size of the edges, in pixels",
      pixels: true),
    FilterParameter(
      "detail", .number(0...1), default: .number(0.25),
      "0 sharpens only clear edges, 1 every difference (noise too)"),
  ]

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    let amount = arguments.number("amount") ?? 0
    if amount == 0 { return image }
    let radius = max(0.3, arguments.number("radius") ?? 1)
    let detail = arguments.number("detail") ?? 0.25
    return try image.detailed(
      blurredBy: radius, .sharpen, amount: amount, threshold: (1 - detail) * 0.04)
  }
}

/// Noise reduction: luminance towards its surroundings where they differ little (noise,
/// not edges), and colour from a wider blur (colour noise is coarse) under the pixel's own
/// luminance.
enum DenoiseFilter: FilterDefinition {
  static let name = "denoise"
  static let summary = "noise reduction of luminance and of colour"
  static let space = FilterSpace.encoded
  static let since = 2
  static let streams = false
  static let parameters = [
    FilterParameter("luminance", .number(0...1), default: .number(0.4), "grain-like noise"),
    FilterParameter("colour", .number(0...1), default: .number(0.4), "blotches of colour"),
    FilterParameter(
      "radius", .number(0.5...10), default: .number(1.5), "the noise's size, in pixels",
      pixels: true),
  ]

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    let luminance = arguments.number("luminance") ?? 0
    let colour = arguments.number("colour") ?? 0
    let radius = max(0.5, arguments.number("radius") ?? 1.5)
    var result = image
    if colour > 0 {
      result = try result.detailed(
        blurredBy: 2 * radius, .denoiseColour, amount: colour, threshold: 0)
    }
    if luminance > 0 {
      result = try result.detailed(
        blurredBy: radius, .denoiseLuminance, amount: luminance,
        threshold: 0.03 + 0.12 * luminance)
    }
    return result
  }
}
