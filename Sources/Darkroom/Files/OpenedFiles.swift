#if canImport(Glibc)
  import Glibc
#endif

/// Paths that name an open file, not a place in a folder: `/proc/self/fd/N` opens the very
/// file descriptor N has open, whatever has since happened to its name (a photo swapped for a
/// link to a private file, or for another file). Work that opens a file by path, as libvips
/// and the render pipeline do, is given such a path once the file was opened and checked,
/// so that no later open can reach anything else.
///
/// While an alias is in use it stands for the file's real path wherever a name means
/// something: the format a TIFF-based RAW is (`.dng`), the sidecars beside it, messages.
enum OpenedFiles {
  static let prefix = "/proc/self/fd/"
  private static let names = Locked<[String: String]>([:])

  /// Runs `body` with a path that opens `file` (and nothing else), standing for `name`;
  /// an error it throws names `name`.
  static func with<T>(
    _ file: InputFile, name: String, _ body: (String) throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    let alias = register(file, name: name)
    defer { unregister(alias) }
    do {
      return try body(alias)
    } catch {
      throw error.replacing(alias, with: name)
    }
  }

  /// The same, for work that waits.
  static func with<T>(
    _ file: InputFile, name: String, _ body: (String) async throws(DarkroomError) -> T
  ) async throws(DarkroomError) -> T {
    let alias = register(file, name: name)
    defer { unregister(alias) }
    do {
      return try await body(alias)
    } catch {
      throw error.replacing(alias, with: name)
    }
  }

  /// The path that opens `file` itself: `/proc/self/fd/N`.
  static func alias(of file: InputFile) -> String { prefix + String(file.descriptor) }

  private static func register(_ file: InputFile, name: String) -> String {
    let alias = alias(of: file)
    names.withLock { $0[alias] = name }
    return alias
  }

  private static func unregister(_ alias: String) {
    _ = names.withLock { $0.removeValue(forKey: alias) }
  }

  /// The path `path` stands for: its file's real path while it is an alias in use, else
  /// `path` itself.
  static func name(of path: String) -> String {
    guard path.hasPrefix(prefix) else { return path }
    return names.withLock { $0[path] } ?? path
  }
}

extension DarkroomError {
  /// The same error, with `alias` read as `name` in its file and message.
  func replacing(_ alias: String, with name: String) -> DarkroomError {
    var error = self
    if error.file == alias { error.file = name }
    error.message = error.message.replacingOccurrences(of: alias, with: name)
    return error
  }
}
