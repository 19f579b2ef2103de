import CSandbox

#if canImport(Glibc)
  import Glibc
#endif

/// Work that may wait: a server's catch-up scan and background thumbnails, on threads of
/// their own, so that the requests people are waiting for get the processor first.
package enum BackgroundPriority {
  /// Lowers the calling thread to the lowest scheduling priority (nice 19, and the idle
  /// class for its disk reads where the I/O scheduler has classes), for the rest of its
  /// life: a thread cannot take it back. Call it only on a thread made for background work,
  /// never on a shared pool's. Returns whether it was lowered.
  @discardableResult
  package static func lowerThisThread() -> Bool {
    // A thread inherits the niceness of the thread that makes it, and a process that of the
    // thread that forks it. The thread that starts workers (``SpawnThread``) is made on
    // first use: made from here, after the lowering, it and every worker it started (which
    // people's renders share with the background work) would run at 19.
    SpawnThread.prepare()
    let lowered = dr_lower_thread_priority() == 0
    // Tests: each lowered thread says so as it starts (a thread may end before anyone
    // looks at it from outside).
    if getenv("DARKROOM_TEST_PRIORITY") != nil {
      let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
      let line = Array("darkroom: background thread at nice \(nice)\n".utf8)
      _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
    return lowered
  }
}
