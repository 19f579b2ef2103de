import CSandbox

#if canImport(Glibc)
  import Glibc
#endif

/// Files that live in memory only, never on a disk (Linux's `memfd_create`): a space's
/// decrypted video and what is made of it before it is sealed again. A video is read by
/// FFmpeg through a file descriptor, handed to a sandboxed worker the way a library's file
/// is, and written by the transcoder at offsets; a memory file is all of that without a
/// byte of plaintext reaching a disk (its pages can go to swap, as any memory's can). It
/// stands beside the workers it is handed to (CSandbox, which makes it, is theirs).
enum MemoryFile {
  /// A new, empty memory file, open for reading and writing (closed on exec); the caller
  /// owns the descriptor. `name` shows only in `/proc/PID/fd`.
  ///
  /// - Throws: `io` naming `file` when the kernel makes none (out of memory, no memfd).
  static func create(_ name: String, file: String) throws(DarkroomError) -> Int32 {
    let fd = dr_memory_file(name)
    guard fd >= 0 else {
      let code = errno
      throw DarkroomError(
        .io, file: file, "cannot make a file in memory: \(String(cString: strerror(code)))")
    }
    return fd
  }

  /// A sealed memory file of `length` bytes that `read(offset, count)` gives in order
  /// (exactly `count` each time), as an ``InputFile`` named `name`: readable, never
  /// writable again by anyone it is handed to.
  ///
  /// - Throws: what `read` throws; `io` when memory runs out.
  static func sealed(
    name: String, length: Int, read: (_ offset: Int, _ count: Int) throws(DarkroomError) -> [UInt8]
  ) throws(DarkroomError) -> InputFile {
    let fd = try create("darkroom-decrypted", file: name)
    var owned = true
    defer { if owned { close(fd) } }
    var offset = 0
    while offset < length {
      var bytes = try read(offset, min(copyBytes, length - offset))
      // Plaintext: zeroed once it is in the file, where the compiler cannot leave it out.
      defer {
        bytes.withUnsafeMutableBytes {
          if let base = $0.baseAddress { explicit_bzero(base, $0.count) }
        }
      }
      guard !bytes.isEmpty, bytes.withUnsafeBytes({ AtomicFile.writeAll(fd, $0) }) else {
        throw AtomicFile.writeError(name, errno)
      }
      offset += bytes.count
    }
    guard dr_memory_file_seal(fd) == 0 else { throw AtomicFile.writeError(name, errno) }
    owned = false
    return try InputFile(descriptor: fd, path: name)
  }

  /// How much is decrypted and written at a time: 4 MiB, 64 of a space object's chunks.
  static let copyBytes = 4 << 20
}
