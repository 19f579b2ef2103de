extension AsyncThrowingStream where Failure == any Error {
  /// A stream whose elements a task of its own yields through `produce`: it finishes when
  /// `produce` returns or the task is cancelled (the reader stopped: `onTermination` cancels
  /// it), and throws what else `produce` throws.
  package static func produced(
    by produce: @escaping @Sendable (Continuation) async throws -> Void
  ) -> Self {
    AsyncThrowingStream { continuation in
      let task = Task {
        do {
          try await produce(continuation)
          continuation.finish()
        } catch is CancellationError {
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
