import CTestPlan
import Dispatch
import Foundation
import Testing

/// The run's own shape: Tests/CTestPlan/test_plan.c gives Swift Testing a width before it
/// plans the run, so that not every test starts at once (their time limits running while
/// they share two cores), and `.offThePool` (OffThePool.swift) runs each suite where a test
/// that blocks its thread holds nothing else up.
@Suite("The test run", .offThePool)
struct TestPlanTests {
  @Test("runs six tests a core at once, unless its caller said how many")
  func width() {
    let width = Int(darkroom_test_width())
    if darkroom_test_width_is_ours() == 1 {
      #expect(
        width == Int(DARKROOM_TEST_WIDTH_PER_CORE) * max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    } else {
      #expect(width > 0, "the caller's SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH")
    }
  }

  @Test("a test's tasks that block their threads do not hold each other up")
  func blockingTasks() async {
    // More tasks than Swift's pool has threads, each blocked until all have begun: on the
    // pool as wide as the cores, the first ones would wait for the rest for ever.
    let count = 2 * max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) + 1
    let begun = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let released = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<count {
        group.addTask {
          begun.signal()
          return release.wait(timeout: .now() + 120) == .success
        }
      }
      group.addTask {
        // The guard is generous: libdispatch adds a thread about once a second.
        let all = (0..<count).allSatisfy { _ in begun.wait(timeout: .now() + 120) == .success }
        for _ in 0..<count { release.signal() }
        return all
      }
      return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(released == count + 1)
  }

  @Test("every suite runs off the pool")
  func everySuite() throws {
    let folder = Fixture.root.appendingPathComponent("Tests/DarkroomTests")
    var suites = 0
    var without: [String] = []
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
    where name.hasSuffix(".swift") {
      let source = try String(
        contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
      var rest = source[...]
      while let suite = rest.range(of: "\n@Suite(") {
        let tail = rest[suite.upperBound...]
        let end = tail.range(of: "\nstruct |\nenum |\nfinal class ", options: .regularExpression)
        let attribute = tail[..<(end?.lowerBound ?? tail.endIndex)]
        suites += 1
        if !attribute.contains(".offThePool") { without.append(name) }
        rest = tail
      }
    }
    #expect(suites >= 90)
    #expect(without == [], "suites without .offThePool")
  }
}
