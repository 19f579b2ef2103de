#if canImport(Glibc)
  import Glibc
#endif

/// Locks one byte of a lock file, by key, with an open-file-description lock: a lock per key
/// that threads of one process and other processes both respect, released when the file is
/// closed (a killed holder frees it). Kernels without OFD locks get `flock` on the whole file.
enum FileLock {
  /// Linux's F_OFD_SETLK and F_OFD_SETLKW (not exported to Swift: `_GNU_SOURCE` macros).
  private static let setLock: Int32 = 37
  private static let setLockWaiting: Int32 = 38

  /// flock(2): the function, not the struct of the same name.
  private static let wholeFile: @Sendable (Int32, Int32) -> Int32 = { flock($0, $1) }

  /// 0: locked; 1: held by another (only when not waiting); -1: failed.
  static func lock(_ fd: Int32, key: UInt64, wait: Bool) -> Int32 {
    var range = flock()
    range.l_type = Int16(F_WRLCK)
    range.l_whence = Int16(SEEK_SET)
    range.l_len = 1
    range.l_start = off_t(key & ((1 << 62) - 1))
    while true {
      if fcntl(fd, wait ? setLockWaiting : setLock, &range) == 0 { return 0 }
      if errno == EINTR { continue }
      if errno == EAGAIN || errno == EACCES { return 1 }
      if errno != EINVAL { return -1 }
      break  // no OFD locks in this kernel
    }
    while true {
      if wholeFile(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0 { return 0 }
      if errno == EINTR { continue }
      return errno == EWOULDBLOCK ? 1 : -1
    }
  }
}
