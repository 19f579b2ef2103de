import ArgumentParser
import Darkroom
import FoundationEssentials

struct CatalogCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "catalog",
    abstract: "Make a PostgreSQL catalog, or move one between SQLite and PostgreSQL.",
    subcommands: [InitCommand.self, CopyCommand.self])

  struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "init",
      abstract: "Make Darkroom's catalog in a PostgreSQL database.",
      discussion: prose(
        """
        A database becomes a catalog only by this, by a library's first `darkroom scan
        --catalog URL`, or as the target of `catalog copy`: every other command refuses
        a database without Darkroom's tables, so that a mistyped URL is not quietly
        made a new, empty catalog. Run on a catalog already made, it brings its tables
        up to date and says so. The password may come from ~/.pgpass or PGPASSWORD; it
        is never printed.

        Example:
          darkroom catalog init postgresql://darkroom@db.example/photos
          darkroom scan --catalog postgresql://darkroom@db.example/photos ~/Photos
        """))

    @Argument(help: "The PostgreSQL database: postgresql://user:password@host:5432/database.")
    var url: String

    func run() throws {
      let (made, name) = try Library.makeCatalog(at: url)
      print(
        made ? "made a Darkroom catalog in \(name)" : "\(name) holds a Darkroom catalog already")
    }
  }

  struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "copy",
      abstract: "Copy a catalog into an empty one, SQLite to PostgreSQL or back.",
      discussion: prose(
        """
        FROM and TO are each a SQLite file (a library's .darkroom/catalog.sqlite) or a
        PostgreSQL URL (postgresql://user:password@host:5432/database; the password
        may come from ~/.pgpass or PGPASSWORD). Every row goes: asset ids, folders,
        albums in their order with posters and dates, favourites, the trash, skipped
        files, fingerprints, the duplicates you kept apart, jobs, and the change log
        with its numbers, so clients reading the change feed go on where they were.
        TO must hold no catalog yet (a new database, or no file). Stop the library's
        servers and scans first: what they write during the copy is not copied.

        After a copy to PostgreSQL, the library remembers where its catalog is
        (.darkroom/catalog.location, without the password): commands then need
        --catalog URL or DARKROOM_CATALOG, and say so instead of using the old file,
        which stays as it was. A copy back into .darkroom/catalog.sqlite forgets it.

        Examples:
          darkroom catalog copy photos/.darkroom/catalog.sqlite postgresql://db/photos
          darkroom catalog copy postgresql://db/photos /backup/catalog.sqlite
        """))

    @Argument(help: "The catalog to copy: a SQLite file or a PostgreSQL URL.")
    var from: String

    @Argument(help: "The empty catalog to copy into: a SQLite file or a PostgreSQL URL.")
    var to: String

    @Flag(help: "Print what was copied as JSON.")
    var json = false

    func run() throws {
      let report = try Library.copyCatalog(from: from, to: to)
      if json {
        print(try jsonText(report))
        return
      }
      for table in report.tables { print("\(table.table): \(table.rows) rows") }
      let assets = report.tables.first { $0.table == "asset" }?.rows ?? 0
      print("copied \(report.from) to \(report.to): \(assets) assets")
    }
  }
}
