/// A transformative property of a HEIF image item, applied to its decoded picture in the order
/// `ipma` lists them, as libheif applies them (ISO/IEC 23008-12, 6.5.9-6.5.12): `clap` cuts
/// the clean aperture out, `irot` turns, `imir` mirrors. The EXIF orientation is not one:
/// HEIF's transforms are these properties, as libvips and libheif have it.
enum HEIFTransform: Equatable {
  /// `clap`: the clean aperture's size and its centre's offset from the picture's centre,
  /// each a fraction (numerator, denominator).
  case crop(width: Fraction, height: Fraction, horizontal: Fraction, vertical: Fraction)
  /// `irot`: quarter turns anticlockwise (0-3).
  case rotate(anticlockwise: Int)
  /// `imir`: left and right swapped (mode 1), or top and bottom (mode 0). HEIF's second
  /// edition calls the field `mode`; the first called it `axis`, which read the other way
  /// round. libheif 1.15 and avifenc agree on this reading (checked: an `--imir 0` AVIF is
  /// turned upside down by both).
  case mirror(leftRight: Bool)

  /// A `clap` field: numerator over denominator, exact.
  struct Fraction: Equatable {
    var numerator: Int
    var denominator: Int
  }

  /// The transforms among `properties`, in order; nil when one is malformed, or is a `clap`
  /// and `clap` is false (a reader that does not cut).
  static func list(
    _ properties: [(type: String, payload: ArraySlice<UInt8>)], clap: Bool
  ) -> [HEIFTransform]? {
    var transforms: [HEIFTransform] = []
    for property in properties {
      switch property.type {
      case "irot":
        guard let angle = property.payload.first else { return nil }
        transforms.append(.rotate(anticlockwise: Int(angle & 3)))
      case "imir":
        guard let axis = property.payload.first else { return nil }
        transforms.append(.mirror(leftRight: axis & 1 == 1))
      case "clap":
        let fields = Array(property.payload)
        guard clap, fields.count >= 32 else { return nil }
        func field(_ index: Int, signed: Bool) -> Int {
          let value =
            UInt32(fields[index * 4]) << 24 | UInt32(fields[index * 4 + 1]) << 16
            | UInt32(fields[index * 4 + 2]) << 8 | UInt32(fields[index * 4 + 3])
          return signed ? Int(Int32(bitPattern: value)) : Int(value)
        }
        let parts = (0..<4).map { pair in
          Fraction(
            numerator: field(pair * 2, signed: pair >= 2),
            denominator: field(pair * 2 + 1, signed: false))
        }
        // Whole and half pixels only: libheif's fractions lose precision past them (a
        // second reader found 400000/100 on 4032 columns cut differently), so other clean
        // apertures are left to libheif. The sums below stay far inside Int.
        guard parts.allSatisfy({ $0.denominator == 1 || $0.denominator == 2 }),
          parts[0].numerator > 0, parts[1].numerator > 0
        else { return nil }
        transforms.append(
          .crop(width: parts[0], height: parts[1], horizontal: parts[2], vertical: parts[3]))
      default: continue
      }
    }
    return transforms
  }

  /// Whether `transforms` turn the picture a quarter (its sides swap when shown).
  static func swapsSides(_ transforms: [HEIFTransform]) -> Bool {
    transforms.reduce(false) { swapped, transform in
      if case .rotate(let turns) = transform, turns % 2 == 1 { return !swapped }
      return swapped
    }
  }

  /// `image` transformed by each of `transforms` in turn.
  ///
  /// - Throws: A ``DarkroomError`` (`corrupt`) for a clean aperture outside the picture.
  static func apply(_ transforms: [HEIFTransform], to image: VipsImage)
    throws(DarkroomError) -> VipsImage
  {
    var image = image
    for transform in transforms {
      switch transform {
      case .rotate(let turns) where turns > 0:
        image = try image.rotated(quarterTurns: 4 - turns)
      case .rotate: continue
      case .mirror(let leftRight): image = try image.flipped(vertically: !leftRight)
      case .crop(let width, let height, let horizontal, let vertical):
        guard
          let columns = cleanAperture(size: width, offset: horizontal, of: image.width, top: false),
          let rows = cleanAperture(size: height, offset: vertical, of: image.height, top: true)
        else {
          throw DarkroomError(.corrupt, "its clean aperture (clap) lies outside the picture")
        }
        image = try image.cropped(
          left: columns.lowerBound, top: rows.lowerBound, width: columns.count,
          height: rows.count)
      }
    }
    return image
  }

  /// The columns (or rows) a clean aperture keeps of `length`, rounded as libheif rounds
  /// them: the first column down, the first row to the nearest, the last of each from the
  /// first and the size; clamped to the picture. nil when nothing is left.
  static func cleanAperture(size: Fraction, offset: Fraction, of length: Int, top: Bool)
    -> Range<Int>?
  {
    // first = offset + (length - 1) / 2 - (size - 1) / 2, over a common denominator.
    let d = size.denominator * offset.denominator * 2
    let first =
      offset.numerator * size.denominator * 2 + (length - 1) * size.denominator
      * offset.denominator - (size.numerator - size.denominator) * offset.denominator
    let rounded = top ? (first + d / 2) / d : first / d
    // last = size - 1 + first, rounded to the nearest.
    let last =
      (size.numerator - size.denominator + rounded * size.denominator + size.denominator / 2)
      / size.denominator
    let start = max(rounded, 0)
    let end = min(last, length - 1)
    return start <= end ? start..<end + 1 : nil
  }
}
