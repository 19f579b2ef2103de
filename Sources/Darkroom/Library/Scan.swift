import Dispatch
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// How `Library.scan(_:options:progress:)` works.
public struct ScanOptions: Sendable {
  /// Files read at once (default: one per core).
  public var jobs = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  /// Also into subfolders (the default).
  public var recursive = true
  /// Remove offline assets from the catalog instead of keeping them (their folder is gone
  /// for good, not unmounted).
  public var forgetOffline = false
  /// Files whose findings are written in one transaction: what a kill can cost a rescan.
  public var batchSize = 256
  /// Asked between batches: true stops the scan cleanly (what is written stays; scan again
  /// to go on).
  public var shouldStop: @Sendable () -> Bool = { false }

  public init() {}
}

/// How far a scan is.
public struct ScanProgress: Sendable, Codable, Equatable {
  /// Files found so far, and of those, new or changed ones to read.
  public var found = 0
  public var toRead = 0
  /// Files read (hashed and described) so far, and their bytes.
  public var read = 0
  public var bytesRead: Int64 = 0

  public init() {}
}

/// What a scan did.
public struct ScanSummary: Sendable, Codable, Equatable {
  /// Files found under the scanned folder.
  public var files = 0
  /// Files not read again: their identity (inode, size, times) had not changed.
  public var unchanged = 0
  public var added = 0
  /// Files changed in place (same path, new content; same id).
  public var changed = 0
  /// Files found at a new path, matched to their asset by inode and content (same id).
  public var moved = 0
  /// Assets whose files are gone, taken out of the catalog.
  public var removed = 0
  /// Assets whose folder is missing or empty (unmounted), kept and marked offline.
  public var offline = 0
  /// Offline assets whose files are back.
  public var online = 0
  /// Files that are no photo or video Darkroom reads.
  public var skipped = 0
  /// Live Photos' MOVs read this scan: part of their stills' assets, not assets of their own.
  public var liveVideos = 0
  /// Files read this scan that are damaged (cut short, a header that makes no sense):
  /// catalogued with `Asset.damage`, in the Problems album (`smart:problems`). (An empty
  /// file is not listed at all: most often it is one being written.)
  public var damaged = 0
  /// Files that could not be read and are not catalogued: `path: problem`, one each.
  public var problems: [String] = []
  /// The scan was asked to stop before it finished (scan again to go on).
  public var stopped = false
  public var bytesRead: Int64 = 0
  public var seconds = 0.0

  public init() {}
}

extension Library {
  /// Brings the catalog up to date with the files under `folder` (the whole library by
  /// default), and makes the catalog if there is none.
  ///
  /// Incremental: a file whose identity (device, inode, size, modification and change
  /// times) is what the catalog holds is not opened. A new or changed file is read once:
  /// those bytes are hashed and their header described. A file found at a new path with the
  /// inode and content of one that disappeared keeps its asset's id (a rename or move);
  /// failing the inode, the same content alone does when exactly one asset had it.
  ///
  /// A folder that has gone missing, or is now empty, while the catalog has assets in it
  /// (an unmounted disk, a vanished share) marks those assets *offline*: they are kept, and
  /// come back online when the files do. Only files missing from a folder that is still
  /// there are removed (their edits and originals stay in the store).
  ///
  /// Findings are written in batches (``ScanOptions/batchSize``), each one transaction:
  /// killed at any point, the catalog is consistent, and the next scan goes on from there.
  ///
  /// - Throws: `notFound` or `invalidArgument` when `folder` is not in this library; `io`
  ///   when the catalog cannot be written. A file that cannot be read is a problem in the
  ///   summary, not an error.
  package func scanBlocking(
    _ folder: String? = nil, options: ScanOptions = ScanOptions(),
    progress: (@Sendable (ScanProgress) -> Void)? = nil
  ) throws(DarkroomError) -> ScanSummary {
    try scanBlocking(
      folders: [ScanRoot(folder: folder ?? root.path, recursive: options.recursive)],
      options: options, progress: progress)
  }

  /// A folder for ``scan(folders:options:progress:)``, with or without its subfolders.
  package struct ScanRoot: Sendable, Hashable {
    package var folder: String
    package var recursive: Bool
    package init(folder: String, recursive: Bool) {
      (self.folder, self.recursive) = (folder, recursive)
    }
  }

  /// Scans several folders in one pass, so that a file moved from one to another keeps its
  /// id (what ``LibraryWatcher`` does with the folders the kernel said changed).
  package func scanBlocking(
    folders: [ScanRoot], options: ScanOptions = ScanOptions(),
    progress: (@Sendable (ScanProgress) -> Void)? = nil
  ) throws(DarkroomError) -> ScanSummary {
    try require(.folders)
    let started = DispatchTime.now()
    var roots: [(String, Bool)] = []
    for root in folders {
      guard let top = relativePath(root.folder) else {
        throw DarkroomError(
          .invalidArgument, file: root.folder, "is outside the library at \(self.root.path)")
      }
      roots.append((top, root.recursive))
    }
    var scanner = try Scanner(library: self, roots: roots, options: options, progress: progress)
    // A first scan builds the indexes it does not read after its rows (deferIndexes).
    // Every scan builds whatever is left to build, also one a killed first scan left to a
    // process that was already running; a failure to build them fails no scan (the rows are
    // in, queries answer without them, and the next open or scan builds them).
    do {
      _ = try catalogCall { try $0.deferIndexes() }
    } catch {
      logger.notice("\(error): this scan keeps the catalog's indexes row by row")
    }
    func restoreIndexes() {
      do {
        try catalogCall { try $0.restoreIndexes() }
      } catch {
        logger.warning("\(error): the catalog's deferred indexes are left to the next scan")
      }
    }
    do {
      try scanner.run()
    } catch {
      restoreIndexes()
      throw error
    }
    restoreIndexes()  // before the planner's statistics are refreshed (maintain)
    if scanner.summary.added + scanner.summary.removed > 0 {
      do {
        try catalogCall { try $0.maintain() }
      } catch {
        logger.notice("\(error): the query planner's statistics were not refreshed")
      }
    }
    scanner.summary.seconds =
      Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
    return scanner.summary
  }
}

extension Library {
  /// Reads these files (absolute paths, or relative to the working folder) into the catalog
  /// again, and nothing else: what a change to known files (an edit, a revert) needs, without
  /// listing their folders. A changed file keeps its id, a new one is added, and one that is
  /// gone is taken out. A file outside the library is ignored. A Live Photo's still and MOV
  /// are read together, whichever is named (they are one asset).
  ///
  /// - Throws: `io` when the catalog cannot be written.
  @discardableResult
  package func recatalog(_ paths: [String]) throws(DarkroomError) -> ScanSummary {
    let partners = paths.compactMap { MotionPhoto.companion(of: $0) ?? MotionPhoto.still(of: $0) }
    let files = Array(Set((paths + partners).compactMap(relativePath).filter { !$0.isEmpty }))
      .sorted()
    guard !files.isEmpty else { return ScanSummary() }
    var options = ScanOptions()
    options.jobs = 1
    var scanner = try Scanner(library: self, roots: [], files: files, options: options)
    try scanner.run()
    return scanner.summary
  }

  /// Reads `path` again into the catalog of the library that holds it, if that library has a
  /// catalog (after an edit or a revert changed the file); does nothing otherwise. A failure
  /// leaves the catalog to the next scan.
  static func recatalog(file path: String) {
    guard let library = Library.containing(path), library.hasCatalog else { return }
    library.recatalogAfterChange(path)
  }

  /// Reads `path` again after an edit or revert changed it; a failure is logged and left to
  /// the next scan (the change itself is done and durable).
  func recatalogAfterChange(_ path: String) {
    do {
      _ = try recatalog([path])
    } catch {
      logger.warning("\(error): the catalog keeps the file as it was until the next scan")
    }
  }
}

/// One scan's state: what the walk found, what the catalog held, what is to be read.
private struct Scanner {
  let library: Library
  /// The folders to scan, relative to the root, and whether with their subfolders.
  let roots: [(folder: String, recursive: Bool)]
  /// Files to read again instead (relative to the root): their folders are not listed.
  let files: [String]?
  let options: ScanOptions
  let progressHandler: (@Sendable (ScanProgress) -> Void)?
  var summary = ScanSummary()
  var progress = ScanProgress()
  var catalog: any Catalog

  /// A file to read: new, or changed in place (`previous`).
  struct Pending: Sendable {
    var path: String
    var identity: FileIdentity
    var previous: CatalogEntry?
  }
  var pending: [Pending] = []
  /// New files read whose content some catalog row already has: a move is told from a copy
  /// only once the walk has found every file that went (``missing``), so they wait for it.
  /// Every other file read is written as its batch is read: what a scan holds is a batch and
  /// these, not the library.
  var deferred: [(Pending, ReadOutcome)] = []
  /// Assets whose files were not found: candidates for a move, then removed or offline.
  var missing: [AssetID: Missing] = [:]
  struct Missing {
    var identity: FileIdentity
    var hash: String
    var offline: Bool
    var path: String
  }
  var changes = CatalogChanges()
  /// Ids minted by this scan for new files (no row to look at before they are written).
  var minted: Set<AssetID> = []

  init(
    library: Library, roots: [(String, Bool)], files: [String]? = nil, options: ScanOptions,
    progress: (@Sendable (ScanProgress) -> Void)? = nil
  ) throws(DarkroomError) {
    (self.library, self.options, progressHandler) = (library, options, progress)
    self.files = files
    self.roots = roots.map { (folder: $0.0, recursive: $0.1) }
    catalog = try library.catalog(creating: !library.hasCatalog)
  }

  mutating func run() throws(DarkroomError) {
    if let files { try compare(files: files) } else { try walkAndCompare() }
    guard !summary.stopped else { return }
    try readPending(all: true)
    guard !summary.stopped else { return }
    for (item, outcome) in deferred { take(item, outcome) }
    deferred = []
    try settleMissing()
  }

  private func call<T>(_ body: () throws -> T) throws(DarkroomError) -> T {
    try library.catalogCall { _ in try body() }
  }

  private func absolute(_ relative: String) -> String {
    relative.isEmpty ? library.root.path : library.root.path + "/" + relative
  }

  // MARK: Walk

  private mutating func walkAndCompare() throws(DarkroomError) {
    var known: Set<String> = []
    for root in roots {
      if root.recursive {
        known.formUnion(try call { try catalog.folders(under: root.folder) })
      } else {
        known.insert(root.folder)
      }
    }
    var walked: Set<String> = []
    var queue = roots
    while let (folder, recursive) = queue.popLast() {
      guard !walked.contains(folder) else { continue }
      // The catalog first, then the folder: a file another writer (an upload, a restore)
      // links and catalogues in between is then seen as new, and its row (found by path)
      // keeps its id; listed first, it would be taken for gone, removed, and given a new id
      // by the next scan.
      let entries = try call { try catalog.entries(inFolder: folder) }
      FaultInjection.reached("scan-between-catalog-and-listing", file: folder)
      guard let listing = Self.list(absolute(folder)) else { continue }  // vanished or unreadable
      if listing.files.isEmpty && listing.folders.isEmpty,
        let device = FileIdentity.device(of: absolute(folder)),
        entries.contains(where: { $0.asset != nil && $0.identity.device != device })
      {
        continue  // empty, on another device than its files were: an unmounted disk
      }
      walked.insert(folder)
      if recursive {
        queue += listing.folders.map { (folder.isEmpty ? $0 : folder + "/" + $0, true) }
      }
      compare(folder, listing.files, entries)
      try readPending(all: false)
      if summary.stopped { return }
    }
    // Folders the catalog knows that the walk did not reach: their assets may have moved;
    // those that did not are offline.
    for folder in known.subtracting(walked) where !folder.hasPrefix(Library.folderName + "/") {
      for entry in try call({ try catalog.entries(inFolder: folder) }) {
        guard let id = entry.asset, let hash = entry.contentHash else { continue }
        missing[id] = Missing(
          identity: entry.identity, hash: hash, offline: true, path: folder + "/" + entry.name)
      }
    }
    report()
  }

  /// Compares named files with their rows, as the walk does with whole folders (the catalog
  /// read first, then the files, for the same reason).
  private mutating func compare(files: [String]) throws(DarkroomError) {
    var byFolder: [String: [String]] = [:]
    for path in files {
      let folder = FilePath(path).parent
      byFolder[folder, default: []].append(
        String(path.dropFirst(folder.isEmpty ? 0 : folder.count + 1)))
    }
    for (folder, names) in byFolder.sorted(by: { $0.key < $1.key }) {
      let wanted = Set(names)
      let entries = try call { try catalog.entries(inFolder: folder, named: wanted.sorted()) }
      var found: [(String, FileIdentity)] = []
      for name in wanted.sorted() {
        var info = stat()
        let path = absolute(folder.isEmpty ? name : folder + "/" + name)
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else {
          continue
        }
        found.append((name, FileIdentity(info)))
      }
      compare(folder, found, entries)
    }
    report()
  }

  private mutating func compare(
    _ folder: String, _ files: [(String, FileIdentity)], _ entries: [CatalogEntry]
  ) {
    var byName: [String: CatalogEntry] = [:]
    for entry in entries { byName[entry.name] = entry }
    // A sidecar that came, changed or went: its photo is read again, though the photo itself
    // did not change (what the sidecar says wins over what the photo says).
    var sidecars = Set<String>()
    for (name, identity) in files where name.hasSuffix(".xmp") && byName[name]?.identity != identity
    {
      sidecars.insert(name)
    }
    if entries.contains(where: { $0.name.hasSuffix(".xmp") }) {
      let present = Set(files.map(\.0))
      for entry in entries where entry.name.hasSuffix(".xmp") && !present.contains(entry.name) {
        sidecars.insert(entry.name)
      }
    }
    // A Live Photo's MOV that came, changed or went: its still is read again (the pair is
    // one asset); a MOV whose still came or went is read again too (it becomes part of that
    // asset, or an asset of its own).
    var videos = Set<String>()
    // A catalogued MOV that is an asset though its still is here now, or is not one though
    // its still is gone.
    var repaired = Set<String>()
    if files.contains(where: { Self.isLiveVideoName($0.0) })
      || entries.contains(where: { Self.isLiveVideoName($0.name) })
    {
      for (name, identity) in files
      where Self.isLiveVideoName(name) && byName[name]?.identity != identity {
        videos.insert(Self.stem(name))
      }
      let present = Set(files.map(\.0))
      for entry in entries where Self.isLiveVideoName(entry.name) && !present.contains(entry.name) {
        videos.insert(Self.stem(entry.name))
      }
      for (name, _) in files where Self.isLiveVideoName(name) {
        guard let entry = byName[name] else { continue }
        let stem = Self.stem(name)
        let paired = MotionPhoto.stillExtensions.contains { present.contains(stem + "." + $0) }
        if paired == (entry.asset != nil) { repaired.insert(name) }
      }
    }
    func videoChanged(_ name: String) -> Bool {
      if Self.isLiveVideoName(name) { return repaired.contains(name) }
      return !videos.isEmpty && videos.contains(Self.stem(name))
    }
    func sidecarChanged(_ name: String) -> Bool {
      if videoChanged(name) { return true }
      guard !sidecars.isEmpty else { return false }
      if sidecars.contains(name + ".xmp") { return true }
      guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
      return sidecars.contains(name[..<dot] + ".xmp")
    }
    for (name, identity) in files {
      summary.files += 1
      let path = folder.isEmpty ? name : folder + "/" + name
      if let entry = byName.removeValue(forKey: name) {
        if entry.identity == identity, !sidecarChanged(name) {
          summary.unchanged += 1
          if entry.isOffline, let id = entry.asset {
            changes.offline.append((id, false))
            summary.online += 1
          }
          continue
        }
        pending.append(Pending(path: path, identity: identity, previous: entry))
      } else {
        pending.append(Pending(path: path, identity: identity, previous: nil))
      }
    }
    progress.found = summary.files
    progress.toRead = progress.read + pending.count + deferred.count
    // Files gone from a folder that is still here.
    for entry in byName.values {
      if let id = entry.asset, let hash = entry.contentHash {
        missing[id] = Missing(
          identity: entry.identity, hash: hash, offline: false,
          path: folder.isEmpty ? entry.name : folder + "/" + entry.name)
      } else {
        changes.unskipped.append(folder.isEmpty ? entry.name : folder + "/" + entry.name)
      }
    }
  }

  /// `IMG_0001.HEIC` → `IMG_0001`; a name without an extension is its own stem.
  static func stem(_ name: String) -> String {
    FilePath(name).splitExtension?.base ?? name
  }

  /// Whether `name` could be a Live Photo's video (a MOV).
  static func isLiveVideoName(_ name: String) -> Bool {
    MotionPhoto.videoExtensions.contains { name.hasSuffix("." + $0) }
  }

  /// A folder's regular files (with their identities) and subfolders, leaving out names
  /// that start with a dot (`.darkroom` among them) and symbolic links; nil if it cannot be
  /// listed.
  static func list(_ path: String) -> (files: [(String, FileIdentity)], folders: [String])? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var files: [(String, FileIdentity)] = []
    var folders: [String] = []
    while let entry = readdir(directory) {
      let name = FileNames.entry(entry)
      if name.hasPrefix(".") {
        // A temporary that a killed writer left (an upload, an edit) goes as it is seen.
        if FileLease.isAbandonedTemporary(name, in: dirfd(directory)) {
          unlinkat(dirfd(directory), name, 0)
        }
        continue
      }
      var info = stat()
      guard fstatat(dirfd(directory), name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
      switch info.st_mode & S_IFMT {
      case S_IFREG: if info.st_size > 0 { files.append((name, FileIdentity(info))) }
      case S_IFDIR: folders.append(name)
      default: break
      }
    }
    return (files.sorted { $0.0 < $1.0 }, folders.sorted())
  }

  // MARK: Read

  /// Reads what is pending in batches: every batch there is with `all`, else only full ones
  /// (during the walk).
  private mutating func readPending(all: Bool) throws(DarkroomError) {
    while pending.count >= (all ? 1 : options.batchSize) {
      if options.shouldStop() {
        summary.stopped = true
        try flush()
        return
      }
      let batch = Array(pending.prefix(options.batchSize))
      pending.removeFirst(batch.count)
      let results = Self.readAll(batch, jobs: options.jobs, library: library)
      let seen = try contentsCatalogued(zip(batch, results))
      for (item, outcome) in zip(batch, results) {
        if item.previous == nil, case .asset(_, let hash, _, _) = outcome, seen.contains(hash) {
          deferred.append((item, outcome))
        } else {
          take(item, outcome)
        }
      }
      try flush()
      report()
    }
  }

  /// Which of the contents read for new files some catalog row has (one query a batch):
  /// only such a file can be a move of an asset whose file went.
  private func contentsCatalogued(_ read: Zip2Sequence<[Pending], [ReadOutcome]>)
    throws(DarkroomError) -> Set<String>
  {
    var hashes: [String] = []
    for (item, outcome) in read where item.previous == nil {
      if case .asset(_, let hash, _, _) = outcome { hashes.append(hash) }
    }
    guard !hashes.isEmpty else { return [] }
    return try call { try catalog.cataloguedContents(hashes) }
  }

  /// Reads files on `jobs` threads; results in the batch's order.
  private static func readAll(_ batch: [Pending], jobs: Int, library: Library) -> [ReadOutcome] {
    let results = Locked([ReadOutcome?](repeating: nil, count: batch.count))
    let next = Locked(0)
    DispatchQueue.concurrentPerform(iterations: min(jobs, batch.count)) { _ in
      while true {
        let index = next.withLock { value -> Int in
          defer { value += 1 }
          return value
        }
        guard index < batch.count else { return }
        let outcome = read(batch[index], library: library)
        results.withLock { $0[index] = outcome }
      }
    }
    return results.withLock { $0.map { $0 ?? .unreadable("not read", transient: true) } }
  }

  enum ReadOutcome: Sendable {
    case asset(AssetContent, hash: String, identity: FileIdentity, edited: Int)
    case notMedia
    /// A Live Photo's MOV (beside the still named): part of that asset, not one of its own.
    case livePhotoVideo(still: String)
    /// What went wrong; `transient` when it says nothing of the file (a worker that failed,
    /// a read error, a time limit), so an asset it was is kept for the next scan.
    case unreadable(String, transient: Bool)
    /// Changed while it was read: left for the next scan.
    case moving
  }

  /// Files larger than this are hashed from disk in pieces and described from their header,
  /// not read whole into memory.
  static let wholeReadLimit = 256 << 20

  private static func read(_ item: Pending, library: Library) -> ReadOutcome {
    let path = library.root.path + "/" + item.path
    FaultInjection.reached("scan-read", file: path)
    if let still = MotionPhoto.pairedStill(of: path) {
      return .livePhotoVideo(still: FilePath(still).name)
    }
    do {
      let file = try InputFile(path)
      guard let before = file.identity else {
        return .unreadable("cannot examine it", transient: true)
      }
      let content: AssetContent
      let hash: ContentHash
      if file.size <= wholeReadLimit {
        // A worker reads the header of the very file open here while this hashes it.
        let head = try file.read(at: 0, count: min(64, file.size))[...]
        let header = try startHeader(head, file: file, path: path)
        let bytes = try file.read(at: 0, count: file.size)
        hash = ContentHash.of(bytes: bytes)
        guard
          let described = try describe(
            bytes.prefix(64), bytes: bytes, file: file, path: path, header: header)
        else {
          return .notMedia
        }
        content = described
      } else {
        let head = try file.read(at: 0, count: 64)[...]
        guard let described = try describe(head, bytes: nil, file: file, path: path) else {
          return .notMedia
        }
        content = described
        hash = try ContentHash.of(file: path)
      }
      guard file.identity == before else { return .moving }
      let edited =
        (try? library.store.adjustment(forResult: hash))??.version ?? 0
      return .asset(content, hash: hash.hex, identity: before, edited: edited)
    } catch {
      if let damaged = damaged(path, error, library: library) { return damaged }
      return .unreadable(error.message, transient: !AssetDamage.kinds.contains(error.kind))
    }
  }

  /// A photo or video whose file is damaged, as an asset of its own that says so: nil for
  /// an error that says nothing of the file, a file that is no photo or video Darkroom reads
  /// (its format refused, or not one at all), and one that changed while it was read.
  private static func damaged(_ path: String, _ error: DarkroomError, library: Library)
    -> ReadOutcome?
  {
    guard error.remedy == nil, var damage = AssetDamage(error),
      let before = try? FileIdentity(path: path),
      let (format, type) = mediaKind(of: path)
    else { return nil }
    damage.isVideo = type == .video
    guard let hash = try? ContentHash.of(file: path), (try? FileIdentity(path: path)) == before
    else { return nil }
    let edited = (try? library.store.adjustment(forResult: hash))??.version ?? 0
    return .asset(
      .damaged(format: format, type, damage), hash: hash.hex, identity: before, edited: edited)
  }

  /// The format and media type a file is by its first bytes, when it is a photo or video
  /// the scan takes. (An empty file is not listed at all: most often one being written.)
  private static func mediaKind(of path: String) -> (String, MediaType)? {
    let ext = FilePath(path).splitExtension?.ext.lowercased() ?? ""
    let videos = ["mp4", "mov", "m4v", "3gp"]
    guard let file = try? InputFile(path), let head = try? file.read(at: 0, count: 32) else {
      return nil
    }
    if VideoHeader.recognises(head[...]) { return (videos.contains(ext) ? ext : "mp4", .video) }
    guard let format = TrustedFormats.sniff(head[...], name: path), format != "video",
      TrustedFormats.permits(format) || TrustedFormats.trustedInWorkers.contains(format)
    else { return nil }
    return (format, .photo)
  }

  /// What the content is: a photo's metadata, a video's header; nil for anything else.
  /// A photo's header read started in a worker (``Containment``), or nil.
  private static func startHeader(_ head: ArraySlice<UInt8>, file: InputFile, path: String)
    throws(DarkroomError) -> WorkerPool.SentJob?
  {
    guard !VideoHeader.recognises(head), let format = TrustedFormats.sniff(head, name: path),
      let pool = Containment.pool(forFormat: format)
    else { return nil }
    return try pool.startMetadata(handing: file, name: path, limit: Containment.timeLimit)
  }

  private static func describe(
    _ head: ArraySlice<UInt8>, bytes: [UInt8]?, file: InputFile, path: String,
    header: WorkerPool.SentJob? = nil
  ) throws(DarkroomError) -> AssetContent? {
    // Videos first: HEIF and MP4 are both ISO media files, told apart by their brands.
    if VideoHeader.recognises(head) {
      if let bytes {
        return .video(try VideoHeader.read(ByteSource(memory: bytes), name: path))
      }
      return .video(try VideoHeader.read(path: path))
    }
    if TrustedFormats.sniff(head) != nil {
      // In a worker, the header is read from the very file hashed here, handed open (the
      // worker reads only the header's bytes); here, from the bytes already read.
      var metadata: AssetMetadata
      var started = header
      if started == nil { started = try startHeader(head, file: file, path: path) }
      if let started {
        metadata = try WorkerPool.metadata(of: started)
      } else {
        metadata = try AssetMetadata.readUnplaced(
          bytes.map { .data($0, name: path) } ?? .file(path))
      }
      // A photo damaged past its header (cut short, say) is an asset that says so
      // (``Asset/damage``): shown as far as it decodes.
      if let damage = metadata.damage, AssetDamage(damage) == nil { throw damage }
      if bytes != nil || started != nil { metadata.applySidecars(of: path) }  // as .file does
      metadata.locate()
      return .photo(metadata)
    }
    return nil
  }

  private mutating func take(_ item: Pending, _ outcome: ReadOutcome) {
    progress.read += 1
    switch outcome {
    case .moving:
      summary.problems.append("\(item.path): changed while it was read; scan again")
    case .unreadable(let problem, transient: true):
      // Nothing is learnt of the file: its row, if it has one, stays as it was, and the
      // next scan reads it again (a worker that failed under load must not cost an asset
      // its id).
      summary.problems.append("\(item.path): \(problem)")
    case .notMedia, .unreadable, .livePhotoVideo:
      switch outcome {
      case .unreadable(let problem, _): summary.problems.append("\(item.path): \(problem)")
      case .livePhotoVideo: summary.liveVideos += 1
      default: summary.skipped += 1
      }
      var reason = "not a photo or video"
      if case .unreadable(let problem, _) = outcome { reason = problem }
      if case .livePhotoVideo(let still) = outcome {
        reason = "the video of the Live Photo \(still)"
      }
      changes.skipped.append(SkippedFile(path: item.path, identity: item.identity, reason: reason))
      if let id = item.previous?.asset {
        changes.removals.append(id)
        // A Live Photo's MOV is here and stays: its row goes, though its file is seen (the
        // check before a commit keeps the rows of files that are there again).
        if case .livePhotoVideo = outcome {
          summary.removed += 1
        } else {
          changes.removedFrom[id] = item.path
        }
      }
    case .asset(let content, let hash, let identity, let edited):
      progress.bytesRead += identity.size
      summary.bytesRead += identity.size
      let now = Double(AssetID.nowMilliseconds()) / 1000
      var asset = Asset(
        path: item.path, hash: hash, identity: identity, read: content, edited: edited,
        added: now)
      if asset.damage != nil { summary.damaged += 1 }
      if let id = item.previous?.asset {
        asset.id = id  // changed in place: the same asset, new content
        summary.changed += 1
        changes.upserts.append(keepingUserState(asset))
        return
      }
      if let moved = matchMove(hash: hash, identity: identity) {
        asset.id = moved
        missing[moved] = nil
        summary.moved += 1
        changes.upserts.append(keepingUserState(asset))
      } else {
        summary.added += 1
        minted.insert(asset.id)
        changes.upserts.append(asset)
      }
    }
  }

  /// The asset that disappeared with this inode and content, or else the only one with
  /// this content.
  private func matchMove(hash: String, identity: FileIdentity) -> AssetID? {
    let sameContent = missing.filter { $0.value.hash == hash }
    if let byInode = sameContent.first(where: {
      $0.value.identity.inode == identity.inode && $0.value.identity.device == identity.device
    }) {
      return byInode.key
    }
    return sameContent.count == 1 ? sameContent.first?.key : nil
  }

  /// `asset` with what the user and the catalog set on its row kept (favourite, hidden,
  /// trash, when it was added).
  private func keepingUserState(_ asset: Asset) -> Asset {
    guard let old = try? catalog.asset(asset.id) else { return asset }
    var asset = asset
    asset.isFavourite = old.isFavourite
    asset.isHidden = old.isHidden
    asset.trashedAt = old.trashedAt
    asset.addedAt = old.addedAt
    return asset
  }

  // MARK: Finish

  private mutating func settleMissing() throws(DarkroomError) {
    guard !summary.stopped else { return }
    for (id, gone) in missing.sorted(by: { $0.key < $1.key }) {
      if gone.offline && !options.forgetOffline {
        guard let asset = try call({ try catalog.asset(id) }), !asset.isOffline else { continue }
        changes.offline.append((id, true))
        summary.offline += 1
      } else {
        // A file at its path again (written back since the folder was listed) is left to
        // the scan that sees it: its row, and its id, stay (`flush` looks again, under the
        // move lock, for one back between here and the commit).
        if (try? FileIdentity(path: library.root.path + "/" + gone.path)) != nil { continue }
        changes.removals.append(id)
        changes.removedFrom[id] = gone.path
        summary.removed += 1
      }
    }
    try flush()
  }

  private mutating func flush() throws(DarkroomError) {
    var batch = changes
    changes = CatalogChanges()
    let minted = minted
    self.minted = []
    let root = library.root.path
    let catalog = catalog
    // Checked and committed under the library's move lock, which trash and restore hold
    // across a file's rename and its row's move, so that what is checked is what is written
    // over:
    // - a file written since it was read (an edit, a revert, another scan's file) is left to
    //   the scan that sees its new identity: committing what was read would put old content
    //   over a newer row that scan wrote meanwhile;
    // - an asset gone to the trash since it was read keeps its row as the trash left it;
    // - a file seen gone while it was on its way to the trash and back is there again, or
    //   its row has gone with it.
    try library.withMoveLock { () throws(DarkroomError) in
      batch.upserts.removeAll { asset in
        (try? FileIdentity(path: root + "/" + asset.path)) != asset.identity
          || (!minted.contains(asset.id) && (try? catalog.asset(asset.id))??.trashedAt != nil)
      }
      batch.removals.removeAll { id in
        batch.removedFrom[id].map { (try? FileIdentity(path: root + "/" + $0)) != nil } ?? false
      }
      try call { try catalog.commit(batch) }
    }
    FaultInjection.point("after-scan-batch")
  }

  private func report() {
    progressHandler?(progress)
  }
}
