#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A rectangle of the upright image: as fractions of its size (`x y width height` in 0...1),
/// in pixels (`unit=px`), or the largest centred rectangle of an aspect ratio. `angle`
/// straightens first, keeping the largest rectangle with the image's own aspect ratio.
enum CropFilter: FilterDefinition {
  static let name = "crop"
  static let space = FilterSpace.geometry
  static let summary = "keep a rectangle (fractions or pixels), an aspect ratio, or straighten"
  static let parameters = [
    FilterParameter("x", .number(0...1_000_000), default: nil, "left edge"),
    FilterParameter("y", .number(0...1_000_000), default: nil, "top edge"),
    FilterParameter("width", .number(0...1_000_000), default: nil, "width"),
    FilterParameter("height", .number(0...1_000_000), default: nil, "height"),
    FilterParameter(
      "unit", .word(["fraction", "px"]), default: .text("fraction"),
      "fraction: x y width height are fractions of the image's size; px: pixels"),
    FilterParameter(
      "aspect", .ratio, default: nil, "the largest centred rectangle of this shape, W:H"),
    FilterParameter(
      "angle", .number(-45...45), default: .number(0), "straighten by this many degrees clockwise"),
  ]
  static let streams = false

  static func validate(_ a: FilterArguments) throws(DarkroomError) {
    let sides = ["x", "y", "width", "height"].map { a.number($0) }
    let given = sides.compactMap { $0 }
    if !given.isEmpty && given.count < 4 {
      throw DarkroomError(
        .invalidArgument, "crop needs all of x, y, width and height, or none of them")
    }
    if given.count == 4 && a.text("aspect") != nil {
      throw DarkroomError(.invalidArgument, "crop takes a rectangle or an aspect ratio, not both")
    }
    if given.isEmpty && a.text("aspect") == nil && (a.number("angle") ?? 0) == 0 {
      throw DarkroomError(
        .invalidArgument, "crop needs x y width height, aspect=W:H, or angle=DEGREES")
    }
    if given.count == 4 {
      let (x, y, w, h) = (given[0], given[1], given[2], given[3])
      guard w > 0, h > 0 else {
        throw DarkroomError(.invalidArgument, "crop width and height must be greater than 0")
      }
      if a.text("unit") != "px" && (x + w > 1.000001 || y + h > 1.000001) {
        throw DarkroomError(
          .invalidArgument,
          "crop rectangle \(FilterValue.number(x)) \(FilterValue.number(y)) \(FilterValue.number(w)) \(FilterValue.number(h)) reaches outside the image (fractions: x + width and y + height must be at most 1)"
        )
      }
    }
  }

  static func apply(_ a: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    var image = image
    let angle = a.number("angle") ?? 0
    if angle != 0 {
      let (w, h) = (Double(image.width), Double(image.height))
      let inner = innerSize(width: w, height: h, degrees: angle)
      let turned = try image.rotated(degrees: angle)
      let r = centred(turned.width, turned.height, width: inner.width, height: inner.height)
      image = try turned.cropped(left: r.left, top: r.top, width: r.width, height: r.height)
    }
    let r = try rectangle(a, width: image.width, height: image.height, source: image.source)
    if r == (0, 0, image.width, image.height) { return image }
    return try image.cropped(left: r.left, top: r.top, width: r.width, height: r.height)
  }

  /// A crop that straightens resamples; any other only keeps a rectangle.
  static func folding(_ a: FilterArguments) -> PlacementStep? {
    guard (a.number("angle") ?? 0) == 0 else { return nil }
    return { placement, source throws(DarkroomError) in
      let r = try rectangle(
        a, width: placement.uprightWidth, height: placement.uprightHeight, source: source)
      placement.crop(left: r.left, top: r.top, width: r.width, height: r.height)
    }
  }

  typealias Rectangle = (left: Int, top: Int, width: Int, height: Int)

  /// The size this crop leaves of an image of this size, as ``apply(_:to:)`` makes it; nil
  /// for a rectangle outside it.
  static func size(_ a: FilterArguments, width: Int, height: Int) -> (width: Int, height: Int)? {
    var (w, h) = (width, height)
    let angle = a.number("angle") ?? 0
    if angle != 0 {
      let inner = innerSize(width: Double(w), height: Double(h), degrees: angle)
      (w, h) = (max(1, Int(inner.width.rounded(.down))), max(1, Int(inner.height.rounded(.down))))
    }
    guard let r = try? rectangle(a, width: w, height: h, source: nil) else { return nil }
    return (r.width, r.height)
  }

  /// The rectangle this crop keeps of an image of this size (after any straightening).
  static func rectangle(_ a: FilterArguments, width iw: Int, height ih: Int, source: String?)
    throws(DarkroomError) -> Rectangle
  {
    let (w, h) = (Double(iw), Double(ih))
    if let ratio = a.text("aspect").flatMap(FilterParameter.ratio) {
      let width = min(w, h * ratio)
      return centred(iw, ih, width: width, height: width / ratio)
    }
    guard let x = a.number("x"), let y = a.number("y"), let cw = a.number("width"),
      let ch = a.number("height")
    else { return (0, 0, iw, ih) }
    let scale = a.text("unit") == "px" ? (1.0, 1.0) : (w, h)
    let left = Int((x * scale.0).rounded())
    let top = Int((y * scale.1).rounded())
    let width = min(Int((cw * scale.0).rounded()), iw - left)
    let height = min(Int((ch * scale.1).rounded()), ih - top)
    guard left < iw, top < ih, width >= 1, height >= 1 else {
      throw DarkroomError(
        .invalidArgument, file: source,
        "crop rectangle \(left),\(top) \(Int(cw * scale.0))x\(Int(ch * scale.1)) is outside the \(iw)x\(ih) image"
      )
    }
    return (left, top, width, height)
  }

  static func innerSize(width w: Double, height h: Double, degrees: Double) -> (
    width: Double, height: Double
  ) {
    let t = abs(degrees) * .pi / 180
    let f = min(w / (w * cos(t) + h * sin(t)), h / (w * sin(t) + h * cos(t)))
    return (w * f, h * f)
  }

  private static func centred(_ iw: Int, _ ih: Int, width: Double, height: Double) -> Rectangle {
    let cw = max(1, min(iw, Int(width.rounded(.down))))
    let ch = max(1, min(ih, Int(height.rounded(.down))))
    return ((iw - cw) / 2, (ih - ch) / 2, cw, ch)
  }
}
