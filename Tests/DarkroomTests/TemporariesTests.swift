import Foundation
import Testing

@testable import Darkroom

/// What a killed writer leaves (an upload's `.partial`, an edit's `.tmp`) is swept by the
/// next command that opens the library; what a live writer is writing is left alone.
@Suite("Temporaries of dead writers", .timeLimit(.minutes(10)), .offThePool)
struct TemporariesTests {
  /// A library with one photo, and temporaries of a dead process and of this (live) one.
  static func library() throws -> (ServedLibrary, dead: [String], live: [String]) {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    // A process that has ended: its pid names no process now.
    let ended = Process()
    ended.executableURL = URL(fileURLWithPath: "/bin/true")
    try ended.run()
    ended.waitUntilExit()
    let pid = ended.processIdentifier
    let me = getpid()
    try FileManager.default.createDirectory(
      atPath: served.folder.file("Uploads"), withIntermediateDirectories: true)
    let dead = [
      "Uploads/.upload.\(pid).42.partial", ".orientation-1.jpg.\(pid).7.tmp",
      ".darkroom/originals/.abc.\(pid).9.tmp",
    ]
    let live = ["Uploads/.upload.\(me).1.partial", ".orientation-1.jpg.\(me).2.tmp"]
    for path in dead + live {
      try FileManager.default.createDirectory(
        atPath: served.folder.file((path as NSString).deletingLastPathComponent),
        withIntermediateDirectories: true)
      _ = try served.folder.write(path, Array(repeating: 7, count: 1000))
    }
    return (served, dead, live)
  }

  static func exists(_ served: ServedLibrary, _ path: String) -> Bool {
    FileManager.default.fileExists(atPath: served.folder.file(path))
  }

  @Test("check reports a dead writer's temporaries; check --repair removes them, and only them")
  func checkAndRepair() throws {
    let (served, dead, live) = try Self.library()
    let check = try CLI.run(["check", served.root])
    #expect(check.status == 1)
    for path in dead {
      #expect(check.stdout.contains("\(path): a temporary file whose writer is gone\n"), "\(path)")
      #expect(Self.exists(served, path), "reported, not removed: \(path)")
    }
    #expect(!live.contains { check.stdout.contains($0) }, "\(check.stdout)")
    let repair = try CLI.run(["check", "--repair", served.root])
    #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
    #expect(dead.allSatisfy { !Self.exists(served, $0) })
    #expect(live.allSatisfy { Self.exists(served, $0) })
  }

  @Test("scan sweeps those in the folders it lists; serve sweeps all at start")
  func scanAndServeSweep() throws {
    let (served, dead, live) = try Self.library()
    // A scan removes those it sees in the folders it lists (not inside .darkroom/).
    let scan = try CLI.run(["scan", served.root])
    #expect(scan.status == 0, "\(scan.stderr)")
    let inFolders = dead.filter { !$0.hasPrefix(".darkroom/") }
    #expect(inFolders.allSatisfy { !Self.exists(served, $0) })
    #expect(dead.filter { $0.hasPrefix(".darkroom/") }.allSatisfy { Self.exists(served, $0) })
    #expect(live.allSatisfy { Self.exists(served, $0) })

    let (again, deadAgain, _) = try Self.library()
    let server = try ServeProcess(again.root)
    #expect(deadAgain.allSatisfy { !Self.exists(again, $0) })
    #expect(server.stop() == 0)
  }
}

@Suite("Ids that never change", .timeLimit(.minutes(10)), .offThePool)
struct StableIDTests {
  @Test(
    "a file linked and catalogued while a scan walks its folder keeps its id: no remove and insert")
  func uploadDuringScanKeepsItsID() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let library = served.library
    try FileManager.default.createDirectory(
      atPath: served.folder.file("Uploads"), withIntermediateDirectories: true)
    let start = try library.lastChange()
    let newcomer = served.folder.file("Uploads/new.jpg")
    let bytes = try Fixture.bytes(Fixture.sample("orientation-3.jpg"))
    // What an upload does, between the scan's two reads of the folder: the file is linked
    // into place, then catalogued.
    let placed = Locked<AssetID?>(nil)
    let started = Locked(false)
    try FaultInjection.whenReached(
      "scan-between-catalog-and-listing", file: "Uploads",
      {
        // Once (the point is reached again by later folders of the walk).
        let first = started.withLock { was -> Bool in
          defer { was = true }
          return !was
        }
        guard first else { return }
        _ = FileManager.default.createFile(atPath: newcomer, contents: Data(bytes))
        _ = try? library.recatalog([newcomer])
        placed.withLock { $0 = try? library.asset(atPath: newcomer)?.id }
      },
      during: { _ = try library.scanBlocking() })
    let id = try #require(placed.withLock { $0 })
    #expect(try library.asset(atPath: newcomer)?.id == id)
    let changes = try library.changes(since: start).filter { $0.path == "Uploads/new.jpg" }
    #expect(changes.map(\.kind) == [.inserted], "\(changes)")
    #expect(changes.allSatisfy { $0.id == id })
  }
}

@Suite(
  "A server killed mid-write leaves nothing after its restart", .timeLimit(.minutes(10)),
  .offThePool)
struct KilledServerTests {
  /// Every temporary file (an upload's `.partial`, a write's `.tmp`) under `root`.
  static func temporaries(_ root: String) -> [String] {
    (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter {
      let name = $0.split(separator: "/").last.map(String.init) ?? $0
      return name.hasPrefix(".") && (name.hasSuffix(".partial") || name.hasSuffix(".tmp"))
    }
  }

  @Test("SIGKILL during a large upload, and during an apply job: no temporary after the restart")
  func killedDuringUploadAndJob() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg", "gps.jpg"])
    // 1. An upload of 64 MiB, killed after 8 MiB arrived.
    let server = try ServeProcess(served.root)
    let upload = try server.connect()
    defer { close(upload) }
    let size = 64 << 20
    server.send(
      upload,
      Array(
        ("POST /api/uploads?name=big.jpg HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
          + "Authorization: Bearer \(ServedLibrary.writeToken)\r\nContent-Length: \(size)\r\n\r\n")
          .utf8) + (try Fixture.bytes(Fixture.sample("gps.jpg")))
        + [UInt8](repeating: 0, count: 8 << 20))
    #expect(eventually { !Self.temporaries(served.root).isEmpty }, "the upload is under way")
    kill(server.process.processIdentifier, SIGKILL)
    server.process.waitUntilExit()
    #expect(Self.temporaries(served.root).count == 1, "the crash left the upload's partial file")

    // 2. An apply job, killed after an edit's result was written beside its photo but before
    // it was renamed into place.
    let faulty = try ServeProcess(served.root, environment: ["DARKROOM_FAULT": "before-replace"])
    let job = try faulty.request(
      "POST", "/api/jobs",
      body: Array(#"{"action": "apply", "filters": ["noir"], "query": {}}"#.utf8))
    #expect(job.status == 202, "\(job.text)")
    let jobID = try #require(ServeProcess.json(job.text)["id"] as? String)
    // A bound against a hang, not a measurement: the job reaches its fault point at once.
    #expect(eventually(60) { !faulty.process.isRunning }, "killed at the fault point")
    if faulty.process.isRunning { kill(faulty.process.processIdentifier, SIGKILL) }
    faulty.process.waitUntilExit()
    #expect(faulty.process.terminationReason == .uncaughtSignal)
    #expect(Self.temporaries(served.root).contains { $0.hasSuffix(".tmp") }, "the edit's temporary")

    // 3. Started again: after its first request, no temporary anywhere in the library.
    let again = try ServeProcess(served.root)
    #expect(try again.request("GET", "/healthz").status == 200)
    #expect(Self.temporaries(served.root) == [])

    // 4. The job says it was interrupted, and resumes under its id to the end: each asset
    // edited once (the one in flight at the kill was never renamed into place).
    let interrupted = ServeProcess.json(try again.request("GET", "/api/jobs/\(jobID)").text)
    #expect(interrupted["state"] as? String == "interrupted")
    #expect(interrupted["finished"] as? Bool == true)
    #expect(interrupted["total"] as? Int == 2)
    let resumed = try again.request("POST", "/api/jobs/\(jobID)/resume")
    #expect(resumed.status == 202, "\(resumed.text)")
    #expect(resumed.text.contains("Location: /api/jobs/\(jobID)\r\n"))
    let ended = try eventually(60) {
      ServeProcess.json(try again.request("GET", "/api/jobs/\(jobID)").text)["state"] as? String
        == "finished"
    }
    #expect(ended)
    let finished = ServeProcess.json(try again.request("GET", "/api/jobs/\(jobID)").text)
    #expect(finished["done"] as? Int == 2 && finished["failed"] as? Int == 0)
    for id in try served.ids() {
      #expect(try served.library.editHistory(id).current == 1, "\(id)")
    }
    #expect(try again.request("POST", "/api/jobs/\(jobID)/resume").status == 409)
    #expect(again.stop() == 0)
  }
}

/// A library on shared storage has writers on other machines, whose pids mean nothing here:
/// what tells whether one still runs is the lease it holds on its file (`flock`), which a
/// network file system's server, like the kernel, drops when the writer dies.
@Suite("Writers on other machines", .timeLimit(.minutes(10)), .offThePool)
struct OtherMachineWriterTests {
  /// Holds the lease of `path` through a descriptor of its own until `release`: the file's
  /// name carries a pid that runs nowhere here, so its writer is as one on another machine.
  /// (flock locks of two descriptors conflict, in one process as in two.)
  static func holder(_ path: String) throws -> Int32 {
    let fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0o644)
    try #require(fd >= 0)
    try #require(FileLease.flockFile(fd, LOCK_EX | LOCK_NB) == 0)
    #expect(FileLease.isHeld(path) == true)
    return fd
  }

  static func release(_ holder: Int32) { close(holder) }

  @Test(
    "a temporary whose pid runs nowhere here but whose writer holds its lease is left by check, scan and serve; once the lease is dropped it goes"
  )
  func temporaries() throws {
    let (served, dead, _) = try TemporariesTests.library()
    let holders = try dead.map { try Self.holder(served.folder.file($0)) }
    let check = try CLI.run(["check", "--repair", served.root])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    #expect(!check.stdout.contains("whose writer is gone"), "\(check.stdout)")
    #expect(try CLI.run(["scan", served.root]).status == 0)
    let server = try ServeProcess(served.root)
    #expect(server.stop() == 0)
    #expect(dead.allSatisfy { TemporariesTests.exists(served, $0) })
    // An edit's replacement of the file the temporary belongs to sweeps its leftovers too.
    let edit = try CLI.run(["edit", served.folder.file("orientation-1.jpg"), "--filter", "noir"])
    #expect(edit.status == 0, "\(edit.stderr)")
    #expect(dead.allSatisfy { TemporariesTests.exists(served, $0) })

    holders.forEach(Self.release)
    let repair = try CLI.run(["check", "--repair", served.root])
    #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
    #expect(dead.allSatisfy { !TemporariesTests.exists(served, $0) })
  }

  @Test(
    "a job recorded as running by a process of another machine is running while its lease is held (no resume), interrupted once it is dropped (resumable)"
  )
  func jobs() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let ids = try served.ids()
    let id = JobRecord.newID()
    // Its owner: a pid of another boot (another machine): the pid says nothing here.
    let stored = StoredJob(
      id: id, name: "trash", action: try #require(JobLog.encode(.trash, quality: nil)),
      ids: ids, state: "running",
      owner: ProcessStamp(pid: getpid(), started: 1, boot: String(repeating: "0", count: 32))
        .description,
      started: Date().timeIntervalSince1970, ended: nil)
    try served.library.catalogCall { try $0.saveJob(stored) }
    // No lease at all: the process is gone.
    #expect(try served.library.jobRecord(id)?.state == .interrupted)

    let lease = try #require(JobLease.path(id, in: served.library))
    try FileManager.default.createDirectory(
      atPath: (lease as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let holder = try Self.holder(lease)
    #expect(try served.library.jobRecord(id)?.state == .running)
    #expect(throws: DarkroomError.self) { try served.library.resumeJob(id) }
    Self.release(holder)
    #expect(try served.library.jobRecord(id)?.state == .interrupted)

    // Resumed here, it holds its own lease while it runs and removes it at its end.
    let request = try served.library.resumeJob(id)
    let counts = try LibraryJob(request).run { _, _ in
      #expect(FileLease.isHeld(lease) == true)
    }
    #expect(counts.done == 1)
    #expect(!FileManager.default.fileExists(atPath: lease))
    #expect(try served.library.jobRecord(id)?.state == .finished)

    // A job's start sweeps the leases nobody holds (jobs whose process died, never
    // resumed), not one that is held.
    let folder = (lease as NSString).deletingLastPathComponent
    let stale = folder + "/" + JobRecord.newID() + ".lease"
    let held = folder + "/" + JobRecord.newID() + ".lease"
    _ = FileManager.default.createFile(atPath: stale, contents: nil)
    let holding = try Self.holder(held)
    defer { Self.release(holding) }
    var again = JobRequest(.trash, on: .assets(ids), in: served.library)
    again.recordID = JobRecord.newID()
    _ = try LibraryJob(again).run()
    #expect(!FileManager.default.fileExists(atPath: stale))
    #expect(FileManager.default.fileExists(atPath: held))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder) == [
        (held as NSString).lastPathComponent
      ])
  }
}
