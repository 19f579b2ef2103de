import CExif

#if canImport(Glibc)
  import Glibc
#endif

/// The IFDs (tag directories) of an EXIF block.
enum ExifDirectory: Sendable {
  case primary, thumbnail, exif, gps, interoperability

  fileprivate var libexifIndex: ExifIfd {
    switch self {
    case .primary: EXIF_IFD_0
    case .thumbnail: EXIF_IFD_1
    case .exif: EXIF_IFD_EXIF
    case .gps: EXIF_IFD_GPS
    case .interoperability: EXIF_IFD_INTEROPERABILITY
    }
  }
}

/// One tag's value, decoded from libexif's raw bytes into Swift values.
enum ExifValue: Sendable, Equatable {
  case text(String)
  case integers([Int])
  case rationals([Double?])  // nil where the denominator is zero
  case bytes([UInt8])
}

/// A parsed EXIF block, owned here: the only code that holds libexif pointers.
///
/// libexif parses the TIFF structure (byte order, IFD chains, bounds); Darkroom copies
/// out the few tags it needs and lets go of the C structures at once.
struct ExifDocument: Sendable {
  private let values: [Key: ExifValue]
  /// Bytes of the embedded thumbnail image (IFD1), 0 when there is none.
  let thumbnailByteCount: Int
  /// Where the embedded thumbnail's bytes are in the block given (a JPEG, starting with its
  /// start marker), when they are there whole; nil otherwise.
  let thumbnailOffset: Int?

  private struct Key: Hashable {
    var directory: ExifDirectory
    var tag: UInt16
  }

  /// Tags Darkroom reads; copying only these keeps the document small.
  static let wanted: [(ExifDirectory, UInt16)] = [
    (.primary, 0x010E),  // ImageDescription
    (.primary, 0x010F),  // Make
    (.primary, 0x0110),  // Model
    (.primary, 0x0112),  // Orientation
    (.primary, 0x0132),  // DateTime
    (.primary, 0x4746),  // Rating (Windows)
    (.primary, 0x9C9E),  // XPKeywords (Windows: UTF-16, separated by ';')
    (.exif, 0x829A),  // ExposureTime
    (.exif, 0x829D),  // FNumber
    (.exif, 0x8827),  // ISOSpeedRatings
    (.exif, 0x9003),  // DateTimeOriginal
    (.exif, 0x9004),  // DateTimeDigitized
    (.exif, 0x9011),  // OffsetTimeOriginal
    (.exif, 0x9012),  // OffsetTimeDigitized
    (.exif, 0x9291),  // SubSecTimeOriginal
    (.exif, 0x9292),  // SubSecTimeDigitized
    (.exif, 0x920A),  // FocalLength
    (.exif, 0xA433),  // LensMake
    (.exif, 0xA434),  // LensModel
    (.gps, 0x0001),  // GPSLatitudeRef
    (.gps, 0x0002),  // GPSLatitude
    (.gps, 0x0003),  // GPSLongitudeRef
    (.gps, 0x0004),  // GPSLongitude
    (.gps, 0x0005),  // GPSAltitudeRef
    (.gps, 0x0006),  // GPSAltitude
    (.gps, 0x0007),  // GPSTimeStamp
    (.gps, 0x001D),  // GPSDateStamp
  ]

  /// Parses an EXIF block: TIFF data, with or without the `Exif\0\0` header of a JPEG APP1.
  /// Returns nil when libexif finds no usable structure in it.
  init?(block: [UInt8]) {
    let header: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
    let bytes = block.starts(with: header) ? block : header + block
    guard bytes.count > header.count + 8, bytes.count <= Int(UInt32.max) else { return nil }

    guard let data = exif_data_new() else { return nil }
    defer { exif_data_unref(data) }
    // Read what is there; do not let libexif add "mandatory" tags or drop unknown ones.
    exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
    exif_data_unset_option(data, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
    bytes.withUnsafeBufferPointer { buffer in
      exif_data_load_data(data, buffer.baseAddress, UInt32(buffer.count))
    }
    let littleEndian = exif_data_get_byte_order(data) == EXIF_BYTE_ORDER_INTEL

    var values: [Key: ExifValue] = [:]
    let directories = data.pointee.ifd
    for (directory, tag) in Self.wanted {
      let content: UnsafeMutablePointer<ExifContent>? =
        switch directory.libexifIndex {
        case EXIF_IFD_0: directories.0
        case EXIF_IFD_1: directories.1
        case EXIF_IFD_EXIF: directories.2
        case EXIF_IFD_GPS: directories.3
        default: directories.4
        }
      guard let content, let entry = exif_content_get_entry(content, ExifTag(UInt32(tag))),
        let raw = entry.pointee.data, entry.pointee.size > 0
      else { continue }
      let copy = Array(UnsafeBufferPointer(start: raw, count: Int(entry.pointee.size)))
      let format = UInt16(entry.pointee.format.rawValue)
      if let value = Self.decode(format: format, bytes: copy, littleEndian: littleEndian) {
        values[Key(directory: directory, tag: tag)] = value
      }
    }
    let thumbnail = Int(data.pointee.size)
    if values.isEmpty && thumbnail == 0 { return nil }
    self.values = values
    thumbnailByteCount = thumbnail
    // libexif copies the thumbnail out and keeps no tag saying where it was: it is found in
    // the block by its bytes (a JPEG: start marker first).
    var found: Int?
    if let start = data.pointee.data, thumbnail >= 4, start[0] == 0xFF, start[1] == 0xD8 {
      let shifted = bytes.count - block.count  // the `Exif\0\0` added above, if any
      bytes.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress, buffer.count >= thumbnail else { return }
        var index = 0
        while index <= buffer.count - thumbnail {
          if base[index] == 0xFF && base[index + 1] == 0xD8
            && memcmp(base + index, start, thumbnail) == 0
          {
            found = index >= shifted ? index - shifted : nil
            break
          }
          index += 1
        }
      }
    }
    thumbnailOffset = found
  }

  func value(_ tag: UInt16, in directory: ExifDirectory) -> ExifValue? {
    values[Key(directory: directory, tag: tag)]
  }

  /// Decodes TIFF field types 1-10 (BYTE ... SRATIONAL).
  private static func decode(format: UInt16, bytes: [UInt8], littleEndian: Bool) -> ExifValue? {
    func unsigned(_ offset: Int, _ width: Int) -> UInt64 {
      var value: UInt64 = 0
      for i in 0..<width {
        let byte = UInt64(bytes[offset + (littleEndian ? width - 1 - i : i)])
        value = value << 8 | byte
      }
      return value
    }
    func each<T>(_ width: Int, _ body: (Int) -> T) -> [T] {
      stride(from: 0, through: bytes.count - width, by: width).map(body)
    }
    switch format {
    case 2:  // ASCII
      let text = bytes.prefix { $0 != 0 }
      return .text(String(decoding: text, as: UTF8.self).trimmingSpaces)
    case 1, 7:  // BYTE, UNDEFINED
      return .bytes(bytes)
    case 6:  // SBYTE
      return .integers(bytes.map { Int(Int8(bitPattern: $0)) })
    case 3:  // SHORT
      return .integers(each(2) { Int(unsigned($0, 2)) })
    case 8:  // SSHORT
      return .integers(each(2) { Int(Int16(truncatingIfNeeded: unsigned($0, 2))) })
    case 4:  // LONG
      return .integers(each(4) { Int(unsigned($0, 4)) })
    case 9:  // SLONG
      return .integers(each(4) { Int(Int32(truncatingIfNeeded: unsigned($0, 4))) })
    case 5:  // RATIONAL
      return .rationals(
        each(8) {
          let d = unsigned($0 + 4, 4)
          return d == 0 ? nil : Double(unsigned($0, 4)) / Double(d)
        })
    case 10:  // SRATIONAL
      return .rationals(
        each(8) {
          let n = Int32(truncatingIfNeeded: unsigned($0, 4))
          let d = Int32(truncatingIfNeeded: unsigned($0 + 4, 4))
          return d == 0 ? nil : Double(n) / Double(d)
        })
    default:
      return nil
    }
  }
}

extension String {
  var trimmingSpaces: String {
    var s = Substring(self)
    while let c = s.first, c.isWhitespace { s.removeFirst() }
    while let c = s.last, c.isWhitespace { s.removeLast() }
    return String(s)
  }
}
