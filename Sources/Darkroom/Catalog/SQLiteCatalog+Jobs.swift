import FoundationEssentials
import GRDB

/// Jobs over assets, kept so that a restart finds them (see ``StoredJob``).
extension SQLiteCatalog {
  static func registerJobs(_ migrator: inout DatabaseMigrator) {
    migrator.registerMigration("v2 jobs") { db in
      try db.execute(
        sql: """
          CREATE TABLE job (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL,
            action TEXT NOT NULL,
            ids TEXT NOT NULL,
            state TEXT NOT NULL,
            owner TEXT NOT NULL,
            startedAt REAL NOT NULL,
            endedAt REAL);
          CREATE TABLE jobItem (
            jobId TEXT NOT NULL REFERENCES job(id) ON DELETE CASCADE,
            assetId TEXT NOT NULL,
            seq INTEGER NOT NULL,
            error TEXT,
            PRIMARY KEY (jobId, assetId));
          CREATE INDEX jobItem_seq ON jobItem(jobId, seq);
          CREATE INDEX job_ended ON job(endedAt) WHERE endedAt IS NOT NULL;
          """)
    }
  }

  package func saveJob(_ job: StoredJob) throws {
    let ids = job.ids.map(\.rawValue).joined(separator: " ")
    try pool.write { db in
      try db.execute(
        sql: """
          INSERT INTO job (id, name, action, ids, state, owner, startedAt, endedAt)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (id) DO UPDATE SET state = excluded.state, owner = excluded.owner,
            endedAt = excluded.endedAt
          """,
        arguments: [
          job.id, job.name, job.action, ids, job.state, job.owner, job.started, job.ended,
        ])
    }
  }

  package func claimJob(_ id: String, state: String, owner: String, by newOwner: String) throws
    -> Bool
  {
    try pool.write { db in
      try db.execute(
        sql: "UPDATE job SET state = 'running', owner = ? WHERE id = ? AND state = ? AND owner = ?",
        arguments: [newOwner, id, state, owner])
      return db.changesCount == 1
    }
  }

  package func forgetJobs(endedBefore time: Double, keeping: Int) throws {
    try pool.write { db in
      try db.execute(
        sql: CatalogSQL.forgetJobs, arguments: [time, keeping])
    }
  }

  package func recordJobItem(_ job: String, _ id: AssetID, error: String?) throws {
    try pool.write { db in
      try db.cachedStatement(
        sql: """
          INSERT OR REPLACE INTO jobItem (jobId, assetId, seq, error) VALUES (?, ?,
            (SELECT COALESCE(max(seq), -1) + 1 FROM jobItem WHERE jobId = ?), ?)
          """
      ).execute(arguments: [job, id.rawValue, job, error])
    }
  }

  package func job(_ id: String) throws -> StoredJob? {
    try pool.read { db in
      guard
        let row = try Row.fetchOne(
          db,
          sql: "SELECT name, action, ids, state, owner, startedAt, endedAt FROM job WHERE id = ?",
          arguments: [id])
      else { return nil }
      let ids: String = row[2]
      var job = StoredJob(
        id: id, name: row[0], action: row[1],
        ids: ids.split(separator: " ").map { AssetID(unchecked: String($0)) }, state: row[3],
        owner: row[4], started: row[5], ended: row[6])
      for item in try Row.fetchAll(
        db, sql: "SELECT assetId, error FROM jobItem WHERE jobId = ? ORDER BY seq",
        arguments: [id])
      {
        let asset = AssetID(unchecked: item[0])
        if let error: String = item[1] {
          job.failures.append(.init(id: asset, error: error))
        } else {
          job.done.insert(asset)
        }
      }
      return job
    }
  }
}
