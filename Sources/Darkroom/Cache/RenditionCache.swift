import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Rendered representations on disk, keyed by what decides their bytes: the source's content
/// hash, the representation spec, the edit state and the engine's render version. Bounded in
/// size, least recently used first out, and safe for many processes at once.
///
/// Layout: `objects/<ab>/<source sha256>/<key>_<rep>_<edit>_<W>x<H>_<bytes>.<ext>`. An entry
/// is written to a temporary file and renamed into place, so readers never see part of one;
/// the byte count in its name also rejects a file a power cut left short. `sources/`
/// remembers each source file's content hash beside its file identity (device, inode, size,
/// mtime, ctime), so a hit does not re-read the source; any write to the source changes its
/// ctime and forces a re-hash.
///
/// Most code uses a cache through ``Representations`` or ``ImageManager``:
///
/// ```swift
/// let cache = RenditionCache(folder: Library.cacheFolder(for: "IMG_0001.jpg"))
/// let thumbnail = try Representations(cache: cache)
///   .rendition(of: .file("IMG_0001.jpg"), RenditionSpec(.thumbnail))
/// print(cache.stats().bytes, "bytes cached")
/// ```
///
/// `RenditionCache` is a `Sendable` value that names a folder and holds no open files or
/// memory: copies, threads and processes can use the same folder at once.
package struct RenditionCache: Sendable {
  /// The folder that holds the cache (created when something is first written to it).
  package let folder: URL
  /// Evicts least recently used entries when the total passes this many bytes.
  package var limitBytes: Int64

  /// The default size bound: 1 GiB.
  package static let defaultLimitBytes = CacheSettings.defaultLimitBytes

  /// A cache in `folder`, bounded to `limitBytes`; creates nothing yet.
  package init(folder: URL, limitBytes: Int64 = RenditionCache.defaultLimitBytes) {
    self.folder = folder
    self.limitBytes = limitBytes
  }

  /// The cache of files in no library: `$XDG_CACHE_HOME/darkroom`, else `~/.cache/darkroom`
  /// (``Library/cacheFolder(for:)`` picks a file's library's first).
  package static var userFolder: URL {
    let environment = ProcessInfo.processInfo.environment
    if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
      return URL(fileURLWithPath: xdg).appendingPathComponent("darkroom")
    }
    let home =
      environment["HOME"].map { URL(fileURLWithPath: $0) }
      ?? FileManager.default.homeDirectoryForCurrentUser
    return home.appendingPathComponent(".cache/darkroom")
  }

  /// One cached rendition. `Entry` is a `Sendable` value type.
  package struct Entry: Sendable, Equatable {
    /// The entry's file.
    package var path: String
    /// The spec's key: a hash of the spec, the edit state and the render version.
    package var key: String
    /// What the entry holds, as its caller names it (a representation: `thumbnail`, ...).
    package var kind: String
    /// The edit state's short hash, or "original".
    package var edit: String
    /// The rendition's width in pixels.
    package var width: Int
    /// The rendition's height in pixels.
    package var height: Int
    /// The size of the encoded rendition, in bytes.
    package var byteCount: Int
    /// The encoded rendition's file name extension (`jpg`, `webp`, ...).
    package var fileExtension: String
  }

  // MARK: Source identity

  /// The content hash of a source file, re-read only when its file identity changed.
  ///
  /// - Throws: A ``DarkroomError`` about `path` when the file cannot be read, as
  ///   ``ContentHash/of(file:)`` throws.
  package func contentHash(ofFile path: String) throws(DarkroomError) -> ContentHash {
    let identity = try FileIdentity(path: path)
    if let hash = rememberedHash(identity) { return hash }
    let hash = try ContentHash.of(file: path)
    remember(hash, ofFile: path, readAs: identity)
    return hash
  }

  /// Remembers `hash` as the content of `path`, read while the file had `identity`; only if
  /// the file still has it (it did not change while it was read).
  ///
  /// - Returns: false when the file changed (nothing is remembered then).
  @discardableResult
  func remember(_ hash: ContentHash, ofFile path: String, readAs identity: FileIdentity) -> Bool {
    guard (try? FileIdentity(path: path)) == identity else { return false }
    let memo = memoPath(identity)
    try? makeFolder(memo)
    try? AtomicFile.write(
      Array((Self.memoLine(identity) + hash.hex + "\n").utf8), to: memo, sweep: false)
    return true
  }

  /// The remembered content hash of a file whose identity has not changed since, or nil.
  package func rememberedContentHash(ofFile path: String) -> ContentHash? {
    guard let identity = try? FileIdentity(path: path) else { return nil }
    return rememberedHash(identity)
  }

  private func rememberedHash(_ identity: FileIdentity) -> ContentHash? {
    let expected = Self.memoLine(identity)
    guard let text = try? String(contentsOfFile: memoPath(identity), encoding: .utf8),
      text.hasPrefix(expected)
    else { return nil }
    return ContentHash(hex: String(text.dropFirst(expected.count).prefix(64)))
  }

  /// Where the hash of the file with `identity` is remembered: by its device and inode, not
  /// its path, so that a file opened through another name (a rename, a hard link, an
  /// ``OpenedFiles`` alias) is the same file here.
  private func memoPath(_ identity: FileIdentity) -> String {
    folder.appendingPathComponent("sources")
      .appendingPathComponent(
        String(ContentHash.of(text: "\(identity.device) \(identity.inode)").hex.prefix(32))
      ).path
  }

  private static func memoLine(_ id: FileIdentity) -> String {
    "\(id.device) \(id.inode) \(id.size) \(id.modified) \(id.changed) "
  }

  // MARK: Entries

  func assetFolder(_ source: ContentHash) -> URL {
    folder.appendingPathComponent("objects").appendingPathComponent(String(source.hex.prefix(2)))
      .appendingPathComponent(source.hex)
  }

  /// The cached entry for `key`, if there is a complete one; marks it recently used.
  package func lookup(source: ContentHash, key: String) -> Entry? {
    guard let entry = entries(of: source).first(where: { $0.key == key }) else { return nil }
    touch(entry.path)
    return entry
  }

  /// Every complete entry of one source.
  package func entries(of source: ContentHash) -> [Entry] {
    let directory = assetFolder(source)
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
      return []
    }
    return names.compactMap { name in
      guard let entry = Self.parse(name, in: directory.path) else { return nil }
      // A short file (a crash before its data reached the disk) is not an entry.
      guard let file = Self.fileInfo(entry.path), file.size == entry.byteCount else { return nil }
      return entry
    }
  }

  /// Reads an entry's bytes, or nil if it vanished or is not whole.
  package func read(_ entry: Entry) -> [UInt8]? {
    guard let data = FileManager.default.contents(atPath: entry.path), data.count == entry.byteCount
    else { return nil }
    return Array(data)
  }

  /// Stores rendered bytes atomically and evicts old entries if the cache is over its bound.
  ///
  /// - Throws: A ``DarkroomError`` of kind `io` when the entry's folder cannot be created or
  ///   the file cannot be written.
  @discardableResult
  package func store(
    source: ContentHash, key: String, kind: String, edit: String,
    bytes: [UInt8], fileExtension: String, width: Int, height: Int
  ) throws(DarkroomError) -> Entry {
    try Self.checkNames(key, kind, edit, fileExtension)
    let directory = assetFolder(source)
    let name = "\(key)_\(kind)_\(edit)_\(width)x\(height)_\(bytes.count).\(fileExtension)"
    let path = directory.appendingPathComponent(name).path
    try makeFolder(path)
    // Leftovers of killed writers here are removed by eviction (`removeStaleTemporaries`).
    try AtomicFile.write(bytes, to: path, sweep: false)
    addUsage(Int64(bytes.count))
    return Entry(
      path: path, key: key, kind: kind, edit: edit, width: width, height: height,
      byteCount: bytes.count, fileExtension: fileExtension)
  }

  /// Stores an entry written through `write` (given the descriptor of a temporary file in
  /// the entry's folder; it returns the picture's size): for renditions too large to hold
  /// in memory, a video's. The entry appears whole, named by the bytes written, or not at
  /// all: what `write` throws leaves nothing behind.
  ///
  /// - Throws: `invalidArgument` for names that cannot be an entry's; `io` when the folder
  ///   or file cannot be written; what `write` throws.
  @discardableResult
  func store(
    source: ContentHash, key: String, kind: String, edit: String, fileExtension: String,
    writing write: (_ fd: Int32) throws(DarkroomError) -> (width: Int, height: Int)
  ) throws(DarkroomError) -> Entry {
    try Self.checkNames(key, kind, edit, fileExtension)
    let directory = assetFolder(source).path
    let started = directory + "/\(key)_\(kind)_\(edit).\(fileExtension)"
    try makeFolder(started)
    return try AtomicFile.writing(to: started, sweep: false) {
      fd, destination throws(DarkroomError) in
      let size = try write(fd)
      let count = Int(lseek(fd, 0, SEEK_END))
      guard count > 0 else { throw DarkroomError(.io, file: started, "nothing was written") }
      let name = "\(key)_\(kind)_\(edit)_\(size.width)x\(size.height)_\(count).\(fileExtension)"
      destination = directory + "/" + name
      addUsage(Int64(count))
      return Entry(
        path: destination, key: key, kind: kind, edit: edit, width: size.width,
        height: size.height, byteCount: count, fileExtension: fileExtension)
    }
  }

  /// Refuses names that cannot stand in an entry's file name.
  private static func checkNames(_ names: String...) throws(DarkroomError) {
    guard names.allSatisfy(isName) else {
      throw DarkroomError(
        .invalidArgument, "a cache entry's names are letters, digits and hyphens")
    }
  }

  /// What may stand between the `_` and `.` of an entry's name.
  private static func isName(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy { $0 == UInt8(ascii: "-") || isalnum(Int32($0)) != 0 }
  }

  /// Runs `body` holding a lock for one entry, across processes, so that concurrent requests
  /// for the same rendition render it once: the others wait, then find it cached.
  ///
  /// The lock is an advisory `flock` on a lock file beside the entries. Where that file
  /// cannot be opened, `body` runs without the lock.
  ///
  /// - Throws: A ``DarkroomError`` of kind `io` when the source's folder cannot be created;
  ///   otherwise what `body` throws.
  package func withLock<T>(source: ContentHash, key: String, _ body: () throws -> T) throws -> T {
    let lock = assetFolder(source).appendingPathComponent(".\(key).lock").path
    try makeFolder(lock)
    let fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return try body() }  // a read-only cache still renders
    defer { close(fd) }
    while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
    defer { flock(fd, LOCK_UN) }
    return try body()
  }

  private static func parse(_ name: String, in directory: String) -> Entry? {
    guard !name.hasPrefix("."), let dot = name.lastIndex(of: "."),
      case let fileExtension = String(name[name.index(after: dot)...]), isName(fileExtension)
    else { return nil }
    let parts = name[..<dot].split(separator: "_")
    guard parts.count == 5,
      let x = parts[3].firstIndex(of: "x"), let width = Int(parts[3][..<x]),
      let height = Int(parts[3][parts[3].index(after: x)...]), let bytes = Int(parts[4])
    else { return nil }
    return Entry(
      path: directory + "/" + name, key: String(parts[0]), kind: String(parts[1]),
      edit: String(parts[2]), width: width, height: height, byteCount: bytes,
      fileExtension: fileExtension)
  }

  private func touch(_ path: String) {
    // Modification time is the recency that eviction reads (atime is often not kept).
    utimensat(AT_FDCWD, path, nil, 0)
  }

  private func makeFolder(_ file: String) throws(DarkroomError) {
    try Folders.create(FilePath(file).parent)
  }

  // MARK: Size bound

  /// The running total of stored bytes, kept in `usage` under a lock; the exact figure is
  /// recomputed whenever it crosses the limit (and by `stats`).
  private func addUsage(_ bytes: Int64) {
    let path = folder.appendingPathComponent("usage").path
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return }
    defer { close(fd) }
    while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
    defer { flock(fd, LOCK_UN) }
    var buffer = [UInt8](repeating: 0, count: 32)
    let n = pread(fd, &buffer, 32, 0)
    let current =
      n > 0 ? Int64(String(decoding: buffer[0..<n], as: UTF8.self).trimmingSpaces) ?? 0 : 0
    var total = current + bytes
    if total > limitBytes {
      total = evict(to: limitBytes * 9 / 10)
    }
    let text = Array("\(total)\n".utf8)
    ftruncate(fd, 0)
    _ = pwrite(fd, text, text.count, 0)
  }

  /// What the cache holds, as `darkroom cache stats` shows it. `Stats` is a `Sendable` value
  /// type.
  package struct Stats: Sendable, Codable, Equatable {
    /// The cache's folder.
    package var folder: String
    /// How many renditions it holds.
    package var entries: Int
    /// Their total size, in bytes.
    package var bytes: Int64
    /// The size bound, in bytes.
    package var limitBytes: Int64
  }

  /// Counts the cache's entries and their size now (it lists every entry).
  package func stats() -> Stats {
    let all = allEntries()
    return Stats(
      folder: folder.path, entries: all.count, bytes: all.reduce(0) { $0 + Int64($1.size) },
      limitBytes: limitBytes)
  }

  /// Evicts least recently used entries until the cache is within `limit` bytes; also removes
  /// leftovers of interrupted writes. Returns the bytes that remain.
  @discardableResult
  package func evict(to limit: Int64) -> Int64 {
    var all = allEntries().sorted { $0.used < $1.used }
    var total = all.reduce(0) { $0 + Int64($1.size) }
    while total > limit, !all.isEmpty {
      let oldest = all.removeFirst()
      guard unlink(oldest.path) == 0 else { continue }
      total -= Int64(oldest.size)
      // The entry's lock file, and its source's folder once empty, go with it: a cache
      // that runs for years must not keep one of each for every rendition it ever made.
      let folder = FilePath(oldest.path).parent
      if let entry = Self.parse(FilePath(oldest.path).name, in: folder) {
        unlink(folder + "/.\(entry.key).lock")
      }
      rmdir(folder)  // fails, as it should, while other entries or locks remain
    }
    removeStaleTemporaries()
    return total
  }

  /// Removes every entry, and what the cache remembers of source files.
  ///
  /// - Throws: A ``DarkroomError`` of kind `io` when a folder cannot be removed.
  package func clear() throws(DarkroomError) {
    for name in ["objects", "sources", "usage"] {
      try Folders.remove(folder.appendingPathComponent(name).path)
    }
  }

  private struct Stored {
    var path: String
    var size: Int
    var used: Int64  // modification time, nanoseconds (whole seconds would tie within a second)
  }

  private static func fileInfo(_ path: String) -> Stored? {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Stored(
      path: path, size: Int(info.st_size),
      used: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
  }

  /// Files under `subfolder`: entries (names not starting with "."), or with `temporaries`
  /// the leftovers of interrupted writes (`.NAME.PID.N.tmp`).
  private func files(in subfolder: String, temporaries: Bool) -> [Stored] {
    let root = folder.appendingPathComponent(subfolder).path
    let paths = (try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? []
    return paths.compactMap { relative in
      let name = relative.split(separator: "/").last.map(String.init) ?? relative
      let isTemporary = name.hasPrefix(".") && name.hasSuffix(".tmp")
      guard temporaries ? isTemporary : !name.hasPrefix(".") else { return nil }
      return Self.fileInfo(root + "/" + relative)
    }
  }

  private func allEntries() -> [Stored] { files(in: "objects", temporaries: false) }

  /// Temporary files older than an hour belong to writers that died.
  private func removeStaleTemporaries() {
    let cutoff = (Int64(Date().timeIntervalSince1970) - 3600) * 1_000_000_000
    for subfolder in ["objects", "sources"] {
      for file in files(in: subfolder, temporaries: true) where file.used < cutoff {
        unlink(file.path)
      }
    }
  }
}
