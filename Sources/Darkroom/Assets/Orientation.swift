/// EXIF orientation: how the stored pixels must be turned to stand upright.
///
/// Raw values follow EXIF (and TIFF): the position of the stored image's first row and
/// first column in the upright picture.
///
/// ```swift
/// if case .valid(let orientation) = metadata.orientation {
///   print(orientation.summary)  // "rotate 90° clockwise"
/// }
/// ```
///
/// `Orientation` is a `Sendable` value type.
package enum Orientation: Int, Sendable, Codable, CaseIterable {
  /// 1, top-left: stored upright.
  case up = 1
  /// 2, top-right: stored mirrored left-right.
  case upMirrored = 2
  /// 3, bottom-right: stored turned 180°.
  case down = 3
  /// 4, bottom-left: stored mirrored top-bottom.
  case downMirrored = 4
  /// 5, left-top: stored transposed (mirrored across the main diagonal).
  case leftMirrored = 5
  /// 6, right-top: stored turned 90° anticlockwise; shown turned clockwise.
  case right = 6
  /// 7, right-bottom: stored transversed (mirrored across the other diagonal).
  case rightMirrored = 7
  /// 8, left-bottom: stored turned 90° clockwise; shown turned anticlockwise.
  case left = 8

  /// Whether showing the image upright swaps its width and height.
  package var swapsDimensions: Bool { rawValue >= 5 }

  /// What a viewer does to show the stored pixels upright, in words.
  package var summary: String {
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
///
/// Use ``effective`` for geometry; the cases tell a missing, an invalid and an ignored tag
/// apart for display. `OrientationTag` is a `Sendable` value type.
package enum OrientationTag: Sendable, Equatable {
  /// No Orientation tag (or no EXIF at all): the pixels are taken as upright.
  case absent
  /// A tag of 1...8: renderers turn the pixels upright by it.
  case valid(Orientation)
  /// A tag outside 1...8 (or not a number): ignored, as libvips and browsers do.
  case invalid(raw: Int)
  /// A tag in a container whose own transformations (HEIF's `irot` and `imir`) the decoder
  /// already applies, so the stored pixels are upright: informational, ignored for geometry,
  /// as Apple's, Chrome's and libvips' readers do.
  case ignored(raw: Int)

  /// The orientation renderers apply: `.up` unless the tag is valid.
  package var effective: Orientation {
    if case .valid(let orientation) = self { return orientation }
    return .up
  }

  /// The stored number, when there is a tag.
  package var raw: Int? {
    switch self {
    case .absent: nil
    case .valid(let orientation): orientation.rawValue
    case .invalid(let raw), .ignored(let raw): raw
    }
  }

  /// The case as a word, as `darkroom info --json` prints it: `absent`, `valid`, `invalid`
  /// or `ignored`.
  package var status: String {
    switch self {
    case .absent: "absent"
    case .valid: "valid"
    case .invalid: "invalid"
    case .ignored: "ignored"
    }
  }
}
