import Foundation
import Testing

@testable import Darkroom

/// What only a catalog in PostgreSQL has: a server that can be away, a password, other
/// processes' commits announced. (The catalog's behaviour itself is proven on both kinds by
/// the catalog, timeline and change-log suites.)
@Suite("A catalog in PostgreSQL: reaching it, losing it, hearing others", .serialized, .offThePool)
struct PostgresCatalogTests {
  @Test(
    "A wrong password, no server, no database, not a URL: one line naming the catalog without its password, exit 1, no catalog made"
  )
  func unreachable() throws {
    let server = try TestPostgres.shared()
    let lib = try LibraryFixture()
    try lib.add("orientation-1.jpg", as: "a.jpg")
    // The library's catalog is in PostgreSQL; each wrong URL is tried on it.
    let url = try server.newDatabase()
    let scan = try CLI.run(["scan", lib.root, "--catalog", url])
    #expect(scan.status == 0, "\(scan.stderr)")
    let socket = server.socketFolder
    let empty = try server.newDatabase()
    let cases: [(url: String, line: String)] = [
      (
        server.url(database: "postgres", user: "darkroom_secret", password: "wrong-secret"),
        "darkroom: postgresql://darkroom_secret@/postgres?host=\(socket)&port=5432: cannot open the catalog: connection to server on socket \"\(socket)/.s.PGSQL.5432\" failed: FATAL: password authentication failed for user \"darkroom_secret\""
      ),
      (
        "postgresql://postgres@/postgres?host=\(socket)&port=5999",
        "darkroom: postgresql://postgres@/postgres?host=\(socket)&port=5999: cannot open the catalog: connection to server on socket \"\(socket)/.s.PGSQL.5999\" failed: No such file or directory Is the server running locally and accepting connections on that socket?"
      ),
      (
        server.url(database: "no_such_database"),
        "darkroom: \(server.url(database: "no_such_database")): cannot open the catalog: connection to server on socket \"\(socket)/.s.PGSQL.5432\" failed: FATAL: database \"no_such_database\" does not exist"
      ),
      (
        "postgresq://postgres@/postgres",
        "darkroom: postgresq://postgres@/postgres: cannot open the catalog: not a PostgreSQL URL: one starts postgresql:// (postgresql://user:password@host:5432/database)"
      ),
      // libpq quotes a password it cannot read: the quote is scrubbed, in the user part...
      (
        "postgresql://postgres:wrong-secret%zz@/postgres?host=\(socket)&port=5432",
        "darkroom: postgresql://postgres@/postgres?host=\(socket)&port=5432: cannot open the catalog: invalid percent-encoded token: \"***\""
      ),
      // ...and as a parameter.
      (
        "postgresql://postgres@/postgres?host=\(socket)&port=5432&password=wrong-secret%zz",
        "darkroom: postgresql://postgres@/postgres?host=\(socket)&port=5432: cannot open the catalog: invalid percent-encoded token: \"***\""
      ),
      // A database that is not a catalog is not quietly made one.
      (
        empty,
        "darkroom: \(empty): cannot open the catalog: holds no Darkroom catalog: `darkroom catalog init URL` makes one there (as a library's first `darkroom scan --catalog URL` does)"
      ),
    ]
    let marker = try String(contentsOfFile: lib.library.catalogLocationFile, encoding: .utf8)
    for (wrong, line) in cases {
      for arguments in [["list", "--catalog", wrong], ["scan", lib.root, "--catalog", wrong]] {
        let result = try CLI.run(arguments, cwd: lib.root)
        #expect(result.status == 1, "\(arguments)")
        #expect(result.stderr == line + "\n", "\(arguments)")
        #expect(!result.stderr.contains("wrong-secret") && !result.stderr.contains("%zz"))
      }
    }
    // The empty database is as it was: no table of Darkroom's.
    let tables = try PostgresConnection(url: empty).query(
      "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    #expect(tables.rows.first?.first == "0")
    // Nothing was made or changed by them: no SQLite catalog, the marker as it was.
    #expect(!FileManager.default.fileExists(atPath: lib.library.catalogPath))
    #expect(try String(contentsOfFile: lib.library.catalogLocationFile, encoding: .utf8) == marker)
    #expect(marker.hasPrefix(url + "\nlibrary ") && marker.utf8.count == url.utf8.count + 46)

    // With the right URL, the listing; without any, where the catalog is (not an empty
    // SQLite catalog started beside it).
    let listed = try CLI.run(["list"], cwd: lib.root, environment: ["DARKROOM_CATALOG": url])
    #expect(listed.stdout == "a.jpg\n")
    let without = try CLI.run(["list"], cwd: lib.root)
    #expect(without.status == 1)
    #expect(
      without.stderr
        == "darkroom: \(lib.library.rootPath): keeps its catalog in \(url): pass --catalog URL (with its password, or one in ~/.pgpass) or set DARKROOM_CATALOG\n"
    )
    #expect(!FileManager.default.fileExists(atPath: lib.library.catalogPath))

    // Another library pointed at this one's catalog is refused, and writes nothing to it.
    let other = try LibraryFixture()
    try other.add("orientation-2.jpg", as: "b.jpg")
    let refused = try CLI.run(["scan", other.root, "--catalog", url])
    #expect(refused.status == 1)
    #expect(
      refused.stderr
        == "darkroom: \(url): holds the catalog of another library: give each library a database of its own\n"
    )
    // A server says so as it starts, rather than on every request.
    let serve = try CLI.run(["serve", other.root, "--catalog", url, "--port", "0"])
    #expect(serve.status == 1)
    #expect(serve.stderr == refused.stderr)
    let catalog = try PostgresCatalog(url: url, creating: true)
    #expect(try catalog.count(AssetQuery()) == 1 && catalog.lastChange() == 1)
  }

  @Test(
    "a commit of 300 new files (more than one statement's batch; one of them skipped before), then one of a changed, a moved and a new file, then one naming a place twice: the same rows and change log in SQLite and PostgreSQL",
    arguments: CatalogBackend.allCases)
  func batchedCommits(_ backend: CatalogBackend) throws {
    let folder = try Fixture.temporaryFolder()
    let catalog = try backend.newCatalog(in: folder)
    let assets = (0..<300).map {
      TimelineTests.asset($0, utc: 1e9 + Double($0), offsetMinutes: nil)
    }
    var skip = CatalogChanges()
    skip.skipped = [
      SkippedFile(path: "t/299.jpg", identity: assets[299].identity, reason: "damaged")
    ]
    try catalog.commit(skip)
    #expect(try catalog.entries(inFolder: "t").map(\.asset) == [nil])
    var first = CatalogChanges()
    first.upserts = assets
    try catalog.commit(first)
    #expect(try catalog.count(AssetQuery()) == 300)
    let inserted = try catalog.changes(since: 0, limit: 1000)
    #expect(inserted.map(\.kind) == Array(repeating: .inserted, count: 300))
    #expect(inserted.map(\.path) == (0..<300).map { "t/\($0).jpg" })
    #expect(inserted.map(\.id) == assets.map(\.id))
    #expect(try catalog.entries(inFolder: "t").allSatisfy { $0.asset != nil })
    #expect(try catalog.asset(assets[123].id)?.path == "t/123.jpg")

    var second = CatalogChanges()
    var changed = assets[5]
    changed.contentHash = String(repeating: "2", count: 64)
    var moved = assets[7]
    moved.path = "u/7.jpg"
    second.upserts = [changed, moved, TimelineTests.asset(300, utc: 2e9, offsetMinutes: nil)]
    try catalog.commit(second)
    let last = try #require(inserted.last?.sequence)
    let mixed = try catalog.changes(since: last, limit: 10)
    #expect(mixed.map(\.kind) == [.changed, .moved, .inserted])
    #expect(mixed.map(\.path) == ["t/5.jpg", "u/7.jpg", "t/300.jpg"])
    #expect(try catalog.asset(assets[5].id)?.contentHash == changed.contentHash)
    #expect(try catalog.count(AssetQuery()) == 301)

    // Two new files at one place in one commit (a writer's race): the first one's row stands
    // and the second takes its id, as row by row.
    var twice = CatalogChanges()
    let a = TimelineTests.asset(400, utc: 3e9, offsetMinutes: nil)
    var b = TimelineTests.asset(401, utc: 3e9, offsetMinutes: nil)
    b.path = a.path
    twice.upserts = [a, b]
    try catalog.commit(twice)
    #expect(try catalog.count(AssetQuery()) == 302)
    #expect(try catalog.asset(atPath: a.path)?.id == a.id)
  }

  @Test(
    "PostgreSQL stops in the middle of a commit: nothing of the batch is written, calls fail clearly while it is away and work again when it is back"
  )
  func serverRestarts() throws {
    let server = try TestPostgres(name: "restart")
    let catalog = try PostgresCatalog(url: try server.newDatabase(), creating: true)
    var first = CatalogChanges()
    first.upserts = (0..<2).map {
      TimelineTests.asset($0, utc: 1e9 + Double($0), offsetMinutes: nil)
    }
    try catalog.commit(first)

    var batch = CatalogChanges()
    batch.upserts = (2..<7).map {
      TimelineTests.asset($0, utc: 1e9 + Double($0), offsetMinutes: nil)
    }
    let stopped = Locked(false)
    let failure = #expect(throws: PostgresError.self) {
      try FaultInjection.whenReached(
        "postgres-commit-row", file: "t/4.jpg",
        {
          guard !stopped.withLock({ $0 }) else { return }
          stopped.withLock { $0 = true }
          try? server.stop()
        }, during: { try catalog.commit(batch) })
    }
    #expect(stopped.withLock { $0 })
    #expect(failure?.connectionLost == true)
    #expect(failure.map { !$0.message.isEmpty && !$0.message.contains("\n") } == true)

    // Away: a read fails with why, on one line.
    let away = #expect(throws: PostgresError.self) { try catalog.count(AssetQuery()) }
    #expect(away?.connectionLost == true)
    #expect(
      away?.message
        == "connection to server on socket \"\(server.socketFolder)/.s.PGSQL.5432\" failed: No such file or directory Is the server running locally and accepting connections on that socket?"
    )

    // Back: the same catalog object works again, and holds the first commit only.
    try server.start()
    #expect(try catalog.count(AssetQuery()) == 2)
    #expect(try catalog.lastChange() == 2)
    try catalog.commit(batch)
    #expect(try catalog.count(AssetQuery()) == 7)
    // Increasing, never reused: the rolled-back batch's numbers are skipped (a sequence
    // is not rolled back), which a client reading `since` never notices.
    let sequences = try catalog.changes(since: 0, limit: 100).map(\.sequence)
    #expect(sequences.count == 7 && sequences.prefix(2) == [1, 2])
    #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 })
    #expect(try catalog.check() == [])
    try server.stop()
  }

  @Test("Another process's commit wakes a listener (LISTEN/NOTIFY), not only this one's")
  func notifications() async throws {
    let url = try TestPostgres.shared().newDatabase()
    // Two catalogs over one database: two pools, two bells, as two processes have.
    let writer = try PostgresCatalog(url: url, creating: true)
    let listener = try PostgresCatalog(url: url, creating: true)
    listener.listenForCommits()
    let before = listener.commits.count
    var changes = CatalogChanges()
    changes.upserts = [TimelineTests.asset(0, utc: 1e9, offsetMinutes: nil)]
    try writer.commit(changes)
    // Rung by the notification (the listener's process made no commit); the bound only stops
    // a broken test from waiting for ever.
    await listener.commits.wait(after: before, atMost: .seconds(120))
    #expect(listener.commits.count > before)
    #expect(try listener.lastChange() == 1)
  }

  @Test(
    "catalog init makes a catalog where there was none, and says so; run again it says it was one"
  )
  func initCatalog() throws {
    let server = try TestPostgres.shared()
    let url = try server.newDatabase()
    let made = try CLI.run(["catalog", "init", url])
    #expect(
      made.status == 0 && made.stdout == "made a Darkroom catalog in \(url)\n", "\(made.stderr)")
    let again = try CLI.run(["catalog", "init", url])
    #expect(again.status == 0 && again.stdout == "\(url) holds a Darkroom catalog already\n")
    // A library's commands take it now; it is empty until a scan fills it.
    let lib = try LibraryFixture()
    try lib.add("orientation-1.jpg", as: "a.jpg")
    let scan = try CLI.run(["scan", lib.root, "--catalog", url])
    #expect(scan.status == 0, "\(scan.stderr)")
    let listed = try CLI.run(["list", "--catalog", url], cwd: lib.root)
    #expect(listed.stdout == "a.jpg\n")
    let refused = try CLI.run(["catalog", "init", lib.library.catalogPath])
    #expect(refused.status == 1)
    #expect(
      refused.stderr
        == "darkroom: \(lib.library.catalogPath): not a PostgreSQL URL: one starts postgresql:// (a library's SQLite catalog is made by its first scan)\n"
    )
  }

  @Test(
    "The catalog's password appears in no output of serve at --log-level trace: its log, its pages, its errors"
  )
  func passwordNeverLogged() throws {
    let server = try TestPostgres.shared()
    let lib = try LibraryFixture()
    try lib.add("orientation-1.jpg", as: "a.jpg")
    // Trust authentication: the password is carried and ignored, as a real one would be.
    let database = String(
      try server.newDatabase().split(separator: "?")[0].split(separator: "/").last!)
    let url = server.url(database: database, password: "hunter2-catalog-secret")
    #expect(try CLI.run(["scan", lib.root, "--catalog", url]).status == 0)
    let serve = try ServeProcess(
      lib.root, arguments: ["--log-level", "trace"], environment: ["DARKROOM_CATALOG": url])
    let list = try serve.exchange(
      "GET /api/assets HTTP/1.1\r\nAuthorization: Bearer \(ServedLibrary.writeToken)\r\n")
    #expect(list.status == 200)
    let missing = try serve.exchange(
      "GET /api/assets/nope HTTP/1.1\r\nAuthorization: Bearer \(ServedLibrary.writeToken)\r\n")
    #expect(missing.status == 404)
    #expect(serve.stop() == 0)
    #expect(serve.stderr.contains("debug"), "the log is at trace: \(serve.stderr.prefix(400))")
    for text in [serve.stdout, serve.stderr, list.text, missing.text] {
      #expect(!text.contains("hunter2"), "\(text)")
    }
    // What a library prints itself (a service's description in that log) names the catalog
    // without the password.
    var library = lib.library
    library.catalogURL = url
    #expect(
      "\(library)" == "Library(\(lib.library.rootPath), catalog: \(PostgresCatalog.redacted(url)))")
    #expect(!String(reflecting: library).contains("hunter2"))
    var dumped = ""
    dump(library, to: &dumped)
    #expect(!dumped.contains("hunter2"))
  }

  @Test("A URL's password is never shown: in the user part or as a parameter")
  func redaction() {
    #expect(
      PostgresCatalog.redacted("postgresql://ann:s3cr%40t@db.example:5432/photos?sslmode=require")
        == "postgresql://ann@db.example:5432/photos?sslmode=require")
    #expect(
      PostgresCatalog.redacted("postgres://ann@db/photos?password=s3cret&sslmode=require")
        == "postgres://ann@db/photos?sslmode=require")
    #expect(PostgresCatalog.redacted("postgresql:///photos?password=x") == "postgresql:///photos")
    #expect(PostgresCatalog.redacted("postgresql://db/photos") == "postgresql://db/photos")
    // A message that quotes the password, as written or decoded, or the whole URL.
    let url = "postgresql://ann:s3cr%40t@db/photos?password=p%41ss&sslmode=require"
    #expect(
      PostgresCatalog.scrubbed(
        "bad \"s3cr%40t\", \"s3cr@t\", \"pAss\" in \(url)", url: url)
        == "bad \"***\", \"***\", \"***\" in postgresql://ann@db/photos?sslmode=require")
  }
}

@Suite("catalog copy: SQLite to PostgreSQL and back", .serialized, .offThePool)
struct CatalogCopyTests {
  /// Every row of every table a copy carries, and the month counts the triggers made.
  static func everything(_ catalog: any CatalogTables) throws -> [String: [[CatalogValue]]] {
    var tables: [String: [[CatalogValue]]] = [:]
    for table in CatalogCopy.tables { tables[table.name] = try catalog.rows(of: table) }
    tables["monthCount"] = try catalog.rows(
      of: .init(name: "monthCount", columns: ["month", "count"], order: "month"))
    return tables
  }

  @Test(
    "SQLite -> PostgreSQL -> SQLite keeps every row: ids, albums and their order, favourites, trash, skipped files, fingerprints, kept pairs, jobs, the change log's numbers"
  )
  func roundTrip() throws {
    let lib = try LibraryFixture()
    for n in 1...8 { try lib.add("orientation-\(n).jpg", as: "Été/\(n % 3)/\(n).jpg") }
    try lib.add("gps.jpg", as: "gps.jpg")
    try lib.add("orientation-1.jpg", as: "copy/same.jpg")
    try lib.add("orientation-1.jpg", as: "copy/also.jpg")
    try Data("not a photo".utf8).write(to: URL(fileURLWithPath: lib.folder.file("notes.jpg")))
    let cwd = lib.root
    func run(_ arguments: String...) throws {
      let result = try CLI.run(arguments, cwd: cwd)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
    }
    try run("scan", cwd)
    try run("album", "create", "Trip")
    try run("album", "add", "Trip", "Été/2/5.jpg", "gps.jpg", "Été/1/1.jpg")
    try run("album", "poster", "Trip", "gps.jpg")
    try run("favourite", "Été/0/3.jpg", "gps.jpg")
    try run("trash", "Été/1/7.jpg")
    try run("duplicates", "--near", "--json")
    try run("duplicates", "keep", "copy/same.jpg", "copy/also.jpg")
    let catalog = try lib.library.catalog()
    try catalog.saveJob(
      StoredJob(
        id: "job1", name: "apply", action: "{}",
        ids: try lib.paths().prefix(2).map {
          try #require(try lib.asset($0)).id
        }, state: "finished", owner: "1:2:3", started: 1e9, ended: 1e9 + 1))
    for path in try lib.paths().prefix(2) {
      try catalog.recordJobItem("job1", try #require(try lib.asset(path)).id, error: nil)
    }
    let sqlite = try SQLiteCatalog(path: lib.library.catalogPath)
    let before = try Self.everything(sqlite)
    #expect(before["skipped"]?.count == 1 && before["fingerprint"]?.isEmpty == false)
    #expect(before["distinctPair"]?.count == 1 && before["jobItem"]?.count == 2)
    let listed = try CLI.run(["list", "--json"], cwd: cwd).stdout

    // To PostgreSQL, through the command.
    let url = try TestPostgres.shared().newDatabase()
    let copied = try CLI.run(["catalog", "copy", lib.library.catalogPath, url, "--json"])
    #expect(copied.status == 0, "\(copied.stderr)")
    let report = try JSONDecoder().decode(CatalogCopyReport.self, from: copied.stdoutData)
    #expect(report.tables.map(\.table) == CatalogCopy.tables.map(\.name))
    #expect(report.tables.first { $0.table == "asset" }?.rows == before["asset"]?.count)
    let postgres = try PostgresCatalog(url: url, creating: true)
    #expect(try Self.everything(postgres) == before)
    #expect(try postgres.check() == [])

    // The library now says where its catalog is; with it, the same listing.
    let without = try CLI.run(["list"], cwd: cwd)
    #expect(without.status == 1 && without.stderr.contains("keeps its catalog in \(url)"))
    let there = try CLI.run(["list", "--json", "--catalog", url], cwd: cwd)
    #expect(there.stdout == listed)

    // A copy into a catalog that holds one is refused, and changes nothing.
    let again = try CLI.run(["catalog", "copy", lib.library.catalogPath, url])
    #expect(again.status == 1)
    #expect(
      again.stderr
        == "darkroom: \(url): already holds a catalog (\(before.filter { ["folder", "asset", "album", "job", "change"].contains($0.key) }.values.map(\.count).reduce(0, +)) rows of folders, assets, albums, jobs and changes): copy into an empty one\n"
    )
    #expect(try Self.everything(postgres) == before)

    // Back to SQLite: every row again, the same as before the first copy.
    let back = lib.folder.file("back/.darkroom/catalog.sqlite")
    try FileManager.default.createDirectory(
      atPath: lib.folder.file("back/.darkroom"), withIntermediateDirectories: true)
    let returned = try CLI.run(["catalog", "copy", url, back])
    #expect(returned.status == 0, "\(returned.stderr)")
    #expect(
      returned.stdout.hasSuffix(
        "copied \(url) to \(back): \(before["asset"]?.count ?? -1) assets\n"))
    #expect(try Self.everything(try SQLiteCatalog(path: back)) == before)

    // The numbers go on after the copied ones, on PostgreSQL as on SQLite.
    let last = try postgres.lastChange()
    try postgres.setFavourite([try #require(try lib.asset("gps.jpg")).id], false)
    #expect(try postgres.changes(since: last, limit: 10).map(\.sequence) == [last + 1])
    try postgres.createAlbum("Later")
    #expect(
      try postgres.rows(of: .init(name: "album", columns: ["id"], order: "id")).last
        == [.int(Int64((before["album"]?.count ?? 0) + 1))])
  }
}
