/// Perspective: lines that converge because the camera tilted made parallel again. The
/// source is a trapezoid inside the image (its narrow edge `|v|` quarters of the width
/// shorter on each side), stretched over the whole frame: the result stays inside the
/// image, at its size, with no empty corners.
enum PerspectiveFilter: FilterDefinition {
  static let name = "perspective"
  static let summary = "converging verticals or horizontals made parallel"
  static let space = FilterSpace.geometry
  static let since = 2
  static let streams = false
  static let parameters = [
    FilterParameter(
      "vertical", .number(-1...1), default: .number(0),
      "+ widens the top (lines converging upwards), - the bottom"),
    FilterParameter(
      "horizontal", .number(-1...1), default: .number(0),
      "+ widens the right (lines converging rightwards), - the left"),
  ]

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    guard let h = homography(arguments, width: image.width, height: image.height) else {
      return image
    }
    // Tiles read anywhere in the source: from memory, computed once.
    return try image.inMemory().warped(by: h)
  }

  /// The map from the result's pixels to the source's; nil for no change.
  static func homography(_ arguments: FilterArguments, width: Int, height: Int) -> [Double]? {
    let v = arguments.number("vertical") ?? 0
    let h = arguments.number("horizontal") ?? 0
    if v == 0 && h == 0 { return nil }
    let (w, ht) = (Double(width), Double(height))
    let inset = (x: abs(v) * w / 4, y: abs(h) * ht / 4)
    let top = v > 0 ? inset.x : 0
    let bottom = v < 0 ? inset.x : 0
    let right = h > 0 ? inset.y : 0
    let left = h < 0 ? inset.y : 0
    let source = [(top, left), (w - top, right), (w - bottom, ht - right), (bottom, ht - left)]
    let frame = [(0.0, 0.0), (w, 0), (w, ht), (0, ht)]
    return ColourMath.homography(from: frame, to: source)
  }
}
