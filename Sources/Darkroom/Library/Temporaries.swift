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
  package func sweepTemporaries(removing: Bool = true) -> [String] {
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
        guard type == UInt8(DT_REG), FileLease.isAbandonedTemporary(name, in: dirfd(directory))
        else {
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
}
