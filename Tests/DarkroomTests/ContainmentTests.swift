import CSandbox
import Foundation
import Testing

@testable import Darkroom

/// Processes whose environment holds `marker`: what a run left behind.
func processes(marked marker: String) -> [Int32] {
  let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
  return names.compactMap(Int32.init).filter { pid in
    guard let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else {
      return false
    }
    return environment.split(separator: 0).contains { Array($0) == Array(marker.utf8) }
  }
}

@Suite(
  "Containment: workers, sandbox, time limits, trusted formats", .timeLimit(.minutes(10)),
  .offThePool)
struct ContainmentTests {
  @Test("apply --jobs 2 over 20 files, one crashing and one hanging its decoder: 18 done")
  func crashAndHangCostOneFileEach() throws {
    let folder = try Fixture.temporaryFolder()
    try FileManager.default.createDirectory(
      atPath: folder.file("in"), withIntermediateDirectories: true)
    var inputs: [String] = []
    for index in 0..<20 {
      let name = index == 4 ? "crashes.jpg" : index == 11 ? "hangs.jpg" : "photo-\(index).jpg"
      inputs.append(
        try folder.write(
          "in/" + name, Fixture.bytes(Fixture.sample("orientation-\(index % 8 + 1).jpg"))))
    }
    let marker = "DARKROOM_TEST_RUN=\(UUID().uuidString)"
    let result = try CLI.run(
      [
        "apply", "--jobs", "2", "--timeout", "2", "--filter", "noir", folder.file("in"), "-o",
        folder.file("out"), "--progress", "none",
      ],
      environment: [
        "DARKROOM_TEST_DECODER_FAULT": "crash=crashes,hang=hangs",
        "DARKROOM_TEST_RUN": String(marker.dropFirst("DARKROOM_TEST_RUN=".count)),
      ])
    #expect(result.status == 1)
    let lines = result.stderr.split(separator: "\n").map(String.init).filter {
      $0.hasPrefix("darkroom: ")
    }
    #expect(
      lines.sorted() == [
        "darkroom: \(folder.file("in/crashes.jpg")): the decoder crashed (signal 6)",
        "darkroom: \(folder.file("in/hangs.jpg")): stopped after 2 s: the decoder took longer than the time limit",
      ])
    #expect(result.stderr.contains("18 done, 0 skipped, 2 failed"), "\(result.stderr)")
    for input in inputs where !input.contains("crashes") && !input.contains("hangs") {
      let output = folder.file("out/" + FilePath(input).name)
      #expect(try AssetMetadata.read(path: output).format == "jpeg")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("out/crashes.jpg")))
    #expect(processes(marked: marker).isEmpty, "no worker left running")
  }

  @Test(
    "the cores are shared among the files a job runs at once, never among more: one file gets every core's libvips thread however many jobs are allowed"
  )
  func coresForTheFilesAtOnce() {
    let cores = ProcessorCount.value
    #expect(LibraryJob.sharing(jobs: 2 * cores, items: 1, threads: nil) == (1, cores))
    #expect(LibraryJob.sharing(jobs: 2, items: 6, threads: nil) == (2, max(1, cores / 2)))
    #expect(LibraryJob.sharing(jobs: 6, items: 2, threads: nil) == (2, max(1, cores / 2)))
    #expect(LibraryJob.sharing(jobs: 4, items: 0, threads: nil) == (1, cores))
    #expect(LibraryJob.sharing(jobs: 1, items: 9, threads: 3) == (1, 3), "--vips-threads wins")
  }

  @Test(
    "a worker past its CPU-time limit ends with SIGXCPU, said as such (timed-out, not a crash); the pool goes on with a new worker"
  )
  func cpuLimitNamed() throws {
    let folder = try TemporaryFolder()
    let photo = try Data(contentsOf: URL(fileURLWithPath: Fixture.sample("gps.jpg")))
    let spins = try folder.write("spins.jpg", Array(photo))
    let plain = try folder.write("plain.jpg", Array(photo))
    var configuration = WorkerPool.Configuration(executable: CLI.binary)
    configuration.cpuSeconds = 1
    configuration.environment = ["DARKROOM_TEST_DECODER_FAULT": "spin=spins"]
    let pool = WorkerPool(configuration)
    defer { pool.shutDown() }
    var renderer = Renderer()
    renderer.workers = pool
    renderer.timeLimit = .seconds(600)
    let error = #expect(throws: DarkroomError.self) {
      try renderer.render(.file(spins), RenditionSpec(.thumbnail))
    }
    #expect(error?.kind == .timedOut, "\(String(describing: error))")
    #expect(error?.message == "stopped at its worker's limit of CPU time (SIGXCPU)")
    #expect(pool.counts.timedOut == 1 && pool.counts.crashed == 0)
    let thumbnail = try renderer.render(.file(plain), RenditionSpec(.thumbnail))
    #expect(thumbnail.width == 256)
  }

  @Test("a single render that hangs its decoder ends at --timeout with one line")
  func singleFileDeadline() throws {
    let folder = try Fixture.temporaryFolder()
    let photo = try folder.write("hangs.jpg", Fixture.bytes(Fixture.sample("gps.jpg")))
    let result = try CLI.run(
      [
        "render", "--rep", "thumbnail", "--no-cache", "--timeout", "1", photo, "-o",
        folder.file("t.jpg"),
      ],
      environment: ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs"])
    #expect(result.status == 1)
    #expect(
      result.stderr
        == "darkroom: \(photo): stopped after 1 s: the decoder took longer than the time limit\n")
    #expect(!FileManager.default.fileExists(atPath: folder.file("t.jpg")))
  }

  @Test(
    "a worker finds no way out: no socket, process, written file, node, io_uring, signal to its parent, read of its memory, pidfd, ptrace, or file it was not handed"
  )
  func sandboxHolds() throws {
    let folder = try Fixture.temporaryFolder()
    let secret = Array("the parent's secret".utf8)
    _ = try folder.write("outside.txt", Array("not for workers".utf8))
    // The probe itself works: outside the sandbox, against this very process (which it may
    // read, signal and take descriptors from), every way but ptrace (never of oneself) works.
    var results = [Int32](repeating: 0, count: SandboxProbe.names.count)
    try secret.withUnsafeBytes { bytes in
      _ = dr_sandbox_probe(folder.path, getpid(), bytes.baseAddress, &results)
      var expected = Dictionary(uniqueKeysWithValues: SandboxProbe.names.map { ($0, true) })
      expected["ptrace"] = false
      // Where the kernel turns io_uring off for everyone, nothing needs refusing.
      let uring =
        (try? String(contentsOfFile: "/proc/sys/kernel/io_uring_disabled", encoding: .utf8))
      if uring.map({ $0.hasPrefix("0") }) == false { expected["io_uring"] = false }
      #expect(SandboxProbe.named(results) == expected)
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["outside.txt"])

      let pool = WorkerPool(.init(executable: CLI.binary))
      defer { pool.shutDown() }
      let inside = try pool.probeSandbox(folder: folder.path, secret: bytes.baseAddress)
      #expect(inside == Dictionary(uniqueKeysWithValues: SandboxProbe.names.map { ($0, false) }))
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["outside.txt"])
  }

  @Test(
    "a worker holds none of its parent's descriptors: listener, connection, epoll and pipe all EBADF inside"
  )
  func workerInheritsNoDescriptors() throws {
    let held = try ParentDescriptors()
    defer { held.close() }
    let pool = WorkerPool(.init(executable: CLI.binary))  // also: SIGPIPE ignored
    defer { pool.shutDown() }
    // The probe can see them: in this process each one is usable.
    #expect(held.numbers.filter { dr_descriptor_probe($0) == 0 } == [])
    let inside = try pool.probeDescriptors(held.numbers)
    #expect(inside.usable == [], "read, write and epoll_ctl on each parent number: EBADF")
    #expect(inside.held.keys.sorted() == [0, 1, 2], "\(inside.held)")
    #expect(inside.held[0]?.hasPrefix("socket:[") == true)
    #expect(inside.held[1]?.hasPrefix("pipe:[") == true)
    for fd in held.numbers {
      let target = descriptorTarget(fd)
      if !target.hasPrefix("anon_inode:") {
        #expect(!inside.held.values.contains(target), "the worker holds the parent's \(target)")
      }
    }

    // Without the closing, the worker sees them and refuses to start: the check can fail.
    var open = WorkerPool.Configuration(executable: CLI.binary)
    open.closesInheritedDescriptors = false
    let leaky = WorkerPool(open)
    defer { leaky.shutDown() }
    let refusal = #expect(throws: DarkroomError.self) {
      try leaky.probeDescriptors(held.numbers)
    }
    #expect(
      refusal?.message
        == "the worker refused to start: it was handed descriptors besides its own three")
  }

  @Test(
    "a worker starts with a clean environment: secrets in the parent's (the catalog's URL among them) do not reach it"
  )
  func workerEnvironmentIsClean() {
    var configuration = WorkerPool.Configuration(executable: CLI.binary)
    configuration.vipsThreads = 2
    configuration.environment = ["EXTRA": "1"]
    let environment = configuration.workerEnvironment(from: [
      "PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "DARKROOM_ALLOW_FORMATS": "svg",
      "VIPS_WARNING": "0", "AWS_SECRET_ACCESS_KEY": "x", "DARKROOM": "y", "HOME": "/root",
      "HTTPS_PROXY": "http://proxy",
      "DARKROOM_CATALOG": "postgresql://darkroom:hunter2@db/photos", "DARKROOM_DATA": "/srv/geo",
      "DARKROOM_TEST_JOB_GATE": "/tmp/gate",
    ])
    #expect(
      environment == [
        "PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "DARKROOM_ALLOW_FORMATS": "svg",
        "VIPS_WARNING": "0", "VIPS_CONCURRENCY": "2", "EXTRA": "1", "SWIFT_BACKTRACE": "enable=no",
        "DARKROOM_TEST_JOB_GATE": "/tmp/gate",
        "DARKROOM_WORKER_ADDRESS_SPACE": String(16 << 30), "DARKROOM_WORKER_CPU_SECONDS": "3600",
      ])
  }

  @Test("workers are recycled after their job count; a crash is replaced by a new worker")
  func recycling() throws {
    var configuration = WorkerPool.Configuration(executable: CLI.binary)
    configuration.jobsPerWorker = 3
    let pool = WorkerPool(configuration)
    defer { pool.shutDown() }
    var renderer = Renderer()
    renderer.workers = pool
    var spec = RenditionSpec(.thumbnail)
    spec.size = 32
    let reference = try Renderer().render(.file(Fixture.sample("gps.jpg")), spec)
    for _ in 0..<7 {
      let rendition = try renderer.render(.file(Fixture.sample("gps.jpg")), spec)
      #expect(rendition.bytes == reference.bytes, "a worker renders what this process does")
    }
    #expect(pool.counts.started == 3)
    #expect(pool.counts.recycled == 2)
  }

  @Test("only trusted formats reach libvips; others are refused by name unless allowed")
  func trustedFormatsOnly() throws {
    let folder = try Fixture.temporaryFolder()
    let svg = try folder.write(
      "drawing.svg",
      Array(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"20\" height=\"10\"><rect width=\"20\" height=\"10\" fill=\"red\"/></svg>"
          .utf8))
    let refusal =
      "darkroom: \(svg): svg is not among the trusted formats (JPEG, PNG, WebP, GIF, HEIF/AVIF, TIFF); allow it with --allow-format svg\n"
    for command in [
      ["info"], ["render", "--rep", "thumbnail", "--no-cache"], ["edit", "--filter", "noir"],
    ] {
      let result = try CLI.run(command + [svg])
      #expect(result.status == 1)
      #expect(result.stderr == refusal, "\(command)")
    }
    let allowed = try CLI.run(["info", "--json", "--allow-format", "svg", svg])
    #expect(allowed.status == 0, "\(allowed.stderr)")
    #expect(allowed.stdout.contains("\"width\" : 20"))
    #expect(TrustedFormats.sniff(Array("%PDF-1.7".utf8)[...]) == "pdf")
    #expect(TrustedFormats.sniff([0xFF, 0x4F, 0xFF, 0x51, 0, 0][...]) == "jp2k")
  }

  @Test("render and edit reach the same verdict on a damaged file, with the same message")
  func oneReadPath() throws {
    let folder = try Fixture.temporaryFolder()
    let damaged = try folder.write("damaged.png", damagedPNG())
    let render = try CLI.run([
      "render", "--rep", "fullscreen", "--no-cache", damaged, "-o", folder.file("r.png"),
    ])
    let edit = try CLI.run(["edit", "--filter", "noir", damaged])
    #expect(render.status == 1 && edit.status == 1)
    #expect(render.stderr == edit.stderr, "\(render.stderr) / \(edit.stderr)")
    #expect(render.stderr.hasPrefix("darkroom: \(damaged): cannot render: "))
    // --fail-on none decodes what it can.
    let lenient = try CLI.run(
      [
        "render", "--rep", "fullscreen", "--no-cache", "--fail-on", "none", damaged, "-o",
        folder.file("r.png"),
      ])
    #expect(lenient.status == 0, "\(lenient.stderr)")
  }

  @Test("an error is one line of about 200 characters, repeated libvips lines collapsed")
  func oneLineErrors() throws {
    let folder = try Fixture.temporaryFolder()
    var tiff = try VipsImage.open(path: Fixture.sample("orientation-1.jpg"), sequential: false)
      .encode(suffix: ".tif[compression=deflate,tile,tile_width=16,tile_height=16]")
    for offset in 2000..<min(tiff.count - 16, 60_000) { tiff[offset] = 0x33 }
    let path = try folder.write("tiles.tif", tiff)
    let result = try CLI.run([
      "render", "--rep", "thumbnail", "--no-cache", path, "-o", folder.file("t.png"),
    ])
    #expect(result.status == 1)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "\(result.stderr)")
    #expect((lines.first?.count ?? 0) <= 200 + path.count, "\(result.stderr)")
  }
}

extension ContainmentTests {
  @Test("a frame that announces more than it sends, or more than the limit, is refused")
  func framesAreBounded() throws {
    func frame(header: [UInt8], announcing length: UInt64, sending payload: [UInt8]) -> [UInt8] {
      let size = UInt32(header.count)
      return (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * UInt32($0))) } + header
        + (0..<8).map { UInt8(truncatingIfNeeded: length >> (8 * UInt64($0))) } + payload
    }
    for (length, expectFrame) in [(UInt64(5), true), (Frames.maxPayload, false), (1 << 40, false)] {
      var fds: [Int32] = [0, 0]
      try #require(pipe(&fds) == 0)
      let bytes = frame(header: Array("{}".utf8), announcing: length, sending: [1, 2, 3, 4, 5])
      _ = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
      close(fds[1])
      var timedOut = false
      let read = Frames.read(fds[0], timedOut: &timedOut)
      close(fds[0])
      #expect((read != nil) == expectFrame, "\(length)")
      if expectFrame { #expect(read?.payload == [1, 2, 3, 4, 5]) }
    }
    // A reply is bounded by what was asked: five bytes where four were the most is refused.
    for (most, expectFrame) in [(UInt64(5), true), (4, false)] {
      var fds: [Int32] = [0, 0]
      try #require(pipe(&fds) == 0)
      let bytes = frame(header: Array("{}".utf8), announcing: 5, sending: [1, 2, 3, 4, 5])
      _ = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
      close(fds[1])
      var timedOut = false
      let read = Frames.read(fds[0], maxPayload: most, timedOut: &timedOut)
      close(fds[0])
      #expect((read != nil) == expectFrame, "\(most)")
    }
    // What a thumbnail's reply may be: 256x256 at 8 bytes a pixel and 16 MiB for metadata.
    var spec = RenditionSpec(.thumbnail)
    spec.size = 256
    #expect(WorkerPool.largestReply(spec, Renderer()) == 256 * 256 * 8 + (16 << 20))
  }
}

@Suite(
  "Worker processes outlive the thread that asked for them", .timeLimit(.minutes(10)), .offThePool)
struct WorkerThreadTests {
  @Test("a worker started for a thread that has since ended still renders (no PDEATHSIG kill)")
  func workerOutlivesItsThread() throws {
    let pool = WorkerPool(WorkerPool.Configuration(executable: CLI.binary))
    defer { pool.shutDown() }
    var configured = Renderer()
    configured.workers = pool
    let renderer = configured
    let spec = RenditionSpec(.thumbnail)
    let source = ImageSource.file(Fixture.sample("orientation-1.jpg"))
    // The first render on a thread of its own, which then ends (joined: it is gone).
    final class Box: @unchecked Sendable { var result: Result<Rendition, DarkroomError>? }
    let box = Box()
    let context = Unmanaged.passRetained(
      Thread {
        box.result = Result { () throws(DarkroomError) in try renderer.render(source, spec) }
      })
    var thread = pthread_t()
    pthread_create(
      &thread, nil,
      { argument in
        Unmanaged<Thread>.fromOpaque(argument!).takeRetainedValue().main()
        return nil
      }, context.toOpaque())
    pthread_join(thread, nil)
    _ = try #require(box.result).get()
    // The idle worker is still alive: the second render uses it, and nothing crashed.
    _ = try renderer.render(source, spec)
    #expect(pool.counts.crashed == 0)
    #expect(pool.counts.started == 1)
  }
}

/// The route to the worker processes is read for every file a scan reads.
@Suite("Offload's route", .offThePool)
struct OffloadRouteTests {
  @Test(
    "read 300,000 times, the route is the same closure (a 100,000-file scan overflowed the stack)")
  func routeStaysFlat() {
    // A route that sends nothing anywhere (every file read here, as with none): harmless to
    // the tests running beside this one.
    let before = Offload.current
    Offload.set { _ in nil }
    defer { Offload.set(before) }
    for _ in 0..<300_000 { _ = Offload.workers(forFormat: "jpeg") }
    // Each read wrapped the stored closure in two more thunks: a call now went 600,000
    // frames deep and overflowed the stack. Reaching this line is the test.
    #expect(Offload.workers(forFormat: "jpeg") == nil)
  }
}

/// What a server holds without close-on-exec, as NIO does: a TCP listener, a client's
/// connection (both ends), an epoll set watching it, and a pipe, moved to numbers from 200
/// (a worker's own never reach them).
private struct ParentDescriptors {
  var numbers: [Int32] = []

  init() throws {
    let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(listening, pointer, length) == 0 && listen(listening, 4) == 0
          && getsockname(listening, pointer, &length) == 0
      }
    }
    let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
    let accepted = accept(listening, nil, nil)
    let poll = dr_epoll_watching(accepted)
    var ends: [Int32] = [-1, -1]
    let piped = pipe(&ends) == 0
    let originals = [listening, client, accepted, poll] + ends
    guard bound, connected, accepted >= 0, poll >= 0, piped else {
      for fd in originals where fd >= 0 { Glibc.close(fd) }
      throw DarkroomError(.engine, "cannot make the parent's descriptors")
    }
    for fd in originals {
      numbers.append(fcntl(fd, F_DUPFD, 200))
      Glibc.close(fd)
    }
  }

  func close() {
    for fd in numbers { Glibc.close(fd) }
  }
}
