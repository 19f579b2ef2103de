import Foundation
import Testing

@testable import Darkroom

/// A library folder made by a test: copies of the samples, each with bytes of its own.
struct LibraryFixture {
  let folder: TemporaryFolder
  /// Its catalog in PostgreSQL (a database of the tests' server); nil: SQLite.
  let catalogURL: String?
  var root: String { folder.url.path }
  var library: Library {
    var library = Library(root: folder.url)
    library.catalogURL = catalogURL
    return library
  }
  /// What a command run on it needs: `DARKROOM_CATALOG` for a catalog in PostgreSQL.
  var environment: [String: String] { catalogURL.map { ["DARKROOM_CATALOG": $0] } ?? [:] }

  init(_ backend: CatalogBackend = .sqlite) throws {
    folder = try Fixture.temporaryFolder()
    catalogURL = try backend.newCatalogURL()
  }

  /// Copies a sample to `path` (folders made as needed); `tag` makes its bytes unique (a
  /// JPEG comment segment after the start marker).
  @discardableResult
  func add(_ sample: String, as path: String, tag: String? = nil) throws -> String {
    var bytes = try Fixture.bytes(Fixture.sample(sample))
    if let tag {
      let text = Array(tag.utf8)
      let length = text.count + 2
      bytes.insert(
        contentsOf: [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + text, at: 2)
    }
    let target = folder.file(path)
    try FileManager.default.createDirectory(
      atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(bytes).write(to: URL(fileURLWithPath: target))
    return target
  }

  func scan(_ folder: String? = nil, jobs: Int = 2) throws -> ScanSummary {
    var options = ScanOptions()
    options.jobs = jobs
    return try library.scanBlocking(folder ?? root, options: options)
  }

  func asset(_ path: String) throws -> Asset? {
    try library.catalog().asset(atPath: path)
  }

  func paths(_ query: AssetQuery = AssetQuery()) throws -> [String] {
    let result = try library.assets(matching: query)
    return try result.assets(in: 0..<result.count).map(\.path)
  }
}

/// Counts, per file, the times the scan opened it to read (the `scan-read` fault point).
final class ReadCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var counts: [String: Int] = [:]
  func hit(_ path: String) { lock.withLock { counts[path, default: 0] += 1 } }
  subscript(path: String) -> Int { lock.withLock { counts[path] ?? 0 } }
  var total: Int { lock.withLock { counts.values.reduce(0, +) } }

  /// Runs `body` with every file in `paths` counted.
  func counting<T>(_ paths: [String], _ body: () throws -> T) rethrows -> T {
    guard let first = paths.first else { return try body() }
    return try FaultInjection.whenReached(
      "scan-read", file: first, { self.hit(first) },
      during: { try counting(Array(paths.dropFirst()), body) })
  }
}

@Suite("The catalog: scan, ids, albums, fetch", .serialized, .timeLimit(.minutes(10)), .offThePool)
struct CatalogTests {
  @Test(
    "a first scan builds the indexes it does not read after its rows: gone while it runs, back with the same definitions when it ends; a scan killed halfway leaves them to the next open; a later scan keeps them row by row"
  )
  func firstScanDefersIndexes() throws {
    let deferred = Set(SQLiteCatalog.indexesBuiltAfterFirstScan)
    // What a new catalog has, as SQLite keeps the definitions.
    let fresh = try TemporaryFolder()
    let schema = try SQLiteCatalog(path: fresh.file("new.sqlite")).indexes()
    #expect(deferred.isSubset(of: Set(schema.keys)) && schema.count > deferred.count)

    let lib = try LibraryFixture()
    for i in 0..<5 { try lib.add("orientation-1.jpg", as: "p/\(i).jpg", tag: "\(i)") }
    let library = lib.library
    var options = ScanOptions()
    options.batchSize = 1
    options.jobs = 1
    // Seen from the scan's progress, through the catalog the scan writes to.
    let seen = Locked<[Set<String>]>([])
    let summary = try library.scanBlocking(lib.root, options: options) { _ in
      if let catalog = try? library.catalog() as? SQLiteCatalog,
        let names = try? catalog.indexes().keys
      {
        seen.withLock { $0.append(Set(names)) }
      }
    }
    #expect(summary.added == 5)
    let during = seen.withLock { $0 }
    #expect(!during.isEmpty && during.allSatisfy { $0.isDisjoint(with: deferred) })
    let catalog = try #require(try library.catalog() as? SQLiteCatalog)
    #expect(try catalog.indexes() == schema)
    #expect(try lib.paths().count == 5, "listed by date")
    #expect(try catalog.deferredIndexes().isEmpty)

    // A later scan of a catalog that holds assets keeps every index.
    #expect(try catalog.deferIndexes() == false)
    try lib.add("orientation-1.jpg", as: "p/5.jpg", tag: "5")
    #expect(try lib.scan().added == 1)
    #expect(try catalog.indexes() == schema)

    // A first scan killed after dropping them: `catalog check` says so, and the next open
    // builds them again.
    let killed = try TemporaryFolder()
    let path = killed.file("killed.sqlite")
    let first = try SQLiteCatalog(path: path)
    #expect(try first.deferIndexes() == true)
    #expect(try first.deferredIndexes() == deferred.sorted())
    #expect(Set(try first.indexes().keys).isDisjoint(with: deferred))
    #expect(
      try first.check() == [
        "indexes a first scan left to build are not built: asset_name, asset_size,"
          + " asset_type_date, asset_visible_date, asset_visible_month"
          + " (the next open or scan builds them)"
      ])
    let reopened = try SQLiteCatalog(path: path)
    #expect(try reopened.indexes() == schema)
    #expect(try reopened.deferredIndexes().isEmpty && first.check().isEmpty)

    // What the table says is run only as the index it names: another statement is refused.
    #expect(try reopened.deferIndexes() == true)
    try reopened.pool.write { db in
      try db.execute(
        sql:
          "UPDATE deferredIndex SET sql = 'CREATE INDEX asset_size ON asset(byteSize); DROP TABLE album'"
          + " WHERE name = 'asset_size'")
    }
    #expect(throws: CatalogError.self) { try reopened.restoreIndexes() }
    #expect(try reopened.deferredIndexes().count == deferred.count, "nothing built")
    // Nothing run: the album table is still there to read.
    #expect(throws: Never.self) { _ = try reopened.albums() }
  }

  @Test(
    "A rescan opens no unchanged file; a changed one is read once, keeps its id, gets a new hash",
    arguments: CatalogBackend.allCases)
  func incrementalScan(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    let files = try (1...4).map { try lib.add("orientation-\($0).jpg", as: "a/\($0).jpg") }
    let first = try lib.scan()
    #expect(first.added == 4 && first.unchanged == 0 && first.files == 4)
    let before = try #require(try lib.asset("a/2.jpg"))

    let counter = ReadCounter()
    let again = try counter.counting(files) { try lib.scan() }
    #expect(counter.total == 0)
    #expect(again.unchanged == 4 && again.added == 0 && again.changed == 0)

    try lib.add("orientation-6.jpg", as: "a/2.jpg", tag: "new content")
    let third = try counter.counting(files) { try lib.scan() }
    #expect(counter[files[1]] == 1 && counter.total == 1)
    #expect(third.changed == 1 && third.unchanged == 3)
    let after = try #require(try lib.asset("a/2.jpg"))
    #expect(after.id == before.id)
    #expect(after.contentHash == (try ContentHash.of(file: files[1])).hex)
    #expect(after.contentHash != before.contentHash)
    #expect(after.orientation == 6 && before.orientation == 2)
    #expect(try lib.library.catalog().check() == [])
  }

  @Test(
    "Rename, move to another folder, and a copy across inodes keep the asset's id",
    arguments: CatalogBackend.allCases)
  func movesKeepIDs(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    try lib.add("orientation-1.jpg", as: "a/one.jpg")
    try lib.add("gps.jpg", as: "a/two.jpg")
    try lib.add("display-p3.jpg", as: "a/three.jpg")
    try lib.add("orientation-8.jpg", as: "a/gone.jpg")
    _ = try lib.scan()
    let ids = try ["one", "two", "three", "gone"].map {
      try #require(try lib.asset("a/\($0).jpg")).id
    }

    let fm = FileManager.default
    try fm.moveItem(atPath: lib.folder.file("a/one.jpg"), toPath: lib.folder.file("a/uno.jpg"))
    try fm.createDirectory(atPath: lib.folder.file("b/c"), withIntermediateDirectories: true)
    try fm.moveItem(atPath: lib.folder.file("a/two.jpg"), toPath: lib.folder.file("b/c/dos.jpg"))
    // A copy and a delete: a new inode, the same bytes.
    try fm.copyItem(atPath: lib.folder.file("a/three.jpg"), toPath: lib.folder.file("b/tres.jpg"))
    try fm.removeItem(atPath: lib.folder.file("a/three.jpg"))
    try fm.removeItem(atPath: lib.folder.file("a/gone.jpg"))
    let summary = try lib.scan()
    #expect(summary.moved == 3 && summary.removed == 1 && summary.added == 0)
    #expect(try lib.asset("a/uno.jpg")?.id == ids[0])
    #expect(try lib.asset("b/c/dos.jpg")?.id == ids[1])
    #expect(try lib.asset("b/tres.jpg")?.id == ids[2])
    #expect(try lib.library.catalog().asset(ids[3]) == nil)
    #expect(try lib.paths().sorted() == ["a/uno.jpg", "b/c/dos.jpg", "b/tres.jpg"])
  }

  @Test(
    "A folder named in any script holds its subfolders' assets, and not its neighbour's",
    arguments: CatalogBackend.allCases)
  func foldersInAnyScript(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    try lib.add("orientation-1.jpg", as: "Été/à/1.jpg", tag: "1")
    try lib.add("orientation-2.jpg", as: "Été/2.jpg", tag: "2")
    try lib.add("orientation-3.jpg", as: "Étéx/3.jpg", tag: "3")
    try lib.add("orientation-4.jpg", as: "夏/4.jpg", tag: "4")
    _ = try lib.scan()
    let catalog = try lib.library.catalog()
    #expect(try catalog.assets(under: "Été").map(\.path).sorted() == ["Été/2.jpg", "Été/à/1.jpg"])
    #expect(try catalog.folders(under: "Été").sorted() == ["Été", "Été/à"])
    #expect(try catalog.assets(under: "夏").map(\.path) == ["夏/4.jpg"])
  }

  @Test(
    "A vanished or emptied folder leaves its assets offline, not removed, until they are back",
    arguments: CatalogBackend.allCases)
  func offlineFolders(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    try lib.add("orientation-1.jpg", as: "disk/x/1.jpg")
    try lib.add("orientation-2.jpg", as: "disk/2.jpg")
    try lib.add("orientation-3.jpg", as: "home/3.jpg")
    _ = try lib.scan()
    let ids = try ["disk/x/1.jpg", "disk/2.jpg"].map { try #require(try lib.asset($0)).id }
    let fm = FileManager.default

    // The disk's folder is gone (unmounted share): offline, kept.
    try fm.moveItem(atPath: lib.folder.file("disk"), toPath: lib.folder.file(".away"))
    let gone = try lib.scan()
    #expect(gone.offline == 2 && gone.removed == 0)
    #expect(try ids.map { try lib.library.asset($0).isOffline } == [true, true])
    #expect(try lib.paths().count == 3)

    // Back: online again, without being read.
    try fm.moveItem(atPath: lib.folder.file(".away"), toPath: lib.folder.file("disk"))
    let counter = ReadCounter()
    let back = try counter.counting([lib.folder.file("disk/2.jpg")]) { try lib.scan() }
    #expect(back.online == 2 && counter.total == 0)
    #expect(try ids.map { try lib.library.asset($0).isOffline } == [false, false])

    // An empty mount point: the folder is there, empty, on another device than its files
    // were (a disk that held them, now unmounted): offline too. (The catalog is told its
    // files were on device 7, as a test cannot mount a disk.)
    let catalog = try lib.library.catalog()
    var elsewhere = CatalogChanges()
    elsewhere.upserts = try catalog.assets(under: "disk").map { asset in
      var asset = asset
      asset.identity.device = 7
      return asset
    }
    try catalog.commit(elsewhere)
    try fm.moveItem(atPath: lib.folder.file("disk"), toPath: lib.folder.file(".away"))
    try fm.createDirectory(atPath: lib.folder.file("disk"), withIntermediateDirectories: false)
    #expect(try lib.scan().offline == 2)
    #expect(try ids.map { try lib.library.asset($0).isOffline } == [true, true])
    try fm.removeItem(atPath: lib.folder.file("disk"))
    // Scanning a folder that does not exist at all: offline as well.
    #expect(try lib.scan(lib.folder.file("disk")).removed == 0)
    #expect(try ids.map { try lib.library.asset($0).isOffline } == [true, true])

    // A file missing from a folder that is still there is removed.
    try fm.removeItem(atPath: lib.folder.file("home/3.jpg"))
    try lib.add("orientation-4.jpg", as: "home/4.jpg")
    let removed = try lib.scan()
    #expect(removed.removed == 1 && removed.added == 1)

    // --forget-offline drops the offline ones.
    var options = ScanOptions()
    options.forgetOffline = true
    #expect(try lib.library.scanBlocking(options: options).removed == 2)
    #expect(try lib.paths() == ["home/4.jpg"])
  }

  @Test(
    "A file changed in place is rendered from its new content, not from the old rendition",
    arguments: CatalogBackend.allCases)
  func changedFileNewRendition(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    let path = try lib.add("orientation-1.jpg", as: "p.jpg")
    _ = try lib.scan()
    let id = try #require(try lib.asset("p.jpg")).id.rawValue
    let out = lib.folder.file("out.jpg")
    var result = try CLI.run(
      ["render", "--rep", "thumbnail", id, "-o", out], cwd: lib.root, environment: lib.environment)
    #expect(result.status == 0, "\(result.stderr)")
    let old = try ContentHash.of(file: out)

    try lib.add("orientation-3.jpg", as: "p.jpg")
    _ = try lib.scan()
    #expect(try lib.asset("p.jpg")?.id.rawValue == id)
    result = try CLI.run(
      ["render", "--rep", "thumbnail", id, "-o", out], cwd: lib.root, environment: lib.environment)
    #expect(result.status == 0, "\(result.stderr)")
    let direct = lib.folder.file("direct.jpg")
    let fresh = try CLI.run(
      ["render", "--rep", "thumbnail", path, "-o", direct],
      environment: lib.environment.merging(["XDG_CACHE_HOME": lib.root + "/.x"]) { $1 })
    #expect(fresh.status == 0)
    #expect(try ContentHash.of(file: out) != old)
    #expect(try ContentHash.of(file: out) == ContentHash.of(file: direct))
  }

  @Test(
    "Albums: folders, smart albums and user albums, with counts and posters",
    arguments: CatalogBackend.allCases)
  func albums(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    try lib.add("orientation-1.jpg", as: "2024/june/1.jpg")  // 2024-06-01
    try lib.add("orientation-8.jpg", as: "2024/june/8.jpg")  // 2024-06-08, newest
    try lib.add("gps.jpg", as: "2024/gps.jpg")  // 2024-01-01 UTC, with location
    try lib.add("clip.mov", as: "clips/clip.mov")  // 2023-01-02
    _ = try lib.scan()
    let library = lib.library
    func id(_ path: String) throws -> AssetID { try #require(try lib.asset(path)).id }
    func album(_ ref: String) throws -> Album {
      try #require(try library.albums().first { $0.ref == ref })
    }
    #expect(try album("smart:all").count == 4)
    #expect(try album("smart:all").poster == id("2024/june/8.jpg"))
    #expect(try album("smart:videos").count == 1)
    #expect(try album("smart:with-location").count == 1)
    #expect(try album("smart:with-location").poster == id("2024/gps.jpg"))
    #expect(try album("smart:recently-added").count == 4)
    #expect(try album("folder:2024/june").count == 2)
    #expect(try album("folder:2024/june").parent == "2024")
    #expect(try album("folder:2024").count == 1)

    try library.edit(.create("Best"))
    try library.edit(.add("Best", [try id("2024/gps.jpg"), try id("2024/june/1.jpg")]))
    #expect(try album("Best").count == 2)
    #expect(try album("Best").poster == id("2024/june/1.jpg"))  // the newer of the two
    try library.edit(.poster("Best", try id("2024/gps.jpg")))
    #expect(try album("Best").poster == id("2024/gps.jpg"))
    var query = AssetQuery()
    query.album = .user("Best")
    query.sort = .album
    #expect(try lib.paths(query) == ["2024/gps.jpg", "2024/june/1.jpg"])  // order added
    #expect(throws: DarkroomError.self) { try library.edit(.create("Best")) }
    #expect(throws: DarkroomError.self) {
      try library.edit(.poster("Best", try id("clips/clip.mov")))
    }
    try library.edit(.rename("Best", to: "Top"))
    try library.edit(.remove("Top", [try id("2024/june/1.jpg")]))
    #expect(try album("Top").count == 1)
    try library.edit(.favourite([try id("clips/clip.mov")], true))
    #expect(try album("smart:favourites").count == 1)
    try library.edit(.delete("Top"))
    #expect(try library.albums().contains { $0.kind == .user } == false)
    #expect(try lib.paths().count == 4)  // deleting an album deletes no asset

    let cli = try CLI.run(["albums", "--json"], cwd: lib.root, environment: lib.environment)
    #expect(cli.status == 0)
    let listed = try JSONDecoder().decode([Album].self, from: cli.stdoutData)
    #expect(listed == (try library.albums()))
  }

  @Test(
    "list: every filter and sort, --json, -0, limit and offset", arguments: CatalogBackend.allCases)
  func listFilters(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    try lib.add("orientation-1.jpg", as: "a/o1.jpg")  // 2024-06-01, 14,524 bytes
    try lib.add("orientation-5.jpg", as: "a/o5.jpg")  // 2024-06-05, 18,437 bytes
    try lib.add("gps.jpg", as: "b/gps.jpg")  // 2024-01-01T02:59:58Z, Rio de Janeiro
    try lib.add("display-p3.jpg", as: "b/p3.jpg")  // 2022-03-15, no camera
    try lib.add("clip.mov", as: "v/clip.mov")  // 2.0 s, 2023-01-02
    try lib.add("video-rotated.mp4", as: "v/rot.mp4")  // 1.5 s, 2024-05-06
    _ = try lib.scan()
    func list(_ arguments: String...) throws -> [String] {
      let result = try CLI.run(["list"] + arguments, cwd: lib.root, environment: lib.environment)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      return result.stdout.split(separator: "\n").map(String.init)
    }
    #expect(
      try list() == ["b/p3.jpg", "v/clip.mov", "b/gps.jpg", "v/rot.mp4", "a/o1.jpg", "a/o5.jpg"])
    #expect(
      try list("--sort", "-date")
        == ["a/o5.jpg", "a/o1.jpg", "v/rot.mp4", "b/gps.jpg", "v/clip.mov", "b/p3.jpg"])
    #expect(
      try list("--sort", "name")
        == ["v/clip.mov", "b/gps.jpg", "a/o1.jpg", "a/o5.jpg", "b/p3.jpg", "v/rot.mp4"])
    #expect(try list("--sort", "size").first == "v/clip.mov")
    #expect(try list("--sort", "size").last == "b/p3.jpg")
    #expect(try list("--type", "video") == ["v/clip.mov", "v/rot.mp4"])
    #expect(try list("--type", "photo").count == 4)
    #expect(try list("--min-duration", "1.8") == ["v/clip.mov"])
    #expect(try list("--max-duration", "1.8") == ["v/rot.mp4"])
    #expect(
      try list("--from", "2024-01-01", "--to", "2024-06-01") == [
        "b/gps.jpg", "v/rot.mp4", "a/o1.jpg",
      ])
    #expect(try list("--to", "2023-12-31") == ["b/p3.jpg", "v/clip.mov"])
    #expect(try list("--camera", "field") == ["b/gps.jpg"])
    #expect(try list("--camera", "SAMPLE") == ["a/o1.jpg", "a/o5.jpg"])
    #expect(try list("--near", "-22.95,-43.21,5") == ["b/gps.jpg"])
    #expect(try list("--near", "48.85,2.29,500").isEmpty)
    #expect(try list("--album", "folder:a") == ["a/o1.jpg", "a/o5.jpg"])
    #expect(try list("--limit", "2", "--offset", "1") == ["v/clip.mov", "b/gps.jpg"])
    #expect(try list("--favourite").isEmpty)

    // --edited, through an edit by id; the edit refreshes the catalog.
    let id = try #require(try lib.asset("a/o5.jpg")).id.rawValue
    let edit = try CLI.run(
      ["edit", id, "--filter", "noir"], cwd: lib.root, environment: lib.environment)
    #expect(edit.status == 0, "\(edit.stderr)")
    #expect(try list("--edited") == ["a/o5.jpg"])
    #expect(try list("--no-edited").count == 5)
    #expect(try list("--album", "smart:edited") == ["a/o5.jpg"])

    let json = try CLI.run(
      ["list", "--type", "video", "--json"], cwd: lib.root, environment: lib.environment)
    let objects = try #require(
      try JSONSerialization.jsonObject(with: json.stdoutData) as? [[String: Any]])
    #expect(objects.map { $0["duration"] as? Double } == [2.0, 1.5])
    #expect(
      objects.map { $0["file"] as? String } == [lib.root + "/v/clip.mov", lib.root + "/v/rot.mp4"])
    let nul = try CLI.run(
      ["list", "--type", "video", "-0"], cwd: lib.root, environment: lib.environment)
    #expect(nul.stdout == lib.root + "/v/clip.mov\0" + lib.root + "/v/rot.mp4\0")

    let bad = try CLI.run(
      ["list", "--near", "91,0,1"], cwd: lib.root, environment: lib.environment)
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("--near takes LAT,LON,KM"))
    let nowhere = try CLI.run(["list"], cwd: "/")
    #expect(nowhere.status == 1)
    #expect(
      nowhere.stderr
        == "darkroom: .: no library with a catalog here (darkroom scan DIR makes one)\n")
  }

  @Test(
    "Asset ids stand for files in render, edit, revert and info", arguments: CatalogBackend.allCases
  )
  func idsInCommands(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    let path = try lib.add("orientation-6.jpg", as: "x/photo.jpg")
    let original = try ContentHash.of(file: path)
    _ = try lib.scan()
    let id = try #require(try lib.asset("x/photo.jpg")).id.rawValue
    let info = try CLI.run(["info", "--json", id], cwd: lib.root, environment: lib.environment)
    #expect(info.status == 0)
    #expect(info.stdout.contains("\"file\" : \"\(path)\""))
    let edit = try CLI.run(
      ["edit", id, "--filter", "noir"], cwd: lib.root + "/x", environment: lib.environment)
    #expect(edit.status == 0, "\(edit.stderr)")
    #expect(try ContentHash.of(file: path) != original)
    #expect(try lib.library.asset(AssetID(id)!).adjustmentVersion == 1)
    let revert = try CLI.run(["revert", id], cwd: lib.root, environment: lib.environment)
    #expect(revert.status == 0)
    #expect(try ContentHash.of(file: path) == original)
    #expect(try lib.library.asset(AssetID(id)!).adjustmentVersion == 0)
    let unknown = try CLI.run(
      ["info", "01AAAAAAAAAAAAAAAAAAAAAAAA"], cwd: lib.root, environment: lib.environment)
    #expect(unknown.status == 1)
    #expect(
      unknown.stderr
        == "darkroom: 01AAAAAAAAAAAAAAAAAAAAAAAA: no such asset in the library at \(lib.root)\n")
  }

  @Test("Video headers: an MP4 turned 90 degrees and a MOV, read without a decoder")
  func videoHeaders() throws {
    let mp4 = try VideoHeader.read(path: Fixture.sample("video-rotated.mp4"))
    #expect(
      mp4
        == VideoHeader(
          format: "mp4", duration: 1.5, width: 64, height: 48, rotation: 90,
          creationDate: 1_714_979_289, codec: "avc1"))
    #expect(mp4.displayWidth == 48 && mp4.displayHeight == 64)
    let mov = try VideoHeader.read(path: Fixture.sample("clip.mov"))
    #expect(
      mov
        == VideoHeader(
          format: "mov", duration: 2.0, width: 48, height: 32, rotation: 0,
          creationDate: 1_672_628_645, codec: "avc1"))
    // Cut short before its moov (at the end of a MOV): a clear error naming the file.
    let bytes = try Fixture.bytes(Fixture.sample("clip.mov"))
    let folder = try Fixture.temporaryFolder()
    let cut = try folder.write("cut.mov", Array(bytes.prefix(bytes.count / 2)))
    #expect(throws: DarkroomError.self) { try VideoHeader.read(path: cut) }
    do {
      _ = try VideoHeader.read(path: cut)
    } catch {
      #expect(error.file == cut)
      #expect(error.kind == .corrupt)
    }
    // Its representations are of a frame: a thumbnail is exactly the size asked for.
    let render = try CLI.run([
      "render", "--rep", "thumbnail", Fixture.sample("clip.mov"), "-o", folder.file("t.jpg"),
    ])
    #expect(render.status == 0, "\(render.stderr)")
    let thumbnail = try pixels(folder.file("t.jpg"))
    #expect(thumbnail.width == 256 && thumbnail.height == 256)
    // The cut one is refused as the header reader refuses it, and nothing is written.
    let refused = try CLI.run([
      "render", "--rep", "thumbnail", cut, "-o", folder.file("cut.jpg"),
    ])
    #expect(refused.status == 1)
    #expect(refused.stderr.hasPrefix("darkroom: \(cut): damaged"), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("cut.jpg")))
  }

  @Test(
    "Two processes scanning and editing one library at once: no 'database is locked'",
    arguments: CatalogBackend.allCases)
  func concurrentProcesses(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    var files: [String] = []
    for n in 0..<40 {
      files.append(
        try lib.add("orientation-\(n % 8 + 1).jpg", as: "f\(n / 10)/\(n).jpg", tag: "\(n)"))
    }
    _ = try lib.scan()
    // Changes for the scan to find while edits write the same catalog.
    for n in 0..<40 where n % 2 == 0 {
      try lib.add("orientation-\(n % 8 + 1).jpg", as: "f\(n / 10)/\(n).jpg", tag: "changed \(n)")
    }
    let group = DispatchGroup()
    let results = Locked<[CLIResult]>([])
    let (root, environment) = (lib.root, lib.environment)
    for arguments in [
      ["scan", lib.root, "--jobs", "1", "--batch-size", "2"],
      ["edit", "--filter", "noir"]
        + files.filter { $0.hasSuffix("1.jpg") || $0.hasSuffix("3.jpg") },
      ["scan", lib.root + "/f1", "--jobs", "1", "--batch-size", "1"],
    ] {
      group.enter()
      DispatchQueue.global().async {
        if let result = try? CLI.run(arguments, cwd: root, environment: environment) {
          results.withLock { $0.append(result) }
        }
        group.leave()
      }
    }
    group.wait()
    let all = results.withLock { $0 }
    #expect(all.count == 3)
    for result in all {
      #expect(result.status == 0, "\(result.stderr)")
      #expect(!result.stderr.contains("locked"))
    }
    let final = try lib.scan()
    #expect(final.files == 40 && final.added == 0 && final.removed == 0)
    #expect(try lib.paths().count == 40)
    var edited = AssetQuery()
    edited.edited = true
    #expect(try lib.paths(edited).count == 8)
    #expect(try lib.library.catalog().check() == [])
  }

  @Test("kill -9 in the middle of a scan: the next scan completes and the database is sound")
  func killedScan() throws {
    let lib = try LibraryFixture()
    for n in 0..<30 {
      try lib.add("orientation-\(n % 8 + 1).jpg", as: "d\(n % 3)/\(n).jpg", tag: "\(n)")
    }
    let killed = try CLI.run(
      ["scan", lib.root, "--jobs", "1", "--batch-size", "4"],
      environment: ["DARKROOM_FAULT": "after-scan-batch:3"])
    #expect(killed.status == 128 + 9)
    let partial = try SQLiteCatalog(path: lib.library.catalogPath)
    #expect(try partial.count(AssetQuery()) == 12)
    #expect(try partial.check() == [])
    let resumed = try CLI.run(["scan", lib.root, "--json"])
    #expect(resumed.status == 0)
    let summary = try JSONDecoder().decode(ScanSummary.self, from: resumed.stdoutData)
    #expect(summary.added == 18 && summary.unchanged == 12)
    #expect(try lib.paths().count == 30)
    #expect(try lib.library.catalog().check() == [])
  }

  @Test(
    "A fetch result counts, and loads rows a page at a time by index",
    arguments: CatalogBackend.allCases)
  func fetchResult(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    var rows: [Asset] = []
    let catalog = try lib.library.catalog()
    for n in 0..<250 {
      rows.append(
        Asset(
          path: "synthetic/\(n).jpg", hash: String(repeating: "0", count: 64),
          identity: FileIdentity(
            device: 1, inode: UInt64(n), size: 1, modified: Int64(n) * 1_000_000_000, changed: 0),
          read: .photo(
            AssetMetadata(
              file: "", format: "jpeg", byteSize: 1, width: 1, height: 1, orientation: .absent,
              hasAlpha: false)),
          edited: n % 5 == 0 ? 1 : 0, added: 0))
    }
    var changes = CatalogChanges()
    changes.upserts = rows
    try catalog.commit(changes)
    var query = AssetQuery()
    query.edited = true
    query.sort = .dateDescending
    let result = try lib.library.assets(matching: query)
    #expect(result.count == 50)
    #expect(try result.asset(at: 0).path == "synthetic/245.jpg")
    #expect(try result.asset(at: 49).path == "synthetic/0.jpg")
    #expect(
      try result.assets(in: 10..<13).map(\.path) == [
        "synthetic/195.jpg", "synthetic/190.jpg", "synthetic/185.jpg",
      ])
    #expect(throws: DarkroomError.self) { try result.asset(at: 50) }

    // A collection of the ids, in the query's order, as PHFetchResult is of its objects.
    let ids = try catalog.ids(query)
    #expect(Array(result) == ids && result.count == ids.count)
    #expect(result.firstIndex(of: ids[7]) == 7 && result[result.index(before: 50)] == ids[49])
    #expect(ids.allSatisfy { AssetID(bits: $0.bits) == $0 })
    // A snapshot: an asset removed after the fetch keeps its place, and reading it says so
    // (once its page is read: `result` read its first page before).
    let snapshot = try lib.library.assets(matching: query)
    var removal = CatalogChanges()
    removal.removals = [ids[20]]
    try catalog.commit(removal)
    let later = try lib.library.assets(matching: query)
    #expect(snapshot.count == 50 && later.count == 49 && snapshot[20] == ids[20])
    #expect(try result.asset(at: 20).id == ids[20])
    let gone = #expect(throws: DarkroomError.self) { try snapshot.asset(at: 20) }
    #expect(gone?.kind == .notFound)
    #expect(
      gone?.description == "\(ids[20].rawValue): was removed from the catalog since the fetch")
    #expect(try snapshot.asset(at: 21).id == ids[21])
  }

  @Test("check finds a damaged catalog")
  func checkCatalog() throws {
    let lib = try LibraryFixture()
    for n in 0..<40 { try lib.add("orientation-\(n % 8 + 1).jpg", as: "d/\(n).jpg", tag: "\(n)") }
    #expect(try CLI.run(["scan", lib.root]).status == 0)
    let sound = try CLI.run(["check", lib.root, "--json"])
    #expect(sound.status == 0, "\(sound.stdout)")
    // Garbage over the pages after the first (the schema's page stays readable).
    let path = lib.library.catalogPath
    // The scan's process left its work in the write-ahead log; the last connection to close
    // moves it into the database file.
    do { _ = try SQLiteCatalog(path: path) }
    var bytes = try Fixture.bytes(path)
    #expect(bytes.count > 12_288)
    for index in 4096..<min(bytes.count, 12_288) { bytes[index] = 0x55 }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let damaged = try CLI.run(["check", lib.root, "--json"])
    #expect(damaged.status == 1)
    let report = try JSONDecoder().decode(LibraryCheck.Report.self, from: damaged.stdoutData)
    #expect(report.findings.contains { $0.kind == .damagedCatalog && $0.file == path })
  }

  @Test(
    "An apply job reports each file and the end as an AsyncSequence",
    arguments: CatalogBackend.allCases)
  func applyEvents(_ backend: CatalogBackend) async throws {
    let lib = try LibraryFixture(backend)
    let files = try (1...3).map { try lib.add("orientation-\($0).jpg", as: "\($0).jpg") }
    var request = JobRequest(
      .edit(try FilterGraph.parse(spec: "noir"), mode: .replace),
      on: .files(BatchInputs.collect([lib.root]).inputs))
    request.output = lib.folder.file("out")
    let job = try LibraryJob(request)
    var outcomes: [BatchOutcome] = []
    var finished: BatchCounts?
    for await event in job.events() {
      switch event {
      case .item(let outcome, _): outcomes.append(outcome)
      case .finished(let counts): finished = counts
      }
    }
    #expect(outcomes.map(\.file).sorted() == files)
    #expect(outcomes.allSatisfy { $0.status == .done })
    #expect(finished?.done == 3 && finished?.failed == 0)
    for outcome in outcomes {
      #expect(try ContentHash.of(file: try #require(outcome.output)).hex == outcome.resultSHA256)
    }
  }

  @Test("Asset ids are 26 characters of Crockford base32 that sort by time")
  func assetIDs() {
    let early = AssetID.make(millisecond: 1_000)
    let late = AssetID.make(millisecond: 1_700_000_000_000)
    #expect(early < late)
    #expect(early.rawValue.count == 26 && AssetID(early.rawValue) == early)
    #expect(AssetID("01AAAAAAAAAAAAAAAAAAAAAAAI") == nil)  // I is not in the alphabet
    #expect(AssetID("photo.jpg") == nil)
    #expect(
      AssetID.make(millisecond: 1_700_000_000_000).rawValue.prefix(10) == late.rawValue.prefix(10))
  }
}
