import Dispatch
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Connections to one PostgreSQL catalog, each lent to one caller at a time: a call takes an
/// idle one (or opens one), and gives it back unless it broke. As many are open as calls run
/// at once; at most ``keptIdle`` wait between calls.
final class PostgresPool: Sendable {
  let url: String
  private let idle = Locked<[PostgresConnection]>([])
  static let keptIdle = 8

  init(url: String) { self.url = url }

  func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
    let connection = try idle.withLock { $0.popLast() } ?? PostgresConnection(url: url)
    defer {
      if !connection.isBroken {
        idle.withLock { if $0.count < Self.keptIdle { $0.append(connection) } }
      }
    }
    return try body(connection)
  }

  /// Forgets the idle connections (after one broke: the server went away, so did they).
  func dropIdle() { idle.withLock { $0.removeAll() } }
}

/// A connection that `LISTEN`s on a channel and rings a bell for each notification: how a
/// process learns at once of another's commit. It reconnects (once a second) while the
/// server is away, and rings when it is back, since what happened meanwhile is unknown.
final class PostgresListener: Sendable {
  init(pool: PostgresPool, channel: String, bell: CommitBell) {
    let url = pool.url
    DispatchQueue(label: "darkroom.catalog.listen").async {
      var connection: PostgresConnection?
      while true {
        do {
          if connection == nil {
            let made = try PostgresConnection(url: url)
            try made.execute("LISTEN \(channel)")
            connection = made
            bell.ring()
          }
          if try connection?.waitForNotification(milliseconds: 1000) == true { bell.ring() }
        } catch {
          connection = nil
          usleep(1_000_000)
        }
      }
    }
  }
}
