/// Mirror images.
enum FlipFilter: FilterDefinition {
  static let name = "flip"
  static let space = FilterSpace.geometry
  static let summary = "mirror left-right (horizontal) or top-bottom (vertical)"
  static let parameters = [
    FilterParameter(
      "direction", .word(["horizontal", "vertical"]), default: .text("horizontal"),
      "horizontal swaps left and right; vertical swaps top and bottom")
  ]
  static let streams = false

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    try image.flipped(vertically: arguments.text("direction") == "vertical")
  }

  static func folding(_ arguments: FilterArguments) -> PlacementStep? {
    let vertically = arguments.text("direction") == "vertical"
    return { placement, _ in placement.flip(vertically: vertically) }
  }
}
