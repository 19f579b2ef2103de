import Dispatch

/// Bytes handed from an asynchronous writer (a request's body as it arrives) to a reader that
/// blocks on a thread of its own (a sealing loop), holding at most `capacity` bytes between
/// them: the writer waits while the reader is behind, so an upload is never whole in memory.
///
/// The writer calls ``write(_:)`` for each piece, then ``finish()``, or ``fail(_:)``; the
/// reader calls ``read(_:)`` until it gives fewer bytes than asked (the end). A reader that
/// gives up calls ``cancel()``, and the writer's next ``write(_:)`` returns false.
final class BytePipe: Sendable {
  private struct State {
    var pieces: [[UInt8]] = []
    var first = 0  // the first piece not read whole (those before it are dropped in bulk)
    var offset = 0  // into pieces[first]
    var buffered = 0
    var finished = false
    var failure: DarkroomError?
    var cancelled = false
    var writer: CheckedContinuation<Void, Never>?
  }
  private let state = Locked(State())
  private let arrived = DispatchSemaphore(value: 0)
  let capacity: Int

  init(capacity: Int = 8 << 20) { self.capacity = max(1, capacity) }

  /// Hands `bytes` to the reader, waiting while `capacity` bytes are held; false once the
  /// reader has cancelled (the rest of the body is not wanted).
  func write(_ bytes: [UInt8]) async -> Bool {
    while true {
      let (accepted, cancelled) = state.withLock { state -> (Bool, Bool) in
        guard !state.cancelled else { return (false, true) }
        guard state.buffered < capacity else { return (false, false) }
        state.pieces.append(bytes)
        state.buffered += bytes.count
        return (true, false)
      }
      if cancelled { return false }
      if accepted {
        arrived.signal()
        return true
      }
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let now = state.withLock { state -> Bool in
          if state.cancelled || state.buffered < capacity { return true }
          state.writer = continuation
          return false
        }
        if now { continuation.resume() }
      }
    }
  }

  /// No more bytes come.
  func finish() {
    state.withLock { $0.finished = true }
    arrived.signal()
  }

  /// The writer failed: the reader's next read throws `error`.
  func fail(_ error: DarkroomError) {
    state.withLock { state in
      state.failure = error
      state.finished = true
    }
    arrived.signal()
  }

  /// The reader wants no more: a writer waiting, or writing next, is told so.
  func cancel() {
    let writer = state.withLock { state -> CheckedContinuation<Void, Never>? in
      state.cancelled = true
      (state.pieces, state.first, state.offset, state.buffered) = ([], 0, 0, 0)
      defer { state.writer = nil }
      return state.writer
    }
    writer?.resume()
  }

  /// The next `count` bytes, waiting for them; fewer only at the end.
  ///
  /// - Throws: what the writer failed with.
  func read(_ count: Int) throws(DarkroomError) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(count)
    while out.count < count {
      let (failure, done, writer) = state.withLock {
        state -> (DarkroomError?, Bool, CheckedContinuation<Void, Never>?) in
        if let failure = state.failure { return (failure, true, nil) }
        while out.count < count, state.first < state.pieces.count {
          let piece = state.pieces[state.first]
          let take = min(count - out.count, piece.count - state.offset)
          out += piece[state.offset..<state.offset + take]
          state.offset += take
          state.buffered -= take
          if state.offset == piece.count {
            (state.first, state.offset) = (state.first + 1, 0)
          }
        }
        // Pieces read whole go in one removal, not one shift of the array each.
        if state.first > 0, state.first * 2 >= state.pieces.count {
          state.pieces.removeFirst(state.first)
          state.first = 0
        }
        var writer: CheckedContinuation<Void, Never>?
        if state.buffered < capacity {
          writer = state.writer
          state.writer = nil
        }
        return (nil, state.finished && state.first == state.pieces.count, writer)
      }
      writer?.resume()
      if let failure { throw failure }
      if out.count == count || done { break }
      arrived.wait()
    }
    return out
  }
}
