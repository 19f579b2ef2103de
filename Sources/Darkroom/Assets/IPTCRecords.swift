/// The IPTC-NAA (IIM) records a photo carries, as news agencies and older photo tools write
/// them: the caption, keywords and date created. Parsed here, bounded, from bytes that may
/// be hostile: a record that runs past the end ends the reading, never the process.
struct IPTCRecords: Sendable, Equatable {
  /// Caption-Abstract (2:120).
  var caption: String?
  /// Keywords (2:25), in order.
  var keywords: [String] = []
  /// Date Created (2:55, `YYYYMMDD`) and Time Created (2:60, `HHMMSS±HHMM`), as written.
  var dateCreated: String?
  var timeCreated: String?

  /// Reads the records in `bytes` (the IIM stream: 0x1C, record, dataset, length, data).
  init(_ bytes: [UInt8]) {
    var at = 0
    var utf8 = false
    var raw: [(UInt8, UInt8, ArraySlice<UInt8>)] = []
    while at + 5 <= bytes.count, bytes[at] == 0x1C {
      let (record, dataset) = (bytes[at + 1], bytes[at + 2])
      let length = Int(bytes[at + 3]) << 8 | Int(bytes[at + 4])
      // An extended length (the top bit set) is for large binary data, never for text.
      guard length & 0x8000 == 0, at + 5 + length <= bytes.count else { break }
      let data = bytes[at + 5..<at + 5 + length]
      // 1:90 CodedCharacterSet: ESC % G is UTF-8; anything else is read as Latin-1.
      if record == 1 && dataset == 90 { utf8 = data.elementsEqual([0x1B, 0x25, 0x47]) }
      raw.append((record, dataset, data))
      at += 5 + length
    }
    func text(_ data: ArraySlice<UInt8>) -> String {
      let trimmed = data.prefix { $0 != 0 }
      if utf8 || String(validating: trimmed, as: UTF8.self) != nil {
        return String(decoding: trimmed, as: UTF8.self)
      }
      return String(String.UnicodeScalarView(trimmed.map { Unicode.Scalar($0) }))
    }
    for (record, dataset, data) in raw where record == 2 {
      let value = text(data).trimmingCharacters(in: .whitespaces)
      guard !value.isEmpty else { continue }
      switch dataset {
      case 120: caption = caption ?? value
      case 25: if !keywords.contains(value) { keywords.append(value) }
      case 55: dateCreated = dateCreated ?? value
      case 60: timeCreated = timeCreated ?? value
      default: break
      }
    }
  }

  /// The IPTC-NAA resource (0x0404) among Photoshop's image resources (`8BIM` blocks, as
  /// a JPEG's APP13 holds them after `Photoshop 3.0\0`); nil when there is none.
  static func resource(in bytes: ArraySlice<UInt8>) -> [UInt8]? {
    var at = bytes.startIndex
    func u32(_ i: Int) -> Int {
      Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
    }
    while at + 12 <= bytes.endIndex, bytes[at..<at + 4].elementsEqual("8BIM".utf8) {
      let id = Int(bytes[at + 4]) << 8 | Int(bytes[at + 5])
      // A Pascal name, padded to an even length with its length byte.
      let nameLength = Int(bytes[at + 6])
      let sizeAt = at + 6 + (nameLength + 1 + 1) / 2 * 2
      guard sizeAt + 4 <= bytes.endIndex else { return nil }
      let size = u32(sizeAt)
      let dataAt = sizeAt + 4
      guard size <= bytes.endIndex - dataAt else { return nil }
      if id == 0x0404 { return Array(bytes[dataAt..<dataAt + size]) }
      at = dataAt + (size + 1) / 2 * 2
    }
    return nil
  }

  /// Date and time created as a ``CaptureDate``; nil without a valid date. A date without a
  /// time is noon-less midnight, as exiftool reads it.
  var captureDate: CaptureDate? {
    guard let date = dateCreated, date.count == 8, date.allSatisfy(\.isASCII) else {
      return nil
    }
    let d = Array(date)
    var text = "\(String(d[0..<4]))-\(String(d[4..<6]))-\(String(d[6..<8]))"
    if let time = timeCreated, time.count >= 6, time.allSatisfy(\.isASCII) {
      let t = Array(time)
      text += "T\(String(t[0..<2])):\(String(t[2..<4])):\(String(t[4..<6]))"
      if t.count == 11, t[6] == "+" || t[6] == "-" {
        text += "\(t[6])\(String(t[7..<9])):\(String(t[9..<11]))"
      }
    }
    return CaptureDate(iso8601: text)
  }
}

extension AssetMetadata {
  /// Takes what IPTC says: its caption over EXIF's, and its keywords (embedded XMP, read
  /// next, wins over both where it speaks; IPTC's date is taken after XMP's, by ``make``).
  mutating func apply(_ iptc: IPTCRecords) {
    if let caption = iptc.caption {
      self.caption = caption
      sources["caption"] = "IPTC"
    }
    if !iptc.keywords.isEmpty {
      keywords = iptc.keywords
      sources["keywords"] = "IPTC"
    }
  }
}
