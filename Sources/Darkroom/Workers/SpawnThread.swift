import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

/// The one thread that starts worker processes. A worker asks the kernel to kill it when
/// its parent goes (`PR_SET_PDEATHSIG`), and on Linux "parent" means the thread that forked
/// it: a worker forked from a pool thread that later retires (Dispatch's do, when idle)
/// would be killed while idle, and its next file reported as a crash. This thread never
/// ends, so workers live as long as the process.
final class SpawnThread: @unchecked Sendable {
  static let shared = SpawnThread()

  /// Makes the spawn thread now, if it is not made yet, at the calling thread's priority.
  static func prepare() { _ = shared }

  private let work = Locked<[@Sendable () -> Void]>([])
  private let wake = DispatchSemaphore(value: 0)

  private init() {
    var thread = pthread_t()
    let me = Unmanaged.passRetained(self).toOpaque()
    let started = pthread_create(
      &thread, nil,
      { argument in
        guard let argument else { return nil }
        Unmanaged<SpawnThread>.fromOpaque(argument).takeUnretainedValue().serve()
      }, me)
    if started == 0 { pthread_detach(thread) }
  }

  private func serve() -> Never {
    // Workers take this thread's niceness, and this thread took that of whichever thread
    // made it: libdispatch's by quality of service (-2 was seen), or a background thread's.
    // It takes the process's own instead, its main thread's (on Linux PRIO_PROCESS names a
    // thread, and the process id its main one). Where that is higher than this thread's
    // and the process may not raise priority, this stays as it is: ``prepare()`` makes the
    // thread before any thread lowers itself.
    let which = __priority_which_t(PRIO_PROCESS.rawValue)
    errno = 0
    let main = getpriority(which, id_t(getpid()))
    if errno == 0 { _ = setpriority(which, 0, main) }
    while true {
      wake.wait()
      let jobs = work.withLock { jobs in
        defer { jobs = [] }
        return jobs
      }
      for job in jobs { job() }
    }
  }

  /// Runs `body` on the spawn thread and returns its result.
  func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let box = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    work.withLock {
      $0.append {
        let value = body()
        box.withLock { $0 = value }
        done.signal()
      }
    }
    wake.signal()
    done.wait()
    return box.withLock { $0! }
  }
}
