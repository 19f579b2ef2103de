import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Named points in write paths where tests can stop the process dead (SIGKILL), to prove
/// that a crash at any step loses nothing. `DARKROOM_FAULT=<point>` kills at the first time
/// the point is reached, `DARKROOM_FAULT=<point>:<n>` at the n-th (in a batch). Unset, it
/// does nothing.
enum FaultInjection {
  private static let armed: (point: String, hit: Int)? = {
    guard let raw = getenv("DARKROOM_FAULT") else { return nil }
    let parts = String(cString: raw).split(separator: ":")
    guard let point = parts.first else { return nil }
    return (String(point), parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
  }()
  private static let hits = Atomic<Int>(0)

  /// Whether an injected failure named `name` (such as `enospc`, a full disk) is due now.
  static func fails(_ name: String) -> Bool {
    guard let armed, armed.point == name else { return false }
    return hits.add(1, ordering: .relaxed).newValue >= armed.hit
  }

  /// An in-process test's action at a named point, for one file: what a test does there
  /// (change the file, say) in place of the kill. Unset, `reached` does nothing.
  private static let actions = Locked<[String: @Sendable () -> Void]>([:])

  /// Runs `action` whenever `point` is reached for `file`, until `body` returns.
  static func whenReached<T>(
    _ point: String, file: String, _ action: @escaping @Sendable () -> Void,
    during body: () throws -> T
  ) rethrows -> T {
    actions.withLock { $0[point + "\0" + file] = action }
    defer { actions.withLock { $0[point + "\0" + file] = nil } }
    return try body()
  }

  /// `whenReached` for an asynchronous `body`.
  static func whenReached<T>(
    _ point: String, file: String, _ action: @escaping @Sendable () -> Void,
    during body: () async throws -> T
  ) async rethrows -> T {
    actions.withLock { $0[point + "\0" + file] = action }
    defer { actions.withLock { $0[point + "\0" + file] = nil } }
    return try await body()
  }

  /// A point where an in-process test may act for `file` (see `whenReached`).
  static func reached(_ point: String, file: String) {
    let file = OpenedFiles.name(of: file)
    let action = actions.withLock { $0[point + "\0" + file] }
    action?()
  }

  /// Tests of a server in another process: while the file `DARKROOM_TEST_RENDER_GATE` names
  /// exists, the renders an ``Images`` queues wait (what a page shows before its thumbnails
  /// come). Unset, nothing waits.
  private static let renderGate: String? = getenv("DARKROOM_TEST_RENDER_GATE").map {
    String(cString: $0)
  }

  static func waitAtRenderGate() {
    guard let renderGate else { return }
    while access(renderGate, F_OK) == 0 { usleep(20_000) }
  }

  /// Tests of a server in another process: while the file `DARKROOM_TEST_JOB_GATE` names
  /// exists, each item of a library job waits before its work (a job caught running). Unset,
  /// nothing waits.
  private static let jobGate: String? = getenv("DARKROOM_TEST_JOB_GATE").map {
    String(cString: $0)
  }

  static func waitAtJobGate() {
    guard let jobGate else { return }
    while access(jobGate, F_OK) == 0 { usleep(20_000) }
  }

  static func point(_ name: String) {
    guard let armed, armed.point == name else { return }
    if hits.add(1, ordering: .relaxed).newValue >= armed.hit {
      kill(getpid(), SIGKILL)
    }
  }
}
