/// What an iPhone's Apple maker note says that Darkroom uses: the Live Photo's content
/// identifier (tag 0x0011), the UUID that the still and its MOV share
/// (`com.apple.quicktime.content.identifier` in the MOV).
///
/// Read from an EXIF block (a TIFF structure): IFD0, its Exif IFD, the `MakerNote` (0x927C),
/// whose header is `Apple iOS\0`, a version, and a byte order; its entries' offsets count from
/// the maker note's start. Every offset is checked against the block; nothing is followed
/// twice.
enum AppleMakerNote {
  /// The content identifier in `exif` (with or without its `Exif\0\0` header), or nil.
  static func contentIdentifier(exif block: [UInt8]) -> String? {
    let header: [UInt8] = Array("Exif\0\0".utf8)
    let tiff = block.starts(with: header) ? Array(block.dropFirst(header.count)) : block
    guard let reader = TIFFReader(tiff, at: 0),
      let ifd0 = reader.u32(4).map(Int.init),
      let exifIFD = reader.entry(0x8769, inIFDAt: ifd0).flatMap({ reader.u32($0.valueAt) }),
      let note = reader.entry(0x927C, inIFDAt: Int(exifIFD)),
      let noteStart = reader.u32(note.valueAt).map(Int.init), note.count >= 16,
      noteStart + note.count <= tiff.count
    else { return nil }
    let bytes = Array(tiff[noteStart..<noteStart + note.count])
    guard bytes.starts(with: Array("Apple iOS\0".utf8)),
      let apple = TIFFReader(bytes, at: 12),  // "Apple iOS\0", version (2), byte order (2)
      let identifier = apple.entry(0x0011, inIFDAt: 14), identifier.type == 2,
      (1...256).contains(identifier.count)
    else { return nil }
    let start =
      identifier.count <= 4 ? identifier.valueAt : apple.u32(identifier.valueAt).map(Int.init)
    guard let start, start >= 0, start + identifier.count <= bytes.count else { return nil }
    let text = String(
      decoding: bytes[start..<start + identifier.count].prefix { $0 != 0 }, as: UTF8.self)
    return text.isEmpty ? nil : text
  }
}

/// Reads TIFF-style entries (12 bytes: tag, type, count, value or offset) from bytes whose
/// byte order is named at `at` (`II` or `MM`).
private struct TIFFReader {
  let bytes: [UInt8]
  let little: Bool

  init?(_ bytes: [UInt8], at offset: Int) {
    guard bytes.count >= offset + 2 else { return nil }
    switch (bytes[offset], bytes[offset + 1]) {
    case (0x49, 0x49): little = true
    case (0x4D, 0x4D): little = false
    default: return nil
    }
    self.bytes = bytes
  }

  func u16(_ at: Int) -> Int? {
    guard at >= 0, at + 2 <= bytes.count else { return nil }
    let (a, b) = (Int(bytes[at]), Int(bytes[at + 1]))
    return little ? a | b << 8 : a << 8 | b
  }

  func u32(_ at: Int) -> UInt32? {
    guard at >= 0, at + 4 <= bytes.count else { return nil }
    let values = bytes[at..<at + 4].map(UInt32.init)
    return little
      ? values[0] | values[1] << 8 | values[2] << 16 | values[3] << 24
      : values[0] << 24 | values[1] << 16 | values[2] << 8 | values[3]
  }

  /// The entry `tag` of the IFD at `offset`: its type, count, and where its value (or the
  /// offset of its value) is.
  func entry(_ tag: Int, inIFDAt offset: Int) -> (type: Int, count: Int, valueAt: Int)? {
    guard let count = u16(offset), count <= 1024 else { return nil }
    for index in 0..<count {
      let at = offset + 2 + index * 12
      guard let found = u16(at), let type = u16(at + 2), let values = u32(at + 4) else {
        return nil
      }
      if found == tag { return (type, Int(values), at + 8) }
    }
    return nil
  }
}
