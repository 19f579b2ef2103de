import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A library's secret keys, each 32 random bytes in a file of `.darkroom/` that only this user
/// may read: the gallery's session key and the key that signs renditions' addresses.
///
/// A key is made on first use: written whole to a temporary file, then linked into place, so
/// that two processes starting at once agree on one (the second link fails, and both read the
/// first). A key file that others may read, that is a link, or that another user owns is
/// refused, never used: a key others can read signs for anyone.
package enum PrivateKeyFile {
  /// The key at `path`, made when there is none; nil where it cannot be written (a read-only
  /// library). `what` names the key in errors ("the gallery's session key"), and `remedy`
  /// says what removing it costs.
  ///
  /// - Throws: `invalidArgument` naming `path` when it exists but is not this user's alone,
  ///   is not a file, or does not hold 32 bytes.
  package static func open(_ path: String, what: String, remedy: String)
    throws(DarkroomError) -> [UInt8]?
  {
    if access(path, F_OK) != 0 {
      var bytes = [UInt8](repeating: 0, count: 32)
      var generator = SystemRandomNumberGenerator()
      for index in bytes.indices { bytes[index] = generator.next() }
      let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
      // Written under a hidden name first (a free one: writeNew never writes over a file).
      let name = "." + path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...]
      guard let temporary = try? AtomicFile.writeNew(bytes, name: name, in: folder, mode: 0o600)
      else { return nil }
      link(temporary, path)  // EEXIST: another process's came first, and is the one
      unlink(temporary)
    }
    try checkPrivate(path, directory: false, what: what, remedy: remedy)
    let bytes = try readWholeFile(path)
    guard bytes.count == 32 else {
      throw DarkroomError(
        .invalidArgument, file: path,
        "refused as \(what): \(bytes.count) bytes, not 32: remove it, and \(remedy)")
    }
    return bytes
  }

  /// Refuses `path` unless it is a folder (or a file) of this user's with no group or other
  /// permission, and no link.
  ///
  /// - Throws: `io` when it cannot be read; `invalidArgument` naming it and what is wrong.
  package static func checkPrivate(
    _ path: String, directory: Bool, what: String, remedy: String
  ) throws(DarkroomError) {
    var info = stat()
    guard lstat(path, &info) == 0 else {
      throw DarkroomError(.io, file: path, String(cString: strerror(errno)))
    }
    let kind = info.st_mode & S_IFMT
    let mode = String(info.st_mode & 0o7777, radix: 8)
    if kind != (directory ? S_IFDIR : S_IFREG) {
      throw DarkroomError(
        .invalidArgument, file: path,
        "refused as \(what): it is not a \(directory ? "folder" : "file") (a link or another kind)")
    }
    if info.st_uid != geteuid() {
      throw DarkroomError(
        .invalidArgument, file: path,
        "refused as \(what): it belongs to uid \(info.st_uid), not to this server's uid \(geteuid())"
      )
    }
    if info.st_mode & 0o077 != 0 || (!directory && info.st_nlink != 1) {
      let links = directory || info.st_nlink == 1 ? "" : ", \(info.st_nlink) links"
      let fix = directory ? "make it this user's alone (chmod 700)" : "remove it, and \(remedy)"
      throw DarkroomError(
        .invalidArgument, file: path,
        "refused as \(what): others may use it (mode \(mode)\(links)): \(fix)")
    }
  }
}
