import Darkroom
import Dispatch
import Synchronization

/// Cold renders, bounded: at most `slots` run at once (off the server's own threads), at
/// most `bound` more wait, and past that a request is refused (503 with `Retry-After`)
/// rather than the queue growing without end. Requests for a rendition already being made
/// wait for that render instead of starting another.
final class RenderQueue: Sendable {
  private struct State {
    var running = 0
    var waiting: [CheckedContinuation<Void, Never>] = []
    var inFlight: [String: Task<Rendition, any Error>] = [:]
  }
  private let state = Mutex(State())
  let slots: Int
  let bound: Int
  let metrics: ServerMetrics

  init(slots: Int, bound: Int, metrics: ServerMetrics) {
    self.slots = max(1, slots)
    self.bound = max(0, bound)
    self.metrics = metrics
  }

  /// The rendition `key` names, made by `work` unless a render of it is under way.
  ///
  /// - Throws: a 503 ``APIError`` when the queue is full; what `work` throws.
  func rendition(
    _ key: String, _ work: @escaping @Sendable () throws(DarkroomError) -> Rendition
  ) async throws -> Rendition {
    let task = try state.withLock { state throws(APIError) -> Task<Rendition, any Error> in
      if let task = state.inFlight[key] { return task }
      guard state.inFlight.count < slots + bound else {
        metrics.rendersRejected.increment()
        var error = APIError(
          .serviceUnavailable, "busy",
          "the server has \(state.inFlight.count) renders queued: retry")
        error.headers[.retryAfter] = "1"
        throw error
      }
      let task = Task<Rendition, any Error> {
        await self.acquire()
        defer { self.release(key) }
        self.metrics.renders.increment()
        return try await Self.offThread(work)
      }
      state.inFlight[key] = task
      metrics.renderQueue.set(Double(state.inFlight.count))
      return task
    }
    return try await task.value
  }

  /// Renders running or waiting.
  var depth: Int { state.withLock { $0.inFlight.count } }

  private func acquire() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.running < slots {
          state.running += 1
          return true
        }
        state.waiting.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  private func release(_ key: String) {
    let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
      state.inFlight[key] = nil
      metrics.renderQueue.set(Double(state.inFlight.count))
      if state.waiting.isEmpty {
        state.running -= 1
        return nil
      }
      return state.waiting.removeFirst()
    }
    next?.resume()
  }

  /// Runs blocking engine work on a Dispatch thread, so the server's own threads stay free.
  static func offThread<T: Sendable>(
    _ work: @escaping @Sendable () throws(DarkroomError) -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global().async {
        do throws(DarkroomError) {
          continuation.resume(returning: try work())
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
  }
}

/// Blocking engine work (catalog writes, edits, file moves) off the server's threads.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws(DarkroomError) -> T)
  async throws -> T
{
  try await RenderQueue.offThread(work)
}
