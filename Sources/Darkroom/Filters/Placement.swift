/// Where an edit's upright pixels lie in the stored image: a rectangle of the stored pixels,
/// mirrored left to right or not, then turned clockwise by quarter turns.
///
/// The EXIF orientation, crops, turns and flips fold into one placement before any pixel is
/// read, as an algebra of rectangles and the eight symmetries of a square. The render then
/// cuts the rectangle out of the stored image (a decoder reading top to bottom skips what a
/// crop throws away), runs the pointwise filters on what is left, and mirrors and turns only
/// that, once, at the end. Turning the whole photo upright first, then cropping, turned and
/// kept in memory pixels that were thrown away.
///
/// Every step moves whole pixels, so the result is the same pixels, bit for bit, as turning
/// upright first and applying the graph in order (`EditRenderTests` compares the two over
/// every orientation).
struct Placement: Equatable {
  /// The rectangle of the stored image, in stored pixels.
  var left: Int
  var top: Int
  var width: Int
  var height: Int
  /// Mirrored left to right, before turning.
  var mirrored: Bool
  /// Clockwise quarter turns, 0 to 3, after mirroring.
  var quarterTurns: Int

  /// The whole stored image, placed as `orientation` says it stands upright.
  init(storedWidth: Int, storedHeight: Int, orientation: Orientation) {
    (left, top, width, height) = (0, 0, storedWidth, storedHeight)
    (mirrored, quarterTurns) =
      switch orientation {
      case .up: (false, 0)
      case .upMirrored: (true, 0)
      case .down: (false, 2)
      case .downMirrored: (true, 2)  // top-bottom is left-right, then a half turn
      case .leftMirrored: (true, 3)  // transpose
      case .right: (false, 1)
      case .rightMirrored: (true, 1)  // transverse
      case .left: (false, 3)
      }
  }

  /// The upright image's width: the rectangle's, or its height after an odd number of turns.
  var uprightWidth: Int { quarterTurns.isMultiple(of: 2) ? width : height }
  /// The upright image's height.
  var uprightHeight: Int { quarterTurns.isMultiple(of: 2) ? height : width }

  /// Whether the pixels need moving after the crop (which needs them in memory).
  var movesPixels: Bool { mirrored || quarterTurns != 0 }

  /// Turns the upright image clockwise.
  mutating func turn(quarterTurns turns: Int) {
    quarterTurns = ((quarterTurns + turns) % 4 + 4) % 4
  }

  /// Mirrors the upright image: left to right, or top to bottom (a left-right mirror and a
  /// half turn). Mirroring after a turn is mirroring before the opposite turn.
  mutating func flip(vertically: Bool) {
    mirrored.toggle()
    quarterTurns = ((vertically ? 2 : 0) - quarterTurns + 4) % 4
  }

  /// Keeps a rectangle of the upright image (in upright pixels, inside it).
  mutating func crop(left x: Int, top y: Int, width w: Int, height h: Int) {
    // Undo the turns one at a time: a rectangle of an image turned clockwise once (of width
    // `turnedWidth`) came from this rectangle of the image before the turn.
    var (x, y, w, h) = (x, y, w, h)
    var turnedWidth = uprightWidth
    for _ in 0..<quarterTurns {
      (x, y, w, h) = (y, turnedWidth - x - w, h, w)
      turnedWidth = turnedWidth == width ? height : width
    }
    if mirrored { x = width - x - w }
    (left, top, width, height) = (left + x, top + y, w, h)
  }

  /// Whether the rectangle is the whole of a stored image of this size.
  func isWhole(storedWidth: Int, storedHeight: Int) -> Bool {
    left == 0 && top == 0 && width == storedWidth && height == storedHeight
  }
}
