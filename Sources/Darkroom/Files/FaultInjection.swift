#if canImport(Glibc)
  import Glibc
#endif

/// Named points in write paths where tests can stop the process dead (SIGKILL), to prove
/// that a crash at any step loses nothing. Set `DARKROOM_FAULT=<point>` to use one; it does
/// nothing otherwise.
enum FaultInjection {
  private static let armed: String? = getenv("DARKROOM_FAULT").map { String(cString: $0) }

  static func point(_ name: String) {
    guard let armed, armed == name else { return }
    kill(getpid(), SIGKILL)
  }
}
