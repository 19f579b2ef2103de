import FoundationEssentials
import GRDB

extension SQLiteCatalog {
  /// An asset's path, relative to the root; nil if there is no such asset.
  static func location(_ id: AssetID, _ db: Database) throws -> String? {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql:
            "SELECT f.path, a.name FROM asset a JOIN folder f ON f.id = a.folderId WHERE a.id = ?"),
        arguments: [id.rawValue])
    else { return nil }
    let folder: String = row[0]
    let name: String = row[1]
    return folder.isEmpty ? name : folder + "/" + name
  }

  /// Appends to the change log, in the transaction that made the change.
  static func record(
    _ kind: CatalogChange.Kind, _ id: AssetID, _ path: String, from oldPath: String? = nil,
    _ db: Database
  ) throws {
    try db.cachedStatement(
      sql: "INSERT INTO change (kind, assetId, path, oldPath, at) VALUES (?, ?, ?, ?, ?)"
    ).execute(arguments: [
      kind.rawValue, id.rawValue, path, oldPath, Double(AssetID.nowMilliseconds()) / 1000,
    ])
  }

  // MARK: Change log

  package func changes(since sequence: Int64, limit: Int) throws -> [CatalogChange] {
    try pool.read { db in
      try Row.fetchAll(
        db,
        sql: """
          SELECT seq, kind, assetId, path, oldPath, at FROM change WHERE seq > ?
          ORDER BY seq LIMIT ?
          """, arguments: [sequence, limit]
      ).map { row in
        CatalogChange(
          sequence: row[0], kind: CatalogChange.Kind(rawValue: row[1]) ?? .changed,
          id: AssetID(unchecked: row[2]), path: row[3], oldPath: row[4], at: row[5])
      }
    }
  }

  package func lastChange() throws -> Int64 {
    try pool.read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM change") ?? 0 }
  }

  // MARK: Trash

  package func move(_ id: AssetID, to path: String, trashedAt: Double?) throws {
    try pool.write { db in
      guard let before = try Self.location(id, db),
        let left = try Int64.fetchOne(
          db.cachedStatement(sql: "SELECT folderId FROM asset WHERE id = ?"),
          arguments: [id.rawValue])
      else {
        throw CatalogError("\(id): no such asset in this library", missing: true)
      }
      var known: [String: Int64] = [:]
      let slash = path.lastIndex(of: "/")
      let folder = slash.map { String(path[..<$0]) } ?? ""
      let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
      let folderID = try Self.folderID(folder, db, &known)
      try db.cachedStatement(
        sql: """
          UPDATE asset SET folderId = ?, name = ?, trashedAt = ?,
            trashedFrom = CASE WHEN ? IS NULL THEN NULL ELSE coalesce(trashedFrom, ?) END
          WHERE id = ?
          """
      ).execute(arguments: [folderID, name, trashedAt, trashedAt, before, id.rawValue])
      try Self.record(.moved, id, path, from: before, db)
      // Only the folder left behind (and its parents) can have become empty: looking at
      // every folder would make trashing n assets cost n² (each has a trash folder).
      try Self.removeIfEmpty(left, db)
    }
  }

  // MARK: Duplicates

  package func exactDuplicates() throws -> [[AssetID]] {
    try pool.read { db in
      let rows = try Row.fetchAll(
        db,
        sql: CatalogSQL.exactDuplicates)
      var groups: [String: [AssetID]] = [:]
      for row in rows { groups[row[0], default: []].append(AssetID(unchecked: row[1])) }
      return groups.values.map { $0.sorted() }.sorted { $0[0] < $1[0] }
    }
  }

  package func places(in country: String?) throws -> [PlaceCount] {
    try pool.read { db in
      try Row.fetchAll(
        db, sql: CatalogSQL.places(inCountry: country != nil),
        arguments: country.map { [$0] } ?? []
      ).map { row in
        PlaceCount(
          name: row[0], region: row[1], country: row[2], count: row[3],
          poster: (row[4] as String?).map(AssetID.init(unchecked:)))
      }
    }
  }

  package func positions(south: Double, west: Double, north: Double, east: Double) throws
    -> [(id: AssetID, latitude: Double, longitude: Double, showable: Bool)]
  {
    try pool.read { db in
      let rows = try Row.fetchCursor(
        db, sql: CatalogSQL.positions(acrossAntimeridian: west > east),
        arguments: [south, north, west, east])
      var found: [(id: AssetID, latitude: Double, longitude: Double, showable: Bool)] = []
      while let row = try rows.next() {
        found.append((AssetID(unchecked: row[0]), row[1], row[2], (row[3] as Int64) != 0))
      }
      return found
    }
  }

  package func fingerprints() throws -> [Fingerprint] {
    try pool.read { db in
      // A cursor, not an array of rows: a million rows are read one at a time.
      let rows = try Row.fetchCursor(
        db,
        sql: CatalogSQL.fingerprints)
      var prints: [Fingerprint] = []
      while let row = try rows.next() {
        prints.append(
          Fingerprint(
            id: AssetID(unchecked: row[0]), contentHash: row[1],
            value: (row[2] as Int64?).map { UInt64(bitPattern: $0) },
            centre: (row[3] as Int64?).map { UInt64(bitPattern: $0) }, width: row[4],
            height: row[5]))
      }
      return prints
    }
  }

  package func save(_ fingerprints: [Fingerprint]) throws {
    try pool.write { db in
      for print in fingerprints {
        guard let value = print.value, let centre = print.centre else { continue }
        try db.cachedStatement(
          sql: """
            INSERT OR REPLACE INTO fingerprint (assetId, contentHash, value, centre)
            SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM asset WHERE id = ?)
            """
        ).execute(arguments: [
          print.id.rawValue, print.contentHash, Int64(bitPattern: value),
          Int64(bitPattern: centre), print.id.rawValue,
        ])
      }
    }
  }

  package func distinctPairs() throws -> [(AssetID, AssetID)] {
    try pool.read { db in
      try Row.fetchAll(db, sql: "SELECT a, b FROM distinctPair").map {
        (AssetID(unchecked: $0[0]), AssetID(unchecked: $0[1]))
      }
    }
  }

  package func markDistinct(_ ids: [AssetID]) throws {
    try pool.write { db in
      for id in ids {
        guard
          try Bool.fetchOne(db, sql: "SELECT 1 FROM asset WHERE id = ?", arguments: [id.rawValue])
            != nil
        else { throw CatalogError("\(id): no such asset in this library", missing: true) }
      }
      let sorted = ids.sorted()
      for (i, a) in sorted.enumerated() {
        for b in sorted[(i + 1)...] where a != b {
          try db.cachedStatement(sql: "INSERT OR IGNORE INTO distinctPair (a, b) VALUES (?, ?)")
            .execute(arguments: [a.rawValue, b.rawValue])
        }
      }
    }
  }
}

/// One entry of a catalog's change log: what happened to an asset, in the order it
/// happened, numbered so that a client that was away can ask for what it missed.
package struct CatalogChange: Sendable, Codable, Equatable {
  package enum Kind: String, Sendable, Codable {
    case inserted, changed, removed, moved
  }
  /// Increasing, never reused (in PostgreSQL, a rolled-back write's numbers are skipped).
  package var sequence: Int64
  package var kind: Kind
  package var id: AssetID
  /// The asset's path (relative to the root) after the change; for `removed`, before it.
  package var path: String
  /// For `moved`, where it was.
  package var oldPath: String?
  /// When, in seconds since 1970.
  package var at: Double
}

/// A photo's perceptual fingerprint, for the content it was made from (nil: not made yet):
/// the hashes of its whole frame and of its central quarter (``PerceptualHash``).
package struct Fingerprint: Sendable, Equatable {
  package var id: AssetID
  package var contentHash: String
  package var value: UInt64?
  package var centre: UInt64?
  /// The photo's upright size (0 where unknown): look-alikes have the same shape.
  package var width = 0
  package var height = 0

  package init(
    id: AssetID, contentHash: String, value: UInt64?, centre: UInt64?, width: Int = 0,
    height: Int = 0
  ) {
    (self.id, self.contentHash, self.value, self.centre) = (id, contentHash, value, centre)
    (self.width, self.height) = (width, height)
  }
}
