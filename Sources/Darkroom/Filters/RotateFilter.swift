/// Quarter turns, clockwise.
enum RotateFilter: FilterDefinition {
  static let name = "rotate"
  static let space = FilterSpace.geometry
  static let summary = "turn by 90, 180 or 270 degrees clockwise"
  static let parameters = [
    FilterParameter("angle", .choice([90, 180, 270]), default: .number(90), "degrees clockwise")
  ]
  static let streams = false

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    try image.rotated(quarterTurns: turns(arguments))
  }

  static func folding(_ arguments: FilterArguments) -> PlacementStep? {
    let turns = turns(arguments)
    return { placement, _ in placement.turn(quarterTurns: turns) }
  }

  private static func turns(_ arguments: FilterArguments) -> Int {
    Int(arguments.number("angle") ?? 90) / 90
  }
}
