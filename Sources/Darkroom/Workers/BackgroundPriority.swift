import CSandbox

/// Work that may wait: a server's catch-up scan and background thumbnails, on threads of
/// their own, so that the requests people are waiting for get the processor first.
public enum BackgroundPriority {
  /// Lowers the calling thread to the lowest scheduling priority (nice 19, and the idle
  /// class for its disk reads where the I/O scheduler has classes), for the rest of its
  /// life: a thread cannot take it back. Call it only on a thread made for background work,
  /// never on a shared pool's. Returns whether it was lowered.
  @discardableResult
  public static func lowerThisThread() -> Bool {
    dr_lower_thread_priority() == 0
  }
}
