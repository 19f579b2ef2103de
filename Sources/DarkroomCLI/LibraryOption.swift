import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// The library a catalog command works on: `--library DIR`, or the one containing the
/// current folder.
struct LibraryOption: ParsableArguments {
  @Option(
    name: .customLong("library"),
    help: ArgumentHelp(
      "The library (a folder holding .darkroom/; default: the one containing the current folder).",
      valueName: "dir"))
  var path: String?

  @OptionGroup var catalog: CatalogOption

  func library() throws -> Library { try Self.library(containing: path ?? ".") }

  /// The library with a catalog that contains `start`.
  static func library(containing start: String) throws -> Library {
    guard let library = Library.containing(start), library.hasCatalog else {
      throw DarkroomError(
        .notFound, file: start, "no library with a catalog here (darkroom scan DIR makes one)")
    }
    return library
  }
}

/// The library of a command that takes no other arguments: `DIR`, or `--library DIR` as
/// every catalog command takes it (default: the library containing the current folder).
struct LibraryFolder: ParsableArguments {
  @Argument(help: "The library: a folder holding .darkroom/, or inside one (default: .).")
  var folder: String?

  @Option(
    name: .customLong("library"), help: ArgumentHelp("The same, as an option.", valueName: "dir"))
  var option: String?

  @OptionGroup var catalog: CatalogOption

  func validate() throws {
    if let folder, let option, folder != option {
      throw ValidationError("Give the library once: as DIR or as --library DIR")
    }
  }

  /// The folder named, or `.`.
  var path: String { folder ?? option ?? "." }

  func library() throws -> Library { try LibraryOption.library(containing: path) }
}

/// Asset ids among a command's files, turned into their files' paths (files as they are).
func resolveItems(_ items: [String]) throws -> [String] {
  try items.map { item in try Library.resolve(item) }
}

/// `--catalog URL`: the library's catalog in PostgreSQL instead of `.darkroom/catalog.sqlite`.
/// It sets `DARKROOM_CATALOG` for the process, so that every library it opens (and every
/// process it starts: background thumbnails, workers) uses it too.
struct CatalogOption: ParsableArguments {
  @Option(
    name: .customLong("catalog"),
    help: ArgumentHelp(
      "Keep the library's catalog in PostgreSQL (default: $DARKROOM_CATALOG, else SQLite in .darkroom/).",
      discussion:
        "A URL as libpq reads it: postgresql://user:password@host:5432/database (the password may come from ~/.pgpass or PGPASSWORD instead). Every server and machine that opens the library must name the same catalog.",
      valueName: "url"))
  var url: String?

  func validate() throws {
    guard let url else { return }
    guard !url.isEmpty else {
      throw ValidationError("--catalog takes a PostgreSQL URL; not an empty one")
    }
    setenv("DARKROOM_CATALOG", url, 1)
  }
}
