import Dispatch
import Foundation

/// Long work on threads made for it, not on Dispatch's shared pool. That pool is as wide as
/// the processor's cores and grows only when its threads sleep: a batch job's items, busy on
/// the processor for minutes, held its threads, and every short task queued behind them (a
/// server's request parsed, a catalog read) waited for a job to end. The fuzzing run of the
/// API saw a preset refused in 50 s and requests time out at 30 s with two jobs running.
/// On threads of their own, jobs share the processor with requests, which the kernel
/// schedules as it does any threads.
package enum OwnThreads {
  /// The name the threads carry (`/proc/PID/task/TID/comm`).
  package static let name = "darkroom job"

  /// Calls `body` with each index of `0..<count`, each on a thread of its own (the calling
  /// thread takes index 0), and returns when every call has.
  package static func perform(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    guard count > 1 else {
      if count == 1 { body(0) }
      return
    }
    let done = DispatchGroup()
    for index in 1..<count {
      done.enter()
      start {
        body(index)
        done.leave()
      }
    }
    body(0)
    done.wait()
  }

  /// `work`'s result, worked out on a thread of its own and awaited without holding a thread
  /// of Swift's pool (which is Dispatch's) meanwhile.
  package static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
      start { continuation.resume(returning: work()) }
    }
  }

  /// `body` on a new thread, named ``name`` (from here, once it has started), which ends
  /// with it.
  package static func start(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.start()
    thread.name = name
  }
}
