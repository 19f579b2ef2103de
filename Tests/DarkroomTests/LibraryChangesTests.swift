import Foundation
import Testing

@testable import Darkroom

/// A `darkroom watch` process whose output lines a test waits for.
final class WatchProcess: @unchecked Sendable {
  let process = Process()
  private let lock = NSLock()
  private var out = ""
  private var err = ""

  init(_ arguments: [String], environment: [String: String] = [:]) throws {
    process.executableURL = URL(fileURLWithPath: CLI.binary)
    process.arguments = arguments
    process.environment = testEnvironment.merging(environment) { $1 }
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    stdout.fileHandleForReading.readabilityHandler = { [self] handle in
      let text = String(decoding: handle.availableData, as: UTF8.self)
      lock.withLock { out += text }
    }
    stderr.fileHandleForReading.readabilityHandler = { [self] handle in
      let text = String(decoding: handle.availableData, as: UTF8.self)
      lock.withLock { err += text }
    }
    try process.run()
  }

  var lines: [String] { lock.withLock { out.split(separator: "\n").map(String.init) } }
  var errors: String { lock.withLock { err } }

  /// Waits until `condition` holds of the output (true), or 30 s pass (false): a bound on
  /// failure, not a time the test needs.
  func wait(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      if condition() { return true }
      Thread.sleep(forTimeInterval: 0.02)
    }
    return condition()
  }

  /// The JSON changes printed so far.
  var changes: [CatalogChange] {
    lines.compactMap { try? JSONDecoder().decode(CatalogChange.self, from: Data($0.utf8)) }
  }

  func stop() -> Int32 {
    process.terminate()
    process.waitUntilExit()
    return process.terminationStatus
  }
}

@Suite(
  "The library's changes: trash, duplicates, the change feed", .serialized,
  .timeLimit(.minutes(10)), .offThePool
)
struct LibraryChangesTests {
  @Test(
    "Trash, restore and empty: files move, ids stay, unreferenced store entries go",
    arguments: CatalogBackend.allCases)
  func trash(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    let keep = try lib.add("orientation-1.jpg", as: "a/keep.jpg")
    let edited = try lib.add("orientation-6.jpg", as: "a/edited.jpg")
    try lib.add("gps.jpg", as: "b/plain.jpg")
    _ = try lib.scan()  // the library (.darkroom/ at the top) first, then the edits in it
    let keepEdit = try CLI.run(["edit", keep, "--filter", "noir"], environment: lib.environment)
    #expect(keepEdit.status == 0)
    let edit = try CLI.run(["edit", edited, "--filter", "noir"], environment: lib.environment)
    #expect(edit.status == 0)
    _ = try lib.scan()
    let library = lib.library
    let editedID = try #require(try lib.asset("a/edited.jpg")).id
    let plainID = try #require(try lib.asset("b/plain.jpg")).id
    let editedHash = try ContentHash.of(file: edited)
    let store = library.metadataFolder.path
    func storeFiles() throws -> Set<String> {
      Set(
        try FileManager.default.contentsOfDirectory(atPath: store + "/originals").map {
          "originals/" + $0
        }
          + FileManager.default.contentsOfDirectory(atPath: store + "/adjustments").map {
            "adjustments/" + $0
          })
    }
    let storeBefore = try storeFiles()
    #expect(storeBefore.count == 4)  // two originals, two adjustment documents

    let trashed = try library.trash([editedID, plainID])
    #expect(trashed.map(\.trashedFrom) == ["a/edited.jpg", "b/plain.jpg"])
    #expect(!FileManager.default.fileExists(atPath: edited))
    let inTrash = library.trashFolder.path + "/\(editedID)/edited.jpg"
    #expect(try ContentHash.of(file: inTrash) == editedHash)
    #expect(try lib.paths() == ["a/keep.jpg"])
    var trashQuery = AssetQuery()
    trashQuery.trashed = true
    #expect(try lib.paths(trashQuery).count == 2)
    // A scan leaves the trash alone.
    let scan = try lib.scan()
    #expect(scan.removed == 0 && scan.offline == 0 && scan.added == 0)
    #expect(throws: DarkroomError.self) { try library.trash([editedID]) }

    // Restore: the same id, place and bytes, and the edit still reverts.
    let restored = try library.restore([editedID])
    #expect(restored.map(\.path) == ["a/edited.jpg"])
    #expect(try ContentHash.of(file: edited) == editedHash)
    #expect(try lib.asset("a/edited.jpg")?.id == editedID)
    #expect(try Editor().editHistory(edited).current == 1)
    _ = try library.trash([editedID])

    // Empty: both files gone; the edited one's original and document go, the other
    // edited photo's stay (and nothing else is touched).
    let emptied = try library.emptyTrash()
    #expect(Set(emptied.assets) == [editedID, plainID])
    #expect(emptied.storeEntries == 2)
    #expect(!FileManager.default.fileExists(atPath: inTrash))
    #expect(try library.catalog().asset(editedID) == nil)
    let storeAfter = try storeFiles()
    #expect(storeAfter.isSubset(of: storeBefore) && storeAfter.count == 2)
    #expect(try Editor().editHistory(keep).current == 1)
    let revert = try CLI.run(["revert", keep], environment: lib.environment)
    #expect(revert.status == 0)
    #expect(
      try ContentHash.of(file: keep) == ContentHash.of(file: Fixture.sample("orientation-1.jpg")))
    #expect(library.check().isSound)
  }

  @Test(
    "Trash from the command line: list, restore by id, empty --older-than",
    arguments: CatalogBackend.allCases)
  func trashCommands(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    let file = try lib.add("orientation-2.jpg", as: "x.jpg")
    _ = try lib.scan()
    let id = try #require(try lib.asset("x.jpg")).id.rawValue
    var result = try CLI.run(["trash", "x.jpg"], cwd: lib.root, environment: lib.environment)
    #expect(result.status == 0)
    #expect(result.stdout == "x.jpg: in the trash (\(id))\n")
    result = try CLI.run(["trash", "list"], cwd: lib.root, environment: lib.environment)
    #expect(result.stdout.hasPrefix("\(id)  x.jpg  "))
    result = try CLI.run(
      ["trash", "empty", "--older-than", "30d"], cwd: lib.root, environment: lib.environment)
    #expect(result.stdout == "trash: deleted 0 asset(s) and 0 store entries nothing referred to\n")
    result = try CLI.run(["trash", "restore", id], cwd: lib.root, environment: lib.environment)
    #expect(result.status == 0)
    #expect(FileManager.default.fileExists(atPath: file))
    result = try CLI.run(
      ["trash", "empty", "--older-than", "soon"], cwd: lib.root, environment: lib.environment)
    #expect(result.status == 2)
  }

  @Test(
    "Duplicates: exact by content, near by fingerprint, and a remembered keep",
    arguments: CatalogBackend.allCases)
  func duplicates(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    let base = try lib.add("orientation-1.jpg", as: "base.jpg")
    try lib.add("orientation-1.jpg", as: "copy/same.jpg")
    try lib.add("orientation-6.jpg", as: "turned.jpg")  // the same picture, stored sideways
    let variants = lib.folder.file("variants")
    try FileManager.default.createDirectory(atPath: variants, withIntermediateDirectories: true)
    for (arguments, name) in [
      (["--rep", "aspect-thumbnail", "--size", "240"], "small.jpg"),
      (["--rep", "fullscreen", "--quality", "60"], "q60.jpg"),
      (["--rep", "full"], "converted.png"),
      (["--rep", "full"], "converted.webp"),
    ] {
      let result = try CLI.run(
        ["render", base] + arguments + ["-o", variants + "/" + name], environment: lib.environment)
      #expect(result.status == 0, "\(result.stderr)")
    }
    for (filter, name) in [
      ("crop x=0.03 y=0.02 width=0.95 height=0.96", "cropped.jpg"),
      ("tone brightness=0.2", "brighter.jpg"),
      // Other pictures: halves of the scene.
      ("crop x=0 y=0 width=0.5 height=1", "left.jpg"),
      ("crop x=0.5 y=0 width=0.5 height=1", "right.jpg"),
      ("crop x=0 y=0 width=1 height=0.5", "top.jpg"),
    ] {
      let copy = try lib.add("orientation-1.jpg", as: "variants/" + name)
      let result = try CLI.run(["edit", copy, "--filter", filter], environment: lib.environment)
      #expect(result.status == 0, "\(result.stderr)")
    }
    // The same picture as a 16-pixel square (too small to tell anything by) and squeezed to
    // another shape (3:2 made 2:1): look-alikes never.
    for (arguments, name) in [
      (["resize", base, lib.folder.file("variants/tiny.png"), "0.0267", "--vscale", "0.04"], ""),
      (["resize", base, lib.folder.file("variants/squeezed.jpg"), "1", "--vscale", "0.75"], ""),
    ] {
      let made = try CLI.run(arguments, executable: "/usr/bin/vips")
      #expect(made.status == 0, "\(made.stderr) \(name)")
    }
    _ = try lib.scan()
    let library = lib.library
    func paths(_ groups: [DuplicateGroup]) throws -> [[String]] {
      try groups.map { try $0.assets.map { try library.asset($0).path }.sorted() }
    }
    let exact = try library.duplicates()
    #expect(try paths(exact) == [["base.jpg", "copy/same.jpg"]])
    #expect(exact.map(\.exact) == [true])

    // A fingerprint that cannot be made is a problem reported, not a silent gap: say which.
    let problems = Locked([String]())
    let near = try library.duplicates(near: true) { error in
      problems.withLock { $0.append(error.description) }
    }
    #expect(problems.withLock { $0 } == [])
    #expect(
      try paths(near) == [
        [
          "base.jpg", "copy/same.jpg", "turned.jpg", "variants/brighter.jpg",
          "variants/converted.png", "variants/converted.webp", "variants/cropped.jpg",
          "variants/q60.jpg", "variants/small.jpg",
        ]
      ])
    #expect(near.map(\.exact) == [false])
    // Fingerprints are stored: the next run makes none (and none for the tiny one).
    let stored = try library.catalog().fingerprints()
    #expect(stored.count == 13)
    let squeezed = try #require(try library.asset(atPath: lib.folder.file("variants/squeezed.jpg")))
    #expect(stored.first { $0.id == squeezed.id }.map { [$0.width, $0.height] } == [600, 300])
    #expect(stored.filter { $0.value == nil }.map(\.id) == [])

    // "These are not duplicates": the exact pair is not proposed again.
    let keep = try CLI.run(
      ["duplicates", "keep", "base.jpg", "copy/same.jpg"], cwd: lib.root,
      environment: lib.environment)
    #expect(keep.status == 0, "\(keep.stderr)")
    #expect(try library.duplicates().isEmpty)
    let listed = try CLI.run(["duplicates", "--json"], cwd: lib.root, environment: lib.environment)
    #expect(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]")
  }

  @Test("The near-duplicate index finds every pair within the distance, and no other")
  func fingerprintIndex() {
    var generator = SystemRandomNumberGenerator()
    var values = (0..<2000).map { _ in generator.next() as UInt64 }
    // Near copies: 0 to 12 bits flipped.
    for n in 0..<200 {
      var copy = values[n]
      for bit in 0..<(n % 13) { copy ^= 1 << UInt64((bit * 5 + n) % 64) }
      values.append(copy)
    }
    // Pairs that differ by 3 bits in every 16-bit block (12 in all), and by 4, 3, 3, 2:
    // the edges of the blocks' radii (3, 2, 2, 2 for a distance of 12).
    for n in 0..<20 {
      let spread: [[Int]] = [
        [0, 1, 2, 16, 17, 18, 32, 33, 34, 48, 49, 50],
        [0, 1, 2, 3, 16, 17, 18, 32, 33, 34, 48, 49],
      ]
      var copy = values[300 + n]
      for bit in spread[n % 2] { copy ^= 1 << UInt64((bit + n) % 64) }
      values.append(copy)
    }
    // One print 120 times (the same photo copied): a bucket whose pairs (7,140) outgrow
    // the join's first buffer (4,096 pairs), which must then grow without losing any.
    values += Array(repeating: values[400], count: 119)
    let index = FingerprintIndex(values)
    for radius in [0, 3, 7, 10, 12] {
      let found = Set(index.pairs(within: radius).map { "\($0.0)-\($0.1)" })
      var expected = Set<String>()
      for i in values.indices {
        for j in (i + 1)..<values.count where (values[i] ^ values[j]).nonzeroBitCount <= radius {
          expected.insert("\(i)-\(j)")
        }
      }
      #expect(found == expected, "radius \(radius)")
      if radius >= 10 { #expect(expected.count >= 150) }
    }
  }

  @Test(
    "The change log numbers every change, and is there after a restart",
    arguments: CatalogBackend.allCases)
  func changesSince(_ backend: CatalogBackend) throws {
    let lib = try LibraryFixture(backend)
    try lib.add("orientation-1.jpg", as: "a.jpg")
    try lib.add("orientation-2.jpg", as: "b.jpg")
    var result = try CLI.run(["scan", lib.root], environment: lib.environment)
    #expect(result.status == 0)
    try FileManager.default.moveItem(
      atPath: lib.folder.file("a.jpg"), toPath: lib.folder.file("c.jpg"))
    try FileManager.default.removeItem(atPath: lib.folder.file("b.jpg"))
    try lib.add("orientation-3.jpg", as: "d.jpg", tag: "x")
    result = try CLI.run(["scan", lib.root], environment: lib.environment)
    // Another process, later: changes since 2 (after the first scan's two inserts).
    result = try CLI.run(
      ["watch", lib.root, "--since", "2", "--json"], environment: lib.environment)
    #expect(result.status == 0)
    let changes = result.stdout.split(separator: "\n").compactMap {
      try? JSONDecoder().decode(CatalogChange.self, from: Data($0.utf8))
    }
    #expect(changes.map(\.sequence) == [3, 4, 5])
    #expect(
      Set(changes.map { "\($0.kind.rawValue) \($0.path) \($0.oldPath ?? "")" }) == [
        "moved c.jpg a.jpg", "inserted d.jpg ", "removed b.jpg ",
      ])
  }

  @Test(
    "the change feed: the log from a sequence in batches, oldest first; followed, a later change comes, a quiet wait is an empty batch, and cancelling ends it"
  )
  func changeFeed() async throws {
    let lib = try LibraryFixture()
    for i in 1...5 { try lib.add("orientation-\(i).jpg", as: "p\(i).jpg") }
    _ = try lib.scan()
    let library = lib.library
    let everything = try library.changes(since: 0)
    #expect(everything.count == 5)
    var batches: [[Int64]] = []
    for try await changes in try library.changeFeed(since: 0, follow: false, batch: 2) {
      batches.append(changes.map(\.sequence))
    }
    #expect(batches == [[1, 2], [3, 4], [5]].map { $0.map { everything[$0 - 1].sequence } })
    // Followed from now: nothing, then (a quiet wait) an empty batch, then the trash's change.
    var feed = try library.changeFeed(interval: .milliseconds(10)).makeAsyncIterator()
    #expect(try await feed.next() == [])
    let first = try #require(try lib.asset("p1.jpg"))
    _ = try library.trash([first.id])
    var seen: [CatalogChange] = []
    while seen.isEmpty, let changes = try await feed.next() { seen = changes }
    #expect(seen.map(\.id) == [first.id] && seen[0].sequence > everything[4].sequence)
    let ended = Task {
      var rest = try library.changeFeed(interval: .seconds(3600)).makeAsyncIterator()
      return try await rest.next()
    }
    ended.cancel()
    #expect(try await ended.value == nil)
  }

  @Test("watch reports create, modify, rename and delete, after the catalog has them")
  func watch() throws {
    let lib = try LibraryFixture()
    try lib.add("orientation-1.jpg", as: "sub/first.jpg")
    _ = try lib.scan()
    let watcher = try WatchProcess(["watch", lib.root, "--json"])
    defer { _ = watcher.stop() }
    #expect(watcher.wait { watcher.errors.contains("watch: watching") })

    let created = try lib.add("orientation-2.jpg", as: "sub/new.jpg")
    #expect(
      watcher.wait { watcher.changes.contains { $0.kind == .inserted && $0.path == "sub/new.jpg" } }
    )
    let id = try #require(watcher.changes.last?.id)
    #expect(try lib.library.asset(id).path == "sub/new.jpg")  // in the catalog already

    try lib.add("orientation-3.jpg", as: "sub/new.jpg", tag: "modified")
    #expect(watcher.wait { watcher.changes.contains { $0.kind == .changed && $0.id == id } })
    try FileManager.default.createDirectory(
      atPath: lib.folder.file("other"), withIntermediateDirectories: true)
    try FileManager.default.moveItem(atPath: created, toPath: lib.folder.file("other/renamed.jpg"))
    #expect(
      watcher.wait {
        watcher.changes.contains {
          $0.kind == .moved && $0.id == id && $0.path == "other/renamed.jpg"
        }
      })
    try FileManager.default.removeItem(atPath: lib.folder.file("other/renamed.jpg"))
    #expect(watcher.wait { watcher.changes.contains { $0.kind == .removed && $0.id == id } })
    #expect(watcher.stop() == 0)
  }

  @Test("After a queue overflow, watch scans everything again and misses nothing")
  func watchOverflow() throws {
    let lib = try LibraryFixture()
    _ = try lib.scan()
    let watcher = try WatchProcess(
      ["watch", lib.root, "--json"], environment: ["DARKROOM_FAULT": "watch-overflow"])
    defer { _ = watcher.stop() }
    #expect(watcher.wait { watcher.errors.contains("watch: watching") })
    var expected: Set<String> = []
    for n in 0..<12 {
      try lib.add("orientation-\(n % 8 + 1).jpg", as: "f\(n % 3)/deep/\(n).jpg", tag: "\(n)")
      expected.insert("f\(n % 3)/deep/\(n).jpg")
    }
    #expect(
      watcher.wait { Set(watcher.changes.filter { $0.kind == .inserted }.map(\.path)) == expected })
    #expect(try lib.paths().count == 12)
  }

  @Test(
    "A fetch result's changes arrive as an AsyncSequence of removed and inserted indexes",
    arguments: CatalogBackend.allCases)
  func fetchResultChanges(_ backend: CatalogBackend) async throws {
    let lib = try LibraryFixture(backend)
    try lib.add("orientation-1.jpg", as: "1.jpg")  // 2024-06-01
    try lib.add("orientation-3.jpg", as: "3.jpg")  // 2024-06-03
    _ = try lib.scan()
    var query = AssetQuery()
    query.sort = .date
    let changes = try lib.library.changes(of: query, every: .milliseconds(20))
    var iterator = changes.makeAsyncIterator()
    try lib.add("orientation-2.jpg", as: "2.jpg")  // between the two
    _ = try lib.scan()
    let inserted = try #require(try await iterator.next())
    #expect(inserted.insertedIndexes == [1] && inserted.removedIndexes.isEmpty)
    #expect(inserted.result.count == 3)
    #expect(try inserted.result.asset(at: 1).path == "2.jpg")
    try FileManager.default.removeItem(atPath: lib.folder.file("3.jpg"))
    _ = try lib.scan()
    let removed = try #require(try await iterator.next())
    #expect(removed.removedIndexes == [2] && removed.insertedIndexes.isEmpty)
    #expect(removed.result.count == 2)
  }
}
