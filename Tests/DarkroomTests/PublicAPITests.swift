// Not @testable; but inside the package `package` declarations are seen too: what an app
// outside sees is checked by `tourOutside` (Examples/Tour type-checked from outside).
import Darkroom
import Foundation
import Logging
import Synchronization
import Testing

/// A small app on the `Darkroom` product: open, scan, list by date, show a photo, edit,
/// history, revert, watch the library change, and cancel a batch halfway.
@Suite("The library as a Swift app uses it", .timeLimit(.minutes(10)), .offThePool)
struct PublicAPITests {
  /// A folder of eight photos, made a library.
  private func photos() throws -> (folder: URL, library: Library) {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("darkroom-api-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for n in 1...8 {
      try FileManager.default.copyItem(
        atPath: Fixture.sample("orientation-\(n).jpg"), toPath: folder.path + "/\(n).jpg")
    }
    _ = try Library.create(at: folder.path)
    return (folder, try Library.open(at: folder.path))
  }

  /// `swiftc -typecheck source` against the modules `swift build` put beside the test
  /// bundle (and the C modules' maps theirs need), as a package outside this one sees them.
  static func typecheck(_ source: String) throws -> CLIResult {
    let products = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
    let root = Fixture.root.path
    var arguments = ["swiftc", "-typecheck", "-I", products + "/Modules"]
    var maps = [root + "/.build/checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap"]
    for entry in try FileManager.default.contentsOfDirectory(atPath: products)
    where entry.hasSuffix(".build") {
      maps.append(products + "/" + entry + "/module.modulemap")
    }
    for entry in try FileManager.default.contentsOfDirectory(atPath: root + "/Sources")
    where entry.hasPrefix("C") {
      maps.append(root + "/Sources/" + entry + "/module.modulemap")
    }
    for map in maps.sorted() where FileManager.default.fileExists(atPath: map) {
      arguments += ["-Xcc", "-fmodule-map-file=" + map]
    }
    // The system libraries' headers where pkg-config puts them (libpq's are in a folder of
    // their own), as SwiftPM finds them; and a module cache of its own, so that nothing
    // built before (with other flags) answers for this check.
    let flags = try CLI.run(
      ["pkg-config", "--cflags-only-I", "libexif", "libsodium", "libpq"], executable: "/usr/bin/env"
    )
    for flag in flags.stdout.split(whereSeparator: \.isWhitespace) {
      arguments += ["-Xcc", String(flag)]
    }
    let cache = try TemporaryFolder()
    arguments += ["-module-cache-path", cache.file("modules")]
    return try withExtendedLifetime(cache) {
      try CLI.run(arguments + [source], executable: "/usr/bin/env")
    }
  }

  @Test(
    "PhotoKit's tour (Examples/Tour) on the public API alone: it type-checks from outside the package (where an inner part does not); run, it prints each step's result"
  )
  func tourOutside() throws {
    let checked = try Self.typecheck(Fixture.root.path + "/Examples/Tour/main.swift")
    #expect(checked.status == 0, "\(checked.stderr)")
    // The same check refuses an inner part: it sees only what is public.
    let folder = try TemporaryFolder()
    let probe = try folder.write("probe.swift", Array("import Darkroom\n_ = Renderer()\n".utf8))
    let refused = try Self.typecheck(probe)
    #expect(refused.status != 0 && refused.stderr.contains("cannot find 'Renderer' in scope"))

    let library = folder.file("library")
    try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
    for n in [1, 3, 6, 8] {
      try FileManager.default.copyItem(
        atPath: Fixture.sample("orientation-\(n).jpg"), toPath: library + "/\(n).jpg")
    }
    let products = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
    let run = try CLI.run([library, folder.file("space")], executable: products + "/DarkroomTour")
    #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
    var lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 11, "\(run.stdout)")
    guard lines.count == 11 else { return }
    #expect(lines[1].hasPrefix("fetch: 4 photos, newest "), "\(lines[1])")
    // A job stopped after its first item starts no more: it ends before all four (one or
    // two more may have started while the reader was on its way).
    #expect(
      ["batch: stopped after 1 of 4", "batch: stopped after 2 of 4", "batch: stopped after 3 of 4"]
        .contains(lines[7]), "\(lines[7])")
    (lines[1], lines[7]) = ("", "")
    #expect(
      lines == [
        "scan: 4 added, 0 damaged", "", "thumbnails: 4 of 256 px", "fullscreen: 600x400 jpeg",
        "edit: version 1, 1 filter", "history: 1 version, current 1",
        "revert: reverted, original restored byte for byte", "", "changes: inserted at [4]",
        "space: 1 photo, thumbnail 256 px", "locked: the space is locked",
      ], "\(run.stdout)")
  }

  @Test(
    "open, scan, list by date, an image from the cache, edit, history, revert",
    .timeLimit(.minutes(5)))
  func everyday() async throws {
    let (folder, library) = try photos()
    defer { try? FileManager.default.removeItem(at: folder) }
    #expect(throws: DarkroomError.self) { try Library.open(at: folder.path + "/nowhere") }

    let summary = try await library.scan()
    #expect(summary.added == 8)
    var newestFirst = AssetQuery()
    newestFirst.sort = .dateDescending
    let result = try library.assets(matching: newestFirst)
    let listed = try result.assets(in: 0..<result.count)
    #expect(listed.count == 8)
    #expect(Array(result) == listed.map(\.id))  // a random-access collection of the ids
    #expect(result.firstIndex(of: listed[3].id) == 3)
    let dates = listed.map { $0.captured ?? $0.added }
    #expect(dates == dates.sorted(by: >))

    let id = listed[0].id
    let first = try await library.image(for: id, RenditionSpec(.fullscreen))
    let again = try await library.image(for: id, RenditionSpec(.fullscreen))
    #expect(again.bytes == first.bytes)
    #expect(max(first.width, first.height) <= 2560)

    let noir = try FilterGraph.parse(spec: "noir")
    let adjustment = try await library.edit(id, with: noir)
    #expect(adjustment.version == 1)
    let edited = try library.asset(id)
    #expect(edited.contentHash == (try ContentHash.of(file: library.path(of: edited)).hex))
    let history = try await library.history(of: id)
    #expect(history.versions.map(\.version) == [1] && history.current == 1)
    let screen = try await library.image(for: id, RenditionSpec(.fullscreen))
    #expect(screen.bytes != first.bytes, "the edit is what is shown now")

    let reverted = try await library.revert(id)
    guard case .restoredOriginal(let sha256) = reverted else {
      Issue.record("revert did \(reverted)")
      return
    }
    #expect(try library.asset(id).contentHash == sha256)
    #expect(try await library.image(for: id, RenditionSpec(.fullscreen)).bytes == first.bytes)
  }

  @Test(
    "a space is a library: the same calls as a folder's over sealed storage, nothing in the clear",
    .timeLimit(.minutes(5)))
  func space() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("darkroom-api-space-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let sealed = folder.path + "/Private"
    let password = Array("correct horse".utf8)
    let space = try Space.create(
      at: sealed, password: password, kdf: KDFParameters(ops: 1, memory: 8 << 20))
    let library = Library(space: space)
    let other = try Library.open(space: sealed, password: password)  // another unlock
    #expect(library.space === space && library != other && library == Library(space: space))
    other.close()

    // Added: one from a file, one from bytes (an upload); the same bytes again are no new asset.
    let gps = Fixture.sample("gps.jpg")
    let (first, added) = try library.add(file: gps)
    let six = try Data(contentsOf: URL(fileURLWithPath: Fixture.sample("orientation-6.jpg")))
    let (second, _) = try library.add(bytes: Array(six), name: "orientation-6.jpg")
    let again = try library.add(file: gps)
    #expect(added && !again.added && again.asset.id == first.id)
    #expect(
      try library.bytes(of: first.id) == Array(try Data(contentsOf: URL(fileURLWithPath: gps))))
    #expect(try library.bytes(of: second.id, range: 2..<6) == Array(six[2..<6]))
    #expect(try library.byteCount(of: second.id) == six.count)

    // Fetched as a folder's are: a collection of ids in the query's order, assets by id.
    var byName = AssetQuery()
    byName.sort = .name
    let listed = try library.assets(matching: byName)
    #expect(Array(listed) == [first.id, second.id])  // gps.jpg < orientation-6.jpg
    #expect(try listed.asset(at: 1).name == "orientation-6.jpg")
    let upright = try library.asset(second.id)  // stored 400 x 600, orientation 6
    #expect((upright.displayWidth, upright.displayHeight) == (600, 400))
    #expect(
      try library.assetIDs(["orientation-6.jpg", first.id.rawValue]) == [second.id, first.id])

    // Shown, edited, its history read, reverted: the calls and the answers a folder gives.
    let screen = try await library.image(for: second.id, RenditionSpec(.fullscreen))
    #expect((screen.width, screen.height) == (600, 400), "upright")
    let adjustment = try await library.edit(second.id, with: try FilterGraph.parse(spec: "noir"))
    #expect(adjustment.version == 1)
    var edited = AssetQuery()
    edited.edited = true
    #expect(Array(try library.assets(matching: edited)) == [second.id])
    let history = try await library.history(of: second.id)
    #expect(history.current == 1 && history.versions.map(\.graph.nodes.count) == [1])
    let noir = try await library.image(for: second.id, RenditionSpec(.fullscreen))
    #expect(noir.bytes != screen.bytes, "the edit is what is shown now")
    guard case .restoredOriginal = try await library.revert(second.id) else {
      Issue.record("revert did not restore the original")
      return
    }
    #expect(try library.asset(second.id).adjustmentVersion == 0)
    #expect(
      try await library.image(for: second.id, RenditionSpec(.fullscreen)).bytes == screen.bytes)

    // A job over its assets, and the trash, as in a folder.
    let counts = try library.apply(try FilterGraph.parse(spec: "mono"), to: .query(AssetQuery()))
      .run()
    #expect(counts.done == 2 && counts.failed == 0)
    let trashed = try LibraryJob(JobRequest(.trash, on: .assets([first.id]), in: library)).run()
    #expect(trashed.done == 1)
    var inTrash = AssetQuery()
    inTrash.trashed = true
    #expect(Array(try library.assets(matching: inTrash)) == [first.id])
    #expect(Array(try library.assets(matching: AssetQuery())) == [second.id])
    #expect(throws: DarkroomError.self) { try library.trash([first.id]) }  // there already
    _ = try library.restore([first.id])
    #expect(try library.count(matching: AssetQuery()) == 2)

    // What only a folder has is refused, saying so; nothing was written in the clear.
    let scan = await #expect(throws: DarkroomError.self) { try await library.scan() }
    #expect(scan?.description == "\(sealed): is an encrypted space: it has no folders to scan")
    #expect(throws: DarkroomError.self) { try library.edit(.create("Trips")) }
    #expect(throws: DarkroomError.self) { try library.changes(since: 0) }
    let meta = #expect(throws: DarkroomError.self) {
      try library.writeMetadata(MetadataEdit(rating: 3), to: [first.id])
    }
    #expect(
      meta?.description
        == "\(sealed): is an encrypted space: it has no sidecars: descriptions, ratings and keywords"
    )
    let exported = try library.export(first.id, to: folder.path)
    #expect(exported == folder.path + "/gps.jpg")
    let inSpace = try FileManager.default.subpathsOfDirectory(atPath: sealed)
    #expect(!inSpace.contains { $0.hasSuffix(".jpg") || $0.contains("darkroom") }, "\(inSpace)")
    for path in inSpace {
      guard let bytes = FileManager.default.contents(atPath: sealed + "/" + path) else { continue }
      #expect(!bytes.starts(with: [0xFF, 0xD8]), "\(path) is a JPEG in the clear")
    }
    library.close()
    #expect(space.isClosed)
    #expect(throws: DarkroomError.self) { try library.asset(first.id) }

    // Unlocked again, it shows its photos as before (nothing kept the locked one's state).
    let reopened = try Library.open(space: sealed, password: password)
    #expect(try await reopened.image(for: second.id, RenditionSpec(.fullscreen)).width == 600)
    reopened.close()
  }

  @Test(
    "a change made by another task is pushed to an observer of the fetch", .timeLimit(.minutes(5)))
  func observe() async throws {
    let (folder, library) = try photos()
    defer { try? FileManager.default.removeItem(at: folder) }
    _ = try await library.scan()
    let all = AssetQuery()
    let ids = try library.assetIDs(matching: all)
    let changes = try library.changes(of: all, every: .seconds(3600))  // only the push
    let editor = Task { try await library.edit(ids[2], with: try FilterGraph.parse(spec: "noir")) }
    var iterator = changes.makeAsyncIterator()
    let change = try #require(try await iterator.next())
    #expect(change.changedIndexes == [2])
    #expect(change.insertedIndexes.isEmpty && change.removedIndexes.isEmpty)
    _ = try await editor.value
  }

  @Test(
    "a cancelled apply stops, still delivers its final counts, and leaves the catalog true",
    .timeLimit(.minutes(5)))
  func cancelApply() async throws {
    let (folder, library) = try photos()
    defer { try? FileManager.default.removeItem(at: folder) }
    _ = try await library.scan()
    let noir = try FilterGraph.parse(spec: "noir")

    // Cancelled halfway, after the first photo: whatever was in flight finishes.
    let job = try library.apply(noir, to: .query(AssetQuery()))
    let consumer = Task {
      var done: [String] = []
      var last: BatchCounts?
      for await event in job.events() {
        switch event {
        case .item(let outcome, _):
          if outcome.status == .done { done.append(outcome.file) }
          withUnsafeCurrentTask { $0?.cancel() }
        case .finished(let counts): last = counts
        }
      }
      return (done, last)
    }
    let (done, last) = await consumer.value
    let counts = try #require(last, "the final counts arrive after the cancel")
    #expect(counts.done == done.count && counts.done >= 1)
    #expect(counts.done + counts.failed + counts.skipped + counts.notStarted == 8)
    var edited = AssetQuery()
    edited.edited = true
    let catalogued = try library.assets(matching: edited)
    #expect(Set(try catalogued.assets(in: 0..<catalogued.count).map(\.path)) == Set(done))
    let everything = try library.assets(matching: AssetQuery())
    for asset in try everything.assets(in: 0..<everything.count) {
      #expect(asset.contentHash == (try ContentHash.of(file: library.path(of: asset)).hex))
    }

    // The catalog kept the job, with what it did (all of it, if this machine was slow to
    // hand the consumer its first event).
    let first = try #require(job.request.recordID)
    let record = try #require(try library.jobRecord(first))
    #expect(record.state == (counts.notStarted > 0 ? .stopped : .finished))
    #expect(record.done == counts.done && record.total == 8 && record.failures.isEmpty)

    // Cancelled before it starts: nothing is done, and the counts still arrive.
    let untouched = try library.apply(noir, to: .query(AssetQuery()))
    let early = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      var last: BatchCounts?
      for await event in untouched.events() {
        if case .finished(let counts) = event { last = counts }
      }
      return last
    }
    let stopped = try #require(await early.value)
    #expect(stopped.finished == 0 && stopped.notStarted == 8)

    // That job, kept as stopped, resumes under its id and does the rest: the photos the
    // first job edited already carry the edit (skipped), and each photo is edited once.
    let id = try #require(untouched.request.recordID)
    let kept = try #require(try library.jobRecord(id))
    #expect(kept.state == .stopped && kept.canResume && kept.done == 0 && kept.total == 8)
    let rest = try LibraryJob(try library.resumeJob(id)).run()
    #expect(rest.done == 8 - counts.done && rest.skipped == counts.done && rest.failed == 0)
    let finished = try #require(try library.jobRecord(id))
    #expect(finished.state == .finished && finished.done == 8 && !finished.canResume)
    #expect(throws: DarkroomError.self) { try library.resumeJob(id) }
    for asset in try everything.assets(in: 0..<everything.count) {
      #expect(try library.editHistory(asset.id).current == 1)
    }
  }

  @Test(
    "a recorded job keeps its quality for a resume, is resumed once, and appends are not recorded",
    .timeLimit(.minutes(5)))
  func jobRecords() async throws {
    let (folder, library) = try photos()
    defer { try? FileManager.default.removeItem(at: folder) }
    _ = try await library.scan()
    let ids = Array(try library.assets(matching: AssetQuery()).prefix(2))
    let noir = try FilterGraph.parse(spec: "noir")
    var request = JobRequest(.edit(noir, mode: .replace), on: .assets(ids), in: library)
    let id = JobRecord.newID()
    request.recordID = id
    request.settings.quality = 70
    let stopped = try LibraryJob(request)
    stopped.stop()  // before it starts: every item left
    #expect(stopped.run().notStarted == 2)
    #expect(try library.jobRecord(id)?.state == .stopped)
    let resumed = try library.resumeJob(id)
    #expect(resumed.settings.quality == 70)
    #expect(resumed.skipCurrent && resumed.recordID == id)
    // Claimed by this process now: a second resume is refused, as another process's would be.
    #expect(try library.jobRecord(id)?.state == .running)
    let again = #expect(throws: DarkroomError.self) { try library.resumeJob(id) }
    #expect(again?.kind == .invalidArgument)
    #expect(try LibraryJob(resumed).run().done == 2)
    #expect(try library.jobRecord(id)?.state == .finished)
    for asset in ids {
      #expect(try library.editHistory(asset).versions.last?.result.quality == 70)
    }
    // An edit that appends is not recorded: a resume could not tell whether it landed.
    var append = JobRequest(.edit(noir, mode: .append), on: .assets(ids), in: library)
    let appendID = JobRecord.newID()
    append.recordID = appendID
    #expect(try LibraryJob(append).run().done == 2)
    #expect(try library.jobRecord(appendID) == nil)
  }

  @Test(
    "a scan whose task is cancelled stops between batches, as shouldStop stops it: what it wrote stays, and the next scan goes on",
    .timeLimit(.minutes(5)))
  func scanCancelled() async throws {
    let (folder, library) = try photos()
    defer { try? FileManager.default.removeItem(at: folder) }
    var options = ScanOptions()
    options.batchSize = 1
    // Cancelled before it starts (not at some moment: no timing), it stops at its first
    // batch, having catalogued nothing.
    let stopped = try await Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await library.scan(options: options)
    }.value
    #expect(stopped.stopped)
    #expect(stopped.added == 0)
    #expect(try library.assets(matching: AssetQuery()).count == 0)
    let whole = try await library.scan(options: options)
    #expect(!whole.stopped)
    #expect(whole.added == 8)
  }

  @Test(
    "a logger passed in hears what the engine did and what failed without failing the call",
    .timeLimit(.minutes(5)))
  func logger() async throws {
    let (folder, _) = try photos()
    defer { try? FileManager.default.removeItem(at: folder) }
    let heard = Heard()
    let library = try Library.open(
      at: folder.path, logger: Logger(label: "test") { _ in HeardHandler(heard: heard) })
    _ = try await library.scan()
    // A temporary whose writer is gone (pid 2^31 - 2 runs nowhere) is swept, and said so.
    let stale = ".1.jpg.2147483646.7.tmp"
    _ = FileManager.default.createFile(atPath: folder.path + "/" + stale, contents: Data([1, 2]))
    #expect(library.sweepTemporaries() == [stale])
    // A job over two photos, one of which is gone from the disk: a warning and a summary.
    let result = try library.assets(matching: AssetQuery())
    let gone = try result.asset(at: 0)
    try FileManager.default.removeItem(atPath: library.path(of: gone))
    let job = try library.apply(
      try FilterGraph.parse(spec: "noir"), to: .assets([result[0], result[1]]))
    let counts = job.run()
    #expect(counts.done == 1 && counts.failed == 1)
    let lines = heard.lines
    #expect(lines.count == 3, "\(lines)")
    #expect(lines.first == "notice removed \(stale): a temporary file whose writer died")
    #expect(lines.dropFirst().first == "warning apply: \(library.path(of: gone)): no such file")
    #expect(
      lines.last?.hasPrefix(
        "info apply of 2: 1 done, 0 already so, 1 failed, 0 not started, in ") == true,
      "\(lines)")
  }
}

/// What a test logger heard: `LEVEL message` lines.
final class Heard: Sendable {
  private let state = Mutex<[String]>([])
  var lines: [String] { state.withLock { $0 } }
  func add(_ line: String) { state.withLock { $0.append(line) } }
}

struct HeardHandler: LogHandler {
  let heard: Heard
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace
  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }
  func log(event: LogEvent) {
    heard.add("\(event.level) \(event.message)")
  }
}
