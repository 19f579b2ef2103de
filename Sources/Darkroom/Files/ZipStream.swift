import FoundationEssentials

/// A zip archive written as it goes (stored, not compressed: photos do not shrink), so a
/// download of thousands of files needs no temporary file and starts at once. Each entry's
/// CRC-32 and size follow its data (a data descriptor); the central directory comes last.
/// Zip64 is left out: an archive stops at 4 GiB and 65,535 entries, checked before it starts.
struct ZipStream {
  struct Entry {
    var name: [UInt8]
    var crc: UInt32
    var size: UInt32
    var offset: UInt32
  }
  private(set) var entries: [Entry] = []
  private(set) var offset: UInt64 = 0

  static let maxBytes: UInt64 = 0xFFFF_FFFF
  static let maxEntries = 0xFFFF

  /// The bytes of a local header for an entry called `name`.
  mutating func header(_ name: String) -> [UInt8] {
    let name = Array(name.utf8)
    var bytes: [UInt8] = []
    bytes.le32(0x0403_4b50)
    bytes.le16(20)  // version needed: 2.0
    bytes.le16(0x0808)  // a data descriptor follows; names are UTF-8
    bytes.le16(0)  // stored
    bytes.le16(0)  // time
    bytes.le16(0x21)  // date: 1980-01-01
    bytes.le32(0)  // crc, sizes: in the descriptor
    bytes.le32(0)
    bytes.le32(0)
    bytes.le16(UInt16(name.count))
    bytes.le16(0)
    bytes += name
    entries.append(Entry(name: name, crc: 0, size: 0, offset: UInt32(offset)))
    offset += UInt64(bytes.count)
    return bytes
  }

  /// The data descriptor that ends the current entry, whose data had `crc` and `size`.
  mutating func descriptor(crc: UInt32, size: UInt64) -> [UInt8] {
    entries[entries.count - 1].crc = crc
    entries[entries.count - 1].size = UInt32(size)
    offset += size
    var bytes: [UInt8] = []
    bytes.le32(0x0807_4b50)
    bytes.le32(crc)
    bytes.le32(UInt32(size))
    bytes.le32(UInt32(size))
    offset += UInt64(bytes.count)
    return bytes
  }

  /// The central directory and its end record.
  func end() -> [UInt8] {
    var bytes: [UInt8] = []
    for entry in entries {
      bytes.le32(0x0201_4b50)
      bytes.le16(0x031E)  // made by: Unix, 3.0
      bytes.le16(20)
      bytes.le16(0x0808)
      bytes.le16(0)
      bytes.le16(0)
      bytes.le16(0x21)
      bytes.le32(entry.crc)
      bytes.le32(entry.size)
      bytes.le32(entry.size)
      bytes.le16(UInt16(entry.name.count))
      bytes.le16(0)  // extra
      bytes.le16(0)  // comment
      bytes.le16(0)  // disk
      bytes.le16(0)  // internal attributes
      bytes.le32(UInt32(0o100644) << 16)  // a regular file, rw-r--r--
      bytes.le32(entry.offset)
      bytes += entry.name
    }
    let size = UInt32(bytes.count)
    bytes.le32(0x0605_4b50)
    bytes.le16(0)
    bytes.le16(0)
    bytes.le16(UInt16(entries.count))
    bytes.le16(UInt16(entries.count))
    bytes.le32(size)
    bytes.le32(UInt32(offset))
    bytes.le16(0)
    return bytes
  }
}

/// CRC-32 (IEEE), as zip wants it, a table at a time.
enum CRC32 {
  static let table: [UInt32] = (0..<256).map { n in
    var c = UInt32(n)
    for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
  }

  static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var c = ~crc
    for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
    return ~c
  }
}

extension [UInt8] {
  mutating func le16(_ value: UInt16) {
    append(UInt8(value & 0xFF))
    append(UInt8(value >> 8))
  }
  mutating func le32(_ value: UInt32) {
    for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) }
  }
}
