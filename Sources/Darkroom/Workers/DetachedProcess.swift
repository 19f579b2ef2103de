import CSandbox
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A process started to outlive its caller (the thumbnail pass in the background): in a
/// session of its own, so that a closed terminal does not end it, with standard input from
/// `/dev/null`, its output appended to a log, and none of the caller's other descriptors.
enum DetachedProcess {
  /// Starts `arguments` (the program first), its output appended to `log`; its process id.
  ///
  /// - Throws: `io` naming the program and `what` it is ("cannot start the thumbnail pass")
  ///   when it cannot be started.
  static func start(_ arguments: [String], log: String, what: String) throws(DarkroomError)
    -> Int32
  {
    let program = arguments.first ?? ""
    func failure(_ step: String, _ status: Int32) -> DarkroomError {
      DarkroomError(
        .io, file: program, "cannot start \(what)\(step): \(String(cString: strerror(status)))")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
      &actions, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
    // Nothing else of the caller's passes: a descriptor it holds without close-on-exec (a
    // pipe its own caller waits on to end) would be held open for as long as this runs.
    let closing = dr_spawn_close_from(&actions, STDERR_FILENO + 1)
    guard closing == 0 else { throw failure(": closing descriptors", closing) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // POSIX_SPAWN_SETSID (glibc 2.26; a `_GNU_SOURCE` macro, not exported to Swift).
    posix_spawnattr_setflags(&attributes, 0x80)
    var pointers = arguments.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, program, &actions, &attributes, pointers, environ)
    guard status == 0 else { throw failure("", status) }
    return pid
  }
}
