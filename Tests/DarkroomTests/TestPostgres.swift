import Foundation
import Testing

@testable import Darkroom

/// Which catalog a test's library keeps: the suites that prove the catalog run on both.
enum CatalogBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case sqlite, postgresql
  var testDescription: String { rawValue }

  /// A new, empty catalog of this kind: nil for SQLite (the library's own file), a new
  /// database on the tests' PostgreSQL server otherwise.
  func newCatalogURL() throws -> String? {
    switch self {
    case .sqlite: nil
    case .postgresql:
      // As `darkroom catalog init URL` makes one (a database is never made a catalog unasked).
      try {
        let url = try TestPostgres.shared().newDatabase()
        _ = try Library.makeCatalog(at: url)
        return url
      }()
    }
  }

  /// A new, empty catalog of this kind, without a library: a file in `folder` or a database.
  func newCatalog(in folder: TemporaryFolder) throws -> any Catalog {
    switch self {
    case .sqlite: try SQLiteCatalog(path: folder.file("catalog.sqlite"))
    case .postgresql:
      try PostgresCatalog(url: try TestPostgres.shared().newDatabase(), creating: true)
    }
  }
}

/// The tests' own PostgreSQL server (Debian's postgresql 15, which `.ci/run` installs):
/// `initdb` in a temporary folder, listening on a Unix socket there only, started on first
/// use and stopped when the test process exits. Each test takes a database of its own. As
/// root (CI), the server runs as the `postgres` user, as PostgreSQL insists.
final class TestPostgres: Sendable {
  let folder: String
  var socketFolder: String { folder + "/socket" }
  let port = 5432
  private let databases = Locked(0)

  private static let started = Locked<Result<TestPostgres, Error>?>(nil)

  /// The server most tests share (a database each).
  static func shared() throws -> TestPostgres {
    try started.withLock { started in
      if let started { return try started.get() }
      let result = Result { try TestPostgres(name: "shared") }
      started = result
      return try result.get()
    }
  }

  /// The folders of the servers to stop when the process exits.
  private static let running = Locked<[String]>([])

  /// The server's programs.
  static let bin: String = {
    let versions =
      (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?
      .sorted() ?? []
    return "/usr/lib/postgresql/" + (versions.last ?? "15") + "/bin"
  }()

  /// A server of its own (for a test that stops and starts it), stopped at exit.
  init(name: String) throws {
    guard FileManager.default.isExecutableFile(atPath: Self.bin + "/initdb") else {
      throw TestError("PostgreSQL's server is not installed (apt-get install postgresql)")
    }
    folder = "/tmp/darkroom-test-pg-\(getpid())-\(name)"
    try? FileManager.default.removeItem(atPath: folder)
    try FileManager.default.createDirectory(
      atPath: folder + "/socket", withIntermediateDirectories: true)
    if getuid() == 0 {
      for path in [folder, folder + "/socket"] {
        guard let user = getpwnam("postgres"),
          chown(path, user.pointee.pw_uid, user.pointee.pw_gid) == 0
        else { throw TestError("cannot give \(path) to the postgres user") }
      }
    }
    try Self.asServerUser([
      Self.bin + "/initdb", "-D", folder + "/data", "-U", "postgres", "--auth=trust",
      "-E", "UTF8", "--no-sync",
    ])
    // One user with a password, for the test of a wrong one; everyone else is trusted.
    let hba = folder + "/data/pg_hba.conf"
    try "local all darkroom_secret scram-sha-256\nlocal all all trust\n".write(
      toFile: hba, atomically: false, encoding: .utf8)
    try start()
    _ = Self.registerStop
    Self.running.withLock { $0.append(folder) }
    let admin = try PostgresConnection(url: url(database: "postgres"))
    try admin.execute("CREATE ROLE darkroom_secret LOGIN PASSWORD 'right-password'")
  }

  /// Starts the server (again, after ``stop()``) and waits until it takes connections.
  func start() throws {
    try Self.asServerUser([
      Self.bin + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/log", "-w", "-o",
      "-c listen_addresses='' -k \(socketFolder) -p \(port) -c fsync=off -c max_connections=500",
      "start",
    ])
  }

  /// Stops the server (fast: open connections are closed).
  func stop() throws {
    try Self.asServerUser([
      Self.bin + "/pg_ctl", "-D", folder + "/data", "-m", "fast", "-w", "stop",
    ])
  }

  /// A libpq URL for `database` on this server.
  func url(database: String, user: String = "postgres", password: String? = nil) -> String {
    "postgresql://\(user)\(password.map { ":" + $0 } ?? "")@/\(database)?host=\(socketFolder)&port=\(port)"
  }

  /// Makes a new database and returns its URL.
  func newDatabase() throws -> String {
    let number = databases.withLock { count in
      count += 1
      return count
    }
    let name = "t\(number)"
    let admin = try PostgresConnection(url: url(database: "postgres"))
    try admin.execute("CREATE DATABASE \(name)")
    return url(database: name)
  }

  /// Runs `command` as the `postgres` user (as itself when not root), with every descriptor
  /// but 0, 1 and 2 closed first: the server `pg_ctl start` leaves running would otherwise
  /// keep one Foundation's `Process` watches, and the wait for `pg_ctl` would never end.
  private static func asServerUser(_ command: [String]) throws {
    // bash, not sh: dash reads `10>&-` as a command named 10.
    let closing = """
      for f in /proc/$$/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done
      exec "$@"
      """
    let user = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
    // In a folder the postgres user can read: initdb and pg_ctl fail where they cannot find
    // their own way back (CI's checkout may be under /root, 0700).
    let result = try CLI.run(
      ["-c", closing, "bash"] + user + command, cwd: "/tmp", executable: "/bin/bash")
    guard result.status == 0 else {
      throw TestError("\(command[0]) failed (\(result.status)): \(result.stderr)\(result.stdout)")
    }
  }

  /// Registered once: stops the server as the test process ends.
  static let registerStop: Void = {
    atexit {
      for folder in TestPostgres.running.withLock({ $0 }) {
        let stop = [bin + "/pg_ctl", "-D", folder + "/data", "-m", "immediate", "-w", "stop"]
        _ = try? asServerUser(stop)
        try? FileManager.default.removeItem(atPath: folder)
      }
    }
  }()
}

struct TestError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
