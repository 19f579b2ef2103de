import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A library's content-addressed store of originals, `.darkroom/originals/<sha256>`, and of
/// adjustment data, `.darkroom/adjustments/<result sha256>.json`. An original is on disk (data
/// and name fsynced) before any edited file replaces it; it is read back only after its hash
/// is checked.
struct OriginalStore: Sendable {
  /// The library's `.darkroom/` folder.
  let folder: URL

  var originalsFolder: String { folder.appendingPathComponent("originals").path }
  var adjustmentsFolder: String { folder.appendingPathComponent("adjustments").path }

  /// The folder that holds `.darkroom/`.
  var root: URL { folder.deletingLastPathComponent() }

  func originalPath(_ hash: ContentHash) -> String { originalsFolder + "/" + hash.hex }
  func adjustmentPath(forResult hash: ContentHash) -> String {
    adjustmentsFolder + "/" + hash.hex + ".json"
  }

  /// Keeps `bytes` (whose hash is `hash`, read from `file`) durably, in a file of the store's
  /// own: never a hard link to a user's file, which would share its mode (the store's 0444
  /// would make the user's photo read-only) and its fate (a change to the user's file in
  /// place would change the "original"). Where the file system can, the copy shares the
  /// file's blocks (`FICLONE`) and costs no space.
  ///
  /// An entry already in the store is trusted only if its hash is right, and only if it is a
  /// file of its own: a damaged entry, or one an earlier release linked to a user's file, is
  /// written again from `bytes` before anything relies on it.
  func keepOriginal(_ bytes: [UInt8], hash: ContentHash, copyingFrom file: String?)
    throws(DarkroomError)
  {
    try Folders.create(originalsFolder)
    let path = originalPath(hash)
    if isSound(path, hash: hash) { return }
    try AtomicFile.write(bytes, to: path, durable: true, mode: 0o444, cloningFrom: file)
  }

  /// Whether the store entry at `path` holds exactly the bytes of `hash`, in an inode no
  /// other name shares.
  func isSound(_ path: String, hash: ContentHash) -> Bool {
    var info = stat()
    guard stat(path, &info) == 0, info.st_nlink == 1 else { return false }
    return (try? ContentHash.of(file: path)) == hash
  }

  /// The original's bytes, checked against its hash.
  func original(_ hash: ContentHash, for file: String) throws(DarkroomError) -> [UInt8] {
    guard let bytes = try? InputFile.readAll(originalPath(hash)) else {
      throw lost(hash, for: file)
    }
    guard ContentHash.of(bytes: bytes) == hash else { throw damaged(for: file) }
    return bytes
  }

  /// The error of `file` whose original `hash` is not in the store.
  func lost(_ hash: ContentHash, for file: String) -> DarkroomError {
    DarkroomError(
      .notFound, file: file,
      "the library has lost this file's original (\(hash.hex.prefix(12))…, expected at \(originalPath(hash))); nothing was changed"
    )
  }

  /// The error of `file` whose original in the store no longer has its hash.
  func damaged(for file: String) -> DarkroomError {
    DarkroomError(
      .corrupt, file: file,
      "the library's copy of the original is damaged (its SHA-256 no longer matches); nothing was changed"
    )
  }

  func hasOriginal(_ hash: ContentHash) -> Bool {
    (try? InputFile(originalPath(hash))) != nil
  }

  func saveAdjustment(_ data: AdjustmentData, forResult hash: ContentHash) throws(DarkroomError) {
    try Folders.create(adjustmentsFolder)
    try AtomicFile.write(data.canonicalJSON, to: adjustmentPath(forResult: hash), durable: true)
  }

  /// The adjustment data that produced a file with this content, or nil if none did.
  func adjustment(forResult hash: ContentHash) throws(DarkroomError) -> AdjustmentData? {
    let path = adjustmentPath(forResult: hash)
    guard let bytes = try? InputFile.readAll(path) else { return nil }
    return try AdjustmentData.decode(json: bytes, source: path, lenient: true)
  }

  /// Every adjustment document in the library, oldest written first (by the time each
  /// was written, to the nanosecond: `created` has whole seconds). Documents that cannot be
  /// read are left out.
  func allAdjustments() -> [AdjustmentData] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: adjustmentsFolder)) ?? []
    let documents = names.filter { $0.hasSuffix(".json") }.compactMap {
      name -> (AdjustmentData, FileIdentity)? in
      let path = adjustmentsFolder + "/" + name
      guard let bytes = try? InputFile.readAll(path),
        let data = try? AdjustmentData.decode(json: bytes, source: path, lenient: true),
        let identity = try? FileIdentity(path: path)
      else { return nil }
      return (data, identity)
    }
    return documents.sorted { $0.1.modified < $1.1.modified }.map(\.0)
  }

  /// Runs `body` holding the lock for one file of the library, so that edits and reverts of
  /// that file in several processes do not interleave, while other files go ahead.
  ///
  /// Every file's lock is one byte of `.darkroom/locks/files`, at an offset taken from a hash
  /// of its path, locked with an open-file-description lock (``FileLock``): a lock per file
  /// with no lock file per file. (Locks striped over 256 files, as before, let a file whose
  /// render hangs hold up an unrelated file that shared its stripe, 1 pair in 256.)
  func withLock<T>(for file: String, _ body: () throws(DarkroomError) -> T) throws(DarkroomError)
    -> T
  {
    let fd = try openLock()
    guard fd >= 0 else { return try body() }
    defer { close(fd) }  // closing the description releases its lock
    // Waits for the lock; where the file system has no locks at all (-1), edits go ahead
    // unserialised, as they do where the lock file cannot be opened.
    _ = FileLock.lock(fd, key: Self.lockKey(file), wait: true)
    return try body()
  }

  /// Whether no one holds `file`'s lock now (tests).
  func lockIsFree(for file: String) throws(DarkroomError) -> Bool {
    let fd = try openLock()
    guard fd >= 0 else { return true }
    defer { close(fd) }
    return FileLock.lock(fd, key: Self.lockKey(file), wait: false) == 0
  }

  /// The lock file, open for writing (a write lock needs it), or -1 where it cannot be opened
  /// (a read-only library: its files cannot be edited either, and the edit says why).
  private func openLock() throws(DarkroomError) -> Int32 {
    let folder = self.folder.appendingPathComponent("locks").path
    try Folders.create(folder)
    return open(folder + "/files", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
  }

  /// The byte of `file`'s lock: 62 bits of a hash of its absolute path.
  static func lockKey(_ file: String) -> UInt64 {
    let absolute = URL(fileURLWithPath: file).standardizedFileURL.path
    return UInt64(ContentHash.of(text: absolute).hex.prefix(16), radix: 16) ?? 0
  }
}

extension OriginalStore {
  /// Removes the store entries (originals and adjustment documents) of the content hashes
  /// `gone`, except those that `kept` still need: an edit chain is needed by every content
  /// it produced and by its original. Returns how many files were removed.
  func removeEntries(of gone: Set<String>, keeping kept: Set<String>) -> Int {
    let documents = allAdjustments()
    // Each original's family: its documents (every version, on every branch) and results.
    var family: [String: [AdjustmentData]] = [:]
    for document in documents { family[document.original.sha256, default: []].append(document) }
    func original(of hash: String) -> String? {
      if let document = documents.first(where: { $0.result.sha256 == hash }) {
        return document.original.sha256
      }
      return family[hash] != nil || ContentHash(hex: hash).map(hasOriginal) == true ? hash : nil
    }
    let live = Set(kept.compactMap(original))
    var removed = 0
    for root in Set(gone.compactMap(original)).subtracting(live) {
      for document in family[root] ?? [] {
        if let hash = ContentHash(hex: document.result.sha256),
          unlink(adjustmentPath(forResult: hash)) == 0
        {
          removed += 1
        }
      }
      if let hash = ContentHash(hex: root), unlink(originalPath(hash)) == 0 { removed += 1 }
    }
    return removed
  }
}
