import Foundation

/// A stop that a thread can wait for with a time limit: fired once, seen at once by every
/// wait, instead of a sleep that must run out.
package final class StopSignal: @unchecked Sendable {
  private let condition = NSCondition()
  private var isFired = false

  package init() {}

  package var fired: Bool {
    condition.lock()
    defer { condition.unlock() }
    return isFired
  }

  package func fire() {
    condition.lock()
    isFired = true
    condition.broadcast()
    condition.unlock()
  }

  /// Waits up to `seconds`; true when the stop has fired (then at once).
  package func wait(seconds: Double) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    condition.lock()
    defer { condition.unlock() }
    while !isFired {
      if !condition.wait(until: deadline) { break }
    }
    return isFired
  }
}
