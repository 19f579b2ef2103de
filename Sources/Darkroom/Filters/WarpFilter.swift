/// Warp: the result drawn from any four-sided part of the photo, through the projective map
/// that takes the result's corners to the four points given (a homography: straight lines
/// stay straight). It says exactly what darktable's "rotate and perspective" (`ashift`)
/// does, whatever its rotation, lens shifts, shear and crop margins: the result's top-left,
/// top-right, bottom-right and bottom-left corners lie at (`x1`, `y1`) ... (`x4`, `y4`) of
/// the photo, as fractions of its width and height (outside 0...1 where the result shows
/// beyond the photo's edge, which is black), and the result is `width` x `height` times the
/// photo's size (at most 4 times its pixels). Being fractions, it means the same on a
/// preview as on the full photo.
enum WarpFilter: FilterDefinition {
  static let name = "warp"
  static let summary = "the result drawn from any four-sided part of the photo (projective)"
  static let space = FilterSpace.geometry
  static let since = 3
  static let streams = false
  static let parameters: [FilterParameter] = {
    let corners = ["top-left", "top-right", "bottom-right", "bottom-left"]
    let identity: [(Double, Double)] = [(0, 0), (1, 0), (1, 1), (0, 1)]
    var list: [FilterParameter] = []
    for (index, (corner, at)) in zip(corners, identity).enumerated() {
      list.append(
        FilterParameter(
          "x\(index + 1)", .number(-64...64), default: .number(at.0),
          "where the result's \(corner) corner lies: x, a fraction of the photo's width"))
      list.append(
        FilterParameter(
          "y\(index + 1)", .number(-64...64), default: .number(at.1),
          "... and y, a fraction of its height"))
    }
    list.append(
      FilterParameter(
        "width", .number(0.01...4), default: .number(1), "the result's width, times the photo's"))
    list.append(
      FilterParameter(
        "height", .number(0.01...4), default: .number(1),
        "the result's height, times the photo's"))
    return list
  }()

  static func validate(_ arguments: FilterArguments) throws(DarkroomError) {
    let (w, h) = (arguments.number("width") ?? 1, arguments.number("height") ?? 1)
    guard w * h <= maxGrowth else {
      throw DarkroomError(
        .invalidArgument,
        "warp's result may have at most \(Int(maxGrowth)) times the photo's pixels (width x height \(FilterValue.number(w * h)))"
      )
    }
    guard homography(arguments, width: 1000, height: 1000) != nil || isIdentity(arguments) else {
      throw DarkroomError(
        .invalidArgument, "warp's corners must make a four-sided shape (no three in a line)")
    }
  }

  /// How many times the photo's pixels a result may have (darktable's perspective at its
  /// widest leaves about twice).
  static let maxGrowth = 4.0

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    if isIdentity(arguments) { return image }
    let size = outputSize(arguments, width: image.width, height: image.height)
    guard let h = homography(arguments, width: image.width, height: image.height) else {
      throw DarkroomError(
        .invalidArgument, file: image.source,
        "warp's corners must make a four-sided shape (no three in a line)")
    }
    // Tiles read anywhere in the source: from memory, computed once.
    return try image.inMemory().warped(by: h, width: size.width, height: size.height)
  }

  /// The corners, in order: top-left, top-right, bottom-right, bottom-left.
  static func corners(_ arguments: FilterArguments) -> [(Double, Double)] {
    (1...4).map { (arguments.number("x\($0)") ?? 0, arguments.number("y\($0)") ?? 0) }
  }

  static func isIdentity(_ arguments: FilterArguments) -> Bool {
    let identity: [(Double, Double)] = [(0, 0), (1, 0), (1, 1), (0, 1)]
    return zip(corners(arguments), identity).allSatisfy { $0 == $1 }
      && arguments.number("width") ?? 1 == 1 && arguments.number("height") ?? 1 == 1
  }

  /// The result's size in pixels on a photo `width` x `height` (at least 1 x 1).
  static func outputSize(_ arguments: FilterArguments, width: Int, height: Int) -> (
    width: Int, height: Int
  ) {
    let w = (arguments.number("width") ?? 1) * Double(width)
    let h = (arguments.number("height") ?? 1) * Double(height)
    return (max(1, Int(w.rounded())), max(1, Int(h.rounded())))
  }

  /// The map from the result's pixels (their edges: the result spans 0...w, 0...h) to the
  /// photo's; nil when the corners are degenerate.
  static func homography(_ arguments: FilterArguments, width: Int, height: Int) -> [Double]? {
    let size = outputSize(arguments, width: width, height: height)
    let (w, h) = (Double(size.width), Double(size.height))
    let frame = [(0.0, 0.0), (w, 0), (w, h), (0, h)]
    let source = corners(arguments).map { ($0.0 * Double(width), $0.1 * Double(height)) }
    guard let matrix = ColourMath.homography(from: frame, to: source),
      matrix.allSatisfy(\.isFinite),
      // The photo's horizon stays outside the result (w > 0 at every corner, so inside).
      frame.allSatisfy({ matrix[6] * $0.0 + matrix[7] * $0.1 + matrix[8] > 0 })
    else { return nil }
    return matrix
  }
}
