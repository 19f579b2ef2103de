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
public enum HEVCQuality {
  /// Slice QP minus CRF for x265's intra pictures (libheif's own files): measured with
  /// `heif-enc -q Q` for Q from 30 to 90, presets ultrafast to slow.
  static let qpOffset = -3

  /// The estimate, or nil for bytes that are not a HEIF whose primary image (or its grid's
  /// first tile) is HEVC with an intra slice this reader follows. Reads only the `meta` box
  /// and the first few bytes of that image's data.
  public static func estimate(_ bytes: [UInt8]) -> Int? {
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
  /// of `type` (`hvc1`, `av01`), with the payload of its `property` (`hvcC`, `av1C`).
  static func primaryCoded(_ bytes: [UInt8], type: String, property: String)
    -> (config: ArraySlice<UInt8>, data: ArraySlice<UInt8>)?
  {
    guard let meta = ISOBoxes.topLevel("meta", in: bytes), meta.count > 4 else { return nil }
    let boxes = ISOBoxes.children(in: bytes, range: meta.lowerBound + 4..<meta.upperBound)
    guard let pitm = boxes["pitm"], let primary = ISOBoxes.itemID(bytes, pitm, at: 4),
      let types = boxes["iinf"].map({ itemTypes(bytes, $0) }),
      let locations = boxes["iloc"].flatMap({ itemLocations(bytes, $0) })
    else { return nil }
    var item = primary.value
    if types[item] == "grid" {
      guard let tile = boxes["iref"].flatMap({ firstReference(bytes, $0, "dimg", from: item) })
      else { return nil }
      item = tile
    }
    guard types[item] == type, let iprp = boxes["iprp"],
      let config = itemProperty(bytes, iprp, item: item, type: property),
      let location = locations[item], location.upperBound <= bytes.count
    else { return nil }
    return (config, bytes[location])
  }

  /// Item types by id, from `iinf` (its `infe` entries of version 2 or 3).
  private static func itemTypes(_ bytes: [UInt8], _ iinf: Range<Int>) -> [Int: String] {
    guard iinf.count >= 6 else { return [:] }
    let start = iinf.lowerBound + (bytes[iinf.lowerBound] == 0 ? 6 : 8)
    var types: [Int: String] = [:]
    var at = start
    while let (type, payload, next) = ISOBoxes.next(in: bytes, at: at, end: iinf.upperBound) {
      at = next
      guard type == "infe", payload.count >= 12 else { continue }
      let version = bytes[payload.lowerBound]
      guard version == 2 || version == 3,
        let id = ISOBoxes.number(bytes, payload.lowerBound + 4, version == 2 ? 2 : 4)
      else { continue }
      let typeAt = payload.lowerBound + 4 + (version == 2 ? 2 : 4) + 2
      guard typeAt + 4 <= payload.upperBound else { continue }
      types[id] = String(decoding: bytes[typeAt..<typeAt + 4], as: UTF8.self)
    }
    return types
  }

  /// Each item's first extent, from `iloc` (versions 0-2, offsets in the file).
  private static func itemLocations(_ bytes: [UInt8], _ iloc: Range<Int>) -> [Int: Range<Int>]? {
    var reader = ISOBoxes.Reader(bytes: bytes, at: iloc.lowerBound, end: iloc.upperBound)
    guard let version = reader.read(1), version <= 2, reader.skip(3),
      let sizes = reader.read(1), let more = reader.read(1),
      let count = reader.read(version < 2 ? 2 : 4)
    else { return nil }
    let offsetSize = sizes >> 4
    let lengthSize = sizes & 0xF
    let baseSize = more >> 4
    let indexSize = version == 0 ? 0 : more & 0xF
    var locations: [Int: Range<Int>] = [:]
    for _ in 0..<min(count, 4096) {
      guard let id = reader.read(version < 2 ? 2 : 4) else { return nil }
      var method = 0
      if version > 0 {
        guard let value = reader.read(2) else { return nil }
        method = value & 0xF
      }
      guard reader.skip(2), let base = reader.read(baseSize), let extents = reader.read(2)
      else { return nil }
      for extent in 0..<extents {
        guard reader.skip(indexSize), let offset = reader.read(offsetSize),
          let length = reader.read(lengthSize)
        else { return nil }
        // Method 0 is offsets in the file; the others (in `idat`, or by item) are not read.
        if extent == 0, method == 0, length > 0, base + offset >= 0 {
          locations[id] = base + offset..<base + offset + length
        }
      }
    }
    return locations
  }

  /// The first item `from` refers to by `kind` in `iref`.
  private static func firstReference(
    _ bytes: [UInt8], _ iref: Range<Int>, _ kind: String, from: Int
  ) -> Int? {
    guard !iref.isEmpty else { return nil }
    let wide = bytes[iref.lowerBound] != 0
    let idSize = wide ? 4 : 2
    var at = iref.lowerBound + 4
    while let (type, payload, next) = ISOBoxes.next(in: bytes, at: at, end: iref.upperBound) {
      at = next
      guard type == kind, let source = ISOBoxes.number(bytes, payload.lowerBound, idSize),
        source == from,
        let first = ISOBoxes.number(bytes, payload.lowerBound + idSize + 2, idSize)
      else { continue }
      return first
    }
    return nil
  }

  /// The payload of the property of `type` associated with `item` (through `ipma`).
  private static func itemProperty(_ bytes: [UInt8], _ iprp: Range<Int>, item: Int, type: String)
    -> ArraySlice<UInt8>?
  {
    let children = ISOBoxes.childList(in: bytes, range: iprp)
    guard let ipco = children.first(where: { $0.type == "ipco" })?.payload,
      let ipma = children.first(where: { $0.type == "ipma" })?.payload
    else { return nil }
    let properties = ISOBoxes.childList(in: bytes, range: ipco)
    var reader = ISOBoxes.Reader(bytes: bytes, at: ipma.lowerBound, end: ipma.upperBound)
    guard let version = reader.read(1), reader.skip(2), let flags = reader.read(1),
      let entries = reader.read(4)
    else { return nil }
    for _ in 0..<min(entries, 4096) {
      guard let id = reader.read(version < 1 ? 2 : 4), let count = reader.read(1) else {
        return nil
      }
      for _ in 0..<count {
        guard let value = reader.read(flags & 1 == 1 ? 2 : 1) else { return nil }
        let index = value & (flags & 1 == 1 ? 0x7FFF : 0x7F)
        guard id == item, index >= 1, index <= properties.count,
          properties[index - 1].type == type
        else { continue }
        return bytes[properties[index - 1].payload]
      }
    }
    return nil
  }
}
