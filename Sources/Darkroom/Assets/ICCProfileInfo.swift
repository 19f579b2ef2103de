/// What an embedded ICC profile is: enough to tell sRGB from Display P3 or Adobe RGB.
///
/// ```swift
/// if let profile = metadata.iccProfile {
///   print(profile.description ?? "unnamed", profile.colorSpace ?? "?")  // Display P3 RGB
/// }
/// ```
///
/// Renditions scaled for display convert pixels in another profile to sRGB; `full`
/// renditions that keep metadata, and edits, keep the profile. `ICCProfileInfo` is a
/// `Sendable` value type.
package struct ICCProfileInfo: Sendable, Equatable, Codable {
  /// The profile's own description (`desc` tag), such as "Display P3".
  package var description: String?
  /// The colour space of the data it describes: "RGB", "GRAY", "CMYK", ...
  package var colorSpace: String?
  /// The size of the profile, in bytes.
  package var byteSize: Int

  /// Creates a description of a profile from its parts.
  package init(description: String?, colorSpace: String?, byteSize: Int) {
    self.description = description
    self.colorSpace = colorSpace
    self.byteSize = byteSize
  }

  /// Reads the header and description of a profile; tolerant of damage (fields go nil).
  init(profile bytes: [UInt8]) {
    byteSize = bytes.count
    func be32(_ offset: Int) -> Int? {
      guard offset >= 0, offset + 4 <= bytes.count else { return nil }
      return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }
    func ascii(_ offset: Int, _ length: Int) -> String? {
      guard offset >= 0, length >= 0, offset + length <= bytes.count else { return nil }
      let text = String(decoding: bytes[offset..<offset + length].prefix { $0 != 0 }, as: UTF8.self)
      return text.trimmingSpaces.isEmpty ? nil : text.trimmingSpaces
    }
    colorSpace = ascii(16, 4)
    description = nil
    guard let tagCount = be32(128), tagCount < 1000 else { return }
    for index in 0..<tagCount {
      let entry = 132 + index * 12
      guard ascii(entry, 4) == "desc", let offset = be32(entry + 4) else { continue }
      switch ascii(offset, 4) {
      case "desc":  // ICC v2: 32-bit length, then ASCII
        if let length = be32(offset + 8), length < 4096 { description = ascii(offset + 12, length) }
      case "mluc":  // ICC v4: records of UTF-16BE strings; take the first
        guard let records = be32(offset + 8), records > 0, let length = be32(offset + 20),
          let start = be32(offset + 24), length < 8192,
          offset + start + length <= bytes.count
        else { break }
        let utf16 = stride(from: offset + start, to: offset + start + length - 1, by: 2).map {
          UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1])
        }
        let text = String(decoding: utf16, as: UTF16.self).trimmingSpaces
        description = text.isEmpty ? nil : text
      default:
        break
      }
    }
  }
}

extension ICCProfileInfo {
  /// Encodes absent fields as null rather than leaving them out.
  ///
  /// - Throws: Whatever `encoder` throws.
  package func encode(to encoder: Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(description, forKey: .description)
    try c.encode(colorSpace, forKey: .colorSpace)
    try c.encode(byteSize, forKey: .byteSize)
  }
}
