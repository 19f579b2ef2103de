import Foundation
import Testing

@testable import Darkroom

/// The gallery's thumbnails made before anyone asks: the pass, its lock, its resumption after
/// a kill, its stop, and smaller sizes made from what it made.
@Suite("Grid thumbnails in the background", .serialized, .timeLimit(.minutes(10)), .offThePool)
struct GridThumbnailTests {
  @Test(
    "The size asked for follows the gallery: the row's height, the screen's density, the photo's shape"
  )
  func sizes() {
    func asset(_ width: Int, _ height: Int) -> Asset {
      Asset(
        path: "a.jpg", contentHash: String(repeating: "0", count: 64),
        identity: FileIdentity(device: 1, inode: 1, size: 1, modified: 0, changed: 0),
        mediaType: .photo, format: "jpeg", width: width, height: height, sortDate: 0, addedAt: 0)
    }
    // 184 px rows: a 3:2 photo needs 276 px across at density 1, 552 at 2, 828 at 3.
    #expect(GridThumbnail.size(for: asset(3000, 2000), density: 1) == 384)
    #expect(GridThumbnail.size(for: asset(3000, 2000), density: 2) == 768)
    #expect(GridThumbnail.size(for: asset(3000, 2000), density: 3) == 1024)
    // Portrait and square: the row's height is the long side that counts.
    #expect(GridThumbnail.size(for: asset(2000, 3000), density: 2) == 384)
    #expect(GridThumbnail.size(for: asset(1000, 1000), density: 1) == 256)
    // A phone's 112 px rows at density 3: 504 px across.
    #expect(GridThumbnail.size(for: asset(3000, 2000), rowHeight: 112, density: 3) == 512)
    // HEIC is sent as WebP (or JPEG), a JPEG as itself; metadata always stripped.
    var heic = asset(3000, 2000)
    heic.format = "heif"
    #expect(GridThumbnail.spec(for: heic, density: 1).format == .webp)
    #expect(GridThumbnail.spec(for: heic, density: 1, acceptsWebP: false).format == .jpeg)
    #expect(GridThumbnail.spec(for: asset(3000, 2000), density: 1).format == nil)
    #expect(GridThumbnail.spec(for: asset(3000, 2000), density: 1).metadata == .strip)
  }

  /// Five photos taken a day apart (the samples' EXIF dates: p4 newest).
  static func library() throws -> LibraryFixture {
    let lib = try LibraryFixture()
    for i in 0..<5 { try lib.add("orientation-\(i + 1).jpg", as: "p\(i).jpg", tag: "p\(i)") }
    return lib
  }

  @Test(
    "A pass makes what the cache lacks, newest first, skips what it has, counts a damaged photo, leaves the trash; a smaller size is made from it"
  )
  func pass() async throws {
    let lib = try Self.library()
    // Whole when scanned, cut short since.
    let broken = try lib.add("orientation-1.jpg", as: "broken.jpg", tag: "broken")
    try lib.add("gps.jpg", as: "trashed.jpg", tag: "trash")
    _ = try lib.scan()
    let whole = try Fixture.bytes(broken)
    _ = try lib.folder.write("broken.jpg", Array(whole.prefix(whole.count / 3)))
    let library = lib.library
    let trashed = try #require(try lib.asset("trashed.jpg"))
    _ = try library.trash([trashed.id])

    let order = Locked([Int]())
    let first = try library.makeGridThumbnails(GridThumbnailOptions()) { state in
      order.withLock { $0.append(state.assets) }
    }
    #expect(first.assets == 6 && first.made == 5 && first.had == 0 && first.failed == 1)
    #expect(order.withLock { $0 } == [1, 2, 3, 4, 5, 6])
    #expect(
      first.problems.count == 1 && first.problems[0].hasPrefix(broken + ": "), "\(first.problems)")
    let second = try library.makeGridThumbnails()
    #expect(second.made == 0 && second.had == 5 && second.failed == 1)

    // What the gallery asks at density 2 is in the cache: a hit, upright, at the photo's own
    // size (600 x 400 shown; 768 would be an enlargement).
    let newest = try #require(try lib.asset("p0.jpg"))
    let images = Images(library)
    let cached = try await images.image(of: newest, GridThumbnail.spec(for: newest, density: 2))
    #expect(cached.fromCache && cached.width == 600 && cached.height == 400)
    // Density 1 asks for 384: made from the cached 600 x 400, not from the original.
    let small = GridThumbnail.spec(for: newest, density: 1)
    let counter = ReadCounter()
    let path = lib.folder.file("p0.jpg")
    let derived = try await FaultInjection.whenReached(
      "thumbnail-from-larger", file: path, { counter.hit(path) },
      during: { try await images.image(of: newest, small) })
    #expect(counter[path] == 1 && !derived.fromCache)
    #expect(derived.width == 384 && derived.height == 256 && derived.format == .jpeg)
    // Then kept: the next request is a hit.
    let again = try await Images(library).image(of: newest, small)
    #expect(again.fromCache)
  }

  @Test(
    "keepThumbnails makes the library's thumbnails, then those of a photo scanned while it runs; cancelled, it returns, and a pass after it has nothing to make"
  )
  func keptInTheBackground() async throws {
    let lib = try Self.library()
    _ = try lib.scan()
    let library = lib.library
    let cached = {
      (FileManager.default.enumerator(atPath: library.cacheFolder.path)?.allObjects ?? [])
        .compactMap { $0 as? String }.filter { $0.hasSuffix(".jpg") }.count
    }
    #expect(cached() == 0)
    let keeper = Task { await library.keepThumbnails(logger: Library.silent) }
    #expect(eventually(60) { cached() == 5 }, "\(cached())")
    try lib.add("gps.jpg", as: "later.jpg", tag: "later")
    _ = try lib.scan()
    #expect(eventually(60) { cached() == 6 }, "\(cached())")
    keeper.cancel()
    await keeper.value
    let after = try library.makeGridThumbnails()
    #expect(!after.busy && after.made == 0 && after.had == 6, "\(after)")
  }

  @Test("One pass a library at a time: another finds the lock held and does nothing")
  func oneAtATime() throws {
    let lib = try Self.library()
    _ = try lib.scan()
    let library = lib.library
    let fd = open(library.metadataFolder.path + "/locks/thumbnails", O_RDWR | O_CREAT, 0o644)
    #expect(fd >= 0)
    defer { close(fd) }
    #expect(FileLock.lock(fd, key: 0, wait: false) == 0)
    let busy = try library.makeGridThumbnails()
    #expect(busy.busy && busy.made == 0 && busy.assets == 0)
    close(fd)
  }

  @Test("darkroom thumbnails killed after two: run again, it makes only the rest")
  func resumesAfterKill() throws {
    let lib = try Self.library()
    _ = try lib.scan()
    let killed = try CLI.run(
      ["thumbnails", lib.root, "--json"], environment: ["DARKROOM_FAULT": "after-grid-thumbnail:2"])
    #expect(killed.status == 128 + SIGKILL, "\(killed.stderr)")
    let again = try CLI.run(["thumbnails", lib.root, "--json"])
    #expect(again.status == 0, "\(again.stderr)")
    let summary = try JSONDecoder().decode(GridThumbnailSummary.self, from: Data(again.stdout.utf8))
    #expect(summary.made == 3 && summary.had == 2 && summary.assets == 5 && !summary.busy)
  }

  /// `count` photos taken a day apart, newest first p0, p1...; photo `hanging` hangs its
  /// decoder under `DARKROOM_TEST_DECODER_FAULT=hang=hangs`. Scanned.
  static func scanned(_ count: Int, hanging: Int) throws -> LibraryFixture {
    let lib = try LibraryFixture()
    for i in 0..<count {
      try lib.add(
        "orientation-\(4 - i).jpg", as: i == hanging ? "p\(i)-hangs.jpg" : "p\(i).jpg",
        tag: "p\(i)")
    }
    _ = try lib.scan()
    return lib
  }

  @Test("SIGTERM during a hung render: stopped within the grace (143), the made kept, then resumed")
  func stopsWithinGrace() throws {
    // Newest first: p0 (taken 2024-06-04), p1 (06-03, which hangs its decoder), p2, p3.
    let lib = try Self.scanned(4, hanging: 1)
    let marker = UUID().uuidString
    let run = try RunningCLI(
      ["thumbnails", lib.root, "--progress", "json", "--grace", "1"],
      environment: ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs", "DARKROOM_TEST_RUN": marker])
    // The newest is made; the next one hangs its decoder (the signal finds the pass in it,
    // or just before it: either way it stops there).
    #expect(run.wait(upTo: 60) { run.errors.contains("\"assets\":1") }, "\(run.errors)")
    run.signal(SIGTERM)
    // The 30 s bound is against a hang, not a measure of speed (the render's own limit is 300 s).
    #expect(run.wait(upTo: 30) { !run.process.isRunning }, "stopped within the grace")
    run.process.waitUntilExit()
    #expect(run.process.terminationStatus == 143)
    #expect(processes(marked: "DARKROOM_TEST_RUN=\(marker)").isEmpty, "no worker left")
    let again = try CLI.run(["thumbnails", lib.root, "--json"])
    let summary = try JSONDecoder().decode(GridThumbnailSummary.self, from: Data(again.stdout.utf8))
    #expect(summary.had == 1 && summary.made == 3, "\(summary)")
  }

  @Test(
    "thumbnails --background: detached at nice 19, its pid kept while it runs; --stop ends it, then finds none"
  )
  func backgroundAndStop() throws {
    // The newest photo hangs its decoder: the pass is still running when it is stopped.
    let lib = try Self.scanned(2, hanging: 0)
    let root = lib.library.root.path
    let start = try CLI.run(
      ["thumbnails", lib.root, "--background"],
      environment: ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs"])
    #expect(start.status == 0, "\(start.stderr)")
    let pid = try #require(
      start.stderr.split(separator: "(pid ").last?.split(separator: ",").first.flatMap {
        Int32($0)
      }, "\(start.stderr)")
    #expect(
      start.stderr
        == "thumbnails: making the gallery's thumbnails in the background (pid \(pid), log \(root)/.darkroom/thumbnails.log); darkroom thumbnails --stop stops it\n"
    )
    defer { kill(pid, SIGKILL) }  // were a check below to fail
    // Ended: gone, or a zombie its new parent has not reaped yet.
    let ended = {
      kill(pid, 0) != 0
        || ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?
          .split(separator: ")").last?.split(separator: " ").first == "Z")
    }
    // Its pid file names it once it runs (the bounds are against a hang, not measures).
    let pidFile = root + "/.darkroom/locks/thumbnails.pid"
    #expect(
      eventually(60) {
        (try? String(contentsOfFile: pidFile, encoding: .utf8)) == "\(pid)\n"
      })
    #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(pid)) == 19)
    let stop = try CLI.run(["thumbnails", lib.root, "--stop"])
    #expect(stop.status == 0)
    #expect(stop.stdout == "thumbnails: asked the pass in the background (pid \(pid)) to stop\n")
    #expect(eventually(60) { ended() }, "ended within its grace")
    #expect(!FileManager.default.fileExists(atPath: pidFile))
    let none = try CLI.run(["thumbnails", lib.root, "--stop"])
    #expect(none.stdout == "thumbnails: no pass is running in the background for \(root)\n")
    // A program that cannot start is named, with the reason.
    #expect(
      throws: DarkroomError(
        .io, file: root + "/missing-darkroom",
        "cannot start the thumbnail pass: No such file or directory")
    ) { try lib.library.startBackgroundThumbnails(program: root + "/missing-darkroom") }
  }

  @Test("scan starts the pass in the background when photos came; --no-background does not")
  func scanStartsThePass() throws {
    let lib = try Self.library()
    let quiet = try CLI.run(
      ["scan", lib.root, "--no-background"], environment: ["DARKROOM_NO_BACKGROUND": "0"])
    #expect(quiet.status == 0 && !quiet.stderr.contains("in the background"))
    try lib.add("gps.jpg", as: "new.jpg", tag: "new")
    let scan = try CLI.run(["scan", lib.root], environment: ["DARKROOM_NO_BACKGROUND": "0"])
    #expect(scan.status == 0, "\(scan.stderr)")
    let pid = try #require(
      scan.stderr.split(separator: "\n").first { $0.contains("in the background (pid ") }
        .flatMap { line in
          line.split(separator: "(pid ").last?.split(separator: ")").first.flatMap { Int32($0) }
        }, "\(scan.stderr)")
    // The pass ends on its own (a bound against a hang).
    let end = Date().addingTimeInterval(120)
    while kill(pid, 0) == 0 && Date() < end { usleep(50_000) }
    #expect(kill(pid, 0) != 0)
    let log = try String(
      contentsOfFile: lib.folder.file(".darkroom/thumbnails.log"), encoding: .utf8)
    #expect(log.contains("thumbnails: 6 photos: 6 made, 0 already cached, 0 failed"), "\(log)")
    let check = try CLI.run(["thumbnails", lib.root, "--json"])
    let summary = try JSONDecoder().decode(GridThumbnailSummary.self, from: Data(check.stdout.utf8))
    #expect(summary.made == 0 && summary.had == 6)
  }
}
