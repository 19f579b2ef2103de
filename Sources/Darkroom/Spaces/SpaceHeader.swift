import FoundationEssentials

/// How hard a password is to guess: Argon2id's passes and memory.
package struct KDFParameters: Sendable, Equatable {
  /// Passes over the memory (`opslimit`).
  package var ops: UInt64
  /// Memory in bytes (`memlimit`).
  package var memory: Int

  /// libsodium's "moderate": 3 passes over 256 MiB, about half a second on this project's
  /// 2-core machine (docs/spaces.md has the measurements).
  package static let standard = KDFParameters(ops: 3, memory: 256 << 20)

  package init(ops: UInt64, memory: Int) {
    self.ops = ops
    self.memory = memory
  }
}

/// The key slots at the head of a folder of spaces (`DIR/header`): a fixed number of slots,
/// each the space key of one space sealed under an Argon2id key of its password, or random
/// bytes of the same size. Every slot looks alike; nothing says which are in use.
///
/// Layout, little endian (docs/spaces.md): "DRSPACES", format version (u32), slot count (u32),
/// a salt of 16 bytes, then each slot: Argon2id passes (u64) and memory (u64), a 24-byte
/// nonce, and the 32-byte key sealed with its 16-byte tag.
struct SpaceHeader: Equatable {
  static let magic = Array("DRSPACES".utf8)
  static let formatVersion: UInt32 = 1
  static let slotBytes = 16 + Sodium.nonceBytes + Sodium.keyBytes + Sodium.tagBytes
  static let prefixBytes = 8 + 4 + 4 + Sodium.saltBytes

  struct Slot: Equatable {
    var kdf: KDFParameters
    var nonce: [UInt8]
    var sealed: [UInt8]

    /// Random bytes of a used slot's size, with the folder's parameters in the clear, as a
    /// used slot has them.
    static func unused(_ kdf: KDFParameters) -> Slot {
      Slot(
        kdf: kdf, nonce: Sodium.random(Sodium.nonceBytes),
        sealed: Sodium.random(Sodium.keyBytes + Sodium.tagBytes))
    }
  }

  /// One salt for the folder: one Argon2id run opens any slot, so opening costs the same
  /// whichever slot a password opens, or none (docs/spaces.md says why not one per slot).
  var salt: [UInt8]
  var slots: [Slot]

  static func new(slots count: Int, kdf: KDFParameters) -> SpaceHeader {
    SpaceHeader(
      salt: Sodium.random(Sodium.saltBytes), slots: (0..<count).map { _ in .unused(kdf) })
  }

  var byteCount: Int { Self.prefixBytes + slots.count * Self.slotBytes }

  /// What a slot's seal is bound to: the format, its place and its parameters.
  func associatedData(_ index: Int) -> [UInt8] {
    let kdf = slots[index].kdf
    return Self.magic + littleEndianBytes(UInt64(Self.formatVersion))
      + littleEndianBytes(UInt64(index)) + littleEndianBytes(kdf.ops)
      + littleEndianBytes(UInt64(kdf.memory)) + salt
  }

  /// Puts `key` in slot `index`, sealed under `passwordKey`.
  mutating func fill(_ index: Int, with key: SecretKey, passwordKey: SecretKey) {
    let nonce = Sodium.random(Sodium.nonceBytes)
    var plain = key.bytes
    defer { Sodium.wipe(&plain) }
    slots[index].nonce = nonce
    slots[index].sealed = Sodium.seal(
      plain, key: passwordKey, nonce: nonce, data: associatedData(index))
  }

  /// Tries `password` on every slot, with the same work whichever opens (or none): one
  /// Argon2id run for each set of parameters the slots use (one, unless a slot was given
  /// others), then an unseal of every slot.
  ///
  /// - Returns: the slot and its space key, or nil.
  /// - Throws: `engine` when Argon2id cannot run (memory).
  func open(_ password: [UInt8]) throws(DarkroomError) -> (slot: Int, key: SecretKey)? {
    var keys: [(KDFParameters, SecretKey)] = []
    var found: (slot: Int, key: SecretKey)?
    for (index, slot) in slots.enumerated() {
      let passwordKey: SecretKey
      if let known = keys.first(where: { $0.0 == slot.kdf }) {
        passwordKey = known.1
      } else {
        guard
          let derived = Sodium.passwordKey(
            password, salt: salt, ops: slot.kdf.ops, memory: slot.kdf.memory)
        else {
          throw DarkroomError(
            .engine,
            "Argon2id could not run with \(slot.kdf.memory >> 20) MiB (out of memory?)")
        }
        keys.append((slot.kdf, derived))
        passwordKey = derived
      }
      if var plain = slot.sealed.withUnsafeBytes({
        Sodium.open($0, key: passwordKey, nonce: slot.nonce, data: associatedData(index))
      }) {
        if found == nil { found = (index, SecretKey(copying: plain)) }
        Sodium.wipe(&plain)
      }
    }
    return found
  }

  var bytes: [UInt8] {
    var out =
      Self.magic + littleEndianBytes(UInt64(Self.formatVersion), 4)
      + littleEndianBytes(UInt64(slots.count), 4) + salt
    for slot in slots {
      out +=
        littleEndianBytes(slot.kdf.ops) + littleEndianBytes(UInt64(slot.kdf.memory)) + slot.nonce
        + slot.sealed
    }
    return out
  }

  /// Reads a header; errors name `folder`.
  static func read(_ folder: String) throws(DarkroomError) -> SpaceHeader {
    let path = folder + "/header"
    let bytes: [UInt8]
    do {
      bytes = try InputFile.readAll(path)
    } catch  where error.kind == .notFound {
      throw DarkroomError(.notFound, file: folder, "not a folder of encrypted spaces (no header)")
    }
    return try parse(bytes, folder: folder)
  }

  static func parse(_ bytes: [UInt8], folder: String) throws(DarkroomError) -> SpaceHeader {
    let damaged = DarkroomError(.corrupt, file: folder, "the spaces' header is damaged")
    guard bytes.count >= prefixBytes, Array(bytes[0..<8]) == magic else { throw damaged }
    let version = readLittleEndian(bytes, 8, 4)
    guard version == UInt64(formatVersion) else {
      throw DarkroomError(
        .unsupportedFormat, file: folder,
        "spaces' header version \(version) is newer than this darkroom reads (1)")
    }
    let count = Int(readLittleEndian(bytes, 12, 4))
    guard (1...64).contains(count), bytes.count == prefixBytes + count * slotBytes else {
      throw damaged
    }
    var slots: [Slot] = []
    for index in 0..<count {
      let at = prefixBytes + index * slotBytes
      let kdf = KDFParameters(
        ops: readLittleEndian(bytes, at, 8), memory: Int(readLittleEndian(bytes, at + 8, 8)))
      guard (1...16).contains(kdf.ops), (8 << 20...4 << 30).contains(kdf.memory) else {
        throw damaged
      }
      let nonceAt = at + 16
      let sealedAt = nonceAt + Sodium.nonceBytes
      slots.append(
        Slot(
          kdf: kdf, nonce: Array(bytes[nonceAt..<sealedAt]),
          sealed: Array(bytes[sealedAt..<at + slotBytes])))
    }
    return SpaceHeader(salt: Array(bytes[16..<16 + Sodium.saltBytes]), slots: slots)
  }

  /// Replaces the header durably (a temporary file, renamed).
  func write(_ folder: String) throws(DarkroomError) {
    try AtomicFile.write(bytes, to: folder + "/header", durable: true, mode: 0o600)
  }
}

/// `value` as `count` little-endian bytes.
func littleEndianBytes(_ value: UInt64, _ count: Int = 8) -> [UInt8] {
  (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
}

/// The little-endian number of `count` bytes at `offset`.
func readLittleEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> UInt64 {
  (0..<count).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
}
