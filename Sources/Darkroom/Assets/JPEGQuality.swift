/// The quality a JPEG was written at, estimated from its quantisation tables: the IJG
/// quality (1-100, as libjpeg's `jpeg_set_quality`, libvips' `Q` and ImageMagick's
/// `-quality` mean it) whose scaled standard tables are nearest to the file's.
///
/// A JPEG written by libjpeg at quality Q gives back exactly Q. Cameras and phones use tables
/// of their own: the estimate is then the IJG quality that quantises as coarsely, which is
/// what an edit should be encoded at to come out about as large as its source.
///
/// ```swift
/// let quality = JPEGQuality.estimate(bytes)  // 85 for a file saved with Q=85; nil: no tables
/// ```
package enum JPEGQuality {
  /// The estimate, or nil for bytes that are not a JPEG or have no 8-bit luminance table
  /// before their first scan.
  package static func estimate(_ bytes: [UInt8]) -> Int? {
    guard let tables = quantisationTables(bytes), let luminance = tables[0] else { return nil }
    let chrominance = tables[1]
    var best: (quality: Int, distance: Int)?
    // Highest first: where two qualities give the same tables (near 100), the higher wins.
    for quality in stride(from: 100, through: 1, by: -1) {
      var far = distance(luminance, standardLuminance, quality)
      if let chrominance { far += distance(chrominance, standardChrominance, quality) }
      if far < best?.distance ?? .max { best = (quality, far) }
      if far == 0 { break }
    }
    return best?.quality
  }

  /// The file's 8-bit quantisation tables by slot (0-3), in zigzag order, as its DQT segments
  /// before the first scan give them; nil for bytes that are not a JPEG.
  static func quantisationTables(_ bytes: [UInt8]) -> [Int: [Int]]? {
    guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
    var tables: [Int: [Int]] = [:]
    var offset = 2
    while offset + 4 <= bytes.count {
      guard bytes[offset] == 0xFF else { return tables }
      let marker = bytes[offset + 1]
      if marker == 0xFF {  // fill byte
        offset += 1
        continue
      }
      // Start of scan or end of image: no tables come after that matter here.
      if marker == 0xDA || marker == 0xD9 { return tables }
      if (0xD0...0xD7).contains(marker) || marker == 0x01 {
        offset += 2
        continue
      }
      let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
      guard length >= 2, offset + 2 + length <= bytes.count else { return tables }
      if marker == 0xDB {
        var at = offset + 4
        let end = offset + 2 + length
        while at < end {
          let precision = bytes[at] >> 4
          let slot = Int(bytes[at] & 0x0F)
          let size = precision == 0 ? 64 : 128
          guard at + 1 + size <= end, slot < 4 else { break }
          if precision == 0 { tables[slot] = bytes[at + 1..<at + 1 + 64].map(Int.init) }
          at += 1 + size
        }
      }
      offset += 2 + length
    }
    return tables
  }

  /// How far `table` (zigzag order) is from `standard` (natural order) scaled to `quality`.
  private static func distance(_ table: [Int], _ standard: [Int], _ quality: Int) -> Int {
    let scale = quality < 50 ? 5000 / quality : 200 - quality * 2
    var sum = 0
    for (position, natural) in zigzag.enumerated() {
      let expected = min(255, max(1, (standard[natural] * scale + 50) / 100))
      sum += abs(table[position] - expected)
    }
    return sum
  }

  /// The natural index of each zigzag position.
  private static let zigzag = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27,
    20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
  ]

  /// The JPEG standard's example tables (ITU-T T.81, Annex K), which libjpeg scales.
  private static let standardLuminance = [
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57,
    69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64,
    81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
  ]
  private static let standardChrominance =
    [17, 18, 24, 47] + [Int](repeating: 99, count: 4) + [18, 21, 26, 66]
    + [Int](repeating: 99, count: 4) + [24, 26, 56] + [Int](repeating: 99, count: 5) + [47, 66]
    + [Int](repeating: 99, count: 38)
}
