import CSodium

/// The only code that calls libsodium: Argon2id for passwords, XChaCha20-Poly1305 (IETF AEAD)
/// for data, BLAKE2b for subkeys and keyed hashes, and its random bytes. Spaces put these
/// together (docs/spaces.md); nothing here is cryptography of Darkroom's own.
enum Sodium {
  /// libsodium's one-time set-up; `sodium_init` is safe to call from any thread, repeatedly.
  static let ready: Bool = sodium_init() >= 0

  static let keyBytes = 32
  static let nonceBytes = 24  // XChaCha20-Poly1305's extended nonce
  static let tagBytes = 16
  static let saltBytes = 16  // crypto_pwhash_SALTBYTES

  /// `count` bytes from the operating system's generator.
  static func random(_ count: Int) -> [UInt8] {
    precondition(ready, "libsodium could not start")
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes {
      if let base = $0.baseAddress { randombytes_buf(base, $0.count) }
    }
    return bytes
  }

  /// A new random key in guarded memory.
  static func randomKey() -> SecretKey {
    precondition(ready, "libsodium could not start")
    return SecretKey { randombytes_buf($0, keyBytes) }
  }

  /// A key from a password with Argon2id (`crypto_pwhash`, version 1.3).
  ///
  /// - Returns: nil when libsodium refuses (memory could not be had, or parameters outside its
  ///   limits).
  static func passwordKey(_ password: [UInt8], salt: [UInt8], ops: UInt64, memory: Int)
    -> SecretKey?
  {
    precondition(ready && salt.count == saltBytes, "Argon2id needs libsodium and a 16-byte salt")
    var failed = false
    let key = SecretKey { out in
      failed =
        password.withUnsafeBufferPointer { pw in
          pw.withMemoryRebound(to: CChar.self) { chars in
            guard let base = chars.baseAddress else { return -1 }
            return crypto_pwhash(
              out.assumingMemoryBound(to: UInt8.self), UInt64(keyBytes), base, UInt64(pw.count),
              salt, ops, memory, crypto_pwhash_ALG_ARGON2ID13)
          }
        } != 0
    }
    return failed ? nil : key
  }

  /// A password's Argon2id hash in libsodium's self-describing text form
  /// (`crypto_pwhash_str`, interactive limits: a login, not a key); nil when libsodium
  /// refuses.
  static func passwordHash(_ password: String) -> String? {
    precondition(ready, "libsodium could not start")
    var out = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
    let length = UInt64(password.utf8.count)
    let status = password.withCString { chars in
      crypto_pwhash_str(
        &out, chars, length, UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE),
        Int(crypto_pwhash_MEMLIMIT_INTERACTIVE))
    }
    guard status == 0 else { return nil }
    return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Whether `password` is the one `hash` (``passwordHash(_:)``) was made from.
  static func verify(_ password: String, hash: String) -> Bool {
    precondition(ready, "libsodium could not start")
    let length = UInt64(password.utf8.count)
    return hash.withCString { stored in
      password.withCString { chars in crypto_pwhash_str_verify(stored, chars, length) == 0 }
    }
  }

  /// `plain` sealed under `key`: its ciphertext followed by the 16-byte tag.
  static func seal(
    _ plain: UnsafeRawBufferPointer, key: SecretKey, nonce: [UInt8], data: [UInt8] = []
  ) -> [UInt8] {
    precondition(nonce.count == nonceBytes)
    var out = [UInt8](repeating: 0, count: plain.count + tagBytes)
    var written: UInt64 = 0
    key.withBytes { k in
      out.withUnsafeMutableBufferPointer { o in
        guard let base = o.baseAddress else { return }  // never empty: the tag
        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
          base, &written, plain.baseAddress?.assumingMemoryBound(to: UInt8.self),
          UInt64(plain.count), data, UInt64(data.count), nil, nonce, k)
      }
    }
    return out
  }

  /// Seals `plain` into `out`, which has room for it and the tag.
  static func seal(
    _ plain: UnsafeRawBufferPointer, key: SecretKey, nonce: [UInt8],
    into out: UnsafeMutablePointer<UInt8>
  ) {
    precondition(nonce.count == nonceBytes)
    var written: UInt64 = 0
    key.withBytes { k in
      _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
        out, &written, plain.baseAddress?.assumingMemoryBound(to: UInt8.self),
        UInt64(plain.count), nil, 0, nil, nonce, k)
    }
  }

  static func seal(_ plain: [UInt8], key: SecretKey, nonce: [UInt8], data: [UInt8] = [])
    -> [UInt8]
  {
    plain.withUnsafeBytes { seal($0, key: key, nonce: nonce, data: data) }
  }

  /// The plaintext of `sealed` (ciphertext and tag), or nil when it fails authentication:
  /// another key, another nonce or associated data, or any changed byte.
  static func open(
    _ sealed: UnsafeRawBufferPointer, key: SecretKey, nonce: [UInt8], data: [UInt8] = []
  ) -> [UInt8]? {
    precondition(nonce.count == nonceBytes)
    guard sealed.count >= tagBytes else { return nil }
    // One spare byte, so that the output has an address even for an empty plaintext.
    var out = [UInt8](repeating: 0, count: sealed.count - tagBytes + 1)
    var written: UInt64 = 0
    let status = key.withBytes { k in
      out.withUnsafeMutableBufferPointer { o in
        guard let base = o.baseAddress, let input = sealed.baseAddress else { return Int32(-1) }
        return crypto_aead_xchacha20poly1305_ietf_decrypt(
          base, &written, nil, input.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count),
          data, UInt64(data.count), nonce, k)
      }
    }
    guard status == 0 else { return nil }
    out.removeLast()
    return out
  }

  static func open(_ sealed: ArraySlice<UInt8>, key: SecretKey, nonce: [UInt8], data: [UInt8] = [])
    -> [UInt8]?
  {
    sealed.withUnsafeBytes { open($0, key: key, nonce: nonce, data: data) }
  }

  /// Subkey number `id` of `key` (`crypto_kdf_derive_from_key`, BLAKE2b), in the context
  /// "DRSPACE1".
  static func subkey(_ key: SecretKey, id: UInt64) -> SecretKey {
    SecretKey { out in
      key.withBytes { k in
        _ = crypto_kdf_derive_from_key(
          out.assumingMemoryBound(to: UInt8.self), keyBytes, id, "DRSPACE1", k)
      }
    }
  }

  /// A 32-byte keyed BLAKE2b hash (`crypto_generichash` with a key: a MAC) of `parts`, each
  /// prefixed by its length so that no two lists of parts hash alike.
  static func keyedHash(_ key: SecretKey, _ parts: [[UInt8]]) -> [UInt8] {
    let hasher = KeyedHasher(key: key)
    for part in parts {
      hasher.update(littleEndianBytes(UInt64(part.count)))
      hasher.update(part)
    }
    return hasher.finish()
  }

  /// Zeroes a buffer in a way the compiler cannot leave out.
  static func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
  }
}

/// A 32-byte key in libsodium's guarded memory (locked into RAM, guard pages around it),
/// freed and zeroed when the last reference goes. Written once, when made; read-only after.
final class SecretKey: @unchecked Sendable {
  private let pointer: UnsafeMutableRawPointer

  /// `fill` writes the 32 key bytes.
  init(_ fill: (UnsafeMutableRawPointer) -> Void) {
    precondition(Sodium.ready, "libsodium could not start")
    guard let memory = sodium_malloc(Sodium.keyBytes) else {
      fatalError("libsodium could not allocate 32 bytes of guarded memory")
    }
    pointer = memory
    fill(pointer)
  }

  /// A key from bytes (which the caller wipes).
  convenience init(copying bytes: [UInt8]) {
    precondition(bytes.count == Sodium.keyBytes)
    self.init { out in
      bytes.withUnsafeBytes {
        if let base = $0.baseAddress { out.copyMemory(from: base, byteCount: 32) }
      }
    }
  }

  deinit { sodium_free(pointer) }

  /// Zeroes the key now, before the last reference goes (locking a space a request may still
  /// hold): whatever still uses it fails to authenticate from here on.
  func wipe() { sodium_memzero(pointer, Sodium.keyBytes) }

  /// True once every byte is zero (``wipe()``; a random key is all zero with odds 2^-256).
  var isWiped: Bool {
    withBytes { bytes in (0..<Sodium.keyBytes).allSatisfy { bytes[$0] == 0 } }
  }

  func withBytes<R>(_ body: (UnsafePointer<UInt8>) throws -> R) rethrows -> R {
    try body(UnsafePointer(pointer.assumingMemoryBound(to: UInt8.self)))
  }

  /// The key's bytes, for sealing it under another key (the caller wipes them).
  var bytes: [UInt8] {
    withBytes { Array(UnsafeBufferPointer(start: $0, count: Sodium.keyBytes)) }
  }
}

/// A keyed BLAKE2b hash over data given in pieces (the content identity of a large original,
/// hashed as it is encrypted). libsodium's state wants 64-byte alignment: it is allocated
/// here, and freed in `deinit`.
final class KeyedHasher: @unchecked Sendable {  // used by one thread at a time
  private let state: UnsafeMutableRawPointer

  init(key: SecretKey) {
    precondition(Sodium.ready, "libsodium could not start")
    state = UnsafeMutableRawPointer.allocate(
      byteCount: crypto_generichash_statebytes(), alignment: 64)
    key.withBytes { k in
      _ = crypto_generichash_init(
        OpaquePointer(state), k, Sodium.keyBytes, 32)
    }
  }

  deinit { state.deallocate() }

  func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  func update(_ bytes: UnsafeRawBufferPointer) {
    _ = crypto_generichash_update(
      OpaquePointer(state), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
      UInt64(bytes.count))
  }

  /// The 32-byte hash; the hasher is spent after this.
  func finish() -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    _ = crypto_generichash_final(OpaquePointer(state), &out, 32)
    return out
  }
}
