#if canImport(Glibc)
  import Glibc
#endif

/// What the file system says about a file: cheap to read, and changed by every write. The
/// rendition cache remembers a file's hash under it, and the catalog reads a file again only
/// when it differs.
///
/// The change time (`ctime`) is set by the kernel on any write or rename and cannot be set
/// back by `touch -r` or `utimes`, so a file whose content changed never keeps its
/// identity, even when its size and modification time were restored.
package struct FileIdentity: Sendable, Hashable, Codable {
  package var device: UInt64
  package var inode: UInt64
  package var size: Int64
  /// Modification and status-change times, in nanoseconds since 1970.
  package var modified: Int64
  package var changed: Int64

  package init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
    (self.device, self.inode, self.size, self.modified, self.changed) =
      (device, inode, size, modified, changed)
  }

  init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    size = Int64(info.st_size)
    modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
  }

  /// The device of the file system `path` is on.
  static func device(of path: String) -> UInt64? {
    var info = stat()
    return stat(path, &info) == 0 ? UInt64(info.st_dev) : nil
  }

  /// The identity of the file `path` names (following symbolic links).
  init(path: String) throws(DarkroomError) {
    var info = stat()
    guard stat(path, &info) == 0 else { throw InputFile.errnoError(path) }
    self.init(info)
  }
}
