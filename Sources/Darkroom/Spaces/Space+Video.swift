import Dispatch
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A space's videos: decoded and encoded as a folder's are (FFmpeg, in the space's own
/// workers), from and into files in memory (``MemoryFile``), so that no plaintext frame or
/// byte reaches a disk; what is kept is sealed as every object is.
extension Space {
  /// How many videos this process holds decrypted in memory at once: a video takes its
  /// size in memory while it is read, and a gallery asks for a page of posters together; the
  /// workers decode two or so at a time anyway.
  static let decryptedAtOnce = DispatchSemaphore(value: 2)

  /// Runs `body` with one of `asset`'s objects decrypted into a sealed file in memory (what
  /// FFmpeg reads a space's video from, here or in a worker it is handed to), after waiting
  /// for a turn among ``decryptedAtOnce``. The file is gone when `body` returns.
  ///
  /// - Throws: what reading the object throws (missing, damaged); `io` when memory runs out;
  ///   what `body` throws.
  func withDecryptedFile<T>(
    _ object: String, of asset: SpaceAsset, _ body: (InputFile) throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    Self.decryptedAtOnce.wait()
    defer { Self.decryptedAtOnce.signal() }
    return try body(try decryptedFile(object, of: asset))
  }

  /// One of `asset`'s objects decrypted into a sealed file in memory (use
  /// ``withDecryptedFile(_:of:_:)``, which bounds how many are held at once).
  ///
  /// - Throws: what reading the object throws (missing, damaged); `io` when memory runs out.
  private func decryptedFile(_ object: String, of asset: SpaceAsset) throws(DarkroomError)
    -> InputFile
  {
    try using { () throws(DarkroomError) in
      let sealed = try reader(object, of: asset)
      return try MemoryFile.sealed(name: asset.name, length: sealed.length) {
        offset, count throws(DarkroomError) in try sealed.read(offset..<offset + count)
      }
    }
  }

  /// A header of one of `asset`'s objects read as far as it needs (a chunk at a time: an
  /// MP4's index may be at its end), or nil for an object that is no video.
  func videoHeader(_ object: String, of asset: SpaceAsset) throws(DarkroomError) -> VideoHeader? {
    let sealed = try reader(object, of: asset)
    guard sealed.length > 0 else { return nil }
    guard VideoHeader.recognises(try sealed.read(0..<min(64, sealed.length))[...]) else {
      return nil
    }
    return try VideoHeader.read(sealed.source, name: asset.name)
  }

  /// Seals memory file `fd` (all of it, after `prefix`) as object `name`; with `unique`,
  /// through a partial file of its own, the first made kept (a rendition two processes may
  /// make at once: no catalog row names it, and a response reads it a chunk at a time).
  func seal(
    memoryFile fd: Int32, prefix: [UInt8] = [], as name: String, label: String,
    unique: Bool = false
  ) throws(DarkroomError) {
    try using { () throws(DarkroomError) in
      let made = try InputFile(descriptor: fcntl(fd, F_DUPFD_CLOEXEC, 0), path: label)
      try prepare(name)
      let path = objectPath(name)
      try SpaceObject.write(
        name: name, length: prefix.count + made.size, to: path, keys: keys,
        partial: unique ? Self.uniquePartial(path) : nil, keepingFirst: unique
      ) { offset, count throws(DarkroomError) in
        var out: [UInt8] = []
        if offset < prefix.count { out += prefix[offset..<min(prefix.count, offset + count)] }
        let wanted = count - out.count
        if wanted > 0 { out += try made.read(at: max(0, offset - prefix.count), count: wanted) }
        guard out.count == count else {
          throw DarkroomError(.truncated, file: label, "what was made shrank while it was sealed")
        }
        return out
      }
    }
  }

  // MARK: Playback renditions

  /// The keyed name of the playback rendition of `asset`'s video as `shown` (its edit's
  /// result; nil for its original, and for a photo's motion video, which an edit of the
  /// photo leaves as it is) under cache key `key` (``Library/playbackKey(_:)``).
  func playbackName(_ asset: SpaceAsset, shown: String?, key: String) -> String {
    keys.name(
      [
        Array("playback".utf8), Array(asset.identity.utf8), Array((shown ?? "").utf8),
        Array(key.utf8),
      ])
  }

  /// The playback rendition kept as object `name`: its content's size and its frames' size;
  /// nil when there is none (or it does not open: it is made again).
  func cachedPlayback(_ name: String, of asset: SpaceAsset) -> (
    byteSize: Int, width: Int, height: Int
  )? {
    guard let sealed = try? reader(name, of: asset), sealed.length > 8,
      let sizes = try? sealed.read(0..<8)
    else { return nil }
    return (
      sealed.length - 8, Int(readLittleEndian(sizes, 0, 4)), Int(readLittleEndian(sizes, 4, 4))
    )
  }

  /// Bytes `part` of the playback rendition kept as object `name` (all of it for nil).
  func playbackBytes(_ name: String, of asset: SpaceAsset, part: Range<Int>?)
    throws(DarkroomError) -> [UInt8]
  {
    let sealed = try reader(name, of: asset)
    let range = part ?? 0..<sealed.length - 8
    guard range.lowerBound >= 0, range.upperBound <= sealed.length - 8 else {
      throw DarkroomError(
        .invalidArgument, file: asset.name, "no bytes \(range) in \(sealed.length - 8)")
    }
    return try sealed.read(range.lowerBound + 8..<range.upperBound + 8)
  }

  /// Keeps the playback rendition made into memory file `fd` as object `name`, its frames'
  /// size before it.
  func storePlayback(
    _ name: String, of asset: SpaceAsset, memoryFile fd: Int32, width: Int, height: Int
  ) throws(DarkroomError) {
    let prefix = littleEndianBytes(UInt64(width), 4) + littleEndianBytes(UInt64(height), 4)
    try seal(memoryFile: fd, prefix: prefix, as: name, label: asset.name, unique: true)
  }
}
