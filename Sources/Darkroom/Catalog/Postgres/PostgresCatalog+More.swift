import FoundationEssentials

/// The change log, the trash, duplicates and jobs, as ``SQLiteCatalog``'s extensions keep them.
extension PostgresCatalog {
  // MARK: Change log

  package func changes(since sequence: Int64, limit: Int) throws -> [CatalogChange] {
    try read { c in
      try Self.run(
        c,
        "SELECT seq, kind, assetId, path, oldPath, at FROM change WHERE seq > ? ORDER BY seq LIMIT ?",
        [sequence, limit]
      ).map { row in
        CatalogChange(
          sequence: row.int(0) ?? 0,
          kind: row.text(1).flatMap(CatalogChange.Kind.init(rawValue:)) ?? .changed,
          id: AssetID(unchecked: row.text(2) ?? ""), path: row.text(3) ?? "",
          oldPath: row.text(4), at: row.double(5) ?? 0)
      }
    }
  }

  package func lastChange() throws -> Int64 {
    try read { c in try Self.run(c, "SELECT coalesce(max(seq), 0) FROM change").first?.int(0) ?? 0 }
  }

  // MARK: Trash

  package func move(_ id: AssetID, to path: String, trashedAt: Double?) throws {
    try write { c in
      guard let before = try Self.location(id, c),
        let left = try Self.run(c, "SELECT folderId FROM asset WHERE id = ?", [id.rawValue]).first?
          .int(0)
      else {
        throw CatalogError("\(id): no such asset in this library", missing: true)
      }
      var known: [String: Int64] = [:]
      let (folder, name) = CatalogSQL.split(path)
      let folderID = try Self.folderID(folder, c, &known)
      try Self.run(
        c,
        """
        UPDATE asset SET folderId = ?, name = ?, trashedAt = ?::double precision,
          trashedFrom = CASE WHEN ?::double precision IS NULL THEN NULL
            ELSE coalesce(trashedFrom, ?) END
        WHERE id = ?
        """, [folderID, name, trashedAt, trashedAt, before, id.rawValue])
      try Self.record(.moved, id, path, from: before, c)
      try Self.removeIfEmpty(left, c)
    }
  }

  // MARK: Duplicates

  package func exactDuplicates() throws -> [[AssetID]] {
    let rows = try read { c in
      try Self.run(
        c,
        CatalogSQL.exactDuplicates)
    }
    var groups: [String: [AssetID]] = [:]
    for row in rows {
      groups[row.text(0) ?? "", default: []].append(AssetID(unchecked: row.text(1) ?? ""))
    }
    return groups.values.map { $0.sorted() }.sorted { $0[0] < $1[0] }
  }

  package func places(in country: String?) throws -> [PlaceCount] {
    try read { c in
      try Self.run(
        c, CatalogSQL.places(inCountry: country != nil), country.map { [$0] } ?? []
      ).map { row in
        PlaceCount(
          name: row.text(0) ?? "", region: row.text(1), country: row.text(2) ?? "",
          count: Int(row.int(3) ?? 0), poster: row.text(4).map(AssetID.init(unchecked:)))
      }
    }
  }

  package func positions(south: Double, west: Double, north: Double, east: Double) throws
    -> [(id: AssetID, latitude: Double, longitude: Double, showable: Bool)]
  {
    try read { c in
      try Self.run(
        c, CatalogSQL.positions(acrossAntimeridian: west > east), [south, north, west, east]
      ).map { row in
        (
          AssetID(unchecked: row.text(0) ?? ""), row.double(1) ?? 0, row.double(2) ?? 0,
          (row.int(3) ?? 0) != 0
        )
      }
    }
  }

  package func fingerprints() throws -> [Fingerprint] {
    try read { c in
      try Self.run(
        c,
        CatalogSQL.fingerprints
      ).map { row in
        Fingerprint(
          id: AssetID(unchecked: row.text(0) ?? ""), contentHash: row.text(1) ?? "",
          value: row.int(2).map { UInt64(bitPattern: $0) },
          centre: row.int(3).map { UInt64(bitPattern: $0) },
          width: Int(truncatingIfNeeded: row.int(4) ?? 0),
          height: Int(truncatingIfNeeded: row.int(5) ?? 0))
      }
    }
  }

  package func save(_ fingerprints: [Fingerprint]) throws {
    try write { c in
      for print in fingerprints {
        guard let value = print.value, let centre = print.centre else { continue }
        try Self.run(
          c,
          """
          INSERT INTO fingerprint (assetId, contentHash, value, centre)
          SELECT ?::text, ?::text, ?::bigint, ?::bigint WHERE EXISTS (SELECT 1 FROM asset WHERE id = ?)
          ON CONFLICT (assetId) DO UPDATE SET contentHash = excluded.contentHash,
            value = excluded.value, centre = excluded.centre
          """,
          [
            print.id.rawValue, print.contentHash, Int64(bitPattern: value),
            Int64(bitPattern: centre), print.id.rawValue,
          ])
      }
    }
  }

  package func distinctPairs() throws -> [(AssetID, AssetID)] {
    try read { c in
      try Self.run(c, "SELECT a, b FROM distinctPair").map {
        (AssetID(unchecked: $0.text(0) ?? ""), AssetID(unchecked: $0.text(1) ?? ""))
      }
    }
  }

  package func markDistinct(_ ids: [AssetID]) throws {
    try write { c in
      for id in ids {
        guard !(try Self.run(c, "SELECT 1 FROM asset WHERE id = ?", [id.rawValue]).isEmpty) else {
          throw CatalogError("\(id): no such asset in this library", missing: true)
        }
      }
      let sorted = ids.sorted()
      for (i, a) in sorted.enumerated() {
        for b in sorted[(i + 1)...] where a != b {
          try Self.run(
            c, "INSERT INTO distinctPair (a, b) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [a.rawValue, b.rawValue])
        }
      }
    }
  }

  // MARK: Jobs

  package func saveJob(_ job: StoredJob) throws {
    let ids = job.ids.map(\.rawValue).joined(separator: " ")
    try write { c in
      try Self.run(
        c,
        """
        INSERT INTO job (id, name, action, ids, state, owner, startedAt, endedAt)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET state = excluded.state, owner = excluded.owner,
          endedAt = excluded.endedAt
        """,
        [job.id, job.name, job.action, ids, job.state, job.owner, job.started, job.ended])
    }
  }

  package func claimJob(_ id: String, state: String, owner: String, by newOwner: String) throws
    -> Bool
  {
    try write { c in
      try c.query(
        Self.numbered(
          "UPDATE job SET state = 'running', owner = ? WHERE id = ? AND state = ? AND owner = ?"),
        [.text(newOwner), .text(id), .text(state), .text(owner)]
      ).affected == 1
    }
  }

  package func forgetJobs(endedBefore time: Double, keeping: Int) throws {
    try write { c in
      try Self.run(
        c,
        CatalogSQL.forgetJobs, [time, keeping])
    }
  }

  package func recordJobItem(_ job: String, _ id: AssetID, error: String?) throws {
    try write(announce: false) { c in
      try Self.run(
        c,
        """
        INSERT INTO jobItem (jobId, assetId, seq, error) VALUES (?, ?,
          (SELECT coalesce(max(seq), -1) + 1 FROM jobItem WHERE jobId = ?), ?)
        ON CONFLICT (jobId, assetId) DO UPDATE SET seq = excluded.seq, error = excluded.error
        """, [job, id.rawValue, job, error])
    }
  }

  package func job(_ id: String) throws -> StoredJob? {
    try read { c in
      guard
        let row = try Self.run(
          c, "SELECT name, action, ids, state, owner, startedAt, endedAt FROM job WHERE id = ?",
          [id]
        ).first
      else { return nil }
      var job = StoredJob(
        id: id, name: row.text(0) ?? "", action: row.text(1) ?? "",
        ids: (row.text(2) ?? "").split(separator: " ").map { AssetID(unchecked: String($0)) },
        state: row.text(3) ?? "", owner: row.text(4) ?? "", started: row.double(5) ?? 0,
        ended: row.double(6))
      for item in try Self.run(
        c, "SELECT assetId, error FROM jobItem WHERE jobId = ? ORDER BY seq", [id])
      {
        let asset = AssetID(unchecked: item.text(0) ?? "")
        if let error = item.text(1) {
          job.failures.append(.init(id: asset, error: error))
        } else {
          job.done.insert(asset)
        }
      }
      return job
    }
  }
}

extension PostgresCatalog: CatalogTables {
  func rows(of table: CatalogCopy.Table) throws -> [[CatalogValue]] {
    try read { c in
      try c.query(
        "SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name) ORDER BY \(table.order)"
      ).values
    }
  }

  func rowCount() throws -> Int {
    try read { c in
      Int(
        try Self.run(
          c,
          """
          SELECT (SELECT count(*) FROM folder) + (SELECT count(*) FROM asset)
            + (SELECT count(*) FROM album) + (SELECT count(*) FROM job)
            + (SELECT count(*) FROM change)
          """
        ).first?.int(0) ?? 0)
    }
  }

  func load(_ tables: [(CatalogCopy.Table, [[CatalogValue]])]) throws {
    try write { c in
      for (table, rows) in tables {
        // Many rows a statement (a round trip each, not one a row); PostgreSQL takes at most
        // 65,535 parameters.
        let perStatement = max(1, 30_000 / table.columns.count)
        for start in stride(from: 0, to: rows.count, by: perStatement) {
          let chunk = rows[start..<min(rows.count, start + perStatement)]
          let row =
            "(" + Array(repeating: "?", count: table.columns.count).joined(separator: ", ") + ")"
          try Self.run(
            c,
            "INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) VALUES "
              + Array(repeating: row, count: chunk.count).joined(separator: ", "),
            values: chunk.flatMap { $0 })
        }
      }
      // The ids and numbers to come follow the copied ones.
      for (table, column) in [("folder", "id"), ("album", "id"), ("change", "seq")] {
        try Self.run(
          c,
          "SELECT setval(pg_get_serial_sequence('\(table)', '\(column)'), coalesce(max(\(column)), 0) + 1, false) FROM \(table)"
        )
      }
    }
  }
}
