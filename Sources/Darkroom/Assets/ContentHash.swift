import Crypto

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The SHA-256 of an image's bytes: the identity of its content, whatever its name.
///
/// The rendition cache files renditions under their source's content hash, and a library's
/// store files originals and adjustment data under theirs, so a renamed or moved file keeps
/// its renditions and its edit.
///
/// ```swift
/// let hash = try ContentHash.of(file: "IMG_0001.jpg")
/// print(hash)  // 64 lowercase hex digits
/// ```
///
/// `ContentHash` is a `Sendable` value type.
package struct ContentHash: Sendable, Hashable, Codable, CustomStringConvertible {
  /// 64 lowercase hex digits.
  package let hex: String

  /// A hash from its hex form; nil unless `hex` is exactly 64 lowercase hex digits.
  package init?(hex: String) {
    guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
    self.hex = hex
  }

  init<D: Digest>(digest: D) {
    hex = digest.map { byte in
      let text = String(byte, radix: 16)
      return byte < 16 ? "0" + text : text
    }.joined()
  }

  /// The hex form, as ``hex``.
  package var description: String { hex }

  /// The SHA-256 of bytes in memory.
  package static func of(bytes: [UInt8]) -> ContentHash {
    ContentHash(digest: SHA256.hash(data: bytes))
  }

  /// The SHA-256 of a string's UTF-8 bytes.
  package static func of(text: String) -> ContentHash {
    of(bytes: Array(text.utf8))
  }

  /// Hashes a file in 1 MiB reads, so memory stays flat for large files.
  ///
  /// - Throws: A ``DarkroomError`` about `path`: `notFound`, `isDirectory`, `unreadable`,
  ///   `unsupportedFormat` (not a regular file) or `empty` (0 bytes) when the file cannot be
  ///   opened, `io` when a read fails.
  package static func of(file path: String) throws(DarkroomError) -> ContentHash {
    try of(open: InputFile(path))
  }

  /// Hashes an open file from its start, in 1 MiB reads.
  static func of(open file: InputFile) throws(DarkroomError) -> ContentHash {
    var hasher = SHA256()
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset = 0
    while case let n = try file.read(at: offset, into: &buffer), n > 0 {
      buffer.withUnsafeBytes {
        hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n]))
      }
      offset += n
    }
    return ContentHash(digest: hasher.finalize())
  }

  /// Hashes what descriptor `fd` holds, from its start, in 1 MiB reads (the descriptor stays
  /// open: its owner closes it). Errors name `name`.
  static func of(descriptor fd: Int32, name: String) throws(DarkroomError) -> ContentHash {
    var hasher = SHA256()
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset = 0
    while true {
      let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
      if n < 0 && errno == EINTR { continue }
      if n < 0 {
        throw DarkroomError(.io, file: name, "cannot read: \(String(cString: strerror(errno)))")
      }
      if n == 0 { break }
      buffer.withUnsafeBytes {
        hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n]))
      }
      offset += n
    }
    return ContentHash(digest: hasher.finalize())
  }
}
