#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The colour science the editor's filters share: sRGB's transfer function, white points
/// and chromatic adaptation, Oklab, curves through points, homographies.
enum ColourMath {
  typealias Matrix = [Double]  // 3x3, row-major

  static func decode(_ v: Double) -> Double { ToneFilter.decode(v) }
  static func encode(_ v: Double) -> Double { ToneFilter.encode(v) }

  static let identity: Matrix = [1, 0, 0, 0, 1, 0, 0, 0, 1]

  static func multiply(_ a: Matrix, _ b: Matrix) -> Matrix {
    (0..<9).map { i in
      let (row, column) = (i / 3, i % 3)
      return (0..<3).reduce(0) { $0 + a[row * 3 + $1] * b[$1 * 3 + column] }
    }
  }

  static func apply(_ m: Matrix, _ v: [Double]) -> [Double] {
    (0..<3).map { row in m[row * 3] * v[0] + m[row * 3 + 1] * v[1] + m[row * 3 + 2] * v[2] }
  }

  static func inverse(_ m: Matrix) -> Matrix? {
    let (a, b, c, d, e, f, g, h, i) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
    let det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    guard abs(det) > 1e-12 else { return nil }
    return [
      (e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det,
      (f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det,
      (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det,
    ]
  }

  /// Linear sRGB to CIE XYZ (D65), and back.
  static let rgbToXYZ: Matrix = [
    0.4124564, 0.3575761, 0.1804375, 0.2126729, 0.7151522, 0.0721750, 0.0193339, 0.1191920,
    0.9503041,
  ]
  static let xyzToRGB = inverse(rgbToXYZ) ?? identity
  /// Bradford's cone response, the adaptation Lightroom and ICC profiles use.
  static let bradford: Matrix = [
    0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296,
  ]
  static let bradfordInverse = inverse(bradford) ?? identity

  /// D65, sRGB's white, in CIE 1960 uv.
  static let d65 = uv(x: 0.31271, y: 0.32902)

  static func uv(x: Double, y: Double) -> (u: Double, v: Double) {
    let d = -2 * x + 12 * y + 3
    return (4 * x / d, 6 * y / d)
  }

  static func xy(u: Double, v: Double) -> (x: Double, y: Double) {
    let d = 2 * u - 8 * v + 4
    return (3 * u / d, 2 * v / d)
  }

  /// The Planckian locus at `kelvin` (1667...25000), in uv (Kim et al., 2002).
  static func planckian(_ kelvin: Double) -> (u: Double, v: Double) {
    let t = min(25000, max(1667, kelvin))
    let (t1, t2, t3) = (1e3 / t, 1e6 / (t * t), 1e9 / (t * t * t))
    let x =
      t <= 4000
      ? -0.2661239 * t3 - 0.2343589 * t2 + 0.8776956 * t1 + 0.179910
      : -3.0258469 * t3 + 2.1070379 * t2 + 0.2226347 * t1 + 0.240390
    let y: Double
    if t <= 2222 {
      y = -1.1063814 * x * x * x - 1.34811020 * x * x + 2.18555832 * x - 0.20219683
    } else if t <= 4000 {
      y = -0.9549476 * x * x * x - 1.37418593 * x * x + 2.09137015 * x - 0.16748867
    } else {
      y = 3.0817580 * x * x * x - 5.87338670 * x * x + 3.75112997 * x - 0.37001483
    }
    return uv(x: x, y: y)
  }

  /// The white of a light `kelvin` with `tint` (+ greener, as a light that a magenta
  /// correction fixes), in uv: the Planckian locus moved so that 6500 K with no tint is D65
  /// exactly (so `balance` at its defaults changes nothing), then across the locus.
  static func lightWhite(kelvin: Double, tint: Double) -> (u: Double, v: Double) {
    let here = planckian(kelvin)
    let reference = planckian(6500)
    let next = planckian(kelvin * 1.01)
    var normal = (u: -(next.v - here.v), v: next.u - here.u)
    let length = (normal.u * normal.u + normal.v * normal.v).squareRoot()
    if length > 0 { normal = (normal.u / length, normal.v / length) }
    if normal.v < 0 { normal = (-normal.u, -normal.v) }  // towards green
    return (
      here.u + d65.u - reference.u + 0.02 * tint * normal.u,
      here.v + d65.v - reference.v + 0.02 * tint * normal.v
    )
  }

  /// The linear-sRGB matrix that makes `white` (uv) neutral, by Bradford adaptation to D65.
  static func adaptation(from white: (u: Double, v: Double)) -> Matrix {
    func xyz(_ w: (u: Double, v: Double)) -> [Double] {
      let p = xy(u: w.u, v: w.v)
      return [p.x / p.y, 1, (1 - p.x - p.y) / p.y]
    }
    let source = apply(bradford, xyz(white))
    let target = apply(bradford, xyz(d65))
    let scale: Matrix = [
      target[0] / source[0], 0, 0, 0, target[1] / source[1], 0, 0, 0, target[2] / source[2],
    ]
    let cone = multiply(bradfordInverse, multiply(scale, bradford))
    return multiply(xyzToRGB, multiply(cone, rgbToXYZ))
  }

  /// The uv chromaticity of a linear-sRGB colour.
  static func chromaticity(ofLinear rgb: [Double]) -> (u: Double, v: Double) {
    let xyz = apply(rgbToXYZ, rgb)
    let sum = xyz[0] + xyz[1] + xyz[2]
    guard sum > 0 else { return d65 }
    return uv(x: xyz[0] / sum, y: xyz[1] / sum)
  }

  /// Oklab (L, a, b) of a linear-sRGB colour, as the develop pass computes it.
  static func oklab(linear c: [Double]) -> [Double] {
    let l = cbrt(0.4122214708 * c[0] + 0.5363325363 * c[1] + 0.0514459929 * c[2])
    let m = cbrt(0.2119034982 * c[0] + 0.6806995451 * c[1] + 0.1073969566 * c[2])
    let s = cbrt(0.0883024619 * c[0] + 0.2817188376 * c[1] + 0.6299787005 * c[2])
    return [
      0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s,
      1.9779984951 * l - 2.4285922050 * m + 0.4505937099 * s,
      0.0259040371 * l + 0.7827717662 * m - 0.8086757660 * s,
    ]
  }

  /// CIE L*a*b* (D65) of an 8-bit sRGB colour: what tests and Auto measure casts in.
  static func lab(srgb: [Double]) -> [Double] {
    let linear = srgb.map { decode($0 / 255) }
    let xyz = apply(rgbToXYZ, linear)
    let white = [0.95047, 1.0, 1.08883]
    let f = (0..<3).map { i -> Double in
      let t = xyz[i] / white[i]
      return t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116
    }
    return [116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])]
  }

  /// A curve through `points` (x rising), monotone between them (Fritsch and Carlson's
  /// cubic), flat beyond the ends, sampled at `samples` evenly spaced x over 0...1.
  static func monotoneCurve(_ points: [(x: Double, y: Double)], samples: Int) -> [Float] {
    let n = points.count
    guard n >= 2 else { return (0..<samples).map { Float($0) / Float(samples - 1) } }
    var slopes = (0..<n - 1).map {
      (points[$0 + 1].y - points[$0].y) / (points[$0 + 1].x - points[$0].x)
    }
    var tangents = [Double](repeating: 0, count: n)
    tangents[0] = slopes[0]
    tangents[n - 1] = slopes[n - 2]
    for i in 1..<n - 1 {
      tangents[i] = slopes[i - 1] * slopes[i] <= 0 ? 0 : (slopes[i - 1] + slopes[i]) / 2
    }
    for i in 0..<n - 1 {
      if slopes[i] == 0 {
        tangents[i] = 0
        tangents[i + 1] = 0
        continue
      }
      let a = tangents[i] / slopes[i]
      let b = tangents[i + 1] / slopes[i]
      let h = a * a + b * b
      if h > 9 {
        let t = 3 / h.squareRoot()
        tangents[i] = t * a * slopes[i]
        tangents[i + 1] = t * b * slopes[i]
      }
    }
    slopes.removeAll()
    var segment = 0
    return (0..<samples).map { index in
      let x = Double(index) / Double(samples - 1)
      if x <= points[0].x { return Float(points[0].y) }
      if x >= points[n - 1].x { return Float(points[n - 1].y) }
      while x > points[segment + 1].x { segment += 1 }
      let (p0, p1) = (points[segment], points[segment + 1])
      let h = p1.x - p0.x
      let t = (x - p0.x) / h
      let (t2, t3) = (t * t, t * t * t)
      let y =
        (2 * t3 - 3 * t2 + 1) * p0.y + (t3 - 2 * t2 + t) * h * tangents[segment]
        + (-2 * t3 + 3 * t2) * p1.y + (t3 - t2) * h * tangents[segment + 1]
      return Float(min(1, max(0, y)))
    }
  }

  /// The homography (row-major) that takes each of `from` to the same index of `to`
  /// (four points each, no three in a line); nil when they do not determine one.
  static func homography(from: [(Double, Double)], to: [(Double, Double)]) -> [Double]? {
    guard from.count == 4, to.count == 4 else { return nil }
    // h8 = 1; two equations per point, solved by Gaussian elimination with pivoting.
    var rows: [[Double]] = []
    for ((x, y), (u, v)) in zip(from, to) {
      rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, u])
      rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, v])
    }
    for column in 0..<8 {
      guard
        let pivot = (column..<8).max(by: { abs(rows[$0][column]) < abs(rows[$1][column]) }),
        abs(rows[pivot][column]) > 1e-12
      else { return nil }
      rows.swapAt(column, pivot)
      for row in 0..<8 where row != column {
        let factor = rows[row][column] / rows[column][column]
        if factor != 0 {
          for k in column..<9 { rows[row][k] -= factor * rows[column][k] }
        }
      }
    }
    return (0..<8).map { rows[$0][8] / rows[$0][$0] } + [1]
  }
}
