import FoundationEssentials
import GRDB

#if canImport(Glibc)
  import Glibc
#endif

/// The embedded ``Catalog``: SQLite through GRDB, in WAL mode with a `DatabasePool`, so
/// readers never wait for a writer (but ``cataloguedContents(_:)``, a scan's question asked
/// on the writer's connection), and every write is an `IMMEDIATE` transaction that waits
/// up to a minute for another process's (a scan, a watcher, an edit, the server) instead of
/// failing with `database is locked`. Foreign keys are on; the schema grows by migrations.
package final class SQLiteCatalog: Catalog {
  let pool: DatabasePool
  /// The database file.
  package let path: String
  /// Rung after each commit this process makes to the catalog, once something listens
  /// (``listenForCommits()``: the observation costs a call per row written).
  let commits = CommitBell()
  private let observation = Locked<AnyDatabaseCancellable?>(nil)

  /// Opens (or creates) the catalog at `path`, bringing its schema up to date.
  package init(path: String) throws {
    var configuration = Configuration()
    configuration.busyMode = .timeout(60)
    configuration.foreignKeysEnabled = true
    configuration.prepareDatabase { db in
      // Durable against a killed process in WAL mode; only a power cut may lose the last
      // transactions, never the database's consistency.
      try db.execute(sql: "PRAGMA synchronous = NORMAL")
      db.add(function: Self.distanceFunction)
    }
    self.path = path
    pool = try DatabasePool(path: path, configuration: configuration)
    // A first scan that was killed left its indexes to be built (deferIndexes): they are
    // built before any later migration, which may expect them. Best effort: a catalog whose
    // indexes cannot be built now (a busy writer, a full disk) still opens, answers
    // correctly without them, and says so in `catalog check`; the next open or scan builds
    // them.
    try Self.migrator.migrate(pool, upTo: "v11 deferred indexes")
    try? restoreIndexes()
    try Self.migrator.migrate(pool)
  }

  /// Starts ringing ``commits`` after each commit (once; what a fetch observer asks first).
  func listenForCommits() {
    let bell = commits
    observation.withLock { observation in
      guard observation == nil else { return }
      observation = DatabaseRegionObservation(tracking: .fullDatabase).start(
        in: pool, onError: { _ in }, onChange: { _ in bell.ring() })
    }
  }

  // MARK: Schema

  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1 assets, folders, albums") { db in
      try db.execute(
        sql: """
          CREATE TABLE folder (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            parentId INTEGER REFERENCES folder(id));
          CREATE INDEX folder_parent ON folder(parentId);
          CREATE TABLE asset (
            id TEXT PRIMARY KEY NOT NULL,
            folderId INTEGER NOT NULL REFERENCES folder(id),
            name TEXT NOT NULL,
            hash TEXT NOT NULL,
            byteSize INTEGER NOT NULL,
            device INTEGER NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL,
            mtime INTEGER NOT NULL, ctime INTEGER NOT NULL,
            mediaType TEXT NOT NULL, format TEXT NOT NULL,
            width INTEGER NOT NULL, height INTEGER NOT NULL,
            displayWidth INTEGER NOT NULL, displayHeight INTEGER NOT NULL,
            orientation INTEGER NOT NULL,
            captureDate REAL, captureOffset INTEGER, sortDate REAL NOT NULL,
            latitude REAL, longitude REAL, altitude REAL,
            camera TEXT, lens TEXT, exposureTime REAL, fNumber REAL, iso INTEGER,
            focalLength REAL, duration REAL,
            adjustmentVersion INTEGER NOT NULL DEFAULT 0,
            favourite INTEGER NOT NULL DEFAULT 0,
            hidden INTEGER NOT NULL DEFAULT 0,
            trashedAt REAL,
            offline INTEGER NOT NULL DEFAULT 0,
            addedAt REAL NOT NULL,
            trashedFrom TEXT,
            UNIQUE (folderId, name));
          CREATE INDEX asset_hash ON asset(hash);
          CREATE INDEX asset_size ON asset(byteSize, id);
          CREATE INDEX asset_name ON asset(name, id);
          CREATE INDEX asset_added ON asset(addedAt);
          CREATE INDEX asset_visible_date ON asset(sortDate, id)
            WHERE trashedAt IS NULL AND hidden = 0;
          CREATE INDEX asset_type_date ON asset(mediaType, sortDate, id)
            WHERE trashedAt IS NULL AND hidden = 0;
          CREATE INDEX asset_edited_date ON asset(sortDate, id)
            WHERE adjustmentVersion > 0 AND trashedAt IS NULL AND hidden = 0;
          CREATE INDEX asset_place ON asset(latitude, longitude)
            WHERE latitude IS NOT NULL;
          CREATE TABLE skipped (
            folderId INTEGER NOT NULL REFERENCES folder(id),
            name TEXT NOT NULL,
            device INTEGER NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL,
            mtime INTEGER NOT NULL, ctime INTEGER NOT NULL,
            reason TEXT NOT NULL,
            reader INTEGER NOT NULL,
            PRIMARY KEY (folderId, name));
          CREATE TABLE album (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL UNIQUE,
            posterId TEXT REFERENCES asset(id) ON DELETE SET NULL,
            createdAt REAL NOT NULL);
          CREATE TABLE albumAsset (
            albumId INTEGER NOT NULL REFERENCES album(id) ON DELETE CASCADE,
            assetId TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            PRIMARY KEY (albumId, assetId));
          CREATE INDEX albumAsset_asset ON albumAsset(assetId);
          CREATE INDEX albumAsset_position ON albumAsset(albumId, position);
          CREATE TABLE change (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            assetId TEXT NOT NULL,
            path TEXT NOT NULL,
            oldPath TEXT,
            at REAL NOT NULL);
          CREATE TABLE fingerprint (
            assetId TEXT PRIMARY KEY NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
            contentHash TEXT NOT NULL,
            value INTEGER NOT NULL,
            centre INTEGER NOT NULL);
          CREATE TABLE distinctPair (
            a TEXT NOT NULL,
            b TEXT NOT NULL,
            PRIMARY KEY (a, b));
          """)
    }
    registerJobs(&migrator)
    migrator.registerMigration("v3 captions, ratings, keywords") { db in
      // Keywords as one text, each between newlines ("\nColorado\nmountains\n"), so that a
      // keyword is found whole with LIKE.
      try db.execute(
        sql: """
          ALTER TABLE asset ADD COLUMN caption TEXT;
          ALTER TABLE asset ADD COLUMN rating INTEGER;
          ALTER TABLE asset ADD COLUMN keywords TEXT;
          """)
    }
    migrator.registerMigration("v4 places and time zones") { db in
      try db.execute(
        sql: """
          ALTER TABLE asset ADD COLUMN timeZone TEXT;
          ALTER TABLE asset ADD COLUMN place TEXT;
          ALTER TABLE asset ADD COLUMN region TEXT;
          ALTER TABLE asset ADD COLUMN country TEXT;
          ALTER TABLE asset ADD COLUMN people TEXT;
          """)
      // Every photo is read again by the next scan (its identity no longer matches), so the
      // new columns, IPTC and the zone's offset reach the rows made before.
      try db.execute(sql: "UPDATE asset SET mtime = -1 WHERE mediaType = 'photo'")
    }
    migrator.registerMigration("v5 months") { db in
      // The month a photo was taken in on its own clock (Asset.month: the same arithmetic),
      // kept in an index so that the timeline's months and a month's page are read from it.
      try db.execute(
        sql: """
          ALTER TABLE asset ADD COLUMN month INTEGER GENERATED ALWAYS AS (
            CASE WHEN sortDate + coalesce(captureOffset, 0) * 60
              BETWEEN \(Int64(Asset.monthRange.lowerBound)) AND \(Int64(Asset.monthRange.upperBound))
            THEN CAST(strftime('%Y%m', sortDate + coalesce(captureOffset, 0) * 60, 'unixepoch')
              AS INTEGER)
            ELSE 0 END) VIRTUAL;
          CREATE INDEX asset_visible_month ON asset(month, sortDate, id)
            WHERE trashedAt IS NULL AND hidden = 0;
          """)
    }
    migrator.registerMigration("v6 month counts") { db in
      // How many visible assets each month holds, kept by triggers as rows come, go, move
      // to the trash or change date: the whole library's timeline is read from here (one
      // row a month) instead of from every row's index entry.
      try db.execute(
        sql: """
          CREATE TABLE monthCount (month INTEGER PRIMARY KEY, count INTEGER NOT NULL);
          INSERT INTO monthCount SELECT month, count(*) FROM asset
            WHERE trashedAt IS NULL AND hidden = 0 GROUP BY month;
          CREATE TRIGGER monthCount_insert AFTER INSERT ON asset
            WHEN new.trashedAt IS NULL AND new.hidden = 0
          BEGIN
            INSERT INTO monthCount VALUES (new.month, 1)
              ON CONFLICT (month) DO UPDATE SET count = count + 1;
          END;
          CREATE TRIGGER monthCount_delete AFTER DELETE ON asset
            WHEN old.trashedAt IS NULL AND old.hidden = 0
          BEGIN
            UPDATE monthCount SET count = count - 1 WHERE month = old.month;
            DELETE FROM monthCount WHERE month = old.month AND count <= 0;
          END;
          CREATE TRIGGER monthCount_update
            AFTER UPDATE OF sortDate, captureOffset, trashedAt, hidden ON asset
          BEGIN
            UPDATE monthCount SET count = count - 1
              WHERE month = old.month AND old.trashedAt IS NULL AND old.hidden = 0;
            DELETE FROM monthCount WHERE month = old.month AND count <= 0;
            INSERT INTO monthCount SELECT new.month, 1
              WHERE new.trashedAt IS NULL AND new.hidden = 0
              ON CONFLICT (month) DO UPDATE SET count = count + 1;
          END;
          """)
    }
    migrator.registerMigration("v7 embedded thumbnails") { db in
      // Where a JPEG's EXIF thumbnail is in its file, read at scan time: what the gallery
      // shows until a thumbnail is made.
      try db.execute(
        sql: """
          ALTER TABLE asset ADD COLUMN thumbOffset INTEGER;
          ALTER TABLE asset ADD COLUMN thumbLength INTEGER;
          """)
    }
    migrator.registerMigration("v8 live and motion photos") { db in
      // A motion photo's video in its file; a Live Photo's MOV beside it.
      try db.execute(
        sql: """
          ALTER TABLE asset ADD COLUMN motionOffset INTEGER;
          ALTER TABLE asset ADD COLUMN motionLength INTEGER;
          ALTER TABLE asset ADD COLUMN liveVideo TEXT;
          """)
    }
    migrator.registerMigration("v9 edits made elsewhere") { db in
      // Lightroom's or darktable's settings (Asset.foreignSettings, as JSON). Every photo is
      // read again by the next scan (its identity no longer matches), so rows made before
      // learn theirs.
      try db.execute(
        sql: """
          ALTER TABLE asset ADD COLUMN foreignEdit TEXT;
          UPDATE asset SET mtime = -1 WHERE mediaType = 'photo';
          """)
    }
    migrator.registerMigration("v10 damaged files") { db in
      // What is wrong with a damaged file (Asset.damage): such files are assets now, and
      // the ones skipped before are read again (SkippedFile.reader 2).
      try db.execute(
        sql: """
          ALTER TABLE asset ADD COLUMN damage TEXT;
          ALTER TABLE asset ADD COLUMN damageDetail TEXT;
          """)
    }
    migrator.registerMigration("v11 deferred indexes") { db in
      // The indexes a first scan builds after its rows (deferIndexes), kept here until they
      // are, so that a scan killed halfway leaves them to the next open.
      try db.execute(
        sql: "CREATE TABLE deferredIndex (name TEXT PRIMARY KEY NOT NULL, sql TEXT NOT NULL)")
    }
    return migrator
  }

  // MARK: Indexes a first scan builds after its rows

  /// The indexes of `asset` that a first scan builds once its rows are in, instead of
  /// keeping them row by row: no scan reads them, and each is keyed by what comes in no
  /// order (size, name, date), so keeping them as rows arrive writes pages all over a
  /// growing file. Measured on 200,000 small JPEGs (Benchmarks/README, "Scan scaling"): the
  /// first scan takes 25.0 s without them against 38.5 s with them, and building them after
  /// takes 0.8 s. The hash index stays: a scan looks moves up by content.
  static let indexesBuiltAfterFirstScan = [
    "asset_size", "asset_name", "asset_visible_date", "asset_type_date", "asset_visible_month",
  ]

  /// The catalog's indexes, each name with its definition as SQLite keeps it.
  package func indexes() throws -> [String: String] {
    try pool.read { db in
      let rows = try Row.fetchAll(
        db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
      return Dictionary(
        rows.map { ($0["name"], $0["sql"]) }, uniquingKeysWith: { first, _ in first })
    }
  }

  /// The indexes ``deferIndexes()`` dropped that are not built yet.
  package func deferredIndexes() throws -> [String] {
    try pool.read { db in
      try String.fetchAll(db, sql: "SELECT name FROM deferredIndex ORDER BY name")
    }
  }

  package func deferIndexes() throws -> Bool {
    // Read first: a scan of a catalog that holds assets takes no write lock for this.
    let empty = try pool.read { db in
      try Bool.fetchOne(db, sql: "SELECT NOT EXISTS (SELECT 1 FROM asset)")
    }
    guard empty == true else { return false }
    return try pool.write { db in
      guard try Bool.fetchOne(db, sql: "SELECT NOT EXISTS (SELECT 1 FROM asset)") == true
      else { return false }
      let names = Self.indexesBuiltAfterFirstScan
      let marks = names.map { _ in "?" }.joined(separator: ", ")
      // Their definitions as the schema has them, kept before they go, in one transaction.
      try db.execute(
        sql: """
          INSERT OR IGNORE INTO deferredIndex (name, sql)
          SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN (\(marks))
          """, arguments: StatementArguments(names))
      for name in names { try db.execute(sql: "DROP INDEX IF EXISTS \(name)") }
      return true
    }
  }

  package func restoreIndexes() throws {
    // Read first: opening a catalog takes no write lock unless there is something to build.
    guard try !deferredIndexes().isEmpty else { return }
    try pool.write { db in
      let deferred = try Row.fetchAll(db, sql: "SELECT name, sql FROM deferredIndex")
      for row in deferred {
        let (name, sql): (String, String) = (row["name"], row["sql"])
        // Only the indexes a scan defers, and only an index of `asset`, one statement: the
        // table is in a file anyone may hand over (`catalog copy`), and is run, not read.
        guard Self.indexesBuiltAfterFirstScan.contains(name),
          sql.hasPrefix("CREATE INDEX \(name) ON asset"), !sql.contains(";")
        else {
          throw CatalogError("the catalog's deferred index \(name) is not one Darkroom defers")
        }
        let present = try Bool.fetchOne(
          db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?)",
          arguments: [name])
        if present != true { try db.makeStatement(sql: sql).execute() }
      }
      if !deferred.isEmpty { try db.execute(sql: "DELETE FROM deferredIndex") }
    }
  }

  /// `dr_distance_km(lat1, lon1, lat2, lon2)`: great-circle distance (haversine, mean
  /// Earth radius), for `--near`.
  static let distanceFunction = DatabaseFunction("dr_distance_km", argumentCount: 4, pure: true) {
    values in
    guard let lat1 = Double.fromDatabaseValue(values[0]),
      let lon1 = Double.fromDatabaseValue(values[1]),
      let lat2 = Double.fromDatabaseValue(values[2]),
      let lon2 = Double.fromDatabaseValue(values[3])
    else { return nil }
    return distanceKilometres(lat1, lon1, lat2, lon2)
  }

  // MARK: Rows

  static let dialect = CatalogSQL.Dialect(
    like: "LIKE",
    monthDay: "strftime('%m-%d', a.sortDate + coalesce(a.captureOffset, 0) * 60, 'unixepoch')")

  private func fetchAssets(_ sql: String, _ arguments: StatementArguments = []) throws -> [Asset] {
    // One statement is atomic on its own: no read transaction around it (a server asks for
    // one asset per request, and BEGIN and COMMIT cost as much as the SELECT).
    try pool.unsafeRead { db in
      // Cached: a statement is parsed (and authorized) once, not for every fetch.
      try Row.fetchAll(
        db.cachedStatement(sql: "SELECT \(CatalogSQL.columns) FROM \(CatalogSQL.from) " + sql),
        arguments: arguments
      )
      .map(CatalogSQL.asset)
    }
  }

  // MARK: Scan

  package func entries(inFolder folder: String) throws -> [CatalogEntry] {
    try entries(inFolder: folder, named: nil)
  }

  package func entries(inFolder folder: String, named names: [String]) throws -> [CatalogEntry] {
    try entries(inFolder: folder, named: Optional(names))
  }

  private func entries(inFolder folder: String, named names: [String]?) throws -> [CatalogEntry] {
    try pool.read { db in
      guard
        let id = try Int64.fetchOne(
          db.cachedStatement(sql: "SELECT id FROM folder WHERE path = ?"), arguments: [folder])
      else { return [] }
      var only = ""
      var arguments: [(any DatabaseValueConvertible)?] = [id]
      if let names {
        only = " AND name IN (" + names.map { _ in "?" }.joined(separator: ",") + ")"
        arguments += names.map { $0 }
      }
      // Read through cursors, each value decoded from its column as it is read: a scan
      // asks for every folder's rows, and copying each row first was a fifth of a
      // rescan's time.
      // A folder's whole rows are asked for again and again; a list of names rarely twice.
      func statement(_ sql: String) throws -> Statement {
        names == nil ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
      }
      var entries: [CatalogEntry] = []
      let assetSQL = """
        SELECT name, device, inode, size, mtime, ctime, id, hash, offline FROM asset
        WHERE folderId = ?\(only)
        """
      let assets = try Row.fetchCursor(
        statement(assetSQL), arguments: StatementArguments(arguments))
      while let row = try assets.next() {
        entries.append(
          CatalogEntry(
            name: row[0], identity: Self.identity(row), asset: AssetID(unchecked: row[6]),
            contentHash: row[7], isOffline: row[8]))
      }
      let skippedSQL = """
        SELECT name, device, inode, size, mtime, ctime FROM skipped
        WHERE folderId = ? AND reader = ?\(only)
        """
      let skipped = try Row.fetchCursor(
        statement(skippedSQL),
        arguments: StatementArguments([id, SkippedFile.reader] + Array(arguments.dropFirst())))
      while let row = try skipped.next() {
        entries.append(
          CatalogEntry(
            name: row[0], identity: Self.identity(row), asset: nil, contentHash: nil,
            isOffline: false))
      }
      return entries
    }
  }

  /// A file's identity from columns 1-5 of a row: device, inode, size, mtime, ctime.
  private static func identity(_ row: Row) -> FileIdentity {
    FileIdentity(
      device: UInt64(bitPattern: row[1]), inode: UInt64(bitPattern: row[2]), size: row[3],
      modified: row[4], changed: row[5])
  }

  /// (SQLite's `substr` counts characters, Unicode scalars, not bytes: a prefix's length is
  /// its scalars'.)
  package func folders(under folder: String) throws -> [String] {
    try pool.read { db in
      if folder.isEmpty { return try String.fetchAll(db, sql: "SELECT path FROM folder") }
      return try String.fetchAll(
        db, sql: "SELECT path FROM folder WHERE path = ? OR substr(path, 1, ?) = ?",
        arguments: [folder, folder.unicodeScalars.count + 1, folder + "/"])
    }
  }

  package func assets(under folder: String) throws -> [Asset] {
    if folder.isEmpty { return try fetchAssets("") }
    return try fetchAssets(
      "WHERE f.path = ? OR substr(f.path, 1, ?) = ?",
      [folder, folder.unicodeScalars.count + 1, folder + "/"])
  }

  package func commit(_ changes: CatalogChanges) throws {
    guard !changes.isEmpty else { return }
    try pool.write { db in
      var folderIDs: [String: Int64] = [:]
      // Folders a row left (a move, a removal, a skipped file that went): only they can have
      // become empty. Looking at every folder on each commit made a batch's cost grow with
      // the library (a million files in a thousand folders: a thousand probes a batch).
      var left: Set<String> = []
      for asset in changes.upserts {
        let before = try Self.location(asset.id, db)
        if let before { left.insert(Self.split(before).folder) }
        let folderID = try Self.folderID(asset.folder, db, &folderIDs)
        // The same file found new by two writers at once (an upload and the watcher's scan):
        // the first one's row stands, and the second changes nothing, nor logs a change.
        if before == nil, try Self.holdsSameFile(asset, folderID: folderID, db) { continue }
        let id = try Self.upsert(asset, folderID: folderID, db)
        if let before, before != asset.path {
          try Self.record(.moved, id, asset.path, from: before, db)
        } else {
          try Self.record(
            before == nil && id == asset.id ? .inserted : .changed, id, asset.path, db)
        }
      }
      for path in changes.unskipped {
        let (folder, name) = Self.split(path)
        left.insert(folder)
        try db.cachedStatement(
          sql:
            "DELETE FROM skipped WHERE name = ? AND folderId = (SELECT id FROM folder WHERE path = ?)"
        ).execute(arguments: [name, folder])
      }
      for file in changes.skipped {
        let (folder, name) = Self.split(file.path)
        let folderID = try Self.folderID(folder, db, &folderIDs)
        let i = file.identity
        try db.cachedStatement(
          sql: """
            INSERT OR REPLACE INTO skipped
              (folderId, name, device, inode, size, mtime, ctime, reason, reader)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).execute(arguments: [
          folderID, name, Int64(bitPattern: i.device), Int64(bitPattern: i.inode), i.size,
          i.modified, i.changed, file.reason, SkippedFile.reader,
        ])
      }
      for id in changes.removals {
        guard let path = try Self.location(id, db) else { continue }
        if let seen = changes.removedFrom[id], seen != path { continue }
        left.insert(Self.split(path).folder)
        try db.cachedStatement(sql: "DELETE FROM asset WHERE id = ?").execute(arguments: [
          id.rawValue
        ])
        try Self.record(.removed, id, path, db)
      }
      for (id, offline) in changes.offline {
        guard let path = try Self.location(id, db) else { continue }
        try db.cachedStatement(sql: "UPDATE asset SET offline = ? WHERE id = ?").execute(
          arguments: [offline, id.rawValue])
        try Self.record(.changed, id, path, db)
      }
      for folder in left.sorted() {
        if let id = try Int64.fetchOne(
          db.cachedStatement(sql: "SELECT id FROM folder WHERE path = ?"), arguments: [folder])
        {
          try Self.removeIfEmpty(id, db)
        }
      }
    }
  }

  /// Removes a folder row with nothing in it, then its parent if that is empty now, and so on.
  static func removeIfEmpty(_ folderID: Int64, _ db: Database) throws {
    var next: Int64? = folderID
    while let id = next {
      let parent = try Int64.fetchOne(
        db.cachedStatement(
          sql: CatalogSQL.removeIfEmpty), arguments: [id, id, id, id])
      guard let parent else { return }
      try db.cachedStatement(sql: "DELETE FROM folder WHERE id = ?").execute(arguments: [id])
      next = parent
    }
  }

  private static func split(_ path: String) -> (folder: String, name: String) {
    CatalogSQL.split(path)
  }

  /// The folder's row id, making it and its parents first if need be.
  static func folderID(_ path: String, _ db: Database, _ known: inout [String: Int64])
    throws -> Int64
  {
    if let id = known[path] { return id }
    if let id = try Int64.fetchOne(
      db.cachedStatement(sql: "SELECT id FROM folder WHERE path = ?"), arguments: [path])
    {
      known[path] = id
      return id
    }
    let parent: Int64? = path.isEmpty ? nil : try folderID(split(path).folder, db, &known)
    try db.cachedStatement(sql: "INSERT INTO folder (path, parentId) VALUES (?, ?)").execute(
      arguments: [path, parent])
    known[path] = db.lastInsertedRowID
    return db.lastInsertedRowID
  }

  /// Writes an asset's row; returns the id it has (another, when two scans found the same
  /// new file at once).
  /// Whether another row at `asset`'s place already holds the very same file (content and
  /// identity).
  private static func holdsSameFile(_ asset: Asset, folderID: Int64, _ db: Database) throws
    -> Bool
  {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql:
            "SELECT id, hash, device, inode, size, mtime, ctime FROM asset WHERE folderId = ? AND name = ?"
        ), arguments: [folderID, asset.name])
    else { return false }
    let i = asset.identity
    let id: String = row["id"]
    let hash: String = row["hash"]
    let device: Int64 = row["device"]
    let inode: Int64 = row["inode"]
    let size: Int64 = row["size"]
    let mtime: Int64 = row["mtime"]
    let ctime: Int64 = row["ctime"]
    return id != asset.id.rawValue && hash == asset.contentHash
      && device == Int64(bitPattern: i.device) && inode == Int64(bitPattern: i.inode)
      && size == i.size && mtime == i.modified && ctime == i.changed
  }

  private static func upsert(_ asset: Asset, folderID: Int64, _ db: Database) throws -> AssetID {
    var a = asset
    // Another row at this place: a file moved over it (this id is in the catalog already)
    // replaces it; otherwise this is the same file found by two scans at once, and keeps
    // the id the first gave it.
    if let existing = try String.fetchOne(
      db.cachedStatement(sql: "SELECT id FROM asset WHERE folderId = ? AND name = ?"),
      arguments: [folderID, a.name]), existing != a.id.rawValue
    {
      let known = try Bool.fetchOne(
        db.cachedStatement(sql: "SELECT 1 FROM asset WHERE id = ?"), arguments: [a.id.rawValue])
      if known == nil {
        a.id = AssetID(unchecked: existing)
      } else {
        try db.cachedStatement(sql: "DELETE FROM asset WHERE id = ?").execute(arguments: [existing])
      }
    }
    let values = [a.id.rawValue.catalogValue, folderID.catalogValue] + CatalogSQL.values(of: a)
    // A file that is an asset now is no longer one the scan skipped.
    try db.cachedStatement(sql: "DELETE FROM skipped WHERE folderId = ? AND name = ?").execute(
      arguments: [folderID, a.name])
    try db.cachedStatement(
      sql: """
        INSERT INTO asset (id, folderId, \(CatalogSQL.writtenColumns.joined(separator: ", ")))
        VALUES (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))
        ON CONFLICT (id) DO UPDATE SET folderId = excluded.folderId,
          \(CatalogSQL.replacedColumns.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
        """
    ).execute(arguments: StatementArguments(values.map(\.databaseValue)))
    return a.id
  }

  // MARK: Fetch

  package func asset(_ id: AssetID) throws -> Asset? {
    try fetchAssets("WHERE a.id = ?", [id.rawValue]).first
  }

  package func asset(atPath path: String) throws -> Asset? {
    let (folder, name) = Self.split(path)
    return try fetchAssets("WHERE f.path = ? AND a.name = ?", [folder, name]).first
  }

  package func assets(withIDs ids: [AssetID]) throws -> [Asset] {
    var found: [Asset] = []
    // SQLite takes at most 32,766 variables a statement.
    for start in stride(from: 0, to: ids.count, by: 500) {
      let chunk = ids[start..<min(ids.count, start + 500)]
      let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
      found += try fetchAssets(
        "WHERE a.id IN (\(marks))", StatementArguments(chunk.map(\.rawValue)))
    }
    return found
  }

  package func assets(withHash hash: String) throws -> [Asset] {
    try fetchAssets("WHERE a.hash = ? ORDER BY a.id", [hash])
  }

  /// Read on the writer's connection, not a reader's: a scan asks this of each batch before
  /// it commits the batch's rows, whose hashes go into the same pages of `asset_hash`. The
  /// writer's page cache keeps those pages from batch to batch; a reader's is emptied by
  /// every commit (SQLite drops a connection's cache when another one has changed the
  /// database), so each batch read the index's pages from the file twice.
  package func cataloguedContents(_ hashes: [String]) throws -> Set<String> {
    var found: Set<String> = []
    try pool.writeWithoutTransaction { db in
      for start in stride(from: 0, to: hashes.count, by: 500) {
        let chunk = hashes[start..<min(hashes.count, start + 500)]
        let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
        found.formUnion(
          try String.fetchAll(
            db, sql: "SELECT DISTINCT hash FROM asset WHERE hash IN (\(marks))",
            arguments: StatementArguments(Array(chunk))))
      }
    }
    return found
  }

  package func count(_ query: AssetQuery) throws -> Int {
    if CatalogSQL.isWholeLibrary(query) {
      // The whole library, or one month of it: the counts the triggers keep.
      return try pool.read { db in
        try Int.fetchOne(
          db.cachedStatement(
            sql: "SELECT coalesce(sum(count), 0) FROM monthCount WHERE ? IS NULL OR month = ?"),
          arguments: [query.month, query.month]) ?? 0
      }
    }
    let (filter, arguments) = Self.filter(query)
    return try pool.read { db in
      try Int.fetchOne(
        db.cachedStatement(sql: "SELECT count(*) FROM asset a \(filter)"), arguments: arguments)
        ?? 0
    }
  }

  package func assets(_ query: AssetQuery, offset: Int, limit: Int) throws -> [Asset] {
    let (filter, arguments) = Self.filter(query)
    let (order, orderArguments) = Self.order(query)
    // The page is chosen on the asset table and its indexes alone (rows skipped by the
    // offset are never joined or read whole); only its rows are then read.
    var all = arguments
    all += orderArguments
    all += [max(0, limit), max(0, offset)]
    all += orderArguments
    return try fetchAssets(
      """
      WHERE a.rowid IN (SELECT a.rowid FROM asset a \(filter) ORDER BY \(order) LIMIT ? OFFSET ?)
      ORDER BY \(order)
      """, all)
  }

  package func ids(_ query: AssetQuery) throws -> [AssetID] {
    let (filter, arguments) = Self.filter(query)
    let (order, orderArguments) = Self.order(query)
    var all = arguments
    all += orderArguments
    return try pool.read { db in
      try String.fetchAll(
        db, sql: "SELECT a.id FROM asset a \(filter) ORDER BY \(order)", arguments: all
      ).map(AssetID.init(unchecked:))
    }
  }

  package func months(_ query: AssetQuery) throws -> [MonthCount] {
    var whole = query
    whole.after = nil
    let direction = query.sort == .date ? "" : " DESC"
    // The whole library as the gallery opens it: the counts the triggers keep.
    if CatalogSQL.isWholeLibrary(whole) {
      return try pool.read { db in
        try Row.fetchAll(
          db.cachedStatement(
            sql:
              "SELECT month, count FROM monthCount WHERE ? IS NULL OR month = ? ORDER BY month\(direction)"
          ), arguments: [whole.month, whole.month]
        ).map { MonthCount(month: $0[0], count: $0[1]) }
      }
    }
    let (filter, arguments) = Self.filter(whole)
    return try pool.read { db in
      try Row.fetchAll(
        db.cachedStatement(
          sql:
            "SELECT a.month, count(*) FROM asset a \(filter) GROUP BY a.month ORDER BY a.month\(direction)"
        ), arguments: arguments
      ).map { MonthCount(month: $0[0], count: $0[1]) }
    }
  }

  private static func order(_ query: AssetQuery) -> (String, StatementArguments) {
    let (order, values) = CatalogSQL.order(query)
    return (order, StatementArguments(values.map(\.databaseValue)))
  }

  private static func filter(_ query: AssetQuery) -> (String, StatementArguments) {
    let (filter, values) = CatalogSQL.filter(query, dialect)
    return (filter, StatementArguments(values.map(\.databaseValue)))
  }

  // MARK: Albums

  package func albums() throws -> [Album] {
    var albums: [Album] = []
    for smart in SmartAlbum.allCases {
      var query = AssetQuery()
      query.album = .smart(smart)
      query.sort = .dateDescending
      albums.append(
        Album(
          kind: .smart, ref: AlbumRef.smart(smart).text, title: smart.title, parent: nil,
          count: try count(query),
          poster: CatalogSQL.poster(try assets(query, offset: 0, limit: 8))))
    }
    try pool.read { db in
      let folders = try Row.fetchAll(
        db,
        sql: CatalogSQL.folderAlbums)
      for row in folders {
        let path: String = row[0]
        albums.append(
          Album(
            kind: .folder, ref: AlbumRef.folder(path).text,
            title: path.isEmpty ? "(top folder)" : Self.split(path).name, parent: row[3],
            count: row[1], poster: (row[2] as String?).map(AssetID.init(unchecked:))))
      }
      let users = try Row.fetchAll(
        db,
        sql: CatalogSQL.userAlbums)
      for row in users {
        let title: String = row[0]
        albums.append(
          Album(
            kind: .user, ref: AlbumRef.user(title).text, title: title, parent: nil,
            count: row[1], poster: (row[2] as String?).map(AssetID.init(unchecked:))))
      }
    }
    return albums
  }

  private func albumID(_ title: String, _ db: Database) throws -> Int64 {
    guard
      let id = try Int64.fetchOne(
        db.cachedStatement(sql: "SELECT id FROM album WHERE title = ?"), arguments: [title])
    else {
      throw CatalogError("no album named \"\(title)\" (darkroom albums lists them)", missing: true)
    }
    return id
  }

  static func checkTitle(_ title: String) throws {
    guard !title.isEmpty, !title.hasPrefix("folder:"), !title.hasPrefix("smart:") else {
      throw CatalogError(
        "\"\(title)\" cannot name an album: empty, or starting folder: or smart:")
    }
  }

  package func createAlbum(_ title: String) throws {
    try Self.checkTitle(title)
    try pool.write { db in
      guard
        try Int64.fetchOne(
          db.cachedStatement(sql: "SELECT id FROM album WHERE title = ?"), arguments: [title])
          == nil
      else { throw CatalogError("an album named \"\(title)\" exists already") }
      try db.cachedStatement(sql: "INSERT INTO album (title, createdAt) VALUES (?, ?)").execute(
        arguments: [title, Double(AssetID.nowMilliseconds()) / 1000])
    }
  }

  package func renameAlbum(_ title: String, to newTitle: String) throws {
    try Self.checkTitle(newTitle)
    try pool.write { db in
      let id = try albumID(title, db)
      if try Int64.fetchOne(
        db.cachedStatement(sql: "SELECT id FROM album WHERE title = ?"), arguments: [newTitle])
        != nil
      {
        throw CatalogError("an album named \"\(newTitle)\" exists already")
      }
      try db.cachedStatement(sql: "UPDATE album SET title = ? WHERE id = ?").execute(arguments: [
        newTitle, id,
      ])
    }
  }

  package func deleteAlbum(_ title: String) throws {
    try pool.write { db in
      try db.cachedStatement(sql: "DELETE FROM album WHERE id = ?").execute(arguments: [
        try albumID(title, db)
      ])
    }
  }

  package func addToAlbum(_ title: String, _ ids: [AssetID]) throws {
    try pool.write { db in
      let album = try albumID(title, db)
      var position =
        try Int.fetchOne(
          db.cachedStatement(sql: "SELECT max(position) FROM albumAsset WHERE albumId = ?"),
          arguments: [album])
        ?? 0
      for id in ids {
        try requireAsset(id, db)
        position += 1
        try db.cachedStatement(
          sql: "INSERT OR IGNORE INTO albumAsset (albumId, assetId, position) VALUES (?, ?, ?)"
        ).execute(arguments: [album, id.rawValue, position])
      }
    }
  }

  package func removeFromAlbum(_ title: String, _ ids: [AssetID]) throws {
    try pool.write { db in
      let album = try albumID(title, db)
      for id in ids {
        try db.cachedStatement(sql: "DELETE FROM albumAsset WHERE albumId = ? AND assetId = ?")
          .execute(arguments: [album, id.rawValue])
      }
    }
  }

  package func setPoster(_ title: String, _ id: AssetID?) throws {
    try pool.write { db in
      let album = try albumID(title, db)
      if let id {
        guard
          try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM albumAsset WHERE albumId = ? AND assetId = ?"),
            arguments: [album, id.rawValue]) != nil
        else { throw CatalogError("\(id) is not in the album \"\(title)\"") }
      }
      try db.cachedStatement(sql: "UPDATE album SET posterId = ? WHERE id = ?").execute(arguments: [
        id?.rawValue, album,
      ])
    }
  }

  package func setFavourite(_ ids: [AssetID], _ value: Bool) throws {
    try pool.write { db in
      for id in ids {
        try requireAsset(id, db)
        try db.cachedStatement(sql: "UPDATE asset SET favourite = ? WHERE id = ?").execute(
          arguments: [value, id.rawValue])
        if let path = try Self.location(id, db) { try Self.record(.changed, id, path, db) }
      }
    }
  }

  package func markDamaged(_ damage: AssetDamage, ifStill asset: Asset) throws -> Bool {
    try pool.write { db in
      try db.cachedStatement(sql: CatalogSQL.markDamaged).execute(
        arguments: StatementArguments(
          CatalogSQL.markDamagedValues(damage, asset).map(\.databaseValue)))
      guard db.changesCount > 0 else { return false }
      if let path = try Self.location(asset.id, db) {
        try Self.record(.changed, asset.id, path, db)
      }
      return true
    }
  }

  private func requireAsset(_ id: AssetID, _ db: Database) throws {
    guard
      try Bool.fetchOne(
        db.cachedStatement(sql: "SELECT 1 FROM asset WHERE id = ?"), arguments: [id.rawValue])
        != nil
    else { throw CatalogError("\(id): no such asset in this library", missing: true) }
  }

  package func maintain() throws {
    // A full ANALYZE where SQLite finds the statistics stale: a sampled one
    // (analysis_limit) left the planner choosing a scan of the size index for "videos by
    // size" (p99 52 ms instead of 4).
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA optimize") }
  }

  // MARK: Check

  package func check() throws -> [String] {
    var problems = try pool.read { db in
      var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
      let broken = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
      problems += broken.map { row in
        "a row of \(row[0] as String) refers to a missing \(row[2] as String)"
      }
      return problems
    }
    let waiting = try deferredIndexes()
    if !waiting.isEmpty {
      problems.append(
        "indexes a first scan left to build are not built: \(waiting.joined(separator: ", "))"
          + " (the next open or scan builds them)")
    }
    return problems
  }
}

/// Great-circle distance in kilometres (haversine, mean Earth radius 6371.0088 km).
func distanceKilometres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
  let radians = Double.pi / 180
  let dLat = (lat2 - lat1) * radians
  let dLon = (lon2 - lon1) * radians
  let h =
    sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2)
    * sin(dLon / 2)
  return 2 * 6371.0088 * asin(min(1, h.squareRoot()))
}

extension CatalogValue {
  /// As GRDB binds it.
  var databaseValue: DatabaseValue {
    switch self {
    case .null: .null
    case .int(let value): value.databaseValue
    case .double(let value): value.databaseValue
    case .text(let value): value.databaseValue
    }
  }
}

extension Row: CatalogRow {
  func text(_ index: Int) -> String? { self[index] }
  func int(_ index: Int) -> Int64? { self[index] }
  func double(_ index: Int) -> Double? { self[index] }
}

extension SQLiteCatalog: CatalogTables {
  func rows(of table: CatalogCopy.Table) throws -> [[CatalogValue]] {
    try pool.read { db in
      try Row.fetchAll(
        db,
        sql:
          "SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name) ORDER BY \(table.order)"
      ).map { row in row.databaseValues.map(\.catalogValue) }
    }
  }

  func rowCount() throws -> Int {
    try pool.read { db in
      try Int.fetchOne(
        db,
        sql: """
          SELECT (SELECT count(*) FROM folder) + (SELECT count(*) FROM asset)
            + (SELECT count(*) FROM album) + (SELECT count(*) FROM job)
            + (SELECT count(*) FROM change)
          """) ?? 0
    }
  }

  func load(_ tables: [(CatalogCopy.Table, [[CatalogValue]])]) throws {
    try pool.write { db in
      for (table, rows) in tables {
        let marks = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
        let insert = try db.makeStatement(
          sql:
            "INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) VALUES (\(marks))"
        )
        for row in rows {
          try insert.execute(arguments: StatementArguments(row.map(\.databaseValue)))
        }
      }
    }
  }
}

extension DatabaseValue {
  /// As the catalogs' shared SQL binds it (a blob, which no catalog column holds, as text).
  var catalogValue: CatalogValue {
    switch storage {
    case .null: .null
    case .int64(let value): .int(value)
    case .double(let value): .double(value)
    case .string(let value): .text(value)
    case .blob(let data): .text(String(decoding: data, as: UTF8.self))
    }
  }
}
