/// A vignette: corners darker (or lighter), in linear light, as a lens's falloff is.
/// Nothing changes inside the midpoint.
enum VignetteFilter: FilterDefinition {
  static let name = "vignette"
  static let summary = "corners darker (-) or lighter (+)"
  static let space = FilterSpace.linear
  static let since = 2
  static let parameters = [
    FilterParameter(
      "amount", .number(-1...1), default: .number(-0.3), "-1 black corners, +1 white"),
    FilterParameter(
      "midpoint", .number(0...1), default: .number(0.5),
      "where it starts, from the centre (0) to the corners (1)"),
    FilterParameter(
      "feather", .number(0...1), default: .number(0.5), "0 a hard edge, 1 the softest"),
    FilterParameter(
      "roundness", .number(-1...1), default: .number(0),
      "-1 the frame's shape, +1 a circle"),
  ]

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    let amount = arguments.number("amount") ?? 0
    if amount == 0 { return image }
    return try image.developed([
      DevelopStage(
        kind: .vignette,
        numbers: [
          amount, arguments.number("midpoint") ?? 0.5, arguments.number("feather") ?? 0.5,
          ((arguments.number("roundness") ?? 0) + 1) / 2,
        ])
    ])
  }
}

/// Film grain: noise by position (the same on every render), strongest in the midtones.
enum GrainFilter: FilterDefinition {
  static let name = "grain"
  static let summary = "film grain"
  static let space = FilterSpace.encoded
  static let since = 2
  static let parameters = [
    FilterParameter("amount", .number(0...1), default: .number(0.3), "how strong"),
    FilterParameter(
      "size", .number(0.5...20), default: .number(1.5), "the grains' size, in pixels",
      pixels: true),
  ]

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    let amount = arguments.number("amount") ?? 0
    if amount == 0 { return image }
    return try image.developed([
      DevelopStage(kind: .grain, numbers: [amount, arguments.number("size") ?? 1.5, 1])
    ])
  }
}
