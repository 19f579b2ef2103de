/// ISO base media boxes in memory: the few reads HEIF's `meta` needs (its colour, its primary
/// image's coded data).
enum ISOBoxes {
  /// The next box at `at` (before `end`): its type, payload and where the one after starts;
  /// nil at the end or for a box whose size does not fit.
  static func next(in bytes: [UInt8], at: Int, end: Int)
    -> (type: String, payload: Range<Int>, next: Int)?
  {
    guard at >= 0, at + 8 <= end, end <= bytes.count, let size = number(bytes, at, 4),
      size >= 8, at + size <= end
    else { return nil }
    return (String(decoding: bytes[at + 4..<at + 8], as: UTF8.self), at + 8..<at + size, at + size)
  }

  /// The payload of the first top-level box of `type` among the first 64.
  static func topLevel(_ type: String, in bytes: [UInt8]) -> Range<Int>? {
    var at = 0
    for _ in 0..<64 {
      guard let (found, payload, next) = next(in: bytes, at: at, end: bytes.count) else {
        return nil
      }
      if found == type { return payload }
      at = next
    }
    return nil
  }

  /// The boxes in `range`, in order.
  static func childList(in bytes: [UInt8], range: Range<Int>) -> [(
    type: String, payload: Range<Int>
  )] {
    var list: [(type: String, payload: Range<Int>)] = []
    var at = range.lowerBound
    while list.count < 4096,
      let (type, payload, next) = next(in: bytes, at: at, end: range.upperBound)
    {
      list.append((type, payload))
      at = next
    }
    return list
  }

  /// The first box of each type in `range`.
  static func children(in bytes: [UInt8], range: Range<Int>) -> [String: Range<Int>] {
    var boxes: [String: Range<Int>] = [:]
    for (type, payload) in childList(in: bytes, range: range) where boxes[type] == nil {
      boxes[type] = payload
    }
    return boxes
  }

  /// A big-endian number of `size` bytes (0-8) at `at`, or nil past the end.
  static func number(_ bytes: [UInt8], _ at: Int, _ size: Int) -> Int? {
    guard at >= 0, size <= 8, at + size <= bytes.count else { return nil }
    return bytes[at..<at + size].reduce(0) { $0 << 8 | Int($1) }
  }

  /// The item id of a full box (`pitm`) `skip` bytes in: 16 bits in version 0, else 32.
  static func itemID(_ bytes: [UInt8], _ box: Range<Int>, at skip: Int) -> (value: Int, end: Int)? {
    guard !box.isEmpty else { return nil }
    let size = bytes[box.lowerBound] == 0 ? 2 : 4
    return number(bytes, box.lowerBound + skip, size).map { ($0, box.lowerBound + skip + size) }
  }

  /// Big-endian fields read in turn, never past `end`.
  struct Reader {
    let bytes: [UInt8]
    var at: Int
    let end: Int

    mutating func read(_ size: Int) -> Int? {
      guard at + size <= end, let value = ISOBoxes.number(bytes, at, size) else { return nil }
      at += size
      return value
    }

    mutating func skip(_ size: Int) -> Bool {
      guard at + size <= end else { return false }
      at += size
      return true
    }
  }
}
