import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

extension Library {
  /// Darkroom's own temporary files in this library whose writer is gone: an upload cut off
  /// by a crash (`.upload.PID.N.partial`) and a replacement never renamed into place
  /// (`.NAME.PID.N.tmp`, in the library's folders and in `.darkroom/` but its cache, whose
  /// writers clean up after themselves). A temporary whose process still runs is left alone.
  ///
  /// With `removing`, they are removed; either way their paths, relative to the root, are
  /// returned. `darkroom serve` sweeps at start, and `check` reports them (and removes them
  /// with `--repair`); a scan removes those it sees in the folders it lists.
  @discardableResult
  public func sweepTemporaries(removing: Bool = true) -> [String] {
    var found: [String] = []
    let cache = Library.folderName + "/cache"
    guard let walker = FileManager.default.enumerator(atPath: rootPath) else { return [] }
    while let relative = walker.nextObject() as? String {
      if relative == cache {
        walker.skipDescendants()
        continue
      }
      let name = relative.split(separator: "/").last.map(String.init) ?? relative
      guard Self.isAbandonedTemporary(name) else { continue }
      var info = stat()
      guard lstat(rootPath + "/" + relative, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        continue
      }
      if removing, unlink(rootPath + "/" + relative) == 0 {
        logger.notice("removed \(relative): a temporary file whose writer died")
      }
      found.append(relative)
    }
    return found.sorted()
  }

  /// Whether `name` is one of Darkroom's temporaries whose writer is gone (its process no
  /// longer runs). One of this process's own is never.
  static func isAbandonedTemporary(_ name: String) -> Bool {
    guard name.hasPrefix("."), let pid = writer(ofTemporary: name), pid != getpid() else {
      return false
    }
    return kill(pid, 0) != 0 && errno == ESRCH
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
