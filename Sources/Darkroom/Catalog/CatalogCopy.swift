import FoundationEssentials

/// A catalog's rows, table by table, as ``CatalogCopy`` moves them between databases.
protocol CatalogTables: Catalog {
  /// Every row of `table` (the `columns` given, in `order`).
  func rows(of table: CatalogCopy.Table) throws -> [[CatalogValue]]
  /// How many rows the tables that make a catalog non-empty hold.
  func rowCount() throws -> Int
  /// Writes the rows of every table, in the order given, in one transaction; the catalog's
  /// own counters (ids to come, the change log's next number) then follow them.
  func load(_ tables: [(CatalogCopy.Table, [[CatalogValue]])]) throws
}

/// Moves a catalog between SQLite and PostgreSQL, losing nothing: ids, folders, albums in
/// their order with their posters and dates, favourites, the trash, skipped files,
/// fingerprints, the pairs kept apart, jobs and their items, and the change log with its
/// numbers (a client that read it up to n goes on from n). The month counts are made again by
/// the target's triggers as its rows come.
enum CatalogCopy {
  struct Table: Sendable {
    var name: String
    var columns: [String]
    var order: String
  }

  /// The tables in an order their references allow (a folder's parent before it, assets
  /// before what names them).
  static let tables = [
    Table(name: "folder", columns: ["id", "path", "parentId"], order: "id"),
    Table(
      name: "asset", columns: ["id", "folderId"] + CatalogSQL.writtenColumns + ["trashedFrom"],
      order: "id"),
    Table(
      name: "skipped",
      columns: [
        "folderId", "name", "device", "inode", "size", "mtime", "ctime", "reason", "reader",
      ],
      order: "folderId, name"),
    Table(name: "album", columns: ["id", "title", "posterId", "createdAt"], order: "id"),
    Table(
      name: "albumAsset", columns: ["albumId", "assetId", "position"], order: "albumId, assetId"),
    Table(
      name: "change", columns: ["seq", "kind", "assetId", "path", "oldPath", "at"], order: "seq"),
    Table(
      name: "fingerprint", columns: ["assetId", "contentHash", "value", "centre"],
      order: "assetId"),
    Table(name: "distinctPair", columns: ["a", "b"], order: "a, b"),
    Table(
      name: "job",
      columns: ["id", "name", "action", "ids", "state", "owner", "startedAt", "endedAt"],
      order: "id"),
    Table(name: "jobItem", columns: ["jobId", "assetId", "seq", "error"], order: "jobId, seq"),
  ]

  /// Copies every row of `source` into `target`, which must hold none.
  static func copy(from source: any CatalogTables, to target: any CatalogTables) throws
    -> [CatalogCopyReport.TableRows]
  {
    let present = try target.rowCount()
    guard present == 0 else {
      throw CatalogError(
        "already holds a catalog (\(present) rows of folders, assets, albums, jobs and changes): copy into an empty one"
      )
    }
    let all = try tables.map { table in (table, try source.rows(of: table)) }
    try target.load(all)
    return all.map { .init(table: $0.0.name, rows: $0.1.count) }
  }
}

/// What ``Library/copyCatalog(from:to:)`` copied.
package struct CatalogCopyReport: Sendable, Codable, Equatable {
  /// The catalogs, as given (a URL without its password).
  package var from: String
  package var to: String
  /// Rows copied, table by table, in the order they were written.
  package var tables: [TableRows]

  package struct TableRows: Sendable, Codable, Equatable {
    package var table: String
    package var rows: Int
  }
}
