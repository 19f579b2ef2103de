import FoundationEssentials
import Logging

#if canImport(Glibc)
  import Glibc
#endif

/// A library is a folder: like a git work tree, its `.darkroom/` holds the catalog, the
/// originals of edited files, adjustment data and the rendition cache. Moving the whole
/// folder moves the library with it.
///
/// ```swift
/// let library = try Library.create(at: "/home/ana/photos")  // or Library.open(at:)
/// let scanned = try await library.scan()
/// print(scanned.added, library.root.path)
/// ```
///
/// `Library` is a `Sendable` value type; it names folders and holds no open files. Two
/// libraries are equal when their roots (and spaces) are.
///
/// A library is built over a storage and a catalog: a plain folder (its files, and the
/// catalog in `.darkroom/`), or an unlocked encrypted ``Space`` (its sealed objects and
/// sealed catalog; ``init(space:)``). Fetching, rendering, editing, reverting, the trash and
/// jobs are the same calls on both; what only a folder has (files to scan, albums, the change
/// log) throws for a space.
public struct Library: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// The folder that contains `.darkroom/`.
  public let root: URL
  /// `root`'s path, made once: paths in the library are built from it for every request a
  /// server answers, and `URL` arithmetic is slow.
  public let rootPath: String
  /// Where the engine tells what it did and what went wrong without failing the call: a
  /// job's end and its failures, temporaries swept, a catalog or cache write that failed
  /// after the work it followed was done. Silent unless set (``open(at:logger:)``);
  /// `darkroom serve` gives its own.
  public var logger = Library.silent

  /// A logger that drops everything: the default.
  public static let silent = Logger(label: "darkroom") { _ in SwiftLogNoOpLogHandler() }

  /// The encrypted space this library is over, unlocked; nil for a library that is a folder.
  public let space: Space?

  /// Where its catalog is kept when not in `.darkroom/catalog.sqlite`: a PostgreSQL URL
  /// (`postgresql://user:password@host/database`), shared by every server and machine that
  /// opens the library. Nil (the default unless `DARKROOM_CATALOG` is set): SQLite.
  package var catalogURL: String?

  /// `DARKROOM_CATALOG`, when set and not empty: the catalog every library of this process
  /// opens (the CLI's `--catalog` sets it, so that what a command starts uses it too).
  package static var catalogFromEnvironment: String? {
    guard let value = getenv("DARKROOM_CATALOG").map({ String(cString: $0) }), !value.isEmpty
    else { return nil }
    return value
  }

  /// Without its catalog's password: a library is printed by logs (a service's description
  /// at `--log-level debug`) and by `dump`.
  public var description: String {
    "Library(\(rootPath)\(space == nil ? "" : ", space")\(catalogURL == nil ? "" : ", catalog: \(catalogLocation)"))"
  }
  public var debugDescription: String { description }
  public var customMirror: Mirror {
    Mirror(self, children: ["root": rootPath, "catalog": catalogLocation], displayStyle: .struct)
  }

  public static func == (a: Library, b: Library) -> Bool { a.root == b.root && a.space === b.space }
  public func hash(into hasher: inout Hasher) { hasher.combine(root) }

  /// The name of a library's own folder, `.darkroom`.
  package static let folderName = DarkroomFolder.name

  /// The library's `.darkroom/` folder: originals, adjustment data, locks and the cache.
  package var metadataFolder: URL { root.appendingPathComponent(Self.folderName) }
  /// The library's rendition cache folder, `.darkroom/cache` (see ``RenditionCache``).
  package var cacheFolder: URL { metadataFolder.appendingPathComponent("cache") }

  /// The library whose `.darkroom/` folder is (or would be) in `root`; creates nothing.
  public init(root: URL) {
    self.root = root.standardizedFileURL
    rootPath = self.root.path
    space = nil
    catalogURL = Self.catalogFromEnvironment
  }

  /// The library over an unlocked space: its assets are the space's, its files sealed
  /// objects that are decrypted into memory only, its catalog the space's sealed rows.
  public init(space: Space) {
    root = URL(fileURLWithPath: space.folder).standardizedFileURL
    rootPath = root.path
    self.space = space
  }

  /// The library of `path`: the nearest folder holding `.darkroom/`, from the folder `path`
  /// names (or, for a file, the folder it is in) upwards; nil if there is none.
  package static func containing(_ path: String) -> Library? {
    DarkroomFolder.root(containing: path).map(Library.init(root:))
  }
}

extension Library {
  /// The rendition cache a file uses by default: its library's `.darkroom/cache`, else
  /// ``RenditionCache/userFolder`` (also for nil: standard input).
  package static func cacheFolder(for path: String?) -> URL {
    if let path, let library = Library.containing(path) { return library.cacheFolder }
    return RenditionCache.userFolder
  }
}

extension Library {
  /// The library's store of originals and adjustment data.
  var store: OriginalStore { OriginalStore(folder: metadataFolder) }

  /// An editor of this library's file at `path`, in place, working to `settings`, given the
  /// store it is to use: the library decides, the editor never looks one up. That is the
  /// library's own, unless the file is in a library nested in this one (the folder of an
  /// `apply -o` inside it, say), whose store holds its edits' chain.
  func editor(of path: String, _ settings: PixelSettings = PixelSettings()) -> Editor {
    let store = Self.store(near: path) ?? store
    return Editor(settings) { _, _ in store }
  }

  /// The store of the library `path` is in (the nearest `.darkroom/` above it); nil if none.
  static func store(near path: String) -> OriginalStore? {
    Library.containing(path)?.store
  }

  /// The store an edit of `path` uses: the nearest, else a new library's beside the file.
  static func store(forEditOf path: String) -> OriginalStore {
    if let store = store(near: path) { return store }
    let parent = FilePath(path).parent
    return Library(root: URL(fileURLWithPath: parent.isEmpty ? "." : parent)).store
  }
}

extension Editor {
  /// An editor with the default renderer, writing edited results at their source's quality
  /// (the defaults of ``PixelSettings``), of files wherever they are.
  package init() { self.init(PixelSettings()) }

  /// An editor that works to `settings` on files wherever they are: each file's originals
  /// go to its library (the nearest `.darkroom/` above it), made beside the file for its
  /// first edit.
  init(_ settings: PixelSettings) {
    self.init(settings) { path, creating in
      creating ? Library.store(forEditOf: path) : Library.store(near: path)
    }
  }
}
