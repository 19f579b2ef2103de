/// What a file's container says before any pixel is decoded: format, stored size, and the
/// embedded EXIF and ICC blocks. JPEG and PNG, most of what cameras and phones write, are
/// parsed here directly; other formats are read through libvips' header-only load.
struct ContainerHeader: Sendable {
  var format: String
  var width: Int
  var height: Int
  var hasAlpha: Bool
  var exif: [UInt8]?
  /// Where `exif` starts in the file (a JPEG's APP1 payload, from its `Exif\0\0`).
  var exifStart: Int?
  var icc: [UInt8]?
  /// The embedded XMP packet (a JPEG's APP1 `http://ns.adobe.com/xap/1.0/`; libvips'
  /// `xmp-data` for other formats).
  var xmp: [UInt8]?
  /// The embedded IPTC-NAA records (a JPEG's APP13 Photoshop resource 0x0404; libvips'
  /// `iptc-data` for other formats).
  var iptc: [UInt8]?
  /// A profile is embedded, but compressed (PNG `iCCP`), so `icc` is nil.
  var hasCompressedICC = false
  /// Damage seen past a whole header (the image data cut short), with its message: the
  /// header is still described; decoding refuses it unless told to accept damage.
  var damage: DarkroomError?
  /// A JPEG's motion photo video in Samsung's trailer (``MotionPhoto/samsungTrailer(_:tail:)``).
  var trailerVideo: FileRange?

  /// Parses a JPEG or PNG header; nil for any other format. Throws for a JPEG or PNG whose
  /// header is damaged or cut short; a file cut short after its header is described, with
  /// `damage` set.
  static func parse(_ source: ByteSource) throws -> ContainerHeader? {
    guard let magic = try source.bytes(0, min(8, source.count)) else { return nil }
    if magic.starts(with: [0xFF, 0xD8, 0xFF]) { return try parseJPEG(source) }
    if magic.elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
      return try parsePNG(source)
    }
    return nil
  }

  // MARK: JPEG

  private static func parseJPEG(_ source: ByteSource) throws -> ContainerHeader {
    var position = 2
    var size: (width: Int, height: Int)?
    var exif: [UInt8]?
    var exifStart: Int?
    var iccChunks: [Int: ArraySlice<UInt8>] = [:]
    let exifHeader = Array("Exif\0\0".utf8)
    let xmpHeader = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
    var xmp: [UInt8]?
    var iptc: [UInt8]?
    let iccHeader = Array("ICC_PROFILE\0".utf8)
    let photoshopHeader = Array("Photoshop 3.0\0".utf8)

    while true {
      guard position < ByteSource.headerLimit else {
        throw DarkroomError(
          .corrupt, "JPEG header is larger than \(ByteSource.headerLimit >> 20) MiB")
      }
      guard let byte = try source.u8(position) else {
        throw DarkroomError(.truncated, "truncated JPEG: the file ends inside its header")
      }
      guard byte == 0xFF else {
        throw DarkroomError(.corrupt, "corrupt JPEG: expected a marker at byte \(position)")
      }
      guard let marker = try source.u8(position + 1) else {
        throw DarkroomError(.truncated, "truncated JPEG: the file ends inside its header")
      }
      if marker == 0xFF {  // fill byte
        position += 1
        continue
      }
      if marker == 0x01 || (0xD0...0xD8).contains(marker) {  // markers with no length
        position += 2
        continue
      }
      if marker == 0xD9 {
        throw DarkroomError(.corrupt, "corrupt JPEG: the image ends before any image data")
      }
      guard let length = try source.bigEndian16(position + 2), length >= 2,
        let payload = try source.bytes(position + 4, length - 2)
      else {
        throw DarkroomError(.truncated, "truncated JPEG: the file ends inside its header")
      }
      switch marker {
      case 0xE1 where exif == nil && payload.starts(with: exifHeader):
        exif = Array(payload)
        exifStart = position + 4
      case 0xE1 where xmp == nil && payload.starts(with: xmpHeader):
        xmp = Array(payload.dropFirst(xmpHeader.count))
      case 0xED where iptc == nil && payload.starts(with: photoshopHeader):
        iptc = IPTCRecords.resource(in: payload.dropFirst(photoshopHeader.count))
      case 0xE2 where payload.starts(with: iccHeader) && payload.count > 14:
        let sequence = Int(payload[payload.startIndex + 12])
        iccChunks[sequence] = payload.dropFirst(14)
      case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
        guard payload.count >= 6 else {
          throw DarkroomError(.corrupt, "corrupt JPEG: frame header is too short")
        }
        let p = payload.startIndex
        let height = Int(payload[p + 1]) << 8 | Int(payload[p + 2])
        let width = Int(payload[p + 3]) << 8 | Int(payload[p + 4])
        guard width > 0, height > 0 else {
          throw DarkroomError(.corrupt, "corrupt JPEG: frame header gives size \(width)x\(height)")
        }
        size = (width, height)
      case 0xDA:
        guard let size else {
          throw DarkroomError(.corrupt, "corrupt JPEG: image data comes before a frame header")
        }
        let icc = iccChunks.keys.sorted().reduce(into: [UInt8]()) { $0 += iccChunks[$1] ?? [] }
        var header = ContainerHeader(
          format: "jpeg", width: size.width, height: size.height, hasAlpha: false, exif: exif,
          icc: icc.isEmpty ? nil : icc)
        (header.xmp, header.iptc, header.exifStart) = (xmp, iptc, exifStart)
        // The file's last bytes, read once: its end marker, or Samsung's trailer.
        let tail = try source.tail(8)
        header.trailerVideo = try MotionPhoto.samsungTrailer(source, tail: tail)
        if try !hasJPEGEnd(source, scanStart: position, tail: tail) {
          header.damage = DarkroomError(
            .truncated, "truncated JPEG: image data ends without an end-of-image marker")
        }
        return header
      default:
        break
      }
      position += 2 + length
    }
  }

  /// A complete JPEG has an end-of-image marker after its scan data. It is usually the last
  /// two bytes; some writers append data after it, so search back from the end as far as
  /// the start of the scan, where no unescaped 0xFFD9 can occur but the real one. `tail`:
  /// the file's last bytes, read already.
  private static func hasJPEGEnd(_ source: ByteSource, scanStart: Int, tail: ArraySlice<UInt8>)
    throws -> Bool
  {
    if tail.suffix(2).elementsEqual([0xFF, 0xD9]) { return true }
    var windowEnd = source.count
    let window = 1 << 16
    while windowEnd > scanStart {
      let start = max(scanStart, windowEnd - window)
      // One byte of overlap finds a marker split across two windows.
      let bytes = try source.peek(start, min(windowEnd + 1, source.count) - start) ?? []
      var previous: UInt8 = 0
      for byte in bytes {
        if previous == 0xFF && byte == 0xD9 { return true }
        previous = byte
      }
      windowEnd = start
    }
    return false
  }

  // MARK: PNG

  private static func parsePNG(_ source: ByteSource) throws -> ContainerHeader {
    guard try source.bigEndian32(8) == 13, let type = try source.bytes(12, 4),
      type.elementsEqual("IHDR".utf8), let width = try source.bigEndian32(16),
      let height = try source.bigEndian32(20), let colourType = try source.u8(25)
    else {
      if source.count < 33 {
        throw DarkroomError(.truncated, "truncated PNG: the file ends inside its header")
      }
      throw DarkroomError(.corrupt, "corrupt PNG: the first chunk is not a valid IHDR")
    }
    guard width > 0, height > 0 else {
      throw DarkroomError(.corrupt, "corrupt PNG: header gives size \(width)x\(height)")
    }
    var header = ContainerHeader(
      format: "png", width: width, height: height, hasAlpha: colourType == 4 || colourType == 6)
    var position = 33
    while true {
      guard let length = try source.bigEndian32(position),
        let type = try source.bytes(position + 4, 4)
      else {
        throw DarkroomError(.truncated, "truncated PNG: the file ends before its image data")
      }
      let name = String(decoding: type, as: UTF8.self)
      if name == "IDAT" { break }
      if name == "IEND" {
        throw DarkroomError(.corrupt, "corrupt PNG: the image ends before any image data")
      }
      switch name {
      case "tRNS": header.hasAlpha = true
      case "iCCP": header.hasCompressedICC = true
      case "eXIf":
        guard let data = try source.bytes(position + 8, length) else {
          throw DarkroomError(.truncated, "truncated PNG: the file ends inside its eXIf chunk")
        }
        header.exif = Array(data)
      case "iTXt" where header.xmp == nil && length <= XMPPacket.maxBytes + 64:
        // XMP as PNG carries it: keyword `XML:com.adobe.xmp`, uncompressed (as exiftool and
        // Adobe write it; a compressed packet is left unread).
        let keyword = Array("XML:com.adobe.xmp\0".utf8)
        guard let data = try source.bytes(position + 8, length) else {
          throw DarkroomError(.truncated, "truncated PNG: the file ends inside its iTXt chunk")
        }
        guard data.starts(with: keyword), data.count > keyword.count + 2,
          data[data.startIndex + keyword.count] == 0
        else { break }
        // Compression flag and method, then a language tag and a translated keyword, each
        // ending in a NUL; the packet follows.
        var rest = data.dropFirst(keyword.count + 2)
        for _ in 0..<2 {
          guard let end = rest.firstIndex(of: 0) else { break }
          rest = rest[(end + 1)...]
        }
        header.xmp = Array(rest)
      default: break
      }
      position += 12 + length
      guard position < ByteSource.headerLimit else {
        throw DarkroomError(
          .corrupt, "PNG header is larger than \(ByteSource.headerLimit >> 20) MiB")
      }
    }
    // Every complete PNG ends with the same 12-byte IEND chunk.
    let iend: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
    if try !source.tail(12).elementsEqual(iend) {
      header.damage = DarkroomError(
        .truncated, "truncated PNG: no IEND chunk at the end of the file")
    }
    return header
  }
}
