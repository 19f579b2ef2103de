import Foundation
import Testing

@testable import Darkroom

/// The server under fire: uploads, jobs and trash moves at once against one `darkroom serve`
/// (with its watcher), then every promise checked against the library as it is.
@Suite("The server under load", .timeLimit(.minutes(5)), .offThePool)
struct LoadTests {
  /// How long the clients run (a length of run, not a speed: nothing below depends on how
  /// much got done). `DARKROOM_LOAD_SECONDS` runs longer.
  static let seconds =
    Double(ProcessInfo.processInfo.environment["DARKROOM_LOAD_SECONDS"] ?? "") ?? 30

  /// What the clients saw.
  final class Record: @unchecked Sendable {
    let lock = NSLock()
    var statuses: [Int: Int] = [:]
    var fiveHundreds: [String] = []
    var uploaded: [String: String] = [:]  // id: name
    var jobs = 0

    func saw(_ status: Int, _ what: String) {
      lock.withLock {
        statuses[status, default: 0] += 1
        if status >= 500 || status == 0 { fiveHundreds.append("\(status) \(what)") }
      }
    }
  }

  @Test(
    "4 uploaders, 2 job clients and a trash/restore client: ids never change, no 5xx, the catalog equals the disk"
  )
  func underLoad() throws {
    let served = try ServedLibrary()
    let library = served.library
    let initial = try served.ids()
    let start = try library.lastChange()
    let server = try ServeProcess(served.root, arguments: ["--rate-limit", "0"])
    let sample = try Fixture.bytes(Fixture.sample("gps.jpg"))
    let record = Record()
    let deadline = Date().addingTimeInterval(Self.seconds)

    // Seven threads of their own (concurrentPerform runs only as many as there are cores,
    // so the clients would take turns).
    let done = DispatchGroup()
    for client in 0..<7 {
      done.enter()
      Thread {
        defer { done.leave() }
        Self.run(client, until: deadline, server, initial, sample, record)
      }.start()
    }
    done.wait()
    // Whatever is in flight ends; the watcher has seen every file.
    #expect(server.stop() == 0, "\(server.stderr.suffix(2000))")

    #expect(record.fiveHundreds.isEmpty, "\(record.fiveHundreds.prefix(10))")
    #expect(
      record.uploaded.count >= 4 && record.jobs >= 2, "the clients did work: \(record.statuses)")
    // Every id a response gave still names its asset (where the trash client left it).
    for (id, name) in record.uploaded {
      let asset = try? library.asset(try #require(AssetID(id)))
      #expect(asset?.path == "Uploads/\(name)", "\(id): \(name)")
    }
    for id in initial {
      #expect((try? library.asset(id)) != nil, "\(id): an asset the clients moved is gone")
    }
    // No path was removed and inserted again (an asset re-catalogued under a new id).
    var removed: Set<String> = []
    for change in try library.changes(since: start, limit: 1_000_000) {
      if change.kind == .removed { removed.insert(change.path) }
      if change.kind == .inserted {
        #expect(!removed.contains(change.path), "\(change.path) was removed, then inserted")
      }
    }
    // The catalog equals the disk: every catalogued file is there with its content, and
    // every photo on disk is catalogued; a scan finds nothing to do.
    var everything = AssetQuery()
    everything.includeHidden = true
    var onDisk = Set<String>()
    for folder in ["", "Uploads"] {
      for name in (try? FileManager.default.contentsOfDirectory(atPath: served.root + "/" + folder))
        ?? []
      where name.hasSuffix(".jpg") {
        onDisk.insert(folder.isEmpty ? name : folder + "/" + name)
      }
    }
    let listed = try library.assets(matching: everything)
    var catalogued = Set<String>()
    for asset in try listed.assets(in: 0..<listed.count) {
      catalogued.insert(asset.path)
      #expect(asset.contentHash == (try ContentHash.of(file: library.path(of: asset)).hex))
    }
    let trashed = try library.trashedAssets()
    #expect(catalogued == onDisk, "\(catalogued.symmetricDifference(onDisk).prefix(10))")
    #expect(trashed.allSatisfy { FileManager.default.fileExists(atPath: library.path(of: $0)) })
    let rescan = try library.scanBlocking()
    // Nothing new or gone; a moved file's row may still carry its identity from before the
    // rename (a later scan updates it, same id, same content: checked above).
    #expect(rescan.added == 0 && rescan.removed == 0, "\(rescan)")
    for id in initial { #expect((try? library.asset(id)) != nil, "\(id) after the rescan") }
  }

  /// One client's loop: 0 to 3 upload, 4 and 5 start apply jobs and follow them, 6 trashes
  /// and restores.
  static func run(
    _ client: Int, until deadline: Date, _ server: ServeProcess, _ initial: [AssetID],
    _ sample: [UInt8], _ record: Record
  ) {
    var n = 0
    while Date() < deadline {
      n += 1
      switch client {
      case 0..<4:
        // A photo of its own (a comment segment after the start marker makes it unique).
        let tag = Array("client \(client) photo \(n)".utf8)
        let bytes = [0xFF, 0xD8, 0xFF, 0xFE, 0, UInt8(tag.count + 2)] + tag + sample.dropFirst(2)
        let name = "c\(client)-\(n).jpg"
        guard let answer = try? server.request("POST", "/api/uploads?name=\(name)", body: bytes)
        else { return record.saw(0, "upload \(name)") }
        record.saw(answer.status, "upload \(name)")
        if answer.status == 201, let id = Self.field("id", in: answer.text) {
          record.lock.withLock { record.uploaded[id] = name }
        }
      case 4, 5:
        let ids = (0..<3).map { _ in initial[4...].randomElement()?.rawValue ?? "" }
        let body =
          #"{"action": "apply", "filters": ["\#(client == 4 ? "noir" : "mono")"], "ids": ["\#(ids.joined(separator: #"", ""#))"]}"#
        guard let started = try? server.request("POST", "/api/jobs", body: Array(body.utf8))
        else { return record.saw(0, "job") }
        record.saw(started.status, "job")
        guard started.status == 202, let job = Self.field("id", in: started.text) else { continue }
        record.lock.withLock { record.jobs += 1 }
        // Followed to its end, as a client would.
        while let status = try? server.request("GET", "/api/jobs/\(job)"),
          status.status == 200, !status.text.contains(#""finished":true"#)
        {
          usleep(20_000)
        }
      default:
        guard let id = initial[..<4].randomElement()?.rawValue else { return }
        for action in ["trash", "restore"] {
          let body = #"{"action": "\#(action)", "ids": ["\#(id)"]}"#
          let answer = try? server.request("POST", "/api/jobs", body: Array(body.utf8))
          record.saw(answer?.status ?? 0, action)
          // Each move ends before the next starts, as a person's clicks do.
          guard let answer, let job = Self.field("id", in: answer.text) else { continue }
          while let status = try? server.request("GET", "/api/jobs/\(job)"),
            status.status == 200, !status.text.contains(#""finished":true"#)
          {
            usleep(20_000)
          }
        }
      }
    }
  }

  /// A string field of a JSON response's body (the first with that name).
  static func field(_ name: String, in response: String) -> String? {
    guard let body = response.range(of: "\r\n\r\n").map({ response[$0.upperBound...] }),
      let object = try? JSONSerialization.jsonObject(with: Data(body.utf8))
    else { return nil }
    if let top = object as? [String: Any] {
      if let value = top[name] as? String { return value }
      if let asset = top["asset"] as? [String: Any] { return asset[name] as? String }
    }
    return nil
  }
}
