import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Writes files so that a reader sees the old content or the new, never a part: the bytes go
/// to a temporary file in the same folder, which is then renamed over the target.
///
/// ```swift
/// try AtomicFile.write(report, to: "report.json")
/// try AtomicFile.write(photo, to: "IMG_0001.jpg", durable: true, mode: 0o644)
/// ```
///
/// Any thread or process may write at once: each writer has a temporary file of its own, and
/// the last rename wins.
package enum AtomicFile {
  /// Writes `bytes` to `path`. With `durable`, the data and the rename reach the disk
  /// before this returns (for originals; derived files can be made again).
  ///
  /// `mode` sets the new file's permissions and `owner` its owner and group where the process
  /// may set them (an edited photo keeps its original's); `cloningFrom` names a file with the
  /// same bytes whose blocks may be shared (`FICLONE`, on file systems that can) instead of
  /// written again: the clone is compared with `bytes` before it is used. `faultPoint` names
  /// the moment before the rename for crash tests (`FaultInjection`). `sweep` first removes
  /// what a killed writer of the same file left; folders with many files that clean up
  /// after themselves (the cache) skip the listing this costs.
  ///
  /// - Throws: A ``DarkroomError`` of kind `io` about `path` when the temporary file cannot be
  ///   created or written (a missing or read-only folder, a full disk) or the rename fails;
  ///   `path` is then left as it was.
  package static func write(
    _ bytes: [UInt8], to path: String, durable: Bool = false, mode: mode_t = 0o644,
    owner: FileOwner? = nil, cloningFrom clone: String? = nil,
    faultPoint: String = "before-rename", sweep: Bool = true
  ) throws(DarkroomError) {
    try writing(
      to: path, durable: durable, mode: mode, owner: owner, faultPoint: faultPoint, sweep: sweep
    ) { fd, _ throws(DarkroomError) in
      if let clone, cloned(from: clone, into: fd, matching: bytes) { return }
      if !bytes.withUnsafeBytes({ writeAll(fd, $0) }) { throw writeError(path, errno) }
    }
  }

  /// Writes all of `buffer` to `fd` at its position, again after a short or interrupted
  /// write; false (with `errno`) when the descriptor refuses.
  static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
    guard let start = buffer.baseAddress else { return true }
    var offset = 0
    while offset < buffer.count {
      let n = Glibc.write(fd, start + offset, buffer.count - offset)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return false }
      offset += n
    }
    return true
  }

  /// Writes `path` through `body`, which is given the temporary file's descriptor (open for
  /// reading and writing, at its start) and may move the destination (`path`, in the same
  /// folder) once it knows what it wrote: a video encoded into place, a cache entry named by
  /// its size. Everything ``write(_:to:durable:mode:owner:cloningFrom:faultPoint:sweep:)``
  /// promises holds: the destination is the old file or the whole new one, never a part;
  /// what `body` throws leaves it as it was, and the temporary removed.
  @discardableResult
  static func writing<T>(
    to path: String, durable: Bool = false, mode: mode_t = 0o644, owner: FileOwner? = nil,
    faultPoint: String = "before-rename", sweep: Bool = true,
    _ body: (_ fd: Int32, _ destination: inout String) throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    let url = URL(fileURLWithPath: path)
    let folder = url.deletingLastPathComponent().path
    if sweep { removeAbandonedTemporaries(of: url.lastPathComponent, in: folder) }
    let temporary =
      folder + "/.\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
    let fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard fd >= 0 else { throw writeError(path, errno) }
    // Held until the rename (the descriptor is closed after it, or after the change it is
    // part of: FileLease.keepingLeases): a sweep on another machine sharing the folder leaves
    // the temporary alone, and a reader of the file put in place can wait for its writer.
    FileLease.hold(fd)
    fchmod(fd, mode)  // not narrowed by the umask: the same mode as the file it replaces
    if let owner { _ = fchown(fd, owner.user, owner.group) }  // only root may give files away
    var destination = path
    let value: T
    do {
      value = try body(fd, &destination)
    } catch {
      unlink(temporary)
      close(fd)
      throw error
    }
    var ok = true
    var failure: Int32 = 0
    if FaultInjection.fails("enospc") {  // tests: the disk filled up during the write
      ok = false
      failure = ENOSPC
    }
    if ok && durable && fsync(fd) != 0 {
      ok = false
      failure = errno
    }
    if ok { FaultInjection.point(faultPoint) }
    guard ok, rename(temporary, destination) == 0 else {
      if ok { failure = errno }
      unlink(temporary)
      close(fd)
      throw writeError(destination, failure)
    }
    if let keeper = FileLease.keeper { keeper.keep(fd) } else { close(fd) }
    if durable { syncFolder(folder) }
    return value
  }

  /// Shares `source`'s blocks with the new file `fd` (a reflink), if the file system can and
  /// the result is exactly `bytes`; otherwise leaves `fd` empty and returns false.
  private static func cloned(from source: String, into fd: Int32, matching bytes: [UInt8]) -> Bool {
    let input = open(source, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { return false }
    defer { close(input) }
    let ficlone: UInt = 0x4004_9409  // _IOW(0x94, 9, int)
    guard ioctl(fd, ficlone, input) == 0 else { return false }
    var copy = [UInt8](repeating: 0, count: bytes.count + 1)
    let n = copy.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
    if n == bytes.count && copy.prefix(n).elementsEqual(bytes) { return true }
    _ = ftruncate(fd, 0)  // the source changed since it was read: write the bytes instead
    return false
  }

  /// Links `temporary` to the first free name in `folder`: `name`, else `stem-2.ext`,
  /// `stem-3.ext`, ...; a link never replaces a file.
  ///
  /// - Returns: the path linked.
  ///
  /// With `descriptor` (the folder, opened), `temporary` and the new name are relative to it:
  /// no link on the way to the folder is followed.
  static func linkToFreeName(
    _ temporary: String, name: String, in folder: String, descriptor: Int32? = nil
  ) throws(DarkroomError) -> String {
    let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
    let stem = dot.map { String(name[..<$0]) } ?? name
    let suffix = dot.map { String(name[$0...]) } ?? ""
    for n in 1...10_000 {
      let free = n == 1 ? name : "\(stem)-\(n)\(suffix)"
      let candidate = folder + "/" + free
      let linked =
        descriptor.map { linkat($0, temporary, $0, free, 0) } ?? link(temporary, candidate)
      if linked == 0 { return candidate }
      guard errno == EEXIST else { throw AtomicFile.writeError(candidate, errno) }
    }
    throw DarkroomError(.io, file: folder + "/" + name, "no free name: 10,000 taken")
  }

  /// Writes `bytes` durably as a new file in `folder`, under `name` or the first free name
  /// after it (see ``linkToFreeName(_:name:in:)``), never over another file.
  ///
  /// - Returns: the path written.
  package static func writeNew(
    _ bytes: [UInt8], name: String, in folder: String, mode: mode_t = 0o644
  )
    throws(DarkroomError) -> String
  {
    let temporary = folder + "/.\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
    try write(bytes, to: temporary, durable: true, mode: mode, sweep: false)
    defer { unlink(temporary) }
    let path = try linkToFreeName(temporary, name: name, in: folder)
    syncFolder(folder)
    return path
  }

  /// Removes temporary files that a killed writer of `name` left behind: `.NAME.PID.N.tmp`
  /// whose writer is gone (``FileLease/isAbandonedTemporary(_:in:)``).
  static func removeAbandonedTemporaries(of name: String, in folder: String) {
    let prefix = ".\(name)."
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
    let candidates = names.filter {
      $0.hasPrefix(prefix) && $0.hasSuffix(".tmp")
        && $0.dropFirst(prefix.count).split(separator: ".").count == 3
    }
    guard !candidates.isEmpty else { return }
    let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    for candidate in candidates where FileLease.isAbandonedTemporary(candidate, in: descriptor) {
      unlinkat(descriptor, candidate, 0)
    }
  }

  /// Makes a rename or a new name in `folder` durable.
  static func syncFolder(_ folder: String) {
    let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    fsync(fd)
    close(fd)
  }

  static func writeError(_ path: String, _ code: Int32) -> DarkroomError {
    let reason = String(cString: strerror(code))
    switch code {
    case ENOENT:
      return DarkroomError(.io, file: path, "cannot write: the folder does not exist")
    case EACCES, EPERM, EROFS:
      return DarkroomError(.io, file: path, "cannot write: \(reason)")
    case ENOSPC, EDQUOT:
      return DarkroomError(.io, file: path, "cannot write: no space left on the device")
    default:
      return DarkroomError(.io, file: path, "cannot write: \(reason)")
    }
  }
}

/// Who owns a file: kept when Darkroom replaces a file it edits.
///
/// `FileOwner` is a `Sendable` value type.
package struct FileOwner: Sendable, Equatable {
  /// The owner's user ID.
  package var user: uid_t
  /// The file's group ID.
  package var group: gid_t

  package init(user: uid_t, group: gid_t) {
    self.user = user
    self.group = group
  }
}

/// The mode and owner of an existing file, which its replacement keeps.
struct FileAttributes: Sendable {
  var mode: mode_t
  var owner: FileOwner

  /// nil when `path` cannot be read with `stat`.
  init?(_ path: String) {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    mode = info.st_mode & 0o7777
    owner = FileOwner(user: info.st_uid, group: info.st_gid)
  }
}

/// Folder operations with `errno`-based messages.
enum Folders {
  /// Creates `path` and its missing parents (`mkdir -p`).
  static func create(_ path: String) throws(DarkroomError) {
    var info = stat()
    if stat(path, &info) == 0 {
      guard (info.st_mode & S_IFMT) == S_IFDIR else {
        throw DarkroomError(.io, file: path, "cannot create a folder: a file is in the way")
      }
      return
    }
    let parent = FilePath(path).parent
    if !parent.isEmpty && parent != path { try create(parent) }
    if mkdir(path, 0o755) != 0 && errno != EEXIST {
      let reason = String(cString: strerror(errno))
      throw DarkroomError(.io, file: path, "cannot create the folder: \(reason)")
    }
  }

  /// Removes `path` and everything in it (`rm -r`); a missing path is not an error.
  static func remove(_ path: String) throws(DarkroomError) {
    do {
      if FileManager.default.fileExists(atPath: path) {
        try FileManager.default.removeItem(atPath: path)
      }
    } catch {
      throw DarkroomError(.io, file: path, "cannot remove: \(error)")
    }
  }
}

/// Path arithmetic on plain strings.
struct FilePath {
  let path: String
  init(_ path: String) { self.path = path }

  /// The folder part: `a/b/c.jpg` → `a/b`, `c.jpg` → ``, `/c` → `/`.
  var parent: String {
    let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    guard let slash = trimmed.lastIndex(of: "/") else { return "" }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }
}
