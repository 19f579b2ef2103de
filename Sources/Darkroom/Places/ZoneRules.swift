import FoundationEssentials

/// A time zone's offsets from UTC over time, read from the system's tz database
/// (`/usr/share/zoneinfo/NAME`, Debian's tzdata, in the TZif format of RFC 8536): enough to
/// place a camera's local clock time in UTC.
struct ZoneRules: Sendable {
  /// Transition instants (seconds since 1970, ascending) and the offset (seconds east of
  /// UTC) in force from each.
  private var transitions: [Int64] = []
  private var offsets: [Int] = []
  /// The offset before the first transition (or always, with none).
  private var initial = 0

  /// The rules of zone `name`, such as `America/Denver`; nil for a name that is not a zone
  /// here (or a file that is not TZif).
  static func named(_ name: String) -> ZoneRules? {
    if let known = cache.withLock({ $0[name] }) { return known }
    let rules = load(name)
    cache.withLock { $0[name] = rules }
    return rules
  }

  private static let cache = Locked<[String: ZoneRules?]>([:])
  static let folder = "/usr/share/zoneinfo"

  private static func load(_ name: String) -> ZoneRules? {
    // A zone name, never a path elsewhere: letters, digits, `/`, `_`, `-`, `+`, no `..`.
    guard !name.isEmpty, name.count <= 64, !name.hasPrefix("/"), !name.contains(".."),
      name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/_-+".contains($0)) }),
      let bytes = try? InputFile.readAll(folder + "/" + name), bytes.count <= 1 << 20
    else { return nil }
    return ZoneRules(tzif: bytes)
  }

  /// Parses TZif; the version 2+ block (64-bit times) when there is one.
  init?(tzif bytes: [UInt8]) {
    func u32(_ at: Int) -> Int? {
      guard at >= 0, at + 4 <= bytes.count else { return nil }
      return Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8
        | Int(bytes[at + 3])
    }
    func header(_ at: Int) -> (times: Int, types: Int, chars: Int, leaps: Int, std: Int, ut: Int)? {
      guard at + 44 <= bytes.count, bytes[at..<at + 4].elementsEqual("TZif".utf8),
        let ut = u32(at + 20), let std = u32(at + 24), let leaps = u32(at + 28),
        let times = u32(at + 32), let types = u32(at + 36), let chars = u32(at + 40)
      else { return nil }
      return (times, types, chars, leaps, std, ut)
    }
    guard let first = header(0) else { return nil }
    var at = 0
    var timeSize = 4
    var counts = first
    if bytes[4] >= UInt8(ascii: "2") {
      // Skip the version 1 block to the 64-bit one.
      let v1 =
        first.times * 5 + first.types * 6 + first.chars + first.leaps * 8 + first.std + first.ut
      guard let second = header(44 + v1) else { return nil }
      (at, timeSize, counts) = (44 + v1, 8, second)
    }
    at += 44
    let typesAt = at + counts.times * timeSize + counts.times
    guard counts.types > 0, typesAt + counts.types * 6 <= bytes.count else { return nil }
    func offset(ofType type: Int) -> Int? {
      guard type < counts.types, let raw = u32(typesAt + type * 6) else { return nil }
      return Int(Int32(truncatingIfNeeded: raw))
    }
    for index in 0..<counts.times {
      let timeAt = at + index * timeSize
      var time: Int64 = 0
      for byte in bytes[timeAt..<timeAt + timeSize] { time = time << 8 | Int64(byte) }
      if timeSize == 4 { time = Int64(Int32(truncatingIfNeeded: time)) }
      guard let offset = offset(ofType: Int(bytes[at + counts.times * timeSize + index])) else {
        return nil
      }
      transitions.append(time)
      offsets.append(offset)
    }
    guard let zero = offset(ofType: 0) else { return nil }
    initial = zero
    // Past the last transition the TZif footer's rule applies; most zones' last transitions
    // run to 2037, and a zone without daylight saving keeps its last offset.
  }

  /// The offset (seconds east of UTC) in force at `instant`.
  func offset(at instant: Int64) -> Int {
    // The last transition at or before `instant`.
    var low = 0
    var high = transitions.count
    while low < high {
      let mid = (low + high) / 2
      if transitions[mid] <= instant { low = mid + 1 } else { high = mid }
    }
    return low == 0 ? initial : offsets[low - 1]
  }

  /// The offset for a local clock time given as seconds since 1970 read as if UTC: the one
  /// that, taken off, lands on an instant where it is in force. In a gap (clocks sprang
  /// forward) the offset before it; in an overlap (clocks fell back) the earlier instant's.
  func offset(forLocal local: Int64) -> Int {
    let candidates = [offset(at: local - 86_400), offset(at: local + 86_400)]
    for candidate in candidates.sorted(by: >)
    where offset(at: local - Int64(candidate)) == candidate {
      return candidate
    }
    return candidates[0]
  }
}
