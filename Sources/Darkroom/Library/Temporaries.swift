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
    // readdir and the entries' types, not FileManager's enumerator: only names that start
    // with a dot become strings, and nothing is stat'ed unless its type is unknown (a
    // million photos are walked in a fraction of a second, where the enumerator took 5 s
    // before `serve` could listen).
    var found: [String] = []
    let cache = Library.folderName + "/cache"
    var folders = [""]
    while let relative = folders.popLast() {
      guard let directory = opendir(relative.isEmpty ? rootPath : rootPath + "/" + relative)
      else { continue }
      defer { closedir(directory) }
      while let entry = readdir(directory) {
        var type = entry.pointee.d_type
        let dotted = entry.pointee.d_name.0 == CChar(UInt8(ascii: "."))
        guard dotted || type == UInt8(DT_DIR) || type == UInt8(DT_UNKNOWN) else { continue }
        let name = FileNames.entry(entry)
        guard name != ".", name != ".." else { continue }
        let path = relative.isEmpty ? name : relative + "/" + name
        if type == UInt8(DT_UNKNOWN) {
          var info = stat()
          guard fstatat(dirfd(directory), name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
          let format = info.st_mode & S_IFMT
          type = UInt8(format == S_IFDIR ? DT_DIR : format == S_IFREG ? DT_REG : DT_UNKNOWN)
        }
        if type == UInt8(DT_DIR) {
          if path != cache { folders.append(path) }
          continue
        }
        guard type == UInt8(DT_REG), Self.isAbandonedTemporary(name, in: dirfd(directory)) else {
          continue
        }
        if removing, unlinkat(dirfd(directory), name, 0) == 0 {
          logger.notice("removed \(path): a temporary file whose writer died")
        }
        found.append(path)
      }
    }
    return found.sorted()
  }

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
