import Foundation
import Testing

@testable import Darkroom

/// Where a server's batch jobs run: on threads of their own (``OwnThreads``), not on the
/// Dispatch pool that its requests share. On the pool, two jobs held both of a 2-core
/// machine's threads for their length, and requests waited for them: Schemathesis saw a
/// refused preset answered in 50 s and requests time out at 30 s.
@Suite("darkroom serve: jobs on threads of their own", .timeLimit(.minutes(5)), .offThePool)
struct JobThreadTests {
  /// How many threads of `pid` are named as a job's are.
  static func jobThreads(of pid: Int32) -> Int {
    let folder = "/proc/\(pid)/task"
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return tasks.filter {
      (try? String(contentsOfFile: "\(folder)/\($0)/comm", encoding: .utf8))
        == OwnThreads.name + "\n"
    }.count
  }

  @Test(
    "two jobs held at their items are each an item's width of named threads, none of Dispatch's pool; requests answer meanwhile; none is left when they end"
  )
  func ownThreads() throws {
    let served = try ServedLibrary(
      samples: ["orientation-1.jpg", "orientation-3.jpg", "orientation-6.jpg"])
    let ids = try served.library.assetIDs(matching: AssetQuery()).map(\.description)
    // While the gate file exists each job's items wait at their start.
    let gates = try TemporaryFolder()
    let gate = try gates.write("gate", [1])
    let server = try ServeProcess(
      served.root, arguments: ["--rate-limit", "0"],
      environment: served.environment.merging(["DARKROOM_TEST_JOB_GATE": gate]) { $1 })
    defer { _ = server.stop() }
    let pid = server.process.processIdentifier
    #expect(Self.jobThreads(of: pid) == 0)
    let body = try JSONSerialization.data(withJSONObject: [
      "action": "apply", "filters": ["noir"], "ids": ids,
    ])
    var jobs: [String] = []
    for _ in 0..<2 {
      let started = try server.request("POST", "/api/jobs", body: Array(body))
      #expect(started.status == 202, "\(started.text)")
      jobs.append(try #require(ServeProcess.json(started.text)["id"] as? String))
    }
    // Each job takes as many items at once as the server's cores (its default), of 3.
    let width = min(3, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    #expect(eventually { Self.jobThreads(of: pid) == 2 * width }, "\(Self.jobThreads(of: pid))")
    let listed = try server.request("GET", "/api/assets", token: ServedLibrary.readToken)
    #expect(listed.status == 200)
    #expect(Self.jobThreads(of: pid) == 2 * width)
    unlink(gate)
    for job in jobs {
      #expect(
        try eventually {
          let status = try server.request("GET", "/api/jobs/\(job)")
          return (ServeProcess.json(status.text)["state"] as? String) == "finished"
        })
    }
    #expect(eventually { Self.jobThreads(of: pid) == 0 }, "\(Self.jobThreads(of: pid))")
    #expect(server.stop() == 0)
  }
}
