import Dispatch
import Testing

/// Runs a test on Dispatch's global queue instead of Swift's cooperative pool.
///
/// On Linux, Swift runs every task on a queue as wide as the processor's cores (2 on CI) that
/// never adds a thread. Most of these tests block their thread: they wait for a `darkroom`
/// process (`CLI.run`), drive a browser over a socket, or poll a server. While two of them
/// block, nothing else async in the process runs: not another test's awaits (with their time
/// limits running), and not the requests of a server a test started in-process. Dispatch's
/// global queue adds a thread when its threads block (libdispatch checks about once a
/// second), so a test that blocks holds one thread and nothing else.
///
/// Every suite carries `.offThePool`; `TestPlanTests` checks that each does, and that a
/// test's blocked tasks do not hold each other up.
struct OffThePool: SuiteTrait, TestTrait, TestScoping {
  var isRecursive: Bool { true }

  func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    try await withTaskExecutorPreference(GlobalQueueExecutor.shared) { try await function() }
  }
}

extension Trait where Self == OffThePool {
  /// The suite's tests, and the tasks they start with `async let` or a task group, run on
  /// Dispatch's global queue, where a blocked thread holds nothing else up.
  static var offThePool: Self { OffThePool() }
}

/// A task executor whose jobs run on Dispatch's global queue.
final class GlobalQueueExecutor: TaskExecutor {
  static let shared = GlobalQueueExecutor()

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    DispatchQueue.global().async { job.runSynchronously(on: executor) }
  }
}
