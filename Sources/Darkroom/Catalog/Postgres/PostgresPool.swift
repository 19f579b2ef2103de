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
/// process learns at once of another's commit. The first `LISTEN` is made before `init`
/// returns (a commit after it is not missed); the connection is then watched on a thread of
/// its own for as long as the process lives. While the server is away it reconnects once a
/// second, and rings when it is back, since what happened meanwhile is unknown.
final class PostgresListener: Sendable {
  init(url: String, channel: String, bell: CommitBell) {
    @Sendable func listen() throws -> PostgresConnection {
      let connection = try PostgresConnection(url: url)
      try connection.execute("LISTEN \(channel)")
      return connection
    }
    let first = try? listen()
    DispatchQueue(label: "darkroom.catalog.listen").async {
      var connection = first
      while true {
        do {
          if connection == nil {
            connection = try listen()
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
