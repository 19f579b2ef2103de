#if canImport(Glibc)
  import Glibc
#endif

/// Opens files and folders inside a library by a path relative to its root, one component
/// at a time from the root's descriptor with `O_NOFOLLOW`: a symbolic link anywhere on the
/// way (a folder swapped for a link to `/etc`, a photo swapped for a link to a password
/// file) is refused, never followed, whatever it points at. The root itself may be a link;
/// that was the person's choice when they named it.
enum Beneath {
  /// The components of `relative`, refused if any would leave the root or is empty.
  static func components(_ relative: String) throws(DarkroomError) -> [Substring] {
    let parts = relative.split(separator: "/", omittingEmptySubsequences: true)
    guard !relative.hasPrefix("/"), !parts.contains(where: { $0 == "." || $0 == ".." }) else {
      throw DarkroomError(
        .invalidArgument, file: relative, "is not a plain path inside the library")
    }
    return parts
  }

  /// A descriptor of the folder `relative` below `root` (the root itself for `""`), each
  /// component a real folder, not a link; with `create`, missing ones are made (mode 0755).
  /// The caller closes it.
  ///
  /// - Throws: `invalidArgument` naming the first component that is a link or a file;
  ///   `notFound` for a missing one without `create`; `io` for anything else.
  static func folder(_ relative: String, in root: String, create: Bool = false)
    throws(DarkroomError) -> Int32
  {
    var fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw InputFile.errnoError(root) }
    var walked = ""
    for part in try components(relative) {
      walked += (walked.isEmpty ? "" : "/") + part
      var next = openat(fd, String(part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      if next < 0 && errno == ENOENT && create {
        if mkdirat(fd, String(part), 0o755) != 0 {
          if errno != EEXIST {
            let error = AtomicFile.writeError(root + "/" + walked, errno)
            close(fd)
            throw error
          }
        } else {
          // The new folder's name is durable before anything written in it is trusted (a
          // move removes its source once its copy is).
          fsync(fd)
        }
        next = openat(fd, String(part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      }
      let code = errno
      close(fd)
      guard next >= 0 else {
        throw refusal(walked, root: root, errno: code, folder: true, writing: create)
      }
      fd = next
    }
    return fd
  }

  /// Opens the file `relative` below `root` for reading, no component a link, the file a
  /// regular one.
  static func openFile(_ relative: String, in root: String) throws(DarkroomError) -> InputFile {
    let parts = try components(relative)
    guard let name = parts.last else {
      throw DarkroomError(.isDirectory, file: root, "is a directory, not an image file")
    }
    let folder = try folder(parts.dropLast().joined(separator: "/"), in: root)
    defer { close(folder) }
    let fd = openat(folder, String(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
      throw refusal(relative, root: root, errno: errno, folder: false, writing: false)
    }
    return try InputFile(descriptor: fd, path: root + "/" + relative)
  }

  /// A link in the way is the request's mistake when writing (`invalidArgument`), the
  /// file's state when reading (`unreadable`).
  private static func refusal(
    _ relative: String, root: String, errno code: Int32, folder: Bool, writing: Bool
  ) -> DarkroomError {
    let path = root + "/" + relative
    switch code {
    case ELOOP, ENOTDIR:
      return DarkroomError(
        writing ? .invalidArgument : .unreadable, file: path,
        folder
          ? "is not a folder of the library (a link or a file is in the way)"
          : "is a symbolic link: Darkroom does not follow links inside a library")
    case ENOENT:
      return DarkroomError(.notFound, file: path, "no such file")
    case EACCES, EPERM:
      return DarkroomError(
        .unreadable, file: path, "cannot read: \(String(cString: strerror(code)))")
    default:
      return DarkroomError(.io, file: path, "cannot open: \(String(cString: strerror(code)))")
    }
  }
}
