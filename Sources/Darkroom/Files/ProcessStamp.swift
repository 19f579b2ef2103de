import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A process, named so that it is never confused with a later one that got its id: its pid,
/// the time it started (field 22 of `/proc/PID/stat`, in clock ticks since boot) and the
/// boot it started in (`/proc/sys/kernel/random/boot_id`: after a reboot the same pid may
/// start at the same tick).
/// A job's record names its owner this way, so a restart can tell a job whose process died
/// from one still running.
package struct ProcessStamp: Sendable, Hashable, CustomStringConvertible {
  package var pid: pid_t
  package var started: UInt64
  package var boot: String

  /// This boot's id, read once.
  static let thisBoot =
    ((try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? "")
    .filter { $0.isHexDigit }

  /// This process.
  package static let current =
    ProcessStamp(pid: getpid()) ?? ProcessStamp(pid: getpid(), started: 0, boot: thisBoot)

  init(pid: pid_t, started: UInt64, boot: String) {
    (self.pid, self.started, self.boot) = (pid, started, boot)
  }

  /// The process that has `pid` now; nil if none does.
  init?(pid: pid_t) {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = text.lastIndex(of: ")")
    else { return nil }
    // After "PID (COMM)": state is field 3, start time field 22.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 19, let started = UInt64(fields[19]) else { return nil }
    self.init(pid: pid, started: started, boot: Self.thisBoot)
  }

  /// `PID:STARTED:BOOT`, as stored.
  package var description: String { "\(pid):\(started):\(boot)" }

  /// Parses ``description``.
  package init?(_ text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 3, let pid = pid_t(parts[0]), let started = UInt64(parts[1]) else {
      return nil
    }
    self.init(pid: pid, started: started, boot: String(parts[2]))
  }

  /// Whether this process still runs (a later one with the same pid does not count).
  package var isRunning: Bool { ProcessStamp(pid: pid) == self }
}
