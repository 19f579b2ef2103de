import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A photo's perceptual hash (pHash): 64 bits that change little when the photo is resized,
/// recompressed, converted to another format, lightly cropped or brightened, and a lot
/// between different photos. The photo is shrunk on load to 32x32 grey pixels, turned
/// upright, and the lowest 8x8 frequencies of its discrete cosine transform each give a bit:
/// above their median or not.
public enum PerceptualHash {
  /// The side of the grey thumbnail the transform reads.
  static let side = 32

  /// The hash of the photo at `path`.
  ///
  /// - Throws: A ``DarkroomError`` naming the file when it cannot be read or decoded, or is
  ///   in a format ``TrustedFormats`` does not let through.
  public static func of(path: String, failOn: FailOn = .error) throws(DarkroomError) -> UInt64 {
    let file = try InputFile(path)
    let head = try file.read(at: 0, count: min(file.size, 32))[...]
    try TrustedFormats.check(head, file: path)
    try Vips.prepareLoader(for: TrustedFormats.sniff(head))
    let grey = try Vips.attributingErrors(file: path) { () throws(DarkroomError) -> [UInt8] in
      var options = VipsImage.ThumbnailOptions(width: side, height: side)
      options.size = 3  // force: the whole frame, squeezed to a square
      options.failOn = failOn
      let image = try VipsImage.thumbnail(path: path, options)
        .greyscale([0.299, 0.587, 0.114])
      let pixels = try image.pixels()
      let bands = pixels.count / (side * side)
      guard bands >= 1, image.width == side, image.height == side else {
        throw DarkroomError(.engine, file: path, "the fingerprint's thumbnail has the wrong size")
      }
      return stride(from: 0, to: pixels.count, by: bands).map { pixels[$0] }
    }
    return hash(grey: grey)
  }

  /// The hash of 32x32 grey pixels, row after row.
  static func hash(grey: [UInt8]) -> UInt64 {
    // Rows of the DCT-II basis for the 8 lowest frequencies.
    let n = side
    var basis = [Double](repeating: 0, count: 8 * n)
    for u in 0..<8 {
      for x in 0..<n {
        let angle = Double.pi * Double(u) * (2 * Double(x) + 1) / (2 * Double(n))
        basis[u * n + x] = cos(angle)
      }
    }
    // rows = basis (8 x n) * pixels (n x n), then coefficients = rows * basisᵀ (8 x 8).
    var rows = [Double](repeating: 0, count: 8 * n)
    for u in 0..<8 {
      for y in 0..<n {
        let weight = basis[u * n + y]
        for x in 0..<n { rows[u * n + x] += weight * Double(grey[y * n + x]) }
      }
    }
    var coefficients = [Double](repeating: 0, count: 64)
    for u in 0..<8 {
      for v in 0..<8 {
        var sum = 0.0
        for x in 0..<n { sum += rows[u * n + x] * basis[v * n + x] }
        coefficients[u * 8 + v] = sum
      }
    }
    let median = coefficients.sorted()[32]
    var bits: UInt64 = 0
    for (index, value) in coefficients.enumerated() where value > median {
      bits |= 1 << UInt64(index)
    }
    return bits
  }
}
