/// Reads bits most significant first, as video bitstreams are written (H.265's and AV1's
/// headers), never past the end: every read answers nil there.
struct BitReader {
  private let bytes: [UInt8]
  private var position = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  /// An H.265 NAL unit's payload (after its 2-byte header), with its emulation prevention
  /// bytes (0x000003) taken out.
  init(nalUnit unit: [UInt8]) {
    var payload: [UInt8] = []
    var zeros = 0
    for byte in unit.dropFirst(2) {
      if zeros >= 2, byte == 3 {
        zeros = 0
        continue
      }
      payload.append(byte)
      zeros = byte == 0 ? zeros + 1 : 0
    }
    self.init(payload)
  }

  mutating func bits(_ count: Int) -> Int? {
    guard count >= 0, count <= 32, position + count <= bytes.count * 8 else { return nil }
    var value = 0
    for _ in 0..<count {
      value = value << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
      position += 1
    }
    return value
  }

  mutating func skip(_ count: Int) -> Bool {
    guard count >= 0, position + count <= bytes.count * 8 else { return false }
    position += count
    return true
  }

  /// An unsigned Exp-Golomb number (H.265's ue(v), AV1's uvlc()): as many bits as zeros
  /// came before the first 1.
  mutating func ue() -> Int? {
    var zeros = 0
    while true {
      guard let bit = bits(1) else { return nil }
      if bit == 1 { break }
      zeros += 1
      if zeros > 31 { return nil }
    }
    guard let rest = bits(zeros) else { return nil }
    return (1 << zeros) - 1 + rest
  }

  /// A signed Exp-Golomb number (H.265's se(v)).
  mutating func se() -> Int? {
    guard let code = ue() else { return nil }
    return code & 1 == 1 ? (code + 1) / 2 : -(code / 2)
  }

  /// AV1's ns(n): a number below `n`, in as few bits as it takes.
  mutating func ns(_ n: Int) -> Int? {
    guard n > 0 else { return nil }
    var w = 0
    var x = n
    while x > 0 {
      w += 1
      x >>= 1
    }
    let m = (1 << w) - n
    guard let v = bits(w - 1) else { return nil }
    if v < m { return v }
    guard let extra = bits(1) else { return nil }
    return (v << 1) - m + extra
  }
}
