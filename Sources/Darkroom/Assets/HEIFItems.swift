/// The items of a HEIF (HEIC, AVIF) file as its `meta` box lists them: each item's type,
/// where its data is, its properties in order, and the references between items. Read from
/// bytes in memory; nothing is decoded.
///
/// The quality estimates (``HEVCQuality``, ``AV1Quality``) read the primary image's coded
/// data through it, and the renderer an AVIF's whole primary image (`AVIFStill`).
struct HEIFItems {
  let bytes: [UInt8]
  /// The primary item's id (`pitm`).
  let primary: Int
  /// Item types by id (`iinf`): `hvc1`, `av01`, `grid`, `Exif`, ...
  let types: [Int: String]
  /// Each item's extents in the file (`iloc`): construction method 0 (offsets in the file)
  /// and 1 (offsets in the `meta` box's `idat`, where a phone keeps a grid's description);
  /// an item made of other items' data (method 2) has none.
  let extents: [Int: [Range<Int>]]
  private let associations: [Int: [(type: String, payload: Range<Int>)]]
  private let iref: Range<Int>?

  init?(_ bytes: [UInt8]) {
    guard let meta = ISOBoxes.topLevel("meta", in: bytes), meta.count > 4 else { return nil }
    let boxes = ISOBoxes.children(in: bytes, range: meta.lowerBound + 4..<meta.upperBound)
    guard let pitm = boxes["pitm"], let primary = ISOBoxes.itemID(bytes, pitm, at: 4),
      let types = boxes["iinf"].map({ Self.itemTypes(bytes, $0) }),
      let extents = boxes["iloc"].flatMap({ Self.itemExtents(bytes, $0, idat: boxes["idat"]) })
    else { return nil }
    self.bytes = bytes
    self.primary = primary.value
    self.types = types
    self.extents = extents
    self.associations = Self.associations(bytes, boxes["iprp"])
    self.iref = boxes["iref"]
  }

  /// The data of `item`: its extents joined, or nil when any lies outside the file.
  func data(of item: Int) -> [UInt8]? {
    guard let ranges = extents[item], !ranges.isEmpty,
      ranges.allSatisfy({ $0.upperBound <= bytes.count })
    else { return nil }
    return ranges.count == 1 ? Array(bytes[ranges[0]]) : ranges.flatMap { bytes[$0] }
  }

  /// The properties associated with `item` (through `ipma`), in the order listed: the order
  /// transformative properties (`clap`, `irot`, `imir`) are applied in. Only an item's first
  /// `ipma` entry counts, as libheif reads it (a second entry is never seen by libheif, so
  /// it must not be by Darkroom either).
  func properties(of item: Int) -> [(type: String, payload: ArraySlice<UInt8>)] {
    associations[item]?.map { ($0.type, bytes[$0.payload]) } ?? []
  }

  /// Each item's properties (its first `ipma` entry), parsed once.
  private static func associations(_ bytes: [UInt8], _ iprp: Range<Int>?)
    -> [Int: [(type: String, payload: Range<Int>)]]
  {
    guard let iprp else { return [:] }
    let children = ISOBoxes.childList(in: bytes, range: iprp)
    guard let ipco = children.first(where: { $0.type == "ipco" })?.payload,
      let ipma = children.first(where: { $0.type == "ipma" })?.payload
    else { return [:] }
    let properties = ISOBoxes.childList(in: bytes, range: ipco)
    var reader = ISOBoxes.Reader(bytes: bytes, at: ipma.lowerBound, end: ipma.upperBound)
    guard let version = reader.read(1), reader.skip(2), let flags = reader.read(1),
      let entries = reader.read(4)
    else { return [:] }
    var found: [Int: [(type: String, payload: Range<Int>)]] = [:]
    for _ in 0..<min(entries, 1 << 16) {
      guard let id = reader.read(version < 1 ? 2 : 4), let count = reader.read(1) else {
        return found
      }
      var listed: [(type: String, payload: Range<Int>)] = []
      for _ in 0..<count {
        guard let value = reader.read(flags & 1 == 1 ? 2 : 1) else { return found }
        let index = value & (flags & 1 == 1 ? 0x7FFF : 0x7F)
        guard index >= 1, index <= properties.count else { continue }
        listed.append((properties[index - 1].type, properties[index - 1].payload))
      }
      if found[id] == nil { found[id] = listed }
    }
    return found
  }

  /// The payload of the first property of `type` associated with `item`.
  func property(_ type: String, of item: Int) -> ArraySlice<UInt8>? {
    properties(of: item).first { $0.type == type }?.payload
  }

  /// The references of `kind` in `iref` (`dimg`, `auxl`, `thmb`, `cdsc`): from one item to
  /// others, as listed.
  func references(_ kind: String) -> [(from: Int, to: [Int])] {
    guard let iref, !iref.isEmpty else { return [] }
    let idSize = bytes[iref.lowerBound] != 0 ? 4 : 2
    var found: [(from: Int, to: [Int])] = []
    var at = iref.lowerBound + 4
    while let (type, payload, next) = ISOBoxes.next(in: bytes, at: at, end: iref.upperBound) {
      at = next
      var reader = ISOBoxes.Reader(bytes: bytes, at: payload.lowerBound, end: payload.upperBound)
      guard type == kind, let source = reader.read(idSize), let count = reader.read(2) else {
        continue
      }
      var targets: [Int] = []
      for _ in 0..<count {
        guard let target = reader.read(idSize) else { break }
        targets.append(target)
      }
      found.append((source, targets))
    }
    return found
  }

  /// The items a derived image (a `grid`) is made of, in order (its `dimg` reference);
  /// nil when it names none.
  func parts(of item: Int) -> [Int]? {
    references("dimg").first { $0.from == item }?.to
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

  /// Each item's extents, from `iloc` (versions 0-2), as ranges of the file: offsets in the
  /// file, or in `idat`'s payload (construction method 1), which they must lie within.
  private static func itemExtents(_ bytes: [UInt8], _ iloc: Range<Int>, idat: Range<Int>?)
    -> [Int: [Range<Int>]]?
  {
    var reader = ISOBoxes.Reader(bytes: bytes, at: iloc.lowerBound, end: iloc.upperBound)
    guard let version = reader.read(1), version <= 2, reader.skip(3),
      let sizes = reader.read(1), let more = reader.read(1),
      let count = reader.read(version < 2 ? 2 : 4)
    else { return nil }
    let offsetSize = sizes >> 4
    let lengthSize = sizes & 0xF
    let baseSize = more >> 4
    let indexSize = version == 0 ? 0 : more & 0xF
    var extents: [Int: [Range<Int>]] = [:]
    for _ in 0..<min(count, 4096) {
      guard let id = reader.read(version < 2 ? 2 : 4) else { return nil }
      var method = 0
      if version > 0 {
        guard let value = reader.read(2) else { return nil }
        method = value & 0xF
      }
      guard reader.skip(2), let base = reader.read(baseSize), let count = reader.read(2)
      else { return nil }
      // More extents than libheif takes (32) make no item: each would copy up to the file.
      let taken = count <= 32
      var ranges: [Range<Int>] = []
      for _ in 0..<count {
        guard reader.skip(indexSize), let offset = reader.read(offsetSize),
          let length = reader.read(lengthSize)
        else { return nil }
        let (start, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, start >= 0, length > 0, start <= Int.max - length else {
          ranges = []
          break
        }
        ranges.append(start..<start + length)
      }
      // Method 0 is offsets in the file, 1 in idat; 2 (by item) is not read.
      guard taken, extents[id] == nil else { continue }
      if method == 0, !ranges.isEmpty { extents[id] = ranges }
      if method == 1, !ranges.isEmpty, let idat,
        ranges.allSatisfy({ $0.upperBound <= idat.count })
      {
        extents[id] = ranges.map {
          idat.lowerBound + $0.lowerBound..<idat.lowerBound + $0.upperBound
        }
      }
    }
    return extents
  }
}
