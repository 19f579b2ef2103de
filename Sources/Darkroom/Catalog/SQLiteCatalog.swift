import FoundationEssentials
import GRDB

#if canImport(Glibc)
  import Glibc
#endif

/// The embedded ``Catalog``: SQLite through GRDB, in WAL mode with a `DatabasePool`, so
/// readers never wait for a writer, and every write is an `IMMEDIATE` transaction that waits
/// up to a minute for another process's (a scan, a watcher, an edit, the server) instead of
/// failing with `database is locked`. Foreign keys are on; the schema grows by migrations.
public final class SQLiteCatalog: Catalog {
  let pool: DatabasePool
  /// The database file.
  public let path: String
  /// Rung after each commit this process makes to the catalog, once something listens
  /// (``listenForCommits()``: the observation costs a call per row written).
  let commits = CommitBell()
  private let observation = Locked<AnyDatabaseCancellable?>(nil)

  /// Opens (or creates) the catalog at `path`, bringing its schema up to date.
  public init(path: String) throws {
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
    return migrator
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

  private static let columns = """
    a.id, f.path, a.name, a.hash, a.byteSize, a.device, a.inode, a.size, a.mtime, a.ctime,
    a.mediaType, a.format, a.width, a.height, a.displayWidth, a.displayHeight, a.orientation,
    a.captureDate, a.captureOffset, a.sortDate, a.latitude, a.longitude, a.altitude, a.camera,
    a.lens, a.exposureTime, a.fNumber, a.iso, a.focalLength, a.duration, a.adjustmentVersion,
    a.favourite, a.hidden, a.trashedAt, a.offline, a.addedAt, a.trashedFrom, a.caption,
    a.rating, a.keywords, a.timeZone, a.place, a.region, a.country, a.people, a.thumbOffset,
    a.thumbLength, a.motionOffset, a.motionLength, a.liveVideo, a.foreignEdit
    """
  private static let from = "asset a JOIN folder f ON f.id = a.folderId"

  private static func asset(_ row: Row) -> Asset {
    let folder: String = row[1]
    let name: String = row[2]
    var asset = Asset(
      id: AssetID(unchecked: row[0]), path: folder.isEmpty ? name : folder + "/" + name,
      contentHash: row[3], byteSize: row[4],
      identity: FileIdentity(
        device: UInt64(bitPattern: row[5]), inode: UInt64(bitPattern: row[6]), size: row[7],
        modified: row[8], changed: row[9]),
      mediaType: MediaType(rawValue: row[10]) ?? .photo, format: row[11], width: row[12],
      height: row[13], displayWidth: row[14], displayHeight: row[15], orientation: row[16],
      captureDate: row[17], captureOffsetMinutes: row[18], sortDate: row[19], latitude: row[20],
      longitude: row[21], altitude: row[22], camera: row[23], lens: row[24],
      exposureTime: row[25], fNumber: row[26], iso: row[27], focalLength: row[28],
      duration: row[29], adjustmentVersion: row[30], isFavourite: row[31], isHidden: row[32],
      trashedAt: row[33], isOffline: row[34], addedAt: row[35], trashedFrom: row[36])
    (asset.caption, asset.rating) = (row[37], row[38])
    asset.keywords = keywordList(row[39])
    (asset.timeZone, asset.place, asset.region, asset.country) = (
      row[40], row[41], row[42], row[43]
    )
    asset.people = keywordList(row[44])
    if let offset: Int = row[45], let length: Int = row[46] {
      asset.exifThumbnail = FileRange(offset: offset, length: length)
    }
    if let offset: Int = row[47], let length: Int = row[48] {
      asset.motionVideo = FileRange(offset: offset, length: length)
    }
    asset.liveVideo = row[49]
    if let json: String = row[50] {
      asset.foreignSettings = try? JSONDecoder().decode(ForeignSettings.self, from: Data(json.utf8))
    }
    return asset
  }

  /// Keywords (and people) as the catalog keeps them: each between newlines (nil for none).
  static func keywordText(_ keywords: [String]) -> String? {
    let kept = keywords.map { $0.replacingOccurrences(of: "\n", with: " ") }.filter { !$0.isEmpty }
    return kept.isEmpty ? nil : "\n" + kept.joined(separator: "\n") + "\n"
  }

  /// The list ``keywordText(_:)`` kept.
  static func keywordList(_ text: String?) -> [String] {
    text.map { $0.split(separator: "\n").map(String.init) } ?? []
  }

  private func fetchAssets(_ sql: String, _ arguments: StatementArguments = []) throws -> [Asset] {
    // One statement is atomic on its own: no read transaction around it (a server asks for
    // one asset per request, and BEGIN and COMMIT cost as much as the SELECT).
    try pool.unsafeRead { db in
      // Cached: a statement is parsed (and authorized) once, not for every fetch.
      try Row.fetchAll(
        db.cachedStatement(sql: "SELECT \(Self.columns) FROM \(Self.from) " + sql),
        arguments: arguments
      )
      .map(Self.asset)
    }
  }

  // MARK: Scan

  public func entries(inFolder folder: String) throws -> [CatalogEntry] {
    try entries(inFolder: folder, named: nil)
  }

  public func entries(inFolder folder: String, named names: [String]) throws -> [CatalogEntry] {
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
      let assets = try Row.fetchAll(
        db,
        sql: """
          SELECT name, device, inode, size, mtime, ctime, id, hash, offline FROM asset
          WHERE folderId = ?\(only)
          """, arguments: StatementArguments(arguments))
      let skipped = try Row.fetchAll(
        db,
        sql: """
          SELECT name, device, inode, size, mtime, ctime FROM skipped
          WHERE folderId = ? AND reader = ?\(only)
          """,
        arguments: StatementArguments([id, SkippedFile.reader] + Array(arguments.dropFirst())))
      return (assets + skipped).map { row in
        CatalogEntry(
          name: row[0],
          identity: FileIdentity(
            device: UInt64(bitPattern: row[1]), inode: UInt64(bitPattern: row[2]), size: row[3],
            modified: row[4], changed: row[5]),
          asset: row.count > 6 ? AssetID(unchecked: row[6]) : nil,
          contentHash: row.count > 7 ? row[7] : nil, isOffline: row.count > 8 ? row[8] : false)
      }
    }
  }

  public func folders(under folder: String) throws -> [String] {
    try pool.read { db in
      if folder.isEmpty { return try String.fetchAll(db, sql: "SELECT path FROM folder") }
      return try String.fetchAll(
        db, sql: "SELECT path FROM folder WHERE path = ? OR substr(path, 1, ?) = ?",
        arguments: [folder, folder.utf8.count + 1, folder + "/"])
    }
  }

  public func assets(under folder: String) throws -> [Asset] {
    if folder.isEmpty { return try fetchAssets("") }
    return try fetchAssets(
      "WHERE f.path = ? OR substr(f.path, 1, ?) = ?",
      [folder, folder.utf8.count + 1, folder + "/"])
  }

  public func commit(_ changes: CatalogChanges) throws {
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
          sql: """
            SELECT parentId FROM folder WHERE id = ? AND path != ''
            AND NOT EXISTS (SELECT 1 FROM folder g WHERE g.parentId = ?)
            AND NOT EXISTS (SELECT 1 FROM asset WHERE folderId = ?)
            AND NOT EXISTS (SELECT 1 FROM skipped WHERE folderId = ?)
            """), arguments: [id, id, id, id])
      guard let parent else { return }
      try db.cachedStatement(sql: "DELETE FROM folder WHERE id = ?").execute(arguments: [id])
      next = parent
    }
  }

  private static func split(_ path: String) -> (folder: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return ("", path) }
    return (String(path[..<slash]), String(path[path.index(after: slash)...]))
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
    let i = a.identity
    let values: [(any DatabaseValueConvertible)?] = [
      a.id.rawValue, folderID, a.name, a.contentHash, a.byteSize, Int64(bitPattern: i.device),
      Int64(bitPattern: i.inode), i.size, i.modified, i.changed, a.mediaType.rawValue, a.format,
      a.width, a.height, a.displayWidth, a.displayHeight, a.orientation, a.captureDate,
      a.captureOffsetMinutes, a.sortDate, a.latitude, a.longitude, a.altitude, a.camera, a.lens,
      a.exposureTime, a.fNumber, a.iso, a.focalLength, a.duration, a.adjustmentVersion,
      a.isFavourite, a.isHidden, a.trashedAt, a.isOffline, a.addedAt, a.caption, a.rating,
      Self.keywordText(a.keywords), a.timeZone, a.place, a.region, a.country,
      Self.keywordText(a.people), a.exifThumbnail?.offset, a.exifThumbnail?.length,
      a.motionVideo?.offset, a.motionVideo?.length, a.liveVideo,
      a.foreignSettings?.catalogJSON,
    ]
    // A file that is an asset now is no longer one the scan skipped.
    try db.cachedStatement(sql: "DELETE FROM skipped WHERE folderId = ? AND name = ?").execute(
      arguments: [folderID, a.name])
    try db.cachedStatement(
      sql: """
        INSERT INTO asset (id, folderId, name, hash, byteSize, device, inode, size, mtime, ctime,
          mediaType, format, width, height, displayWidth, displayHeight, orientation,
          captureDate, captureOffset, sortDate, latitude, longitude, altitude, camera, lens,
          exposureTime, fNumber, iso, focalLength, duration, adjustmentVersion, favourite,
          hidden, trashedAt, offline, addedAt, caption, rating, keywords, timeZone, place, region,
          country, people, thumbOffset, thumbLength, motionOffset, motionLength, liveVideo,
          foreignEdit)
        VALUES (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))
        ON CONFLICT (id) DO UPDATE SET folderId = excluded.folderId, name = excluded.name,
          hash = excluded.hash, byteSize = excluded.byteSize, device = excluded.device,
          inode = excluded.inode, size = excluded.size, mtime = excluded.mtime,
          ctime = excluded.ctime, mediaType = excluded.mediaType, format = excluded.format,
          width = excluded.width, height = excluded.height,
          displayWidth = excluded.displayWidth, displayHeight = excluded.displayHeight,
          orientation = excluded.orientation, captureDate = excluded.captureDate,
          captureOffset = excluded.captureOffset, sortDate = excluded.sortDate,
          latitude = excluded.latitude, longitude = excluded.longitude,
          altitude = excluded.altitude, camera = excluded.camera, lens = excluded.lens,
          exposureTime = excluded.exposureTime, fNumber = excluded.fNumber, iso = excluded.iso,
          focalLength = excluded.focalLength, duration = excluded.duration,
          adjustmentVersion = excluded.adjustmentVersion, offline = excluded.offline,
          caption = excluded.caption, rating = excluded.rating, keywords = excluded.keywords,
          timeZone = excluded.timeZone, place = excluded.place, region = excluded.region,
          country = excluded.country, people = excluded.people,
          thumbOffset = excluded.thumbOffset, thumbLength = excluded.thumbLength,
          motionOffset = excluded.motionOffset, motionLength = excluded.motionLength,
          liveVideo = excluded.liveVideo, foreignEdit = excluded.foreignEdit
        """
    ).execute(arguments: StatementArguments(values))
    return a.id
  }

  // MARK: Fetch

  public func asset(_ id: AssetID) throws -> Asset? {
    try fetchAssets("WHERE a.id = ?", [id.rawValue]).first
  }

  public func asset(atPath path: String) throws -> Asset? {
    let (folder, name) = Self.split(path)
    return try fetchAssets("WHERE f.path = ? AND a.name = ?", [folder, name]).first
  }

  public func assets(withIDs ids: [AssetID]) throws -> [Asset] {
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

  public func assets(withHash hash: String) throws -> [Asset] {
    try fetchAssets("WHERE a.hash = ? ORDER BY a.id", [hash])
  }

  public func cataloguedContents(_ hashes: [String]) throws -> Set<String> {
    var found: Set<String> = []
    try pool.read { db in
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

  public func count(_ query: AssetQuery) throws -> Int {
    if Self.isWholeLibrary(query) {
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

  public func assets(_ query: AssetQuery, offset: Int, limit: Int) throws -> [Asset] {
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

  public func ids(_ query: AssetQuery) throws -> [AssetID] {
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

  /// Whether a query is the whole library as the gallery opens it (the visible assets, in
  /// any order), or one month of it: what the kept month counts (`monthCount`) answer.
  static func isWholeLibrary(_ query: AssetQuery) -> Bool {
    var plain = query
    plain.sort = AssetQuery().sort
    plain.month = nil
    if plain.album == .smart(.all) { plain.album = nil }
    return plain == AssetQuery()
  }

  public func months(_ query: AssetQuery) throws -> [MonthCount] {
    var whole = query
    whole.after = nil
    let direction = query.sort == .date ? "" : " DESC"
    // The whole library as the gallery opens it: the counts the triggers keep.
    if Self.isWholeLibrary(whole) {
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
    switch query.sort {
    case .date: ("a.sortDate, a.id", [])
    case .dateDescending: ("a.sortDate DESC, a.id DESC", [])
    case .name: ("a.name, a.id", [])
    case .size: ("a.byteSize, a.id", [])
    case .album:
      if case .user(let title)? = query.album {
        (
          """
          (SELECT position FROM albumAsset p JOIN album b ON b.id = p.albumId
           WHERE b.title = ? AND p.assetId = a.id), a.id
          """, [title]
        )
      } else {
        ("a.sortDate, a.id", [])
      }
    }
  }

  private static func filter(_ q: AssetQuery) -> (String, StatementArguments) {
    var clauses: [String] = []
    var arguments = StatementArguments()
    func add(_ clause: String, _ values: [(any DatabaseValueConvertible)?] = []) {
      clauses.append(clause)
      arguments += StatementArguments(values)
    }
    switch q.album {
    case nil: break
    case .folder(let path): add("a.folderId = (SELECT id FROM folder WHERE path = ?)", [path])
    case .user(let title):
      add(
        "a.id IN (SELECT assetId FROM albumAsset JOIN album ON album.id = albumId WHERE title = ?)",
        [title])
    case .smart(let smart):
      switch smart {
      case .all, .trash: break
      case .favourites: add("a.favourite = 1")
      case .edited: add("a.adjustmentVersion > 0")
      case .videos: add("a.mediaType = 'video'")
      case .withLocation: add("a.latitude IS NOT NULL")
      case .recentlyAdded:
        add(
          "a.addedAt >= ?",
          [Double(AssetID.nowMilliseconds()) / 1000 - SmartAlbum.recentDays * 86400])
      }
    }
    if let after = q.after, q.sort == .album, case .user(let title)? = q.album {
      // A user album in its own order: after the cursor's place in it (then its id).
      let position =
        "(SELECT position FROM albumAsset p JOIN album b ON b.id = p.albumId WHERE b.title = ? AND p.assetId = "
      add(
        "(\(position)a.id), a.id) > ((\(position)?)), ?)",
        [title, title, after.rawValue, after.rawValue])
    } else if let after = q.after {
      // After the cursor's asset in the query's order (keyset paging: no rows skipped).
      let key: String
      let descending = q.sort == .dateDescending
      switch q.sort {
      case .date, .dateDescending: key = "sortDate"
      case .name: key = "name"
      case .size: key = "byteSize"
      case .album: key = "sortDate"
      }
      add(
        "(a.\(key), a.id) \(descending ? "<" : ">") (SELECT \(key), id FROM asset WHERE id = ?)",
        [after.rawValue])
    }
    let trashed = q.trashed || q.album == .smart(.trash)
    add(trashed ? "a.trashedAt IS NOT NULL" : "a.trashedAt IS NULL")
    if !q.includeHidden { add("a.hidden = 0") }
    if let type = q.mediaType { add("a.mediaType = ?", [type.rawValue]) }
    if let from = q.from { add("a.sortDate >= ?", [from]) }
    if let to = q.to { add("a.sortDate <= ?", [to]) }
    if let month = q.month { add("a.month = ?", [month]) }
    // Text matched literally by LIKE: its own wildcards escaped.
    func like(_ text: String) -> String {
      text.replacingOccurrences(of: "\\", with: "\\\\")
        .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }
    if let camera = q.camera { add("a.camera LIKE ? ESCAPE '\\'", ["%" + like(camera) + "%"]) }
    if let edited = q.edited { add(edited ? "a.adjustmentVersion > 0" : "a.adjustmentVersion = 0") }
    if let rating = q.rating {
      add("a.rating BETWEEN ? AND ?", [rating.lowerBound, rating.upperBound])
    }
    if let keyword = q.keyword {
      add("a.keywords LIKE ? ESCAPE '\\'", ["%\n" + like(keyword) + "\n%"])
    }
    if let text = q.text {
      let pattern = "%" + like(text) + "%"
      let fields = [
        "a.name", "a.caption", "a.keywords", "a.camera", "a.place", "a.region", "a.country",
        "a.people",
      ]
      add(
        "(" + fields.map { "\($0) LIKE ? ESCAPE '\\'" }.joined(separator: " OR ") + ")",
        fields.map { _ in pattern })
    }
    if let place = q.place {
      // A place, region or country, whole (any case): "Colorado", "Boulder", "Germany".
      let fields = ["a.place", "a.region", "a.country"]
      add(
        "(" + fields.map { "\($0) LIKE ? ESCAPE '\\'" }.joined(separator: " OR ") + ")",
        fields.map { _ in like(place) })
    }
    if let favourite = q.favourite { add("a.favourite = ?", [favourite]) }
    if let near = q.near {
      // A box first (cheap, on the columns), then the exact distance.
      let dLat = near.kilometres / 111.2
      let cosine = max(0.01, cos(near.latitude * .pi / 180))
      let dLon = min(180, near.kilometres / (111.2 * cosine))
      add(
        "a.latitude BETWEEN ? AND ? AND dr_distance_km(a.latitude, a.longitude, ?, ?) <= ?",
        [
          near.latitude - dLat, near.latitude + dLat, near.latitude, near.longitude,
          near.kilometres,
        ])
      if dLon < 180 {
        add(
          "(a.longitude BETWEEN ? AND ? OR a.longitude BETWEEN ? AND ? OR a.longitude BETWEEN ? AND ?)",
          [
            near.longitude - dLon, near.longitude + dLon, near.longitude - dLon + 360,
            near.longitude + dLon + 360, near.longitude - dLon - 360, near.longitude + dLon - 360,
          ])
      }
    }
    if let minimum = q.minDuration { add("a.duration >= ?", [minimum]) }
    if let maximum = q.maxDuration { add("a.duration <= ?", [maximum]) }
    return (clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND "), arguments)
  }

  // MARK: Albums

  public func albums() throws -> [Album] {
    var albums: [Album] = []
    for smart in SmartAlbum.allCases {
      var query = AssetQuery()
      query.album = .smart(smart)
      query.sort = .dateDescending
      albums.append(
        Album(
          kind: .smart, ref: AlbumRef.smart(smart).text, title: smart.title, parent: nil,
          count: try count(query), poster: try assets(query, offset: 0, limit: 1).first?.id))
    }
    try pool.read { db in
      let folders = try Row.fetchAll(
        db,
        sql: """
          SELECT f.path,
            (SELECT count(*) FROM asset a WHERE a.folderId = f.id AND a.trashedAt IS NULL
             AND a.hidden = 0),
            (SELECT a.id FROM asset a WHERE a.folderId = f.id AND a.trashedAt IS NULL
             AND a.hidden = 0 ORDER BY a.sortDate DESC, a.id DESC LIMIT 1),
            p.path
          FROM folder f LEFT JOIN folder p ON p.id = f.parentId
          WHERE f.path != '.darkroom' AND f.path NOT LIKE '.darkroom/%'
          ORDER BY f.path
          """)
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
        sql: """
          SELECT b.title,
            (SELECT count(*) FROM albumAsset p JOIN asset a ON a.id = p.assetId
             WHERE p.albumId = b.id AND a.trashedAt IS NULL),
            coalesce(b.posterId, (SELECT a.id FROM albumAsset p JOIN asset a ON a.id = p.assetId
             WHERE p.albumId = b.id AND a.trashedAt IS NULL
             ORDER BY a.sortDate DESC, a.id DESC LIMIT 1))
          FROM album b ORDER BY b.title
          """)
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

  private static func checkTitle(_ title: String) throws {
    guard !title.isEmpty, !title.hasPrefix("folder:"), !title.hasPrefix("smart:") else {
      throw CatalogError(
        "\"\(title)\" cannot name an album: empty, or starting folder: or smart:")
    }
  }

  public func createAlbum(_ title: String) throws {
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

  public func renameAlbum(_ title: String, to newTitle: String) throws {
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

  public func deleteAlbum(_ title: String) throws {
    try pool.write { db in
      try db.cachedStatement(sql: "DELETE FROM album WHERE id = ?").execute(arguments: [
        try albumID(title, db)
      ])
    }
  }

  public func addToAlbum(_ title: String, _ ids: [AssetID]) throws {
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

  public func removeFromAlbum(_ title: String, _ ids: [AssetID]) throws {
    try pool.write { db in
      let album = try albumID(title, db)
      for id in ids {
        try db.cachedStatement(sql: "DELETE FROM albumAsset WHERE albumId = ? AND assetId = ?")
          .execute(arguments: [album, id.rawValue])
      }
    }
  }

  public func setPoster(_ title: String, _ id: AssetID?) throws {
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

  public func setFavourite(_ ids: [AssetID], _ value: Bool) throws {
    try pool.write { db in
      for id in ids {
        try requireAsset(id, db)
        try db.cachedStatement(sql: "UPDATE asset SET favourite = ? WHERE id = ?").execute(
          arguments: [value, id.rawValue])
        if let path = try Self.location(id, db) { try Self.record(.changed, id, path, db) }
      }
    }
  }

  private func requireAsset(_ id: AssetID, _ db: Database) throws {
    guard
      try Bool.fetchOne(
        db.cachedStatement(sql: "SELECT 1 FROM asset WHERE id = ?"), arguments: [id.rawValue])
        != nil
    else { throw CatalogError("\(id): no such asset in this library", missing: true) }
  }

  public func maintain() throws {
    // A full ANALYZE where SQLite finds the statistics stale: a sampled one
    // (analysis_limit) left the planner choosing a scan of the size index for "videos by
    // size" (p99 52 ms instead of 4).
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA optimize") }
  }

  // MARK: Check

  public func check() throws -> [String] {
    try pool.read { db in
      var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
      let broken = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
      problems += broken.map { row in
        "a row of \(row[0] as String) refers to a missing \(row[2] as String)"
      }
      return problems
    }
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
