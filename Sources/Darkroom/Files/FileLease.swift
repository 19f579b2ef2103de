import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A lock its holder keeps on a file for as long as it works on it (`flock`, exclusive): the
/// kernel drops it when the holder's process dies, and so does a network file system's
/// server (NFSv4, CephFS, GlusterFS) for a process on another machine. It tells a process
/// whether a temporary file's writer, or a recorded job's process, still runs, where a pid
/// cannot: libraries on shared storage have writers on other machines, and their pids mean
/// nothing here.
enum FileLease {
  /// flock(2): the function, not the struct of the same name. Whole-file locks, as flock(1)
  /// takes them (a network file system maps them to its own byte-range locks).
  static let flockFile: @Sendable (Int32, Int32) -> Int32 = { flock($0, $1) }

  /// Takes the lease of the file open as `fd`, which this process has just made. Never
  /// waits: a new file has no other holder. A file system without locks leaves it untaken,
  /// and the pid is all there is to go by.
  static func hold(_ fd: Int32) {
    _ = flockFile(fd, LOCK_EX | LOCK_NB)
  }

  /// Whether a process holds the lease of `name` in the folder open as `folder` (a
  /// descriptor, or `AT_FDCWD` for a path): true when it does, false when nobody does or
  /// the file is gone, nil when the file cannot be opened to ask. The lease is tried, not
  /// taken: a file nobody holds is left as it was.
  static func isHeld(_ name: String, in folder: Int32 = AT_FDCWD) -> Bool? {
    let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return errno == ENOENT ? false : nil }
    defer { close(fd) }  // drops the lock if it was taken
    if flockFile(fd, LOCK_EX | LOCK_NB) == 0 { return false }
    return errno == EWOULDBLOCK ? true : nil
  }
}

extension FileLease {
  /// Whether `name`, in the folder open as `folder`, is one of Darkroom's temporaries whose
  /// writer is gone. One of this process's own is never; nor one whose pid a process here
  /// has; nor one whose writer holds its lease (``FileLease``): a writer on another machine
  /// sharing the folder, whose pid says nothing here.
  static func isAbandonedTemporary(_ name: String, in folder: Int32) -> Bool {
    guard name.hasPrefix("."), let pid = writer(ofTemporary: name), pid != getpid() else {
      return false
    }
    guard kill(pid, 0) != 0 && errno == ESRCH else { return false }
    return FileLease.isHeld(name, in: folder) == false
  }

  /// The process that writes a temporary named `name`; nil for a name that is not one of
  /// Darkroom's temporaries.
  static func writer(ofTemporary name: String) -> pid_t? {
    let parts = name.split(separator: ".", omittingEmptySubsequences: false)
    if name.hasPrefix(".upload."), name.hasSuffix(".partial"), parts.count == 5 {
      return pid_t(parts[2])  // "", "upload", PID, N, "partial"
    }
    if name.hasSuffix(".tmp"), parts.count >= 5, UInt32(parts[parts.count - 2]) != nil {
      return pid_t(parts[parts.count - 3])  // "", NAME..., PID, N, "tmp"
    }
    return nil
  }
}
