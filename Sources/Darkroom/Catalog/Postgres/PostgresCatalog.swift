import FoundationEssentials

/// A ``Catalog`` in PostgreSQL, for a library that several servers share: the same tables
/// and answers as ``SQLiteCatalog`` (the SQL of queries is shared, ``CatalogSQL``), through
/// libpq (``PostgresConnection``).
///
/// Every write is a transaction that first takes one advisory lock, so writes from every
/// process follow one another as SQLite's do: what a commit reads (is this file already
/// catalogued? where was this asset?) is still true when it writes, and the change log is
/// numbered in commit order (a reader that has seen number n never later finds a smaller
/// one appear). Reads take no lock. A connection the server dropped (a restart) is replaced
/// and the call made again once, unless it may have committed.
package final class PostgresCatalog: Catalog {
  /// The URL with its password left out: what errors and logs name.
  package let location: String
  let pool: PostgresPool
  /// Rung after each commit this process makes, and, once ``listenForCommits()`` is on,
  /// after each commit another process makes (PostgreSQL's `LISTEN`).
  let commits = CommitBell()
  private let listener = Locked<PostgresListener?>(nil)
  /// Whether this open made Darkroom's schema in the database (`creating`, where it had none).
  package let madeSchema: Bool

  /// The advisory lock every write takes (an arbitrary key: "darkroom" in a 64-bit number).
  static let writeLock: Int64 = 0x6461_726B_726F_6F6D
  /// The channel commits are announced on.
  static let channel = "darkroom_changes"
  static let dialect = CatalogSQL.Dialect(
    like: "ILIKE",
    monthDay:
      "to_char(to_timestamp(a.sortDate + coalesce(a.captureOffset, 0) * 60) AT TIME ZONE 'UTC', 'MM-DD')"
  )

  /// Connects to the catalog at `url` and brings its schema up to date; with `creating`,
  /// makes the schema in a database that has none (a library's first scan, `catalog init`,
  /// the target of `catalog copy`), never otherwise: a mistyped URL naming an empty database
  /// is not quietly made a catalog.
  ///
  /// - Throws: ``PostgresError`` for a URL it cannot reach, a wrong password, a database
  ///   that is not there, one without Darkroom's schema (unless `creating`), or a migration
  ///   that fails.
  package init(url: String, creating: Bool) throws {
    guard Self.isURL(url) else {
      throw PostgresError(
        "not a PostgreSQL URL: one starts postgresql:// (postgresql://user:password@host:5432/database)"
      )
    }
    location = Self.redacted(url)
    pool = PostgresPool(url: url)
    let found = try pool.withConnection { c in
      try c.query("SELECT to_regclass('darkroomMigration') IS NOT NULL").rows.first?.first ?? nil
    }
    madeSchema = found != "t"
    if !creating {
      guard !madeSchema else {
        throw PostgresError(
          "holds no Darkroom catalog: `darkroom catalog init URL` makes one there (as a library's first `darkroom scan --catalog URL` does)"
        )
      }
    }
    try migrate()
  }

  /// `message` with every password that `url` carries (before and after its percent
  /// escapes are read) replaced by `***`, and `url` itself by its redacted form.
  package static func scrubbed(_ message: String, url: String) -> String {
    var message = message.replacingOccurrences(of: url, with: redacted(url))
    for secret in passwords(in: url).sorted(by: { $0.count > $1.count }) where !secret.isEmpty {
      message = message.replacingOccurrences(of: secret, with: "***")
    }
    return message
  }

  /// The passwords in `url`: its user information's and its query's `password=`, each as
  /// written and percent-decoded where it decodes.
  static func passwords(in url: String) -> [String] {
    let (user, query) = passwordPlaces(url)
    let found =
      (user.map { [url[url.index(after: $0.lowerBound)..<$0.upperBound]] } ?? [])
      + query.filter { $0.hasPrefix("password=") }.map { $0.dropFirst("password=".count) }
    return found.flatMap { [String($0), String($0).removingPercentEncoding].compactMap { $0 } }
  }

  /// Whether `text` is a PostgreSQL URL (`postgresql://` or `postgres://`), which is how a
  /// catalog in PostgreSQL is named everywhere (libpq's `key=value` form is not taken).
  package static func isURL(_ text: String) -> Bool {
    text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
  }

  /// `postgresql://user:secret@host/db?password=secret` as `postgresql://user@host/db`.
  package static func redacted(_ url: String) -> String {
    guard url.contains("://") else { return url }
    let (user, query) = passwordPlaces(url)
    var kept = url
    if let user { kept.removeSubrange(user) }
    kept = String(kept[..<(kept.firstIndex(of: "?") ?? kept.endIndex)])
    let pairs = query.filter { !$0.hasPrefix("password=") }
    return kept + (pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&"))
  }

  /// Where `url` may carry a password: `:secret` in its user information (the range, colon
  /// included, up to the `@`), and its query's pairs.
  private static func passwordPlaces(_ url: String) -> (
    user: Range<String.Index>?, query: [Substring]
  ) {
    guard let scheme = url.range(of: "://") else { return (nil, []) }
    var user: Range<String.Index>?
    let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" }
    if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
      user = colon..<at
    }
    let query = url.firstIndex(of: "?").map { url[url.index(after: $0)...].split(separator: "&") }
    return (user, query ?? [])
  }

  private func migrate() throws {
    try write(announce: false) { c in
      try c.execute(
        "CREATE TABLE IF NOT EXISTS darkroomMigration (name text PRIMARY KEY, appliedAt double precision NOT NULL)"
      )
      let applied = Set(try c.query("SELECT name FROM darkroomMigration").rows.compactMap { $0[0] })
      for migration in PostgresSchema.migrations where !applied.contains(migration.name) {
        try c.execute(migration.sql)
        try c.query(
          "INSERT INTO darkroomMigration (name, appliedAt) VALUES ($1, $2)",
          [.text(migration.name), .double(Double(AssetID.nowMilliseconds()) / 1000)])
      }
    }
  }

  /// Claims the catalog for the library with this id, if no library has; returns the id of
  /// the library it is (this one's, or another's).
  func claim(library id: String) throws -> String {
    try write(announce: false) { c in
      try Self.run(
        c, "INSERT INTO darkroomMeta (key, value) VALUES ('library', ?) ON CONFLICT DO NOTHING",
        [id])
      return try Self.run(c, "SELECT value FROM darkroomMeta WHERE key = 'library'").first?.text(0)
        ?? ""
    }
  }

  // MARK: Calls

  /// `?` marks as PostgreSQL's `$1`, `$2`...: the shared SQL's parameters (none stands in a
  /// quoted literal of it, which are skipped anyway).
  static func numbered(_ sql: String) -> String {
    // Bytes, not Characters: a scan numbers a 2 KB statement for every file.
    var result: [UInt8] = []
    result.reserveCapacity(sql.utf8.count + 64)
    var number = 0
    var quoted = false
    for byte in sql.utf8 {
      if byte == UInt8(ascii: "'") { quoted.toggle() }
      if byte == UInt8(ascii: "?") && !quoted {
        number += 1
        result.append(UInt8(ascii: "$"))
        result += String(number).utf8
      } else {
        result.append(byte)
      }
    }
    return String(decoding: result, as: UTF8.self)
  }

  /// Runs one statement written with `?` marks.
  @discardableResult
  static func run(
    _ c: PostgresConnection, _ sql: String, _ values: [any CatalogValueConvertible] = []
  ) throws -> [PostgresRow] {
    try c.query(numbered(sql), values.map(\.catalogValue)).rows.map(PostgresRow.init)
  }

  @discardableResult
  static func run(_ c: PostgresConnection, _ sql: String, values: [CatalogValue]) throws
    -> [PostgresRow]
  {
    try c.query(numbered(sql), values).rows.map(PostgresRow.init)
  }

  /// A read: one or more statements on a connection of the pool (no transaction).
  func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
    do {
      return try pool.withConnection(body)
    } catch let error as PostgresError where error.connectionLost {
      // An idle connection the server dropped (it restarted): once more, on a new one.
      pool.dropIdle()
      return try pool.withConnection(body)
    }
  }

  /// A write: a transaction holding the catalog's write lock, announced to listeners when it
  /// commits.
  @discardableResult
  func write<T>(announce: Bool = true, _ body: (PostgresConnection) throws -> T) throws -> T {
    var committing = false
    func attempt(_ c: PostgresConnection) throws -> T {
      try c.execute("BEGIN")
      do {
        try c.query("SELECT pg_advisory_xact_lock($1)", [.int(Self.writeLock)])
        let value = try body(c)
        if announce { try c.query("SELECT pg_notify($1, '')", [.text(Self.channel)]) }
        committing = true
        try c.execute("COMMIT")
        return value
      } catch {
        if !c.isBroken { try? c.execute("ROLLBACK") }
        throw error
      }
    }
    let value: T
    do {
      value = try pool.withConnection(attempt)
    } catch let error as PostgresError where error.connectionLost && !committing {
      // Nothing was committed: once more, on a new connection.
      pool.dropIdle()
      value = try pool.withConnection(attempt)
    }
    if announce { commits.ring() }
    return value
  }

  /// Starts ringing ``commits`` for other processes' commits too (a connection that listens).
  func listenForCommits() {
    listener.withLock { listener in
      guard listener == nil else { return }
      listener = PostgresListener(url: pool.url, channel: Self.channel, bell: commits)
    }
  }

  private func fetchAssets(_ sql: String, _ values: [any CatalogValueConvertible] = []) throws
    -> [Asset]
  {
    try fetchAssets(sql, values: values.map(\.catalogValue))
  }

  private func fetchAssets(_ sql: String, values: [CatalogValue]) throws -> [Asset] {
    try read { c in
      try Self.run(c, "SELECT \(CatalogSQL.columns) FROM \(CatalogSQL.from) " + sql, values: values)
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
    try read { c in
      guard let id = try Self.run(c, "SELECT id FROM folder WHERE path = ?", [folder]).first?.int(0)
      else { return [] }
      var only = ""
      var values: [CatalogValue] = []
      if let names {
        only = " AND name = ANY(?::text[])"
        values = [.text(Self.arrayLiteral(names))]
      }
      let assets = try Self.run(
        c,
        """
        SELECT name, device, inode, size, mtime, ctime, id, hash, offline FROM asset
        WHERE folderId = ?\(only)
        """, values: [.int(id)] + values)
      let skipped = try Self.run(
        c,
        """
        SELECT name, device, inode, size, mtime, ctime FROM skipped
        WHERE folderId = ? AND reader = ?\(only)
        """, values: [.int(id), .int(Int64(SkippedFile.reader))] + values)
      return (assets + skipped).map { row in
        CatalogEntry(
          name: row.text(0) ?? "",
          identity: FileIdentity(
            device: UInt64(bitPattern: row.int(1) ?? 0), inode: UInt64(bitPattern: row.int(2) ?? 0),
            size: row.int(3) ?? 0, modified: row.int(4) ?? 0, changed: row.int(5) ?? 0),
          asset: row.count > 6 ? row.text(6).map(AssetID.init(unchecked:)) : nil,
          contentHash: row.count > 7 ? row.text(7) : nil,
          isOffline: row.count > 8 ? (row.int(8) ?? 0) != 0 : false)
      }
    }
  }

  /// A text array in PostgreSQL's literal form (`{"a","b"}`), for `= ANY(?::text[])`: one
  /// parameter however many values.
  static func arrayLiteral(_ values: [String]) -> String {
    "{"
      + values.map {
        "\""
          + $0.replacingOccurrences(of: "\\", with: "\\\\")
          .replacingOccurrences(of: "\"", with: "\\\"") + "\""
      }.joined(separator: ",") + "}"
  }

  package func folders(under folder: String) throws -> [String] {
    try read { c in
      if folder.isEmpty {
        return try Self.run(c, "SELECT path FROM folder").compactMap { $0.text(0) }
      }
      return try Self.run(
        c, "SELECT path FROM folder WHERE path = ? OR starts_with(path, ?)", [folder, folder + "/"]
      ).compactMap { $0.text(0) }
    }
  }

  package func assets(under folder: String) throws -> [Asset] {
    if folder.isEmpty { return try fetchAssets("") }
    return try fetchAssets("WHERE f.path = ? OR starts_with(f.path, ?)", [folder, folder + "/"])
  }

  package func commit(_ changes: CatalogChanges) throws {
    guard !changes.isEmpty else { return }
    try write { c in
      var folderIDs: [String: Int64] = [:]
      var left: Set<String> = []
      // In batches: a batch of files none of which the catalog holds in any place (a first
      // scan's) is written by one read and one statement; any other, row by row.
      var start = 0
      while start < changes.upserts.count {
        let batch = Array(changes.upserts[start..<min(start + Self.batch, changes.upserts.count)])
        start += batch.count
        var folders: [Int64] = []
        for asset in batch { folders.append(try Self.folderID(asset.folder, c, &folderIDs)) }
        if try Self.allNew(batch, folders: folders, c) {
          for asset in batch { FaultInjection.reached("postgres-commit-row", file: asset.path) }
          try Self.insertNew(batch, folders: folders, c)
          continue
        }
        for (asset, folderID) in zip(batch, folders) {
          let (before, id) = try Self.place(asset, folderID: folderID, c)
          if let before { left.insert(CatalogSQL.split(before).folder) }
          // The same file found new by two writers at once: the first one's row stands.
          guard let id else { continue }
          let kind: CatalogChange.Kind =
            if let before, before != asset.path { .moved } else {
              before == nil && id == asset.id ? .inserted : .changed
            }
          try Self.write(asset, id: id, folderID: folderID, kind: kind, from: before, c)
          FaultInjection.reached("postgres-commit-row", file: asset.path)
        }
      }
      for path in changes.unskipped {
        let (folder, name) = CatalogSQL.split(path)
        left.insert(folder)
        try Self.run(
          c,
          "DELETE FROM skipped WHERE name = ? AND folderId = (SELECT id FROM folder WHERE path = ?)",
          [name, folder])
      }
      for file in changes.skipped {
        let (folder, name) = CatalogSQL.split(file.path)
        let folderID = try Self.folderID(folder, c, &folderIDs)
        let i = file.identity
        try Self.run(
          c,
          """
          INSERT INTO skipped (folderId, name, device, inode, size, mtime, ctime, reason, reader)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (folderId, name) DO UPDATE SET device = excluded.device,
            inode = excluded.inode, size = excluded.size, mtime = excluded.mtime,
            ctime = excluded.ctime, reason = excluded.reason, reader = excluded.reader
          """,
          [
            folderID, name, Int64(bitPattern: i.device), Int64(bitPattern: i.inode), i.size,
            i.modified, i.changed, file.reason, SkippedFile.reader,
          ])
      }
      for id in changes.removals {
        guard let path = try Self.location(id, c) else { continue }
        if let seen = changes.removedFrom[id], seen != path { continue }
        left.insert(CatalogSQL.split(path).folder)
        try Self.run(c, "DELETE FROM asset WHERE id = ?", [id.rawValue])
        try Self.record(.removed, id, path, c)
      }
      for (id, offline) in changes.offline {
        guard let path = try Self.location(id, c) else { continue }
        try Self.run(c, "UPDATE asset SET offline = ? WHERE id = ?", [offline, id.rawValue])
        try Self.record(.changed, id, path, c)
      }
      for folder in left.sorted() {
        if let id = try Self.run(c, "SELECT id FROM folder WHERE path = ?", [folder]).first?.int(0)
        {
          try Self.removeIfEmpty(id, c)
        }
      }
    }
  }

  static func removeIfEmpty(_ folderID: Int64, _ c: PostgresConnection) throws {
    var next: Int64? = folderID
    while let id = next {
      let rows = try run(
        c,
        CatalogSQL.removeIfEmpty, [id, id, id, id])
      guard let row = rows.first else { return }
      try run(c, "DELETE FROM folder WHERE id = ?", [id])
      next = row.int(0)
    }
  }

  static func folderID(_ path: String, _ c: PostgresConnection, _ known: inout [String: Int64])
    throws -> Int64
  {
    if let id = known[path] { return id }
    if let id = try run(c, "SELECT id FROM folder WHERE path = ?", [path]).first?.int(0) {
      known[path] = id
      return id
    }
    let parent: Int64? = path.isEmpty ? nil : try folderID(CatalogSQL.split(path).folder, c, &known)
    guard
      let id = try run(
        c, "INSERT INTO folder (path, parentId) VALUES (?, ?) RETURNING id", [path, parent]
      ).first?.int(0)
    else { throw PostgresError("the server returned no id for a new folder") }
    known[path] = id
    return id
  }

  /// The most files a commit writes in one statement: 256 rows of 57 values (the row's 52,
  /// its place's 5), under the protocol's 65,535 parameters.
  static let batch = 256

  /// Whether none of `batch` (more than one, ids and places each distinct) is in the
  /// catalog, by its id or at its place: then each is a plain insert. One read.
  private static func allNew(_ batch: [Asset], folders: [Int64], _ c: PostgresConnection) throws
    -> Bool
  {
    let places = Set(zip(folders, batch).map { "\($0)/\($1.name)" })
    guard batch.count > 1, Set(batch.map(\.id)).count == batch.count,
      places.count == batch.count
    else { return false }
    // Three arrays, not a list of rows: the statement's text is the same for every batch,
    // parsed once (a list of 256 rows took 8 ms a batch to parse and bind).
    return try run(
      c,
      """
      SELECT 1 FROM unnest(?::text[], ?::bigint[], ?::text[]) v(id, folder, name)
      WHERE EXISTS (SELECT 1 FROM asset a WHERE a.id = v.id)
        OR EXISTS (SELECT 1 FROM asset p WHERE p.folderId = v.folder AND p.name = v.name)
      LIMIT 1
      """,
      values: [
        .text(arrayLiteral(batch.map(\.id.rawValue))),
        .text("{" + folders.map(String.init).joined(separator: ",") + "}"),
        .text(arrayLiteral(batch.map(\.name))),
      ]
    ).isEmpty
  }

  /// Writes the rows of `batch`, which ``allNew(_:folders:_:)`` found new (none is a skipped
  /// file any longer), and their change-log entries in the batch's order: one statement.
  private static func insertNew(_ batch: [Asset], folders: [Int64], _ c: PostgresConnection)
    throws
  {
    let columns = CatalogSQL.writtenColumns
    let marks = "(" + Array(repeating: "?", count: columns.count + 2).joined(separator: ", ") + ")"
    let places = Array(
      repeating: "(?::integer, ?::bigint, ?::text, ?::text, ?::text)", count: batch.count)
    var values: [CatalogValue] = []
    for (index, (asset, folder)) in zip(batch, folders).enumerated() {
      values += [.int(Int64(index)), .int(folder), .text(asset.name), .text(asset.id.rawValue)]
      values.append(.text(asset.path))
    }
    for (asset, folder) in zip(batch, folders) {
      values += [.text(asset.id.rawValue), .int(folder)] + CatalogSQL.values(of: asset)
    }
    values += [
      .text(CatalogChange.Kind.inserted.rawValue),
      .double(Double(AssetID.nowMilliseconds()) / 1000),
    ]
    try run(
      c,
      """
      WITH v(i, folder, name, id, path) AS (VALUES \(places.joined(separator: ", "))),
      unskipped AS (DELETE FROM skipped s USING v WHERE s.folderId = v.folder AND s.name = v.name),
      row AS (
        INSERT INTO asset (id, folderId, \(columns.joined(separator: ", ")))
        VALUES \(Array(repeating: marks, count: batch.count).joined(separator: ", "))
        RETURNING id)
      INSERT INTO change (kind, assetId, path, oldPath, at)
      SELECT ?::text, row.id, v.path, NULL, ?::double precision
      FROM row JOIN v ON v.id = row.id ORDER BY v.i
      """, values: values)
  }

  /// Where an asset's row is now (nil: a new asset), and the id its row is to have: its
  /// own, or, when another row at its place holds a file found new by another writer at
  /// once, that row's (nil: the very same file, which changes nothing). A row at its place
  /// that another asset moved over is removed. One read for all of it (a scan asks for every
  /// file).
  private static func place(_ asset: Asset, folderID: Int64, _ c: PostgresConnection) throws
    -> (before: String?, id: AssetID?)
  {
    let rows = try run(
      c,
      """
      SELECT w.path, w.name, p.id, p.hash, p.device, p.inode, p.size, p.mtime, p.ctime
      FROM (SELECT 1) one
      LEFT JOIN (SELECT f.path, a.name FROM asset a JOIN folder f ON f.id = a.folderId
                 WHERE a.id = ?) w ON true
      LEFT JOIN asset p ON p.folderId = ? AND p.name = ?
      """, [asset.id.rawValue, folderID, asset.name])
    guard let row = rows.first else { return (nil, asset.id) }
    let before = row.text(1).map { name in
      let folder = row.text(0) ?? ""
      return folder.isEmpty ? name : folder + "/" + name
    }
    guard let existing = row.text(2), existing != asset.id.rawValue else {
      return (before, asset.id)
    }
    let i = asset.identity
    if before == nil {
      let same =
        row.text(3) == asset.contentHash && row.int(4) == Int64(bitPattern: i.device)
        && row.int(5) == Int64(bitPattern: i.inode) && row.int(6) == i.size
        && row.int(7) == i.modified && row.int(8) == i.changed
      // Another writer's row for the same new file: it stands. For another file at the
      // place: this file is new there, and keeps the id the first writer gave its place.
      return (nil, same ? nil : AssetID(unchecked: existing))
    }
    // A file this catalog knows moved over another: the one it replaced goes.
    try run(c, "DELETE FROM asset WHERE id = ?", [existing])
    return (before, asset.id)
  }

  /// Writes an asset's row under `id` (it is no longer a skipped file) and logs the change,
  /// in one statement.
  private static func write(
    _ asset: Asset, id: AssetID, folderID: Int64, kind: CatalogChange.Kind, from before: String?,
    _ c: PostgresConnection
  ) throws {
    let written = CatalogSQL.values(of: asset)
    let marks = Array(repeating: "?", count: written.count + 2).joined(separator: ", ")
    try run(
      c,
      """
      WITH unskipped AS (DELETE FROM skipped WHERE folderId = ? AND name = ?),
      row AS (
        INSERT INTO asset (id, folderId, \(CatalogSQL.writtenColumns.joined(separator: ", ")))
        VALUES (\(marks))
        ON CONFLICT (id) DO UPDATE SET folderId = excluded.folderId,
          \(CatalogSQL.replacedColumns.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
        RETURNING id)
      INSERT INTO change (kind, assetId, path, oldPath, at)
      SELECT ?::text, id, ?::text, ?::text, ?::double precision FROM row
      """,
      values: [.int(folderID), .text(asset.name), .text(id.rawValue), .int(folderID)] + written
        + [
          .text(kind.rawValue), .text(asset.path),
          kind == .moved ? (before?.catalogValue ?? .null) : .null,
          .double(Double(AssetID.nowMilliseconds()) / 1000),
        ])
  }

  static func location(_ id: AssetID, _ c: PostgresConnection) throws -> String? {
    guard
      let row = try run(
        c, "SELECT f.path, a.name FROM asset a JOIN folder f ON f.id = a.folderId WHERE a.id = ?",
        [id.rawValue]
      ).first
    else { return nil }
    let folder = row.text(0) ?? ""
    let name = row.text(1) ?? ""
    return folder.isEmpty ? name : folder + "/" + name
  }

  static func record(
    _ kind: CatalogChange.Kind, _ id: AssetID, _ path: String, from oldPath: String? = nil,
    _ c: PostgresConnection
  ) throws {
    try run(
      c, "INSERT INTO change (kind, assetId, path, oldPath, at) VALUES (?, ?, ?, ?, ?)",
      [kind.rawValue, id.rawValue, path, oldPath, Double(AssetID.nowMilliseconds()) / 1000])
  }

  // MARK: Fetch

  package func asset(_ id: AssetID) throws -> Asset? {
    try fetchAssets("WHERE a.id = ?", [id.rawValue]).first
  }

  package func asset(atPath path: String) throws -> Asset? {
    let (folder, name) = CatalogSQL.split(path)
    return try fetchAssets("WHERE f.path = ? AND a.name = ?", [folder, name]).first
  }

  package func assets(withIDs ids: [AssetID]) throws -> [Asset] {
    guard !ids.isEmpty else { return [] }
    return try fetchAssets(
      "WHERE a.id = ANY(?::text[])", [Self.arrayLiteral(ids.map(\.rawValue))])
  }

  package func assets(withHash hash: String) throws -> [Asset] {
    try fetchAssets("WHERE a.hash = ? ORDER BY a.id", [hash])
  }

  package func cataloguedContents(_ hashes: [String]) throws -> Set<String> {
    guard !hashes.isEmpty else { return [] }
    return try read { c in
      Set(
        try Self.run(
          c, "SELECT DISTINCT hash FROM asset WHERE hash = ANY(?::text[])",
          [Self.arrayLiteral(hashes)]
        ).compactMap { $0.text(0) })
    }
  }

  package func count(_ query: AssetQuery) throws -> Int {
    if CatalogSQL.isWholeLibrary(query) {
      return try read { c in
        let rows =
          if let month = query.month {
            try Self.run(
              c, "SELECT coalesce(sum(count), 0) FROM monthCount WHERE month = ?", [month])
          } else {
            try Self.run(c, "SELECT coalesce(sum(count), 0) FROM monthCount")
          }
        return Int(rows.first?.int(0) ?? 0)
      }
    }
    let (filter, values) = CatalogSQL.filter(query, Self.dialect)
    return try read { c in
      Int(
        try Self.run(c, "SELECT count(*) FROM asset a \(filter)", values: values).first?.int(0) ?? 0
      )
    }
  }

  package func assets(_ query: AssetQuery, offset: Int, limit: Int) throws -> [Asset] {
    let (filter, values) = CatalogSQL.filter(query, Self.dialect)
    let (order, orderValues) = CatalogSQL.order(query)
    // The page's rows are taken whole from the order's index scan (PostgreSQL reads each
    // row to test the filter anyway), then joined to their folders: not SQLite's form, which
    // picks ids first and reads the rows again by key (1.6-1.9 ms against 1.0 ms a page of
    // 101 at depth 10,000 of 100,000, EXPLAIN ANALYZE).
    return try read { c in
      try Self.run(
        c,
        """
        SELECT \(CatalogSQL.columns)
        FROM (SELECT a.* FROM asset a \(filter) ORDER BY \(order) LIMIT ? OFFSET ?) a
        JOIN folder f ON f.id = a.folderId
        ORDER BY \(order)
        """,
        values: values + orderValues + [.int(Int64(max(0, limit))), .int(Int64(max(0, offset)))]
          + orderValues
      ).map(CatalogSQL.asset)
    }
  }

  package func ids(_ query: AssetQuery) throws -> [AssetID] {
    let (filter, values) = CatalogSQL.filter(query, Self.dialect)
    let (order, orderValues) = CatalogSQL.order(query)
    return try read { c in
      try Self.run(
        c, "SELECT a.id FROM asset a \(filter) ORDER BY \(order)", values: values + orderValues
      )
      .compactMap { $0.text(0).map(AssetID.init(unchecked:)) }
    }
  }

  package func months(_ query: AssetQuery) throws -> [MonthCount] {
    var whole = query
    whole.after = nil
    let direction = query.sort == .date ? "" : " DESC"
    let rows: [PostgresRow]
    if CatalogSQL.isWholeLibrary(whole) {
      rows = try read { c in
        if let month = whole.month {
          try Self.run(c, "SELECT month, count FROM monthCount WHERE month = ?", [month])
        } else {
          try Self.run(c, "SELECT month, count FROM monthCount ORDER BY month\(direction)")
        }
      }
    } else {
      let (filter, values) = CatalogSQL.filter(whole, Self.dialect)
      rows = try read { c in
        try Self.run(
          c,
          "SELECT a.month, count(*) FROM asset a \(filter) GROUP BY a.month ORDER BY a.month\(direction)",
          values: values)
      }
    }
    return rows.map { MonthCount(month: Int($0.int(0) ?? 0), count: Int($0.int(1) ?? 0)) }
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
    try read { c in
      let folders = try Self.run(
        c,
        CatalogSQL.folderAlbums)
      for row in folders {
        let path = row.text(0) ?? ""
        albums.append(
          Album(
            kind: .folder, ref: AlbumRef.folder(path).text,
            title: path.isEmpty ? "(top folder)" : CatalogSQL.split(path).name,
            parent: row.text(3), count: Int(row.int(1) ?? 0),
            poster: row.text(2).map(AssetID.init(unchecked:))))
      }
      let users = try Self.run(
        c,
        CatalogSQL.userAlbums)
      for row in users {
        let title = row.text(0) ?? ""
        albums.append(
          Album(
            kind: .user, ref: AlbumRef.user(title).text, title: title, parent: nil,
            count: Int(row.int(1) ?? 0), poster: row.text(2).map(AssetID.init(unchecked:))))
      }
    }
    return albums
  }

  private static func albumID(_ title: String, _ c: PostgresConnection) throws -> Int64 {
    guard let id = try run(c, "SELECT id FROM album WHERE title = ?", [title]).first?.int(0) else {
      throw CatalogError("no album named \"\(title)\" (darkroom albums lists them)", missing: true)
    }
    return id
  }

  package func createAlbum(_ title: String) throws {
    try SQLiteCatalog.checkTitle(title)
    try write { c in
      guard try Self.run(c, "SELECT id FROM album WHERE title = ?", [title]).isEmpty else {
        throw CatalogError("an album named \"\(title)\" exists already")
      }
      try Self.run(
        c, "INSERT INTO album (title, createdAt) VALUES (?, ?)",
        [title, Double(AssetID.nowMilliseconds()) / 1000])
    }
  }

  package func renameAlbum(_ title: String, to newTitle: String) throws {
    try SQLiteCatalog.checkTitle(newTitle)
    try write { c in
      let id = try Self.albumID(title, c)
      guard try Self.run(c, "SELECT id FROM album WHERE title = ?", [newTitle]).isEmpty else {
        throw CatalogError("an album named \"\(newTitle)\" exists already")
      }
      try Self.run(c, "UPDATE album SET title = ? WHERE id = ?", [newTitle, id])
    }
  }

  package func deleteAlbum(_ title: String) throws {
    try write { c in try Self.run(c, "DELETE FROM album WHERE id = ?", [try Self.albumID(title, c)])
    }
  }

  package func addToAlbum(_ title: String, _ ids: [AssetID]) throws {
    try write { c in
      let album = try Self.albumID(title, c)
      var position =
        try Self.run(c, "SELECT max(position) FROM albumAsset WHERE albumId = ?", [album]).first?
        .int(0) ?? 0
      for id in ids {
        try Self.requireAsset(id, c)
        position += 1
        try Self.run(
          c,
          "INSERT INTO albumAsset (albumId, assetId, position) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
          [album, id.rawValue, position])
      }
    }
  }

  package func removeFromAlbum(_ title: String, _ ids: [AssetID]) throws {
    try write { c in
      let album = try Self.albumID(title, c)
      for id in ids {
        try Self.run(
          c, "DELETE FROM albumAsset WHERE albumId = ? AND assetId = ?", [album, id.rawValue])
      }
    }
  }

  package func setPoster(_ title: String, _ id: AssetID?) throws {
    try write { c in
      let album = try Self.albumID(title, c)
      if let id {
        guard
          !(try Self.run(
            c, "SELECT 1 FROM albumAsset WHERE albumId = ? AND assetId = ?", [album, id.rawValue]
          ).isEmpty)
        else { throw CatalogError("\(id) is not in the album \"\(title)\"") }
      }
      try Self.run(c, "UPDATE album SET posterId = ? WHERE id = ?", [id?.rawValue, album])
    }
  }

  package func setFavourite(_ ids: [AssetID], _ value: Bool) throws {
    try write { c in
      for id in ids {
        try Self.requireAsset(id, c)
        try Self.run(c, "UPDATE asset SET favourite = ? WHERE id = ?", [value, id.rawValue])
        if let path = try Self.location(id, c) { try Self.record(.changed, id, path, c) }
      }
    }
  }

  package func markDamaged(_ damage: AssetDamage, ifStill asset: Asset) throws -> Bool {
    try write { c in
      let marked = try Self.run(
        c, CatalogSQL.markDamaged + " RETURNING id",
        values: CatalogSQL.markDamagedValues(damage, asset))
      guard !marked.isEmpty else { return false }
      if let path = try Self.location(asset.id, c) {
        try Self.record(.changed, asset.id, path, c)
      }
      return true
    }
  }

  private static func requireAsset(_ id: AssetID, _ c: PostgresConnection) throws {
    guard !(try run(c, "SELECT 1 FROM asset WHERE id = ?", [id.rawValue]).isEmpty) else {
      throw CatalogError("\(id): no such asset in this library", missing: true)
    }
  }

  package func maintain() throws {
    try read { c in try c.execute("ANALYZE") }
  }

  /// (A first scan into PostgreSQL keeps its indexes row by row: not measured there.)
  package func deferIndexes() throws -> Bool { false }
  package func restoreIndexes() throws {}

  /// What PostgreSQL's constraints cannot hold by themselves: the month counts the trigger
  /// keeps against the rows (its foreign keys and types hold by construction; `amcheck`
  /// is the tool for its files).
  package func check() throws -> [String] {
    try read { c in
      try Self.run(
        c,
        """
        SELECT coalesce(r.month, k.month), coalesce(r.n, 0), coalesce(k.count, 0)
        FROM (SELECT month, count(*) AS n FROM asset WHERE trashedAt IS NULL AND hidden = 0
              GROUP BY month) r
        FULL JOIN monthCount k ON k.month = r.month
        WHERE coalesce(r.n, 0) != coalesce(k.count, 0)
        ORDER BY 1
        """
      ).map { row in
        "month \(row.int(0) ?? 0) holds \(row.int(1) ?? 0) visible assets, its kept count says \(row.int(2) ?? 0)"
      }
    }
  }
}

/// A row of text cells from PostgreSQL, read as the shared SQL's types.
struct PostgresRow: CatalogRow {
  var cells: [String?]
  init(_ cells: [String?]) { self.cells = cells }
  var count: Int { cells.count }
  func text(_ index: Int) -> String? { index < cells.count ? cells[index] : nil }
  func int(_ index: Int) -> Int64? { text(index).flatMap { Int64($0) } }
  func double(_ index: Int) -> Double? { text(index).flatMap { Double($0) } }
}
