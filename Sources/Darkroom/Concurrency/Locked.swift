#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A value guarded by a pthread mutex: the one lock Darkroom, its server and its command
/// line use. Used instead of `Synchronization.Mutex`, whose Linux futex lock
/// ThreadSanitizer cannot see (it reported the guarded accesses as races), so the test suite
/// stays meaningful under `--sanitize=thread`.
///
/// ```swift
/// let seen = Locked(0)
/// seen.withLock { $0 += 1 }
/// ```
package final class Locked<Value>: @unchecked Sendable {
  private var value: Value
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  package init(_ value: Value) {
    self.value = value
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  package func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }
}
