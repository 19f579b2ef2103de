/// EXIF orientation: how the stored pixels must be turned to stand upright.
///
/// Raw values follow EXIF (and TIFF): the position of the stored image's first row and
/// first column in the upright picture.
public enum Orientation: Int, Sendable, Codable, CaseIterable {
  case up = 1  // top-left: stored upright
  case upMirrored = 2  // top-right: mirrored left-right
  case down = 3  // bottom-right: turned 180°
  case downMirrored = 4  // bottom-left: mirrored top-bottom
  case leftMirrored = 5  // left-top: transposed
  case right = 6  // right-top: stored turned 90° anticlockwise; shown turned clockwise
  case rightMirrored = 7  // right-bottom: transversed
  case left = 8  // left-bottom: stored turned 90° clockwise

  /// Whether showing the image upright swaps its width and height.
  public var swapsDimensions: Bool { rawValue >= 5 }

  /// What a viewer does to show the stored pixels upright, in words.
  public var summary: String {
    switch self {
    case .up: "upright as stored"
    case .upMirrored: "mirror left-right"
    case .down: "rotate 180°"
    case .downMirrored: "mirror top-bottom"
    case .leftMirrored: "mirror left-right, then rotate 90° anticlockwise"
    case .right: "rotate 90° clockwise"
    case .rightMirrored: "mirror left-right, then rotate 90° clockwise"
    case .left: "rotate 90° anticlockwise"
    }
  }
}

/// What the file's Orientation tag says, kept apart from what Darkroom will do with it.
public enum OrientationTag: Sendable, Equatable {
  /// No Orientation tag (or no EXIF at all): the pixels are taken as upright.
  case absent
  case valid(Orientation)
  /// A tag outside 1...8 (or not a number): ignored, as libvips and browsers do.
  case invalid(raw: Int)
  /// A tag in a container whose own transformations (HEIF's `irot` and `imir`) the decoder
  /// already applies, so the stored pixels are upright: informational, ignored for geometry,
  /// as Apple's, Chrome's and libvips' readers do.
  case ignored(raw: Int)

  /// The orientation renderers apply: `.up` unless the tag is valid.
  public var effective: Orientation {
    if case .valid(let orientation) = self { return orientation }
    return .up
  }

  /// The stored number, when there is a tag.
  public var raw: Int? {
    switch self {
    case .absent: nil
    case .valid(let orientation): orientation.rawValue
    case .invalid(let raw), .ignored(let raw): raw
    }
  }

  public var status: String {
    switch self {
    case .absent: "absent"
    case .valid: "valid"
    case .invalid: "invalid"
    case .ignored: "ignored"
    }
  }
}
