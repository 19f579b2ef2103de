/// The quality a HEIC photo was written at, estimated from its bitstream: the quantiser
/// (QP) of the primary image's first slice, as its `hvcC` parameter sets and slice header
/// give it, turned into libheif's quality scale (x265's CRF is (100 - quality) / 2).
///
/// As ``JPEGQuality`` does for a JPEG's tables: an edit encoded at this quality comes out
/// about as large as its source. A file written by libheif at quality Q gives back Q within a
/// few points (x265 quantises intra pictures finer than its CRF says: measured and folded
/// into ``qpOffset``); a phone's encoder gives the quality that quantises as coarsely.
///
/// ```swift
/// let quality = HEVCQuality.estimate(bytes)  // 52 for an iPhone photo; nil: not HEVC HEIF
/// ```
package enum HEVCQuality {
  /// Slice QP minus CRF for x265's intra pictures (libheif's own files): measured with
  /// `heif-enc -q Q` for Q from 30 to 90, presets ultrafast to slow.
  static let qpOffset = -3

  /// The estimate, or nil for bytes that are not a HEIF whose primary image (or its grid's
  /// first tile) is HEVC with an intra slice this reader follows. Reads only the `meta` box
  /// and the first few bytes of that image's data.
  package static func estimate(_ bytes: [UInt8]) -> Int? {
    guard let qp = sliceQP(bytes) else { return nil }
    return min(100, max(1, 100 - 2 * (qp - qpOffset)))
  }

  /// The QP of the first slice of the primary image (or its first tile).
  static func sliceQP(_ bytes: [UInt8]) -> Int? {
    guard let (config, data) = primaryCoded(bytes, type: "hvc1", property: "hvcC") else {
      return nil
    }
    return HEVCSlice.qp(config: config, data: data)
  }

  /// The coded data of a HEIF's primary image (or its grid's first tile) when it is an item
  /// of `type` (`hvc1`, `av01`), with the payload of its `property` (`hvcC`, `av1C`): its first
  /// extent, which holds the headers read.
  static func primaryCoded(_ bytes: [UInt8], type: String, property: String)
    -> (config: ArraySlice<UInt8>, data: ArraySlice<UInt8>)?
  {
    guard let items = HEIFItems(bytes) else { return nil }
    var item = items.primary
    if items.types[item] == "grid" {
      guard let tile = items.parts(of: item)?.first else { return nil }
      item = tile
    }
    guard items.types[item] == type, let config = items.property(property, of: item),
      let first = items.extents[item]?.first, first.upperBound <= bytes.count
    else { return nil }
    return (config, bytes[first])
  }
}
