import CPostgres
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// One connection to PostgreSQL through libpq, PostgreSQL's own client library: synchronous,
/// as ``Catalog`` is, so a call waits on its socket in the thread that made it and no event
/// loop is bridged. Not safe to share between threads at once: ``PostgresPool`` lends each
/// to one caller at a time (hence `@unchecked Sendable`: it moves between threads, never
/// shared by two at once). The `PGconn` is owned here and finished in `deinit`; a result's
/// `PGresult` never leaves the call that made it (`take` copies its cells and clears it).
final class PostgresConnection: @unchecked Sendable {
  private let connection: OpaquePointer

  /// Connects to `url` (`postgresql://user:password@host:port/database?...`).
  ///
  /// - Throws: ``PostgresError`` with libpq's reason on one line (wrong password, no server).
  init(url: String) throws(PostgresError) {
    // The URL's own settings win over these defaults, which come before it.
    let keys = ["connect_timeout", "application_name", "dbname"]
    let values = ["10", "darkroom", url]
    var made: OpaquePointer?
    withCStrings(keys, terminated: true) { keyPointers in
      withCStrings(values, terminated: true) { valuePointers in
        made = PQconnectdbParams(keyPointers, valuePointers, 1)
      }
    }
    guard let made else { throw PostgresError("out of memory connecting", connectionLost: true) }
    guard PQstatus(made) == CONNECTION_OK else {
      // libpq quotes what it could not parse (a password's bad percent-escape among them).
      let reason = PostgresCatalog.scrubbed(
        Self.oneLine(String(cString: PQerrorMessage(made))), url: url)
      PQfinish(made)
      throw PostgresError(reason, connectionLost: true)
    }
    connection = made
    // Replies with NOTICEs (CREATE ... IF NOT EXISTS) would be printed on stderr by libpq.
    PQsetNoticeProcessor(connection, { _, _ in }, nil)
    // Statements are parsed once (prepared) but planned for each call's values: a generic
    // plan, which the server settles on after five calls, made while a first scan's tables
    // were nearly empty read the whole table later (`hash = ANY(...)`: 90 ms a call at
    // 100,000 rows). For this session only; PGOPTIONS and the URL set the rest as before.
    try execute("SET plan_cache_mode = force_custom_plan")
  }

  deinit { PQfinish(connection) }

  /// Whether the connection broke (the server went away): a broken one is not reused.
  var isBroken: Bool { PQstatus(connection) != CONNECTION_OK }

  /// Runs one statement with `$1`-style parameters (sent as text; the server infers their
  /// types from where they stand) and returns its rows, each cell as text (nil for NULL).
  ///
  /// - Throws: ``PostgresError`` with the server's message and SQLSTATE.
  @discardableResult
  func query(_ sql: String, _ parameters: [CatalogValue] = []) throws(PostgresError) -> PostgresRows
  {
    let texts = parameters.map(\.postgresText)
    let name = try prepared(sql, parameters: texts.count)
    var result: OpaquePointer?
    withCStrings(texts) { pointers in
      result =
        if let name {
          PQexecPrepared(connection, name, Int32(texts.count), pointers, nil, nil, 0)
        } else {
          PQexecParams(connection, sql, Int32(texts.count), nil, pointers, nil, nil, 0)
        }
    }
    return try take(result)
  }

  /// The statements this connection has prepared, by their text: parsed once, not for every
  /// call (a scan runs the same few statements a hundred thousand times).
  private var statements: [String: String] = [:]
  /// Statements longer than this (the many-row inserts of a copy, long IN lists) are not
  /// kept, nor more than ``keptStatements``: their texts vary and would pile up.
  static let longestKept = 4096
  static let keptStatements = 256

  /// The name `sql` is prepared under on this connection, preparing it first; nil for one
  /// that is not kept.
  private func prepared(_ sql: String, parameters: Int) throws(PostgresError) -> String? {
    if let name = statements[sql] { return name }
    guard sql.utf8.count <= Self.longestKept, statements.count < Self.keptStatements else {
      return nil
    }
    let name = "s\(statements.count)"
    try take(PQprepare(connection, name, sql, Int32(parameters), nil))
    statements[sql] = name
    return name
  }

  /// Runs statements separated by semicolons, without parameters (a migration).
  func execute(_ sql: String) throws(PostgresError) {
    try take(PQexec(connection, sql))
  }

  /// Waits up to `milliseconds` for a notification on a channel this connection `LISTEN`s
  /// on; true if one (or more) came. Each is freed here.
  ///
  /// - Throws: ``PostgresError`` when the connection broke.
  func waitForNotification(milliseconds: Int32) throws(PostgresError) -> Bool {
    if drainNotifications() { return true }
    let socket = PQsocket(connection)
    guard socket >= 0 else { throw PostgresError("the connection is closed", connectionLost: true) }
    var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    if poll(&descriptor, 1, milliseconds) > 0 {
      guard PQconsumeInput(connection) == 1 else {
        throw PostgresError(
          Self.oneLine(String(cString: PQerrorMessage(connection))), connectionLost: true)
      }
    }
    return drainNotifications()
  }

  private func drainNotifications() -> Bool {
    var any = false
    while let notification = PQnotifies(connection) {
      PQfreemem(notification)
      any = true
    }
    return any
  }

  /// Copies a result's cells and clears it; throws for an error result.
  @discardableResult
  private func take(_ result: OpaquePointer?) throws(PostgresError) -> PostgresRows {
    guard let result else {
      throw PostgresError(
        Self.oneLine(String(cString: PQerrorMessage(connection))), connectionLost: isBroken)
    }
    defer { PQclear(result) }
    let status = PQresultStatus(result)
    guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
      let message = Self.oneLine(String(cString: PQresultErrorMessage(result)))
      let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
      throw PostgresError(
        message.isEmpty ? "the server's reply was \(status)" : message, state: state,
        connectionLost: isBroken)
    }
    let rowCount = Int(PQntuples(result))
    let columnCount = Int(PQnfields(result))
    var rows: [[String?]] = []
    rows.reserveCapacity(rowCount)
    for row in 0..<rowCount {
      var cells: [String?] = []
      cells.reserveCapacity(columnCount)
      for column in 0..<columnCount {
        if PQgetisnull(result, Int32(row), Int32(column)) != 0 {
          cells.append(nil)
        } else {
          cells.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
        }
      }
      rows.append(cells)
    }
    let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
    let types = (0..<columnCount).map { PQftype(result, Int32($0)) }
    return PostgresRows(rows: rows, affected: affected, types: types)
  }

  /// libpq's messages span lines ("ERROR:  ...\nDETAIL: ..."): one line, for a log or a
  /// terminal.
  static func oneLine(_ message: String) -> String {
    message.split(whereSeparator: \.isWhitespace).joined(separator: " ")
  }
}

/// Runs `body` with a C string (or NULL) for each of `strings`, and a NULL after them when
/// `terminated` (libpq's keyword lists); the copies are freed here, after it.
private func withCStrings(
  _ strings: [String?], terminated: Bool = false,
  _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> Void
) {
  let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
  defer { for copy in copies { free(copy) } }
  var pointers = copies.map { $0.map { UnsafePointer($0) } }
  if terminated { pointers.append(nil) }
  pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

/// A statement's rows, as text cells.
struct PostgresRows {
  var rows: [[String?]]
  /// How many rows an INSERT, UPDATE or DELETE touched.
  var affected: Int
  /// Each column's type (its OID in `pg_type`).
  var types: [UInt32] = []

  /// The rows as typed values: integers and floating-point numbers as such, all else text.
  var values: [[CatalogValue]] {
    rows.map { cells in
      cells.enumerated().map { column, cell in
        guard let cell else { return .null }
        switch types[column] {
        // int8, int2, int4; float4, float8.
        case 20, 21, 23: return Int64(cell).map(CatalogValue.int) ?? .text(cell)
        case 700, 701: return Double(cell).map(CatalogValue.double) ?? .text(cell)
        default: return .text(cell)
        }
      }
    }
  }
}

/// An error from PostgreSQL or from reaching it, on one line.
package struct PostgresError: Error, Sendable, CustomStringConvertible {
  package var message: String
  /// The server's SQLSTATE (23505: a unique constraint), when it sent one.
  package var state: String?
  /// The connection broke (or never was): the server is down, restarting or unreachable.
  package var connectionLost: Bool

  init(_ message: String, state: String? = nil, connectionLost: Bool = false) {
    (self.message, self.state, self.connectionLost) = (message, state, connectionLost)
  }

  package var description: String { message }
}
