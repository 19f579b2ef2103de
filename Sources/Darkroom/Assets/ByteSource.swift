/// Bytes of an image, read on demand: a header parser asks for the ranges it needs and
/// no more, so reading metadata never touches the pixel data of a large file.
final class ByteSource {
  let count: Int
  private let storage: Storage
  private var prefix: [UInt8] = []

  private enum Storage {
    /// Read on demand: a file, or a space's sealed object.
    case ranges((_ offset: Int, _ count: Int) throws(DarkroomError) -> [UInt8])
    case memory([UInt8])
  }

  /// Header parsing never reads past this many leading bytes (a hostile file could
  /// otherwise claim a "header" the size of the disk).
  static let headerLimit = 64 << 20

  init(memory bytes: [UInt8]) {
    count = bytes.count
    storage = .memory(bytes)
  }

  init(file: InputFile) {
    count = file.size
    storage = .ranges { offset, count throws(DarkroomError) in
      try file.read(at: offset, count: count)
    }
  }

  /// Bytes read on demand, `count` in all: `read(offset, count)` gives those bytes (fewer
  /// only past the end).
  init(count: Int, read: @escaping (_ offset: Int, _ count: Int) throws(DarkroomError) -> [UInt8]) {
    self.count = count
    storage = .ranges(read)
  }

  /// Bytes `offset ..< offset + length`, or nil if the source ends first.
  func bytes(_ offset: Int, _ length: Int) throws -> ArraySlice<UInt8>? {
    guard offset >= 0, length >= 0, offset + length <= count else { return nil }
    switch storage {
    case .memory(let bytes):
      return bytes[offset..<offset + length]
    case .ranges(let read):
      let end = offset + length
      if end > prefix.count {
        guard end <= Self.headerLimit else { return try self.read(read, offset, length) }
        // Grow the cached prefix geometrically: most headers fit in the first read.
        let target = min(count, Self.headerLimit, max(end, prefix.count * 2, 64 << 10))
        prefix += try read(prefix.count, target - prefix.count)
        guard end <= prefix.count else { return nil }
      }
      return prefix[offset..<end]
    }
  }

  /// Reads a range outside the cached prefix (the end of a file) without caching it.
  private func read(
    _ read: (Int, Int) throws(DarkroomError) -> [UInt8], _ offset: Int, _ length: Int
  ) throws -> ArraySlice<UInt8>? {
    let bytes = try read(offset, length)
    return bytes.count == length ? bytes[...] : nil
  }

  /// The last `length` bytes (or fewer, for a short source).
  func tail(_ length: Int) throws -> ArraySlice<UInt8> {
    let n = min(length, count)
    return try peek(count - n, n) ?? []
  }

  /// Like `bytes`, but a range beyond the cached prefix is read without growing it, so
  /// looking at the end of a large file does not load the middle.
  func peek(_ offset: Int, _ length: Int) throws -> ArraySlice<UInt8>? {
    guard offset >= 0, length >= 0, offset + length <= count else { return nil }
    if case .ranges(let read) = storage, offset + length > prefix.count {
      return try self.read(read, offset, length)
    }
    return try bytes(offset, length)
  }

  func u8(_ offset: Int) throws -> UInt8? {
    try bytes(offset, 1)?.first
  }

  func bigEndian16(_ offset: Int) throws -> Int? {
    guard let b = try bytes(offset, 2) else { return nil }
    return Int(b[b.startIndex]) << 8 | Int(b[b.startIndex + 1])
  }

  func bigEndian32(_ offset: Int) throws -> Int? {
    guard let b = try bytes(offset, 4) else { return nil }
    return b.reduce(0) { $0 << 8 | Int($1) }
  }
}
