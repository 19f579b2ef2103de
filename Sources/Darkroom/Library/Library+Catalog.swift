import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// The catalogs this process has open, one per library, shared by every `Library` value
/// naming the same folder (a `DatabasePool` is meant to be opened once per process).
private let openCatalogs = Locked<[String: SQLiteCatalog]>([:])
/// The PostgreSQL catalogs this process has open, by URL (each keeps a pool of connections).
private let openPostgres = Locked<[String: PostgresCatalog]>([:])
/// The libraries (root and catalog) whose `catalog.location` this process has written.
private let markedLocations = Locked<Set<String>>([])

extension Library {
  /// `.darkroom/catalog.sqlite`.
  package var catalogPath: String { rootPath + "/" + Self.folderName + "/catalog.sqlite" }

  /// Where the catalog is, for messages: its file, or its PostgreSQL URL without the
  /// password.
  package var catalogLocation: String {
    catalogURL.map(PostgresCatalog.redacted) ?? catalogPath
  }

  /// `.darkroom/catalog.location`: where the catalog is when it is not the SQLite file (its
  /// URL without the password), written when a catalog in PostgreSQL is first opened, so
  /// that a command run without `--catalog` says where the catalog is instead of starting an
  /// empty SQLite one beside it.
  var catalogLocationFile: String { rootPath + "/" + Self.folderName + "/catalog.location" }

  /// Whether this library has a catalog yet (made by its first ``scan(_:options:progress:)``,
  /// in SQLite or, with ``catalogURL``, in PostgreSQL, which `.darkroom/catalog.location`
  /// then names). `DARKROOM_CATALOG` alone does not make a folder's `.darkroom/` a catalogued
  /// library: a file edited there is not put in that catalog.
  package var hasCatalog: Bool {
    storage.hasCatalog
  }

  /// Makes `root/.darkroom` if it is not there, and returns the library.
  public static func create(at root: String) throws(DarkroomError) -> Library {
    let library = Library(root: URL(fileURLWithPath: root))
    try Folders.create(library.metadataFolder.path)
    return library
  }

  /// The library's catalog, opened (and made, or migrated) on first use. A catalog in
  /// PostgreSQL is made only by a library's first scan (`creating`): a database without
  /// Darkroom's schema is refused otherwise.
  ///
  /// - Throws: `io` naming the catalog file when the database cannot be opened.
  package func catalog() throws(DarkroomError) -> any Catalog {
    try catalog(creating: false)
  }

  func catalog(creating: Bool) throws(DarkroomError) -> any Catalog {
    try storage.catalog(creating: creating)
  }

  /// ``catalog()`` of a folder: PostgreSQL when ``catalogURL`` names one, else the SQLite
  /// file in `.darkroom/` (made with `creating`).
  func folderCatalog(creating: Bool) throws(DarkroomError) -> any Catalog {
    if let catalogURL {
      let catalog = try postgresCatalog(catalogURL, creating: creating)
      try claim(catalog)
      return catalog
    }
    return try sqliteCatalog()
  }

  /// What `.darkroom/catalog.location` says: where the catalog is (its URL without the
  /// password) and the library's id in it; nils for what it does not say.
  func catalogMarker() -> (location: String?, id: String?) {
    guard let text = try? String(contentsOfFile: catalogLocationFile, encoding: .utf8) else {
      return (nil, nil)
    }
    let lines = text.split(separator: "\n").map(String.init)
    let id = lines.dropFirst().first { $0.hasPrefix("library ") }.map { String($0.dropFirst(8)) }
    return (lines.first, id)
  }

  private static func markerText(_ location: String, id: String) -> [UInt8] {
    Array((location + "\nlibrary " + id + "\n").utf8)
  }

  /// Makes sure a catalog in PostgreSQL is this library's (once per process and library):
  /// the library's id (made on first need, in `.darkroom/catalog.location`) is claimed in
  /// the catalog, and a catalog that another library claimed is refused, so that two
  /// libraries never share one. The marker then names the catalog.
  ///
  /// - Throws: `invalidArgument` for another library's catalog; what writing the marker
  ///   throws.
  /// (`catalog copy` calls it too, for the library a copy into PostgreSQL came from.)
  private func claim(_ catalog: PostgresCatalog) throws(DarkroomError) {
    let key = rootPath + "\0" + catalog.location
    guard markedLocations.withLock({ !$0.contains(key) }) else { return }
    try Folders.create(metadataFolder.path)
    var marker = catalogMarker()
    if marker.id == nil {
      let text = Self.markerText(catalog.location, id: UUID().uuidString)
      if marker.location == nil {
        // A new file only (never over another's): of two processes at once, one id is made.
        let temporary = try AtomicFile.writeNew(
          text, name: ".catalog.location.new", in: metadataFolder.path)
        defer { unlink(temporary) }
        if link(temporary, catalogLocationFile) != 0 && errno != EEXIST {
          throw DarkroomError(
            .io, file: catalogLocationFile, "cannot write: \(String(cString: strerror(errno)))")
        }
      } else {
        // A marker written before markers carried the library's id.
        try AtomicFile.write(text, to: catalogLocationFile)
      }
      marker = catalogMarker()
    }
    guard let id = marker.id else {
      throw DarkroomError(.io, file: catalogLocationFile, "cannot read the library's id in it")
    }
    let owner: String
    do {
      owner = try catalog.claim(library: id)
    } catch {
      throw DarkroomError(.io, file: catalog.location, "cannot open the catalog: \(error)")
    }
    guard owner == id else {
      throw DarkroomError(
        .invalidArgument, file: catalog.location,
        "holds the catalog of another library: give each library a database of its own")
    }
    if marker.location != catalog.location {
      try AtomicFile.write(Self.markerText(catalog.location, id: id), to: catalogLocationFile)
    }
    markedLocations.withLock { _ = $0.insert(key) }
  }

  func postgresCatalog(_ url: String, creating: Bool = false) throws(DarkroomError)
    -> PostgresCatalog
  {
    do {
      return try openPostgres.withLock { open in
        if let catalog = open[url] { return catalog }
        let catalog = try PostgresCatalog(url: url, creating: creating)
        open[url] = catalog
        return catalog
      }
    } catch {
      throw DarkroomError(
        .io, file: PostgresCatalog.redacted(url), "cannot open the catalog: \(error)")
    }
  }

  /// A waiter for the catalog's next commit: what a change feed sleeps on between reads of
  /// the change log. For a catalog in PostgreSQL it wakes at once for a commit by any process
  /// (`LISTEN`/`NOTIFY`); for SQLite it waits the whole time given (others' commits are
  /// seen by reading the log again). Make it before reading the log: a commit after that
  /// wakes its next wait.
  package func catalogWaiter() -> CatalogWaiter {
    CatalogWaiter(bell: catalogURL == nil ? nil : try? commitBell())
  }

  /// What wakes a watcher of the catalog: rung after each commit of this process, and (for a
  /// catalog in PostgreSQL) of any other.
  func commitBell() throws(DarkroomError) -> CommitBell {
    try require(.changeLog)
    if let catalogURL {
      let catalog = try postgresCatalog(catalogURL)
      catalog.listenForCommits()
      return catalog.commits
    }
    let catalog = try sqliteCatalog()
    catalog.listenForCommits()
    return catalog.commits
  }

  func sqliteCatalog() throws(DarkroomError) -> SQLiteCatalog {
    try require(.catalogFile)
    let path = catalogPath
    do {
      return try openCatalogs.withLock { open in
        if let catalog = open[path] { return catalog }
        if let elsewhere = catalogMarker().location {
          throw DarkroomError(
            .invalidArgument, file: rootPath,
            "keeps its catalog in \(elsewhere): "
              + "pass --catalog URL (with its password, or one in ~/.pgpass) or set DARKROOM_CATALOG"
          )
        }
        try Folders.create(metadataFolder.path)
        let catalog = try SQLiteCatalog(path: path)
        open[path] = catalog
        return catalog
      }
    } catch let error as DarkroomError {
      throw error
    } catch {
      throw DarkroomError(.io, file: path, "cannot open the catalog: \(error)")
    }
  }

  /// Runs a catalog call, turning what it throws into a ``DarkroomError``.
  func catalogCall<T>(_ body: (any Catalog) throws -> T) throws(DarkroomError) -> T {
    let catalog = try catalog()
    do {
      return try body(catalog)
    } catch let error as CatalogError {
      throw DarkroomError(error.isMissing ? .notFound : .invalidArgument, error.message)
    } catch let error as DarkroomError {
      throw error
    } catch {
      throw DarkroomError(.io, file: catalogLocation, "catalog: \(error)")
    }
  }

  // MARK: Paths and ids

  /// The absolute path of an asset's file.
  public func path(of asset: Asset) -> String { rootPath + "/" + asset.path }

  /// Opens an asset's file for reading, to send its bytes: beneath the library's root with
  /// no symbolic link at any step, and only if it is the file the catalog names (the same
  /// device, inode, size and modification time, or else the same content), so that a file swapped for a link, or for
  /// another file, since it was catalogued is never sent in its place.
  ///
  /// - Throws: `unreadable` for a link on the way or a file that is not the catalogued one;
  ///   `notFound` for a missing file; what opening throws.
  package func openFile(of asset: Asset) throws(DarkroomError) -> InputFile {
    try openFile(of: asset, exactly: true)
  }

  /// Opens an asset's file once, beneath the library's root with no symbolic link at any
  /// step, and checks that descriptor: the catalogued file (its device and inode; with
  /// `exactly`, its size and modification time too), with one link, or else the catalogued
  /// content (its hash, remembered by the rendition cache for the file as it is). A file
  /// swapped for a link, a hard link or another file since it was catalogued is refused;
  /// without `exactly`, the catalogued file changed in place (an editor that writes over it)
  /// is taken, as renditions of it are of its bytes now.
  ///
  /// - Throws: `unreadable` for a link on the way or a file that is not the catalogued one;
  ///   `notFound` for a missing file; what opening throws.
  func openFile(of asset: Asset, exactly: Bool) throws(DarkroomError) -> InputFile {
    try require(.files(asset.name))
    let file = try Beneath.openFile(asset.path, in: rootPath)
    var info = stat()
    guard fstat(file.descriptor, &info) == 0 else {
      throw DarkroomError(.io, file: file.path, "cannot read its identity")
    }
    // The same inode (and size and modification time): the catalogued file. (An inode number
    // alone is not enough for `exactly`: a file system gives a deleted file's number to the
    // next file made.)
    var now = FileIdentity(info)
    let isCatalogued = { (asset: Asset) in
      let was = asset.identity
      return now.device == was.device && now.inode == was.inode && info.st_nlink == 1
        && (!exactly || (now.size == was.size && now.modified == was.modified))
    }
    if isCatalogued(asset) { return file }
    // A file an edit or revert has just put in place is the catalog's once its writer is
    // done: wait for that (at once for a file nobody writes), then look at the file as it is
    // now and ask the catalog again.
    if FileLease.waitForWriter(file.descriptor) {
      guard fstat(file.descriptor, &info) == 0 else {
        throw DarkroomError(.io, file: file.path, "cannot read its identity")
      }
      now = FileIdentity(info)
    }
    // (Asked even without a wait: the change may have ended between the caller's reading of
    // the catalog and this open.)
    var asset = asset
    if let fresh = try catalogCall({ try $0.asset(asset.id) }) {
      if isCatalogued(fresh) { return file }
      asset = fresh
    }
    let (cache, alias) = (RenditionCache(folder: cacheFolder), OpenedFiles.alias(of: file))
    let content: ContentHash
    if let known = cache.rememberedContentHash(ofFile: alias) {
      content = known
    } else {
      content = try ContentHash.of(open: file)
      if file.identity == now { cache.remember(content, ofFile: alias, readAs: now) }
    }
    guard content.hex == asset.contentHash else {
      throw DarkroomError(
        .unreadable, file: file.path,
        "is not the file the catalog knows (it was replaced since it was catalogued)")
    }
    return file
  }

  /// Runs `body` with a path that opens an asset's file as ``openFile(of:exactly:)`` opened
  /// and checked it, and nothing else whatever happens to its name meanwhile (an
  /// ``OpenedFiles`` alias, standing for the asset's path): for work that opens the file by
  /// path, as rendering does.
  ///
  /// - Throws: what ``openFile(of:exactly:)`` throws; what `body` throws, about the asset's
  ///   path.
  func withOpenedPath<T>(
    of asset: Asset, exactly: Bool = false, _ body: (String) throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    try OpenedFiles.with(openFile(of: asset, exactly: exactly), name: path(of: asset), body)
  }

  /// The path of an asset's file, for work that opens it by path (edits), once checked to be
  /// reached from the library's root through no symbolic link and to be a regular file.
  ///
  /// - Throws: as ``openFile(of:)`` throws for a link or a missing file.
  package func checkedPath(of asset: Asset) throws(DarkroomError) -> String {
    try require(.files(asset.name))
    _ = try Beneath.openFile(asset.path, in: rootPath)
    return path(of: asset)
  }

  /// `path` relative to the root (`""` for the root itself); nil if it is outside.
  package func relativePath(_ path: String) -> String? {
    let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
    let top = root.path
    if absolute == top { return "" }
    let prefix = top.hasSuffix("/") ? top : top + "/"
    guard absolute.hasPrefix(prefix) else { return nil }
    return String(absolute.dropFirst(prefix.count))
  }

  /// The asset with this id.
  ///
  /// - Throws: `notFound` when the catalog has no such asset.
  public func asset(_ id: AssetID) throws(DarkroomError) -> Asset {
    guard let asset = try catalogCall({ try $0.asset(id) }) else { throw storage.missing(id) }
    return asset
  }

  /// The assets with these ids, in the order given; ids the catalog does not know (any
  /// more) are left out.
  ///
  /// - Throws: what the catalog throws.
  public func assets(withIDs ids: [AssetID]) throws(DarkroomError) -> [Asset] {
    let found = try catalogCall { try $0.assets(withIDs: ids) }
    let byID = Dictionary(found.map { ($0.id, $0) }) { first, _ in first }
    return ids.compactMap { byID[$0] }
  }

  /// The asset whose file is at `path`, if the catalog has one.
  public func asset(atPath path: String) throws(DarkroomError) -> Asset? {
    guard let relative = relativePath(path) else { return nil }
    return try catalogCall { try $0.asset(atPath: relative) }
  }

  /// What a command was given, as a file path: an existing file as it is, an asset id as
  /// its file in the library that contains `folder` (the current one by default).
  ///
  /// - Throws: `notFound` for an id that library does not know (or outside any library).
  package static func resolve(_ item: String, from folder: String = ".") throws(DarkroomError)
    -> String
  {
    guard let id = AssetID(item), !FileManager.default.fileExists(atPath: item) else { return item }
    guard let library = Library.containing(folder), library.hasCatalog else {
      throw DarkroomError(
        .notFound, file: item, "no such file, and no library here to look the asset id up in")
    }
    return library.path(of: try library.asset(id))
  }

  // MARK: Fetch and albums

  /// The assets a query matches, in its order, loaded a page at a time (as `PHFetchResult`).
  ///
  /// ```swift
  /// var query = AssetQuery()
  /// query.edited = true
  /// let result = try library.assets(matching: query)
  /// for index in 0..<result.count { print(try result.asset(at: index).path) }
  /// ```
  public func assets(matching query: AssetQuery = AssetQuery()) throws(DarkroomError)
    -> AssetFetchResult
  {
    let ids = try catalogCall { try $0.ids(query) }
    return AssetFetchResult(query: query, ids: ids, library: self)
  }

  /// `limit` assets a query matches, from `offset` on in its order: read through the
  /// order's index, without taking every id first (as ``assets(matching:)`` does), so that
  /// `list --limit 100` of a million-photo library costs what it costs of a small one.
  ///
  /// - Throws: what the catalog throws.
  package func assets(matching query: AssetQuery, offset: Int, limit: Int) throws(DarkroomError)
    -> [Asset]
  {
    try catalogCall { try $0.assets(query, offset: max(0, offset), limit: max(0, limit)) }
  }

  /// How many assets a query matches.
  ///
  /// - Throws: what the catalog throws.
  public func count(matching query: AssetQuery) throws(DarkroomError) -> Int {
    try catalogCall { try $0.count(query) }
  }

  /// The first `limit` assets a query matches, where the next page starts, and, on a first
  /// page (no `after`), how many match in all: a page of a listing, read without taking
  /// every id (as ``assets(matching:)`` does).
  ///
  /// A page costs the same at any depth: it is found by its cursor in the query's index,
  /// and a later page does not count (the first page's count holds while the library does
  /// not change). The whole library's count, or a month's, is kept by the catalog; a filtered
  /// query's count reads the rows it matches, once.
  ///
  /// - Throws: what the catalog throws.
  package func page(of query: AssetQuery, limit: Int) throws(DarkroomError) -> AssetPage {
    let limit = max(0, limit)
    let (count, read) = try catalogCall { catalog in
      (
        query.after == nil ? try catalog.count(query) : nil,
        // One more than asked: whether any follow, without counting them.
        try catalog.assets(query, offset: 0, limit: limit + 1)
      )
    }
    let assets = Array(read.prefix(limit))
    return AssetPage(assets: assets, count: count, next: read.count > limit ? assets.last?.id : nil)
  }

  /// How many assets a query matches in each month they were taken in (``Asset/month``),
  /// newest first (oldest first for a `date` sort): the timeline's sections and its
  /// scrubber, read from the catalog's month index rather than from every row.
  ///
  /// - Throws: what the catalog throws.
  public func months(matching query: AssetQuery) throws(DarkroomError) -> [MonthCount] {
    try catalogCall { try $0.months(query) }
  }

  /// The album `ref` names (`smart:NAME`, `folder:PATH` or a user album's title), with its
  /// count and poster.
  ///
  /// - Throws: `notFound` for an album, folder or smart album the library does not have.
  public func album(_ ref: String) throws(DarkroomError) -> Album {
    let wanted = AlbumRef(ref)
    guard let album = try albums().first(where: { AlbumRef($0.ref) == wanted }) else {
      let name =
        switch wanted {
        case .user(let title): "album \(title)"
        case .folder(let path): "folder \(path)"
        case .smart(let smart): "smart album \(smart.rawValue)"
        }
      throw DarkroomError(.notFound, "no \(name)")
    }
    return album
  }

  /// Every album: smart albums, folders, user albums, each with a count and poster.
  public func albums() throws(DarkroomError) -> [Album] {
    try catalogCall { try $0.albums() }
  }

  /// A change to the user albums or to favourites.
  package enum AlbumEdit: Sendable {
    case create(String)
    case rename(String, to: String)
    case delete(String)
    case add(String, [AssetID])
    case remove(String, [AssetID])
    case poster(String, AssetID?)
    case favourite([AssetID], Bool)
  }

  /// Makes an album change.
  ///
  /// - Throws: `invalidArgument` naming what is wrong (no such album, a title taken, an
  ///   unknown asset).
  package func edit(_ change: AlbumEdit) throws(DarkroomError) {
    try catalogCall { catalog in
      switch change {
      case .create(let title): try catalog.createAlbum(title)
      case .rename(let title, let newTitle): try catalog.renameAlbum(title, to: newTitle)
      case .delete(let title): try catalog.deleteAlbum(title)
      case .add(let title, let ids): try catalog.addToAlbum(title, ids)
      case .remove(let title, let ids): try catalog.removeFromAlbum(title, ids)
      case .poster(let title, let id): try catalog.setPoster(title, id)
      case .favourite(let ids, let value): try catalog.setFavourite(ids, value)
      }
    }
    switch change {
    case .rename(let title, let newTitle): albumChanged(title, renamedTo: newTitle)
    case .delete(let title): albumChanged(title, renamedTo: nil)
    default: break
    }
  }

  /// The ids of what a command names: asset ids as they are, files by their asset.
  ///
  /// - Throws: `notFound` for a file the catalog does not know (scan it first).
  package func assetIDs(_ items: [String]) throws(DarkroomError) -> [AssetID] {
    try storage.ids(items)
  }

  /// ``assetIDs(_:)`` of a folder: ids as they are, files by their catalogued paths.
  func fileIDs(_ items: [String]) throws(DarkroomError) -> [AssetID] {
    var ids: [AssetID] = []
    for item in items {
      if let id = AssetID(item), !FileManager.default.fileExists(atPath: item) {
        ids.append(try asset(id).id)
      } else if let asset = try asset(atPath: item) {
        ids.append(asset.id)
      } else {
        throw DarkroomError(
          .notFound, file: item, "not in the library's catalog (darkroom scan adds it)")
      }
    }
    return ids
  }
}

extension Library {
  /// Checks the library as `git fsck` does a repository: the store of originals (see
  /// ``LibraryCheck``) and, when there is one, the catalog (SQLite's `integrity_check` and
  /// `foreign_key_check`).
  package func check(searching: [String] = [], repair: Bool = false) -> LibraryCheck.Report {
    // A space keeps no store of originals nor temporaries of a library's kind: its own
    // recovery runs with each write (and nothing here may sweep its folder).
    guard keeps(.originalsStore) else {
      return LibraryCheck.Report(library: rootPath, originals: 0, adjustments: 0, findings: [])
    }
    var report = LibraryCheck.run(on: self, searching: searching, repair: repair)
    for path in sweepTemporaries(removing: repair) {
      report.findings.append(
        .init(
          kind: .abandonedTemporary, file: path,
          message: "a temporary file whose writer is gone", repaired: repair))
    }
    guard hasCatalog else { return report }
    let problems: [String]
    do {
      problems = try catalogCall { try $0.check() }
    } catch {
      problems = [error.message]
    }
    report.findings += problems.map {
      LibraryCheck.Finding(
        kind: .damagedCatalog, file: catalogLocation, message: $0, repaired: false)
    }
    var damaged = AssetQuery()
    (damaged.damaged, damaged.includeHidden, damaged.sort) = (true, true, .name)
    for trashed in [false, true] {
      damaged.trashed = trashed
      let assets = (try? catalogCall { try $0.assets(damaged, offset: 0, limit: Int.max) }) ?? []
      report.findings += assets.compactMap { asset in
        asset.damage.map {
          LibraryCheck.Finding(
            kind: .damagedFile, file: path(of: asset), message: "\($0.problem) (\($0.detail))",
            repaired: false)
        }
      }
    }
    return report
  }
}

/// The result of a fetch, as `PHFetchResult` is: a snapshot of the ids a query matched, in
/// its order, taken in one read of the catalog, and a random-access collection of them.
/// The assets themselves are read a page at a time when first asked for:
///
/// ```swift
/// let result = try library.assets(matching: query)
/// print(result.count, result.first ?? "none")          // ids: no further read
/// if let index = result.firstIndex(of: id) { ... }      // as PHFetchResult.index(of:)
/// let firstPage = try result.assets(in: 0..<50)         // one read of the catalog
/// ```
///
/// The ids take 16 bytes each (a million: 16 MB). An asset removed from the catalog after
/// the fetch keeps its place in the collection, and ``asset(at:)`` throws `notFound` for it.
public final class AssetFetchResult: RandomAccessCollection, Sendable {
  public let query: AssetQuery
  /// Rows loaded per page.
  package static let pageSize = 100

  private let library: Library
  private let ids: [UInt128]
  private let pages = Locked<[Int: [AssetID: Asset]]>([:])

  init(query: AssetQuery, ids: [AssetID], library: Library) {
    (self.query, self.library) = (query, library)
    self.ids = ids.map(\.bits)
  }

  public var startIndex: Int { 0 }
  public var endIndex: Int { ids.count }
  public subscript(position: Int) -> AssetID { AssetID(bits: ids[position]) }

  /// The asset at `index` (0 ..< count), as the catalog has it now.
  ///
  /// - Throws: `invalidArgument` for an index out of range; `notFound` for an asset removed
  ///   since the fetch; `io` if the catalog fails.
  public func asset(at index: Int) throws(DarkroomError) -> Asset {
    guard indices.contains(index) else {
      throw DarkroomError(.invalidArgument, "index \(index) is outside 0..<\(count)")
    }
    let page = index / Self.pageSize
    let rows: [AssetID: Asset]
    if let loaded = pages.withLock({ $0[page] }) {
      rows = loaded
    } else {
      let ids = Array(self[page * Self.pageSize..<Swift.min(count, (page + 1) * Self.pageSize)])
      let found = try library.catalogCall { try $0.assets(withIDs: ids) }
      rows = Dictionary(found.map { ($0.id, $0) }) { first, _ in first }
      pages.withLock { $0[page] = rows }
    }
    let id = self[index]
    guard let asset = rows[id] else {
      throw DarkroomError(
        .notFound, file: id.rawValue, "was removed from the catalog since the fetch")
    }
    return asset
  }

  /// The assets in `range` (clamped to the result), loading the pages they are on.
  ///
  /// - Throws: as ``asset(at:)``.
  public func assets(in range: Range<Int>) throws(DarkroomError) -> [Asset] {
    let range = range.clamped(to: indices)
    var result: [Asset] = []
    result.reserveCapacity(range.count)
    for index in range { result.append(try asset(at: index)) }
    return result
  }
}

/// One page of a listing, keyset-paged: what the server's `/api/assets` and the gallery show.
package struct AssetPage: Sendable {
  /// The first assets the query matches, at most the limit asked for.
  package var assets: [Asset]
  /// How many assets the query matches, on a first page (the query has no `after`); nil on
  /// the pages after it.
  package var count: Int?
  /// The id to pass as the query's `after` for the assets that follow; nil when none do.
  package var next: AssetID?
}

extension Library {
  /// Makes Darkroom's catalog (its schema) in the PostgreSQL database at `url`, where none is
  /// yet, for libraries to keep their catalogs in (`--catalog URL`): the only way, besides a
  /// library's first scan and `catalog copy`, that a database becomes a catalog. Returns
  /// whether it was made now (false: it was one already, brought up to date), and the URL
  /// without its password, for messages.
  ///
  /// - Throws: `invalidArgument` for a URL that is not PostgreSQL's; `io` for a database
  ///   that cannot be opened (the message never carries the password).
  package static func makeCatalog(at url: String) throws(DarkroomError) -> (
    made: Bool, location: String
  ) {
    guard PostgresCatalog.isURL(url) else {
      throw DarkroomError(
        .invalidArgument, file: url,
        "not a PostgreSQL URL: one starts postgresql:// (a library's SQLite catalog is made by its first scan)"
      )
    }
    do {
      let catalog = try PostgresCatalog(url: url, creating: true)
      return (catalog.madeSchema, catalog.location)
    } catch {
      throw DarkroomError(
        .io, file: PostgresCatalog.redacted(url), "cannot open the catalog: \(error)")
    }
  }

  /// Copies a catalog into an empty one, between SQLite and PostgreSQL either way, losing
  /// nothing (see ``CatalogCopyReport``): `from` and `to` are each a SQLite file's path
  /// (`photos/.darkroom/catalog.sqlite`) or a PostgreSQL URL. A library whose catalog went
  /// to PostgreSQL remembers where (`.darkroom/catalog.location`), so that a command run
  /// without `--catalog` says so instead of using the old file; one whose catalog came back
  /// to its SQLite file forgets it.
  ///
  /// - Throws: `notFound` for a SQLite file that is not there; `invalidArgument` for a
  ///   target that holds a catalog already; `io` for a database that cannot be opened.
  package static func copyCatalog(from: String, to: String) throws(DarkroomError)
    -> CatalogCopyReport
  {
    let isURL = PostgresCatalog.isURL
    func name(_ text: String) -> String { isURL(text) ? PostgresCatalog.redacted(text) : text }
    func open(_ text: String, source: Bool) throws(DarkroomError) -> any CatalogTables {
      if source, !isURL(text), !FileManager.default.fileExists(atPath: text) {
        throw DarkroomError(.notFound, file: text, "no such catalog file")
      }
      do {
        return isURL(text)
          ? try PostgresCatalog(url: text, creating: !source) : try SQLiteCatalog(path: text)
      } catch {
        throw DarkroomError(.io, file: name(text), "cannot open the catalog: \(error)")
      }
    }
    let source = try open(from, source: true)
    let target = try open(to, source: false)
    let tables: [CatalogCopyReport.TableRows]
    do {
      tables = try CatalogCopy.copy(from: source, to: target)
    } catch let error as CatalogError {
      throw DarkroomError(.invalidArgument, file: name(to), error.message)
    } catch {
      throw DarkroomError(.io, file: name(to), "copying the catalog: \(error)")
    }
    // The library the copy came from or went to (a `.darkroom/catalog.sqlite`).
    func library(of path: String) -> String? {
      let url = URL(fileURLWithPath: path).standardizedFileURL
      guard !isURL(path), url.lastPathComponent == "catalog.sqlite",
        url.deletingLastPathComponent().lastPathComponent == folderName
      else { return nil }
      return url.deletingLastPathComponent().deletingLastPathComponent().path
    }
    if let root = library(of: to) {
      try? FileManager.default.removeItem(
        atPath: Library(root: URL(fileURLWithPath: root)).catalogLocationFile)
    } else if let target = target as? PostgresCatalog, let root = library(of: from) {
      // The library goes with its catalog: claimed in it, and named in its marker.
      try Library(root: URL(fileURLWithPath: root)).claim(target)
    }
    return CatalogCopyReport(from: name(from), to: name(to), tables: tables)
  }
}

/// Waits for a catalog's next commit (``Library/catalogWaiter()``).
package struct CatalogWaiter: Sendable {
  private let bell: CommitBell?
  private var seen: UInt64

  init(bell: CommitBell?) {
    self.bell = bell
    seen = bell?.count ?? 0
  }

  /// Returns after the next commit since the last wait (at once if one came meanwhile), or
  /// after `timeout`.
  ///
  /// - Throws: `CancellationError` when the task is cancelled.
  package mutating func wait(atMost timeout: Duration) async throws {
    guard let bell else { return try await Task.sleep(for: timeout) }
    await bell.wait(after: seen, atMost: timeout)
    seen = bell.count
    try Task.checkCancellation()
  }
}

extension Library {
  /// Where the library's photos were taken, from the places the scan found for their GPS
  /// positions (offline, GeoNames): each country with how many and a poster, most first;
  /// with `country`, its towns (with their regions). Trashed and hidden assets are left out.
  package func places(in country: String? = nil) throws(DarkroomError) -> [PlaceCount] {
    try catalogCall { try $0.places(in: country) }
  }
}

/// Photos near each other on a map at some zoom, as one marker: where they are on average,
/// how many, and the newest that shows something (``Library/mapClusters(zoom:south:west:north:east:)``).
package struct MapCluster: Sendable, Codable, Equatable {
  package var latitude: Double
  package var longitude: Double
  package var count: Int
  package var poster: AssetID?
}

extension Library {
  /// The photos with a GPS position inside a box (degrees; `west` greater than `east` for a
  /// box across the antimeridian), gathered into clusters of the cells a map at `zoom` (0
  /// to 22, web-map zoom levels) draws about 64 pixels wide: each cluster at its photos'
  /// mean position, with their count and its newest showable photo. Trashed and hidden
  /// assets are left out.
  package func mapClusters(zoom: Int, south: Double, west: Double, north: Double, east: Double)
    throws(DarkroomError) -> [MapCluster]
  {
    let zoom = min(max(zoom, 0), 22)
    // 256-pixel tiles, 2^zoom of them around the world: a quarter tile's degrees.
    let cell = 360.0 / Double(1 << zoom) / 4
    let points = try catalogCall {
      try $0.positions(
        south: max(-90, south), west: west, north: min(90, north), east: east)
    }
    struct Cell: Hashable {
      var x: Int
      var y: Int
    }
    var clusters: [Cell: (sumLat: Double, sumLon: Double, count: Int, poster: AssetID?)] = [:]
    var order: [Cell] = []
    for point in points {
      let key = Cell(
        x: Int(((point.longitude + 180) / cell).rounded(.down)),
        y: Int(((point.latitude + 90) / cell).rounded(.down)))
      var cluster = clusters[key] ?? (0, 0, 0, nil)
      if cluster.count == 0 { order.append(key) }
      cluster.sumLat += point.latitude
      cluster.sumLon += point.longitude
      cluster.count += 1
      // Newest first: the first that shows something is the poster.
      if cluster.poster == nil, point.showable { cluster.poster = point.id }
      clusters[key] = cluster
    }
    return order.compactMap { key in
      clusters[key].map {
        MapCluster(
          latitude: $0.sumLat / Double($0.count), longitude: $0.sumLon / Double($0.count),
          count: $0.count, poster: $0.poster)
      }
    }
  }
}
