import Dispatch
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// The keys of one open space, each derived from its space key (docs/spaces.md): one seals
/// objects' file keys, one the catalog's rows, one makes keyed names.
struct SpaceKeys: Sendable {
  /// The space key itself, kept to seal it under a new password.
  let space: SecretKey
  let objects: SecretKey
  let catalog: SecretKey
  let names: SecretKey

  init(_ spaceKey: SecretKey) {
    space = spaceKey
    objects = Sodium.subkey(spaceKey, id: 1)
    catalog = Sodium.subkey(spaceKey, id: 2)
    names = Sodium.subkey(spaceKey, id: 3)
  }

  /// Zeroes every key (``SecretKey/wipe()``).
  func wipe() {
    for key in [space, objects, catalog, names] { key.wipe() }
  }

  /// A keyed hash of `parts` as 32 hex digits: cache names and content identities, which
  /// say nothing to anyone without the key.
  func name(_ parts: [[UInt8]]) -> String {
    hex(Sodium.keyedHash(names, parts).prefix(16))
  }
}

/// The value of a lowercase hex digit; nil for any other byte.
func hexValue(_ digit: UInt8) -> UInt8? {
  switch digit {
  case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
  case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
  default: nil
  }
}

/// Bytes as lowercase hex digits.
func hex(_ bytes: ArraySlice<UInt8>) -> String {
  let digits = Array("0123456789abcdef".utf8)
  var out: [UInt8] = []
  out.reserveCapacity(bytes.count * 2)
  for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
  return String(decoding: out, as: UTF8.self)
}

/// An encrypted object: an original, an adjustment document or a rendition (docs/spaces.md).
///
/// A 96-byte header: a 24-byte nonce, then, sealed under the space's object key with the
/// object's name as associated data, the object's own random key (32 bytes), its stream nonce
/// (15 bytes, and one reserved) and its length (u64). Then the content, zero-padded to
/// ``padded(_:)`` bytes, in chunks of 64 KiB, each sealed under the object's key with the nonce
/// `stream nonce ‖ chunk index (u64, big endian) ‖ last-chunk flag`, as age's STREAM does.
/// A chunk therefore opens only at its own place in its own object, and only the last chunk
/// opens as the last: a swapped chunk, a swapped object or a truncated one fails.
enum SpaceObject {
  static let chunkBytes = 64 << 10
  static let headerBytes = Sodium.nonceBytes + 56 + Sodium.tagBytes
  static let batchChunks = 16

  /// Padmé padding: the length rounded up so that only about log log of its bits show,
  /// at most 12% larger. Object sizes then tell an image's size only roughly.
  static func padded(_ length: Int) -> Int {
    guard length > 1 else { return length }
    let e = Int.bitWidth - 1 - length.leadingZeroBitCount  // floor(log2 length)
    let s = Int.bitWidth - e.leadingZeroBitCount  // floor(log2 e) + 1
    let mask = (1 << (e - s)) - 1
    return (length + mask) & ~mask
  }

  static func chunkCount(padded: Int) -> Int { max(1, (padded + chunkBytes - 1) / chunkBytes) }

  /// The size on disk of an object holding `length` bytes.
  static func storedSize(_ length: Int) -> Int {
    let padded = padded(length)
    return headerBytes + padded + chunkCount(padded: padded) * Sodium.tagBytes
  }

  static func headerData(_ name: String) -> [UInt8] { Array("darkroom object 1\0\(name)".utf8) }

  static func chunkNonce(_ stream: [UInt8], _ index: Int, last: Bool) -> [UInt8] {
    stream + (0..<8).map { UInt8(truncatingIfNeeded: UInt64(index) >> (8 * (7 - UInt64($0)))) }
      + [last ? 1 : 0]
  }

  /// Writes object `name` to `path`, durably: its content comes from `read(offset, count)`,
  /// which returns exactly `count` bytes of the `length`. The bytes go to `partial`
  /// (`path.partial` unless given),
  /// which is synced and then renamed; a process killed before the rename leaves only that
  /// partial file (ciphertext), which the space's recovery removes.
  ///
  /// With `keepingFirst` (a rendition, which processes may make at once and readers read a
  /// chunk at a time), an object of that name that opens is kept and this one dropped, so a
  /// reader never reads across a replacement; one that does not open is replaced.
  static func write(
    name: String, length: Int, to path: String, keys: SpaceKeys, partial: String? = nil,
    keepingFirst: Bool = false,
    alongside: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil,
    read: (_ offset: Int, _ count: Int) throws(DarkroomError) -> [UInt8]
  ) throws(DarkroomError) {
    let fileKey = Sodium.randomKey()
    let stream = Sodium.random(15)
    var plainHeader = fileKey.bytes + stream + [0] + littleEndianBytes(UInt64(length))
    let headerNonce = Sodium.random(Sodium.nonceBytes)
    let header =
      headerNonce
      + Sodium.seal(plainHeader, key: keys.objects, nonce: headerNonce, data: headerData(name))
    Sodium.wipe(&plainHeader)

    let partial = partial ?? path + ".partial"
    let fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw AtomicFile.writeError(path, errno) }
    var closed = false
    defer { if !closed { close(fd) } }
    func put(_ bytes: [UInt8]) throws(DarkroomError) {
      var done = 0
      while done < bytes.count {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else {
          let code = errno
          unlink(partial)
          throw AtomicFile.writeError(path, code)
        }
        done += n
      }
    }
    try put(header)

    let padded = padded(length)
    let chunks = chunkCount(padded: padded)
    var index = 0
    while index < chunks {
      let batch = min(batchChunks, chunks - index)
      let start = index * chunkBytes
      let end = min(padded, start + batch * chunkBytes)
      var plain: [UInt8]
      do {
        plain = start < length ? try read(start, min(length, end) - start) : []
      } catch {
        unlink(partial)
        throw error
      }
      if plain.count < end - start {
        plain += [UInt8](repeating: 0, count: end - start - plain.count)
      }
      // The chunks are sealed on one core while `alongside` (the content's keyed hash) runs
      // on the other; without it, the chunks are split between the two.
      var out = [UInt8](repeating: 0, count: plain.count + batch * Sodium.tagBytes)
      let dataCount = max(0, min(length, end) - start)
      let first = index
      plain.withUnsafeBytes { input in
        out.withUnsafeMutableBufferPointer { sealed in
          guard let base = sealed.baseAddress else { return }
          // Both threads are done before these buffers go; they write disjoint ranges.
          nonisolated(unsafe) let target = base
          nonisolated(unsafe) let raw = input
          @Sendable func sealChunks(_ range: Range<Int>) {
            for i in range {
              let from = i * chunkBytes
              let to = min(raw.count, from + chunkBytes)
              Sodium.seal(
                UnsafeRawBufferPointer(rebasing: raw[from..<to]), key: fileKey,
                nonce: chunkNonce(stream, first + i, last: first + i == chunks - 1),
                into: target + i * (chunkBytes + Sodium.tagBytes))
            }
          }
          DispatchQueue.concurrentPerform(iterations: 2) { part in
            if let alongside {
              if part == 0 {
                alongside(UnsafeRawBufferPointer(rebasing: raw[0..<dataCount]))
              } else {
                sealChunks(0..<batch)
              }
            } else {
              sealChunks(part == 0 ? 0..<batch / 2 : batch / 2..<batch)
            }
          }
        }
      }
      Sodium.wipe(&plain)
      try put(out)
      index += batch
      if index < chunks { FaultInjection.point("space-object-partial") }
    }
    guard fsync(fd) == 0 else {
      let code = errno
      unlink(partial)
      throw AtomicFile.writeError(path, code)
    }
    close(fd)
    closed = true
    if keepingFirst {
      if link(partial, path) == 0 {
        unlink(partial)
        AtomicFile.syncFolder(URL(fileURLWithPath: path).deletingLastPathComponent().path)
        return
      }
      let code = errno
      if code == EEXIST,
        (try? SpaceObjectReader(path: path, name: name, keys: keys, label: name)) != nil
      {
        unlink(partial)
        return
      }
      guard code == EEXIST else {
        unlink(partial)
        throw AtomicFile.writeError(path, code)
      }
    }
    guard rename(partial, path) == 0 else {
      let code = errno
      unlink(partial)
      throw AtomicFile.writeError(path, code)
    }
    AtomicFile.syncFolder(URL(fileURLWithPath: path).deletingLastPathComponent().path)
  }

  /// Writes `bytes` as object `name` (see the streaming `write`).
  static func write(_ bytes: [UInt8], name: String, to path: String, keys: SpaceKeys)
    throws(DarkroomError)
  {
    try write(name: name, length: bytes.count, to: path, keys: keys) { offset, count in
      Array(bytes[offset..<offset + count])
    }
  }
}

/// Reads an object, opening only the chunks a range covers. Errors name `label` (the asset).
final class SpaceObjectReader {
  /// The content's length (without padding).
  let length: Int
  /// How many chunks this reader has opened (tests count them).
  private(set) var chunksOpened = 0
  private let file: InputFile
  private let fileKey: SecretKey
  private let stream: [UInt8]
  private let chunks: Int
  private let label: String

  init(path: String, name: String, keys: SpaceKeys, label: String) throws(DarkroomError) {
    self.label = label
    do {
      file = try InputFile(path)
    } catch  where error.kind == .notFound {
      throw DarkroomError(.notFound, file: label, "its encrypted object is missing")
    }
    guard file.size >= SpaceObject.headerBytes else {
      throw DarkroomError(.truncated, file: label, "its encrypted object is truncated")
    }
    let header = try file.read(at: 0, count: SpaceObject.headerBytes)
    let nonce = Array(header[0..<Sodium.nonceBytes])
    guard
      var plain = Sodium.open(
        header[Sodium.nonceBytes...], key: keys.objects, nonce: nonce,
        data: SpaceObject.headerData(name))
    else {
      throw DarkroomError(
        .corrupt, file: label,
        "its encrypted object fails authentication: it was changed, damaged or swapped")
    }
    defer { Sodium.wipe(&plain) }
    fileKey = SecretKey(copying: Array(plain[0..<32]))
    stream = Array(plain[32..<47])
    let stated = readLittleEndian(plain, 48, 8)
    guard stated <= UInt64(Int.max / 2) else {
      throw DarkroomError(.corrupt, file: label, "its encrypted object states an impossible size")
    }
    length = Int(stated)
    chunks = SpaceObject.chunkCount(padded: SpaceObject.padded(length))
    let expected = SpaceObject.storedSize(length)
    guard file.size == expected else {
      throw DarkroomError(
        file.size < expected ? .truncated : .corrupt, file: label,
        "its encrypted object is \(file.size) bytes, not \(expected): "
          + (file.size < expected ? "truncated" : "extended"))
    }
  }

  /// Bytes `range` of the content, opening only the chunks that hold them.
  func read(_ range: Range<Int>) throws(DarkroomError) -> [UInt8] {
    guard range.lowerBound >= 0, range.upperBound <= length else {
      throw DarkroomError(.invalidArgument, file: label, "range \(range) is outside its content")
    }
    guard !range.isEmpty else { return [] }
    let first = range.lowerBound / SpaceObject.chunkBytes
    let last = (range.upperBound - 1) / SpaceObject.chunkBytes
    let sealedChunk = SpaceObject.chunkBytes + Sodium.tagBytes
    let padded = SpaceObject.padded(length)
    var out: [UInt8] = []
    out.reserveCapacity(range.count)
    var index = first
    while index <= last {
      let batch = min(SpaceObject.batchChunks, last - index + 1)
      let from = SpaceObject.headerBytes + index * sealedChunk
      let plainEnd = min(padded, (index + batch) * SpaceObject.chunkBytes)
      let sealedCount =
        plainEnd - index * SpaceObject.chunkBytes + batch * Sodium.tagBytes
      let sealed = try file.read(at: from, count: sealedCount)
      guard sealed.count == sealedCount else {
        throw DarkroomError(.truncated, file: label, "its encrypted object is truncated")
      }
      var at = 0
      for i in index..<index + batch {
        let size = min(sealedChunk, sealed.count - at)
        let nonce = SpaceObject.chunkNonce(stream, i, last: i == chunks - 1)
        guard
          let plain = Sodium.open(sealed[at..<at + size], key: fileKey, nonce: nonce)
        else {
          throw DarkroomError(
            .corrupt, file: label,
            "its encrypted object fails authentication at chunk \(i): it was changed, damaged,"
              + " reordered or truncated")
        }
        chunksOpened += 1
        let chunkStart = i * SpaceObject.chunkBytes
        let lower = max(range.lowerBound, chunkStart) - chunkStart
        let upper = min(range.upperBound, chunkStart + plain.count) - chunkStart
        if lower < upper { out += plain[lower..<upper] }
        at += size
      }
      index += batch
    }
    return out
  }

  func readAll() throws(DarkroomError) -> [UInt8] { try read(0..<length) }

  /// The content read on demand: a header parser's reads open only the chunks they reach
  /// (an MP4's index may be at its end).
  var source: ByteSource {
    ByteSource(count: length) { offset, count throws(DarkroomError) in
      try self.read(offset..<min(self.length, offset + count))
    }
  }
}
