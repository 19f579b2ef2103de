import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// darktable's `ashift` ("rotate and perspective"), read by its params' layouts (v1-v5;
/// darktable 4.2 writes v5) and drawn as Darkroom's `warp`: the same projective map at the
/// same size, so the same pixels where they land, sampled bilinearly where darktable's
/// default is bicubic (SSIM 0.995 against darktable-cli 4.2: Scripts/darktable-compare.py).
/// darktable-cli's own export can differ by its last row and column, or (a photo its EXIF
/// turns a quarter) be scaled by 1 + 1/its shorter side: its export's rounding, not the
/// module's.
///
/// darktable composes a rotation about the centre, a shear, a vertical then a horizontal
/// lens shift (each a projective stretch of one axis, `exp(shift)` wide at one end), with,
/// in its "specific" mode, a compression from the focal length and an aspect change; then
/// moves the result so that the corner pixels' images start at 0, and keeps the fractions
/// `cl`...`cr` x `ct`...`cb` of their bounding box (one pixel larger than the box between
/// the corner pixels' centres). It runs before darktable's `flip`, on the pixels as stored:
/// with an EXIF turn the map is turned with it.
extension ForeignEdit {
  /// The fields of every params version as v5's (rotation in degrees; margins as fractions).
  struct AshiftParams: Equatable {
    var rotation = 0.0, shiftV = 0.0, shiftH = 0.0, shear = 0.0
    var focalLength = 28.0, cropFactor = 1.0, orthocorr = 100.0, aspect = 1.0
    var specific = false
    var left = 0.0, right = 1.0, top = 0.0, bottom = 1.0

    /// v1 (16 bytes), v2 (36), v3 (56), v4 (60) or v5 (892), told apart by size (each
    /// version has its own; darktable goes by the history's modversion, which the sidecar
    /// reader does not keep); nil for any other size, a mode other than generic (0) or
    /// specific (1), or a value out of its range.
    init?(_ words: [UInt32]) {
      let float = { (index: Int) in Double(Float(bitPattern: words[index])) }
      switch words.count {
      case 4: (rotation, shiftV, shiftH) = (float(0), float(1), float(2))
      case 9, 14:
        (rotation, shiftV, shiftH) = (float(0), float(1), float(2))
        (focalLength, cropFactor, orthocorr, aspect) = (float(3), float(4), float(5), float(6))
        guard words[7] <= 1 else { return nil }
        specific = words[7] == 1
        if words.count == 14 {
          (left, right, top, bottom) = (float(10), float(11), float(12), float(13))
        }
      case 15, 223:
        (rotation, shiftV, shiftH, shear) = (float(0), float(1), float(2), float(3))
        (focalLength, cropFactor, orthocorr, aspect) = (float(4), float(5), float(6), float(7))
        guard words[8] <= 1 else { return nil }
        specific = words[8] == 1
        let margins = words.count == 15 ? 11 : 10
        (left, right, top, bottom) = (
          float(margins), float(margins + 1), float(margins + 2), float(margins + 3)
        )
      default: return nil
      }
      let all = [
        rotation, shiftV, shiftH, shear, focalLength, cropFactor, orthocorr, aspect, left, right,
        top, bottom,
      ]
      guard all.allSatisfy(\.isFinite), abs(rotation) <= 180, abs(shiftV) <= 2, abs(shiftH) <= 2,
        abs(shear) <= 0.5, 0 <= left, left < right, right <= 1, 0 <= top, top < bottom,
        bottom <= 1
      else { return nil }
      if specific {
        guard focalLength > 0, cropFactor > 0, (0...100).contains(orthocorr), aspect > 0 else {
          return nil
        }
      }
    }

    /// darktable's test for a module that changes nothing (it then copies its input).
    var isNeutral: Bool {
      let e = 1e-4
      return abs(rotation) < e && abs(shiftV) < e && abs(shiftH) < e && abs(shear) < e
        && (!specific || abs(aspect - 1) < e) && left < e && 1 - right < e && top < e
        && 1 - bottom < e
    }
  }

  /// darktable's `ashift` on an image stored `width` x `height` (before its EXIF turn
  /// `exif`), as a `warp` of the upright image; nil for params it cannot read.
  static func darktableAshift(_ params: [UInt32], width: Int, height: Int, exif: Orientation)
    -> DarktableModule?
  {
    guard let p = AshiftParams(params), width > 1, height > 1 else { return nil }
    if p.isNeutral { return ([], true) }
    let (w, h) = (Double(width), Double(height))
    let forward = ashiftHomography(p, width: w, height: h)
    // The bounding box of the corner pixels' images (their centres at integer coordinates),
    // one pixel wider and taller, cut to the margins.
    let centres = [(0.0, 0.0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)]
    let mapped = centres.map { apply(forward, $0) }
    guard mapped.allSatisfy({ $0.0.isFinite && $0.1.isFinite }) else { return nil }
    let boxWidth = mapped.map(\.0).max()! - mapped.map(\.0).min()! + 1
    let boxHeight = mapped.map(\.1).max()! - mapped.map(\.1).min()! + 1
    let outWidth = (boxWidth * (p.right - p.left)).rounded(.down)
    let outHeight = (boxHeight * (p.bottom - p.top)).rounded(.down)
    guard outWidth >= 1, outHeight >= 1, let inverse = ColourMath.inverse(forward) else {
      return nil
    }
    let (cx, cy) = (outWidth / (p.right - p.left) * p.left, outHeight / (p.bottom - p.top) * p.top)
    // The result's corners (its pixels' edges), back in the stored image, as fractions.
    let edges = [(0.0, 0.0), (outWidth, 0), (outWidth, outHeight), (0, outHeight)]
    var source: [(Double, Double)] = []
    for (x, y) in edges {
      let (sx, sy) = apply(inverse, (x - 0.5 + cx, y - 0.5 + cy))
      guard sx.isFinite, sy.isFinite else { return nil }
      source.append(((sx + 0.5) / w, (sy + 0.5) / h))
    }
    // Turned as the EXIF turns the stored image: the upright result's corner k is the
    // stored result's corner that the turn brings there.
    let unitCorners = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    var corners: [(Double, Double)] = []
    for upright in unitCorners {
      guard let stored = unitCorners.firstIndex(where: { upright == turned($0, exif) }) else {
        return nil
      }
      corners.append(turned(source[stored], exif))
    }
    let fractions = (outWidth / w, outHeight / h)
    let (widthFraction, heightFraction) =
      exif.swapsDimensions ? (fractions.1, fractions.0) : fractions
    var values: [String: FilterValue] = [
      "width": .number(sixPlaces(widthFraction)), "height": .number(sixPlaces(heightFraction)),
    ]
    for (index, corner) in corners.enumerated() {
      values["x\(index + 1)"] = .number(sixPlaces(corner.0))
      values["y\(index + 1)"] = .number(sixPlaces(corner.1))
    }
    guard let node = try? FilterNode("warp", values) else { return nil }
    return ([node], true)
  }

  /// A point of the stored image (fractions) where the EXIF turn `exif` puts it upright.
  static func turned(_ point: (Double, Double), _ exif: Orientation) -> (Double, Double) {
    let (x, y) = point
    switch exif {
    case .up: return (x, y)
    case .upMirrored: return (1 - x, y)
    case .down: return (1 - x, 1 - y)
    case .downMirrored: return (x, 1 - y)
    case .leftMirrored: return (y, x)
    case .right: return (1 - y, x)
    case .rightMirrored: return (1 - y, 1 - x)
    case .left: return (y, 1 - x)
    }
  }

  /// darktable's forward map, from a stored pixel (its centre at integer coordinates) to
  /// the uncut result, row-major 3x3.
  static func ashiftHomography(_ p: AshiftParams, width u: Double, height v: Double) -> [Double] {
    let focal = p.specific ? p.focalLength * p.cropFactor : 28
    let orthocorr = p.specific ? p.orthocorr : 0
    let aspect = p.specific ? p.aspect : 1
    // One axis's lens shift (that axis first, `along` long, the other `across`), and the
    // specific mode's compression of the other axis.
    func shift(_ amount: Double, along: Double, across: Double) -> (
      stretch: [Double], compression: Double
    ) {
      let e = exp(amount)
      let stretch = [
        e, 0, 0, (e - 1) * across / (2 * along), 2 * e / (e + 1), -(e - 1) * across / (2 * (e + 1)),
        (e - 1) / along, 0, 1,
      ]
      let angle = atan(focal / (14.4 + (along / across - 1) * 7.2) * (e - 1) / (e + 1))
      let half = sin(0.5 * min(max(angle, -1.5), 1.5))
      return (stretch, max(0.1, 1 - 2 * (orthocorr / 100) * half * half))
    }
    func compress(_ r: Double, across: Double) -> [Double] {
      [1, 0, 0, 0, r, across * (1 - r) / 2, 0, 0, 1]
    }
    let phi = p.rotation * .pi / 180
    let (c, s) = (cos(phi), sin(phi))
    let swap: [Double] = [0, 1, 0, 1, 0, 0, 0, 0, 1]
    let rotate = [
      c, -s, v / 2 - v / 2 * c + u / 2 * s, s, c, u / 2 - v / 2 * s - u / 2 * c, 0, 0, 1,
    ]
    let shear = [1, p.shear, 0, p.shear, 1, 0, 0, 0, 1]
    let vertical = shift(p.shiftV, along: v, across: u)
    let horizontal = shift(p.shiftH, along: u, across: v)
    let stretch = [aspect.squareRoot(), 0, 0, 0, 1 / aspect.squareRoot(), 0, 0, 0, 1]
    var m = swap
    for step in [
      rotate, shear, vertical.stretch, compress(vertical.compression, across: u), swap,
      horizontal.stretch, compress(horizontal.compression, across: v), stretch,
    ] {
      m = ColourMath.multiply(step, m)
    }
    // Moved so that the corner pixels' images start at 0.
    let corners = [(0.0, 0.0), (u - 1, 0), (0, v - 1), (u - 1, v - 1)].map { apply(m, $0) }
    let (minX, minY) = (corners.map(\.0).min() ?? 0, corners.map(\.1).min() ?? 0)
    return ColourMath.multiply([1, 0, -minX, 0, 1, -minY, 0, 0, 1], m)
  }

  /// A point through the homography `m` (row-major 3x3), back from homogeneous form.
  static func apply(_ m: [Double], _ point: (Double, Double)) -> (Double, Double) {
    let (x, y) = point
    let z = m[6] * x + m[7] * y + m[8]
    return ((m[0] * x + m[1] * y + m[2]) / z, (m[3] * x + m[4] * y + m[5]) / z)
  }
}
