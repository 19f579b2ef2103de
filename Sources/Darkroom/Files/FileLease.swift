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

/// The leases of files a change has put in place, held until the catalog knows them: an
/// edit renames its result over the photo and then reads it into the catalog, and a reader
/// between the two would find a file the catalog does not know yet. Inside
/// ``FileLease/keepingLeases(_:)``, ``AtomicFile`` hands the descriptor of each file it
/// renamed into place to the keeper instead of closing it, so the file's writer lease
/// (``FileLease/hold(_:)``) lasts until the change is whole; ``FileLease/waitForWriter(_:)``
/// is how a reader waits for it, in this process or another (a killed writer's lease goes
/// with it).
final class LeaseKeeper: Sendable {
  private let state = Locked<(descriptors: [Int32], released: Bool)>(([], false))

  /// Keeps `fd` open, its lease held, until the keeper's scope ends (closed at once once it
  /// has: a task the scope started may outlive it).
  func keep(_ fd: Int32) {
    let kept = state.withLock { state in
      if state.released { return false }
      state.descriptors.append(fd)
      return true
    }
    if !kept { close(fd) }
  }

  /// Whether it holds the lease of the file open as `fd` (the same file: device and inode).
  func holds(_ fd: Int32) -> Bool {
    var file = stat()
    guard fstat(fd, &file) == 0 else { return false }
    return state.withLock { state in
      state.descriptors.contains { kept in
        var held = stat()
        return fstat(kept, &held) == 0 && held.st_dev == file.st_dev && held.st_ino == file.st_ino
      }
    }
  }

  fileprivate func release() {
    let held = state.withLock { state in
      defer { state = ([], true) }
      return state.descriptors
    }
    for fd in held { close(fd) }
  }
}

extension FileLease {
  /// The keeper of the change this thread (or task) makes, if it makes one.
  @TaskLocal static var keeper: LeaseKeeper?

  /// Runs `body` with the lease of every file ``AtomicFile`` puts in place during it held
  /// until it returns or throws: a change and its catalog update, seen by readers as one.
  /// Inside another such scope, the outer one keeps them.
  static func keepingLeases<T>(_ body: () throws(DarkroomError) -> T) throws(DarkroomError) -> T {
    if keeper != nil { return try body() }
    let kept = LeaseKeeper()
    defer { kept.release() }
    let result: Result<T, DarkroomError> = $keeper.withValue(kept) {
      do throws(DarkroomError) { return .success(try body()) } catch { return .failure(error) }
    }
    return try result.get()
  }

  /// Waits until no writer holds the lease of the file open as `fd`: one a change has just
  /// put in place is then in the catalog too. Returns at once for a file nobody holds, never
  /// waits for a lease this thread's own change holds (that would be forever), and gives up
  /// after `limit` (a lease held on purpose, by whoever may lock the library's files, must
  /// not hold a request for ever; a catalog update takes milliseconds).
  ///
  /// - Returns: whether it waited (the file may have changed meanwhile).
  @discardableResult
  static func waitForWriter(_ fd: Int32, limit: Duration = .seconds(10)) -> Bool {
    if keeper?.holds(fd) == true { return false }
    let deadline = ContinuousClock.now + limit
    var waited = false
    while true {
      if flockFile(fd, LOCK_SH | LOCK_NB) == 0 {
        _ = flockFile(fd, LOCK_UN)
        return waited
      }
      guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
        return waited
      }
      if !waited { writerWaits.withLock { $0 += 1 } }
      waited = true
      usleep(2_000)
    }
  }

  /// How many times a reader of this process has found a writer's lease held and waited
  /// (for tests, and a count worth watching: each is a read that met an edit).
  static let writerWaits = Locked(0)
}
