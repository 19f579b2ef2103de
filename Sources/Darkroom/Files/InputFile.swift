#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An input file opened for reading, with the errors a person can act on. Reads are
/// positional (`pread`), so a header parser can jump around without seeking.
///
/// ``Library/openFile(of:)`` gives one for a catalogued asset. One task owns an `InputFile`;
/// its descriptor is closed when it goes.
package final class InputFile {
  /// The path it was opened by (for messages).
  package let path: String
  /// Its size in bytes when it was opened.
  package let size: Int
  /// The open descriptor, owned by this (closed when it goes).
  let descriptor: Int32

  /// Opens `path`; refuses missing and unreadable files, folders, devices and empty files.
  init(_ path: String) throws(DarkroomError) {
    self.path = path
    var info = stat()
    guard stat(path, &info) == 0 else { throw Self.errnoError(path) }
    try Self.checkReadable(info, path)  // before opening: a FIFO's open would wait
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw Self.errnoError(path) }
    descriptor = fd
    size = Int(info.st_size)
  }

  /// Takes `descriptor` (closed when this is), opened for `path`; refuses one that is not a
  /// regular file or is empty, closing it.
  init(descriptor fd: Int32, path: String) throws(DarkroomError) {
    var info = stat()
    do throws(DarkroomError) {
      guard fstat(fd, &info) == 0 else { throw Self.errnoError(path) }
      try Self.checkReadable(info, path)
    } catch {
      close(fd)
      throw error
    }
    self.path = path
    descriptor = fd
    size = Int(info.st_size)
  }

  /// Refuses what `info` describes unless it is a regular file with bytes in it.
  private static func checkReadable(_ info: stat, _ path: String) throws(DarkroomError) {
    if (info.st_mode & S_IFMT) == S_IFDIR {
      throw DarkroomError(.isDirectory, file: path, "is a directory, not an image file")
    }
    guard (info.st_mode & S_IFMT) == S_IFREG else {
      throw DarkroomError(.unsupportedFormat, file: path, "is not a regular file")
    }
    guard info.st_size > 0 else {
      throw DarkroomError(.empty, file: path, "empty file (0 bytes)")
    }
  }

  deinit { close(descriptor) }

  /// The open file's identity now (`fstat`): what tells whether it changed while read.
  var identity: FileIdentity? {
    var info = stat()
    return fstat(descriptor, &info) == 0 ? FileIdentity(info) : nil
  }

  /// Removes the file a move read (its copy now durable elsewhere), if its name still leads
  /// to the file read, unchanged since `before` (its identity when it was opened); then makes
  /// the removal durable.
  ///
  /// - Throws: `io` saying `changed` (the file is kept); what `unlink` fails with.
  func removeMoved(unchangedSince before: FileIdentity?, changed: String) throws(DarkroomError) {
    guard let before, before == identity, (try? FileIdentity(path: path)) == before else {
      throw DarkroomError(.io, file: path, changed)
    }
    guard unlink(path) == 0 else { throw Self.errnoError(path) }
    let folder = FilePath(path).parent
    AtomicFile.syncFolder(folder.isEmpty ? "." : folder)
  }

  /// Up to `count` bytes from `offset`; fewer only at the end of the file.
  package func read(at offset: Int, count: Int) throws(DarkroomError) -> [UInt8] {
    // Read straight into uninitialised storage: zeroing it first touched every page of a
    // 50 MB RAW twice (27 ms of a worker's 100 ms header read).
    var failure: Int32 = 0
    let bytes = [UInt8](unsafeUninitializedCapacity: max(count, 0)) { buffer, initialized in
      (initialized, failure) = fill(UnsafeMutableRawBufferPointer(buffer), from: offset)
    }
    try check(failure)
    return bytes
  }

  /// Fills `buffer` from `offset`; returns how many bytes were read (0 at the end).
  package func read(at offset: Int, into buffer: inout [UInt8]) throws(DarkroomError) -> Int {
    let (done, failure) = buffer.withUnsafeMutableBytes { fill($0, from: offset) }
    try check(failure)
    return done
  }

  /// Reads into `buffer` from `offset` until it is full or the file ends: how many bytes,
  /// and the `errno` of a failed read (0 for none).
  private func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int) -> (Int, Int32) {
    guard let base = buffer.baseAddress else { return (0, 0) }
    var done = 0
    while done < buffer.count {
      let n = pread(descriptor, base + done, buffer.count - done, off_t(offset + done))
      if n < 0 {
        if errno == EINTR { continue }
        return (done, errno)
      }
      if n == 0 { break }
      done += n
    }
    return (done, 0)
  }

  private func check(_ failure: Int32) throws(DarkroomError) {
    guard failure != 0 else { return }
    throw DarkroomError(.io, file: path, "cannot read: \(String(cString: strerror(failure)))")
  }

  /// The whole file.
  static func readAll(_ path: String) throws(DarkroomError) -> [UInt8] {
    let file = try InputFile(path)
    return try file.read(at: 0, count: file.size)
  }

  /// The `errno` of a failed call on `path`, as a `DarkroomError`.
  static func errnoError(_ path: String) -> DarkroomError {
    let code = errno
    let reason = String(cString: strerror(code))
    switch code {
    case ENOENT: return DarkroomError(.notFound, file: path, "no such file")
    case EACCES, EPERM: return DarkroomError(.unreadable, file: path, "cannot read: \(reason)")
    default: return DarkroomError(.io, file: path, "cannot read: \(reason)")
    }
  }
}

/// Reads a whole file with Darkroom's errors (for graphs and adjustment data given by path).
///
/// ```swift
/// let data = try AdjustmentData.decode(json: readWholeFile("edit.json"), source: "edit.json")
/// ```
///
/// - Throws: A ``DarkroomError`` about `path`: `notFound`, `isDirectory`, `unreadable`,
///   `unsupportedFormat` (not a regular file) or `empty` (0 bytes) when the file cannot be
///   opened, `io` when a read fails.
package func readWholeFile(_ path: String) throws(DarkroomError) -> [UInt8] {
  try InputFile.readAll(path)
}
