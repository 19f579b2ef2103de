import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// What keeps a large library's cost flat: a scan that holds a batch, not the library; pages
/// that do not count what follows them; counts the catalog keeps.
@Suite("A large library: scans by the batch, pages without counting", .serialized, .offThePool)
struct ScaleTests {
  @Test(
    "A scan reads and writes while it walks, a batch at a time, and still tells moves from copies in either walk order"
  )
  func scanByBatch() throws {
    let lib = try LibraryFixture()
    // Folders a..e, four files each; the walk takes them from the last (e) to the first.
    var n = 0
    for folder in ["a", "b", "c", "d", "e"] {
      for _ in 0..<4 {
        n += 1
        try lib.add("orientation-1.jpg", as: "\(folder)/\(n).jpg", tag: "photo \(n)")
      }
    }
    var options = ScanOptions()
    options.batchSize = 1
    options.jobs = 1
    let seen = Locked([ScanProgress]())
    let first = try lib.library.scanBlocking(options: options) { state in
      seen.withLock { $0.append(state) }
    }
    #expect(first.added == 20)
    // Files were read before the walk had found them all: a batch is written as it fills.
    let early = seen.withLock { $0 }.first { $0.read > 0 }
    #expect(early.map { $0.found < 20 } == true, "\(seen.withLock { $0 })")

    let ids = try (1...20).map { i in
      try #require(try lib.asset("\(["a", "b", "c", "d", "e"][(i - 1) / 4])/\(i).jpg")).id
    }
    let fm = FileManager.default
    // A move to a folder walked before its old one (e is walked first), and one to a folder
    // walked after it (a is walked last); a copy beside an original that stays; a folder
    // emptied by its files' moves; a new file.
    try fm.moveItem(atPath: lib.folder.file("a/1.jpg"), toPath: lib.folder.file("e/moved-1.jpg"))
    try fm.moveItem(atPath: lib.folder.file("e/17.jpg"), toPath: lib.folder.file("a/moved-17.jpg"))
    try fm.copyItem(atPath: lib.folder.file("c/9.jpg"), toPath: lib.folder.file("b/copy-9.jpg"))
    for i in 13...16 {
      try fm.moveItem(atPath: lib.folder.file("d/\(i).jpg"), toPath: lib.folder.file("b/\(i).jpg"))
    }
    try fm.removeItem(atPath: lib.folder.file("d"))
    try lib.add("orientation-2.jpg", as: "c/new.jpg", tag: "new")
    let second = try lib.library.scanBlocking(options: options)
    #expect(second.moved == 6 && second.added == 2 && second.removed == 0, "\(second)")
    #expect(try lib.asset("e/moved-1.jpg")?.id == ids[0])
    #expect(try lib.asset("a/moved-17.jpg")?.id == ids[16])
    #expect(try lib.asset("c/9.jpg")?.id == ids[8])
    let copy = try #require(try lib.asset("b/copy-9.jpg"))
    #expect(!ids.contains(copy.id))
    for i in 13...16 { #expect(try lib.asset("b/\(i).jpg")?.id == ids[i - 1]) }
    // The emptied folder's row went with its last file.
    #expect(try lib.library.catalog().folders(under: "").sorted() == ["", "a", "b", "c", "e"])
    #expect(try lib.paths().count == 22)
  }

  @Test("A folder whose files all went leaves the catalog; one still holding a file stays")
  func emptiedFolders() throws {
    let lib = try LibraryFixture()
    try lib.add("orientation-1.jpg", as: "x/y/1.jpg", tag: "1")
    try lib.add("orientation-1.jpg", as: "x/2.jpg", tag: "2")
    try lib.add("orientation-1.jpg", as: "z/3.jpg", tag: "3")
    _ = try lib.scan()
    #expect(try lib.library.catalog().folders(under: "").sorted() == ["", "x", "x/y", "z"])
    try FileManager.default.removeItem(atPath: lib.folder.file("x/y/1.jpg"))
    #expect(try lib.scan().removed == 1)
    #expect(try lib.library.catalog().folders(under: "").sorted() == ["", "x", "z"])
    try FileManager.default.removeItem(atPath: lib.folder.file("x/2.jpg"))
    #expect(try lib.scan().removed == 1)
    #expect(try lib.library.catalog().folders(under: "").sorted() == ["", "z"])
  }

  /// `count` assets in a fresh catalog, one a day back from 2024-12-31, every third a video
  /// and every fifth in the trash.
  static func filledLibrary(_ count: Int) throws -> (LibraryFixture, SQLiteCatalog) {
    let lib = try LibraryFixture()
    let library = try Library.create(at: lib.root)
    let catalog = try SQLiteCatalog(path: library.catalogPath)
    var changes = CatalogChanges()
    for i in 0..<count {
      var asset = Asset(
        path: "p/\(i).jpg", contentHash: String(format: "%064x", i),
        identity: FileIdentity(device: 1, inode: UInt64(i), size: 10, modified: 0, changed: 0),
        mediaType: i % 3 == 0 ? .video : .photo, format: i % 3 == 0 ? "mp4" : "jpeg", width: 4,
        height: 3, sortDate: 1_735_603_200 - Double(i) * 86400, addedAt: 0)
      if i % 5 == 0 { asset.trashedAt = 1 }
      changes.upserts.append(asset)
    }
    try catalog.commit(changes)
    return (lib, catalog)
  }

  @Test(
    "A page counts only when it is the first; the next one is there exactly when more follow; kept counts agree with the rows"
  )
  func pagesWithoutCounting() throws {
    let (lib, catalog) = try Self.filledLibrary(50)
    let library = lib.library
    var query = AssetQuery()
    query.sort = .dateDescending
    // 50 assets, 10 in the trash: 40 visible.
    let first = try library.page(of: query, limit: 15)
    #expect(first.count == 40 && first.assets.count == 15)
    var ids = first.assets.map(\.id)
    var next = first.next
    var pages = 1
    while let after = next {
      query.after = after
      let page = try library.page(of: query, limit: 15)
      #expect(page.count == nil)
      ids += page.assets.map(\.id)
      next = page.next
      pages += 1
    }
    #expect(pages == 3 && ids.count == 40 && Set(ids).count == 40)
    var all = AssetQuery()
    all.sort = .dateDescending
    #expect(try catalog.ids(all) == ids)
    // A page that ends exactly at the last asset has no next.
    let exact = try library.page(of: AssetQuery(), limit: 40)
    #expect(exact.assets.count == 40 && exact.next == nil)

    // The whole library's count and a month's come from the kept month counts: the same
    // as counting the rows (a filter that keeps every visible row forces the row count).
    var rows = AssetQuery()
    rows.includeHidden = false
    rows.minDuration = nil
    rows.text = ""
    #expect(CatalogSQL.isWholeLibrary(AssetQuery()) && !CatalogSQL.isWholeLibrary(rows))
    let (kept, counted) = (try catalog.count(AssetQuery()), try catalog.count(rows))
    #expect(kept == 40 && counted == 40)
    var december = AssetQuery()
    december.month = 202412
    var decemberRows = december
    decemberRows.text = ""
    let (month, monthRows) = (try catalog.count(december), try catalog.count(decemberRows))
    #expect(month == 24 && monthRows == 24)
    var videos = AssetQuery()
    videos.mediaType = .video
    #expect(try catalog.count(videos) == 13)
  }
}

@Suite("A front server sends cached renditions", .timeLimit(.minutes(5)), .offThePool)
struct AccelRedirectTests {
  static let header = HTTPField.Name("X-Accel-Redirect")!

  @Test(
    "With --accel-redirect a cached rendition is a header naming its cache file (the rendered bytes), never a render's bytes twice"
  )
  func redirects() async throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let id = try served.ids()[0]
    let asset = try served.library.asset(id)
    var configuration = served.configuration()
    configuration.accelRedirect = "/_darkroom_cache/"
    let cache = served.library.cacheFolder.path
    try await served.test(configuration) { client, _ in
      let uri = "/api/assets/\(id.rawValue)/thumbnail?size=64&v=\(asset.contentHash.prefix(12))"
      // Not cached yet: rendered and sent.
      let first = try await client.execute(uri: uri, method: .get, headers: ServedLibrary.read)
      #expect(first.status == .ok && first.headers[Self.header] == nil && first.bytes.count > 100)
      // Cached: the front server is sent to the file, which holds the same bytes.
      for _ in 0..<2 {
        let again = try await client.execute(uri: uri, method: .get, headers: ServedLibrary.read)
        let location = try #require(again.headers[Self.header])
        #expect(again.status == .ok && again.bytes.isEmpty)
        #expect(location.hasPrefix("/_darkroom_cache/objects/"))
        let file = cache + "/" + location.dropFirst("/_darkroom_cache/".count)
        #expect(try Fixture.bytes(file) == first.bytes)
        #expect(again.headers[.contentType] == "image/jpeg")
        #expect(again.headers[.cacheControl] == "public, max-age=31536000, immutable")
        #expect(again.headers[.eTag] == first.headers[.eTag])
      }
      // `full` is the file itself, always sent from here.
      let full = try await client.execute(
        uri: "/api/assets/\(id.rawValue)/full", method: .get, headers: ServedLibrary.read)
      let original = try Fixture.bytes(served.folder.file("gps.jpg"))
      #expect(full.headers[Self.header] == nil && full.bytes == original)
    }
  }
}

@Suite("Background work yields to requests", .timeLimit(.minutes(5)), .offThePool)
struct BackgroundPriorityTests {
  /// The nice value of each thread of process `pid` (field 19 of /proc/PID/task/TID/stat),
  /// by thread id.
  static func niceness(_ pid: Int32) -> [Int32: Int] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var result: [Int32: Int] = [:]
    for task in tasks {
      guard let tid = Int32(task),
        let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { continue }
      // After the command's name in parentheses: state is field 3, nice field 19.
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      if fields.count > 16, let nice = Int(fields[16]) { result[tid] = nice }
    }
    return result
  }

  @Test("a background thread is lowered to nice 19; the threads that answer requests are not")
  func lowered() throws {
    let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    let seen = Locked<(Bool, Int32)?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      let lowered = BackgroundPriority.lowerThisThread()
      // PRIO_PROCESS with 0 names the calling thread on Linux.
      seen.withLock { $0 = (lowered, getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)) }
      done.signal()
    }
    thread.start()
    done.wait()
    let (lowered, after) = try #require(seen.withLock { $0 })
    #expect(lowered && after == 19)
    #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before)

    // darkroom serve: its watcher (the first scan) and background thumbnails run at 19;
    // its main thread as it was started. (libdispatch gives its own threads other values,
    // by quality of service.)
    // Each background thread says its niceness as it starts (DARKROOM_TEST_PRIORITY): a
    // thread that ends quickly is not missed by looking at the process from outside.
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let server = try ServeProcess(
      served.root, environment: ["DARKROOM_NO_BACKGROUND": "0", "DARKROOM_TEST_PRIORITY": "1"])
    defer { _ = server.stop() }
    let pid = server.process.processIdentifier
    let said = {
      ((try? String(contentsOfFile: server.output.file("stderr"), encoding: .utf8)) ?? "")
        .split(separator: "\n").filter { $0.hasPrefix("darkroom: background thread ") }
    }
    #expect(eventually(60) { said().count == 2 }, "\(said())")
    #expect(said().allSatisfy { $0.hasSuffix(" at nice 19") }, "\(said())")
    #expect(
      Self.niceness(pid)[pid] == Int(before),
      "\(Self.niceness(pid)), \(before)")
    // A person's render, once the background pass has started the process's first workers
    // from its lowered thread: it runs at the main thread's priority. (Before ba5e221 every
    // worker of the server ran at 19, or at libdispatch's -2.)
    let id = try #require(try served.library.assetIDs(matching: AssetQuery()).first)
    #expect(try server.request("GET", "/api/assets/\(id.rawValue)/fullscreen").status == 200)
    let people = Self.children(of: pid).filter { child in
      let environment =
        (try? String(contentsOfFile: "/proc/\(child)/environ", encoding: .utf8)) ?? ""
      return environment.contains("DARKROOM_WORKER_")
        && !environment.contains(
          "DARKROOM_WORKER_BACKGROUND=1")
    }
    #expect(!people.isEmpty)
    for worker in people {
      #expect(Self.niceness(worker)[worker] == Int(before), "worker \(worker)")
    }
  }

  /// The processes whose parent is `pid` (field 4 of /proc/PID/stat).
  static func children(of pid: Int32) -> [Int32] {
    let all = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return all.compactMap { entry -> Int32? in
      guard let child = Int32(entry),
        let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { return nil }
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
    }
  }

  @Test(
    "a background pool's workers lower themselves to 19 as they start; another pool's keep the process's priority, whichever thread asked"
  )
  func backgroundWorkers() throws {
    let which = __priority_which_t(PRIO_PROCESS.rawValue)
    let process = getpriority(which, id_t(getpid()))  // the main thread's
    var configuration = WorkerPool.Configuration(executable: CLI.binary)
    configuration.background = true
    let background = WorkerPool(configuration)
    defer { background.shutDown() }
    let people = WorkerPool(.init(executable: CLI.binary))
    defer { people.shutDown() }
    // People's first worker is asked for by a lowered thread (as a server's background pass
    // once did): it is started by the spawn thread, at the process's priority all the same.
    let done = DispatchSemaphore(value: 0)
    let asked = Thread {
      BackgroundPriority.lowerThisThread()
      _ = try? people.probeDescriptors([])
      done.signal()
    }
    asked.start()
    done.wait()
    _ = try background.probeDescriptors([])
    let (lowered, kept) = (background.workerIDs, people.workerIDs)
    #expect(lowered.count == 1 && kept.count == 1)
    for pid in lowered { #expect(Self.niceness(pid)[pid] == 19, "background worker \(pid)") }
    for pid in kept { #expect(Self.niceness(pid)[pid] == Int(process), "worker \(pid)") }
  }

}
