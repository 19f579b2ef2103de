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

  static func point(_ name: String) {
    guard let armed, armed.point == name else { return }
    if hits.add(1, ordering: .relaxed).newValue >= armed.hit {
      kill(getpid(), SIGKILL)
    }
  }
}
