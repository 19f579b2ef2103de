import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A photo's perceptual hashes (pHash): 64 bits that change little when the photo is resized,
/// recompressed, converted to another format, lightly cropped or brightened, and a lot
/// between different photos. The photo is shrunk on load to 64x64 grey pixels, turned
/// upright; the whole frame (averaged down to 32x32) and its central quarter (the middle
/// 32x32) each give a hash: the lowest 8x8 frequencies of their discrete cosine transform,
/// each a bit, above their median or not. The centre's hash tells apart what the whole
/// frame's alone does not: the same scene taken a little wider or closer.
package enum PerceptualHash {
  /// The side of the grey thumbnail the transform reads.
  static let side = 32

  /// The hashes of the photo at `path`: of the whole frame, and of its central quarter.
  ///
  /// - Throws: A ``DarkroomError`` naming the file when it cannot be read or decoded, or is
  ///   in a format ``TrustedFormats`` does not let through.
  package static func of(path: String, failOn: FailOn = .error) throws(DarkroomError)
    -> (whole: UInt64, centre: UInt64)
  {
    let file = try InputFile(path)
    let head = try file.read(at: 0, count: min(file.size, 32))[...]
    try TrustedFormats.check(head, file: path)
    try Vips.prepareLoader(for: TrustedFormats.sniff(head, name: path))
    let grey = try Vips.attributingErrors(file: path) { () throws(DarkroomError) -> [UInt8] in
      var options = VipsImage.ThumbnailOptions(width: 2 * side, height: 2 * side)
      options.size = 3  // force: the whole frame, squeezed to a square
      options.failOn = failOn
      let image = try VipsImage.thumbnail(path: path, options)
        .greyscale([0.299, 0.587, 0.114])
      let pixels = try image.pixels()
      let bands = pixels.count / (4 * side * side)
      guard bands >= 1, image.width == 2 * side, image.height == 2 * side else {
        throw DarkroomError(.engine, file: path, "the fingerprint's thumbnail has the wrong size")
      }
      return stride(from: 0, to: pixels.count, by: bands).map { pixels[$0] }
    }
    // The whole frame, each 2x2 block averaged; the middle 32x32 as it is.
    let wide = 2 * side
    var whole = [UInt8](repeating: 0, count: side * side)
    var centre = [UInt8](repeating: 0, count: side * side)
    for y in 0..<side {
      for x in 0..<side {
        let top = 2 * y * wide + 2 * x
        let sum =
          Int(grey[top]) + Int(grey[top + 1]) + Int(grey[top + wide]) + Int(grey[top + wide + 1])
        whole[y * side + x] = UInt8((sum + 2) / 4)
        centre[y * side + x] = grey[(y + side / 2) * wide + x + side / 2]
      }
    }
    return (hash(grey: whole), hash(grey: centre))
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
