// What a decoder never needs, taken away from a worker process before it touches a file.
#ifndef DARKROOM_SANDBOX_H
#define DARKROOM_SANDBOX_H

#include <spawn.h>
#include <stddef.h>
#include <stdint.h>

/// The resource limits of a worker (0: none).
typedef struct {
  /// Address space, against decompression bombs that get past the pixel limit.
  size_t address_space_bytes;
  /// CPU seconds over the worker's whole life (it is retired after a number of jobs).
  unsigned long cpu_seconds;
  /// Open descriptors at once.
  unsigned long open_files;
  /// Folders and files it may read besides the system's, colon-separated (NULL: none).
  const char *readable;
  /// Set to 1 when Landlock restricts what it reads (NULL: not asked).
  int *landlocked;
} DrSandboxLimits;

/// socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC): a worker's input, over which its parent
/// sends jobs and hands it the descriptors of the files they name.
int dr_socketpair_cloexec(int fds[2]);

/// Sends `fd` over the Unix socket `socket` (SCM_RIGHTS, with one byte). Returns 0 or -1.
int dr_send_descriptor(int socket, int fd);

/// Receives a descriptor sent with `dr_send_descriptor` (close-on-exec). Returns it, or -1.
int dr_receive_descriptor(int socket);

/// Takes away, for the rest of this process's life, all that a decoder never needs:
/// new privileges (PR_SET_NO_NEW_PRIVS), being traced or read by other processes
/// (PR_SET_DUMPABLE 0), every capability, core dumps, writing to any file (RLIMIT_FSIZE 0),
/// the `limits`, reading files other than the system's (Landlock, where the kernel has it:
/// what it decodes, it is handed open), and every system call but an allow list (seccomp,
/// default EPERM): reading and mapping, threads, clocks, opening files for reading only,
/// signals to itself, descriptors from its parent. Denied
/// among others: sockets, new processes and programs, io_uring, ptrace, process_vm_*,
/// pidfd_*, mknod*, signals to other processes, namespaces, bpf and perf. Returns 0, or -1
/// with a reason in `error`.
int dr_sandbox_enter(const DrSandboxLimits *limits, char *error, size_t error_size);

/// PR_SET_DUMPABLE 0 for this process: its workers (and any other process of its user
/// without CAP_SYS_PTRACE) cannot read its memory, take its descriptors or trace it. Called
/// by a process that starts workers, since it holds what they must not see.
int dr_set_not_dumpable(void);

/// Makes the kernel kill this process when its parent dies (PR_SET_PDEATHSIG), so that a
/// worker stuck in a decoder never outlives the batch that started it. Returns 0, or -1 if
/// the parent is already gone.
int dr_die_with_parent(void);

/// Lowers the calling thread (not its process) to nice 19, for its life, and its disk
/// requests to the idle class where the I/O scheduler has one. 0, or -1 with errno.
int dr_lower_thread_priority(void);

/// pipe2(fds, O_CLOEXEC), which Swift's Glibc module does not offer (the parent's ends of a
/// worker's pipes must not leak into other workers), with a 1 MiB buffer where allowed.
int dr_pipe_cloexec(int fds[2]);

/// memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING), which Swift's Glibc module does not
/// offer: a file that lives in memory only, never on a disk (a space's decrypted video).
/// Returns its descriptor, or -1 with errno.
int dr_memory_file(const char *name);

/// Seals a memory file as it is: no more writes, growth or shrinking, and no more seals,
/// so that a worker handed it (or anything else) cannot change what its reader reads.
/// Returns 0, or -1 with errno.
int dr_memory_file_seal(int fd);


/// Adds to `actions` the closing of every descriptor from `low` up, in the child, after the
/// actions before it (posix_spawn_file_actions_addclosefrom_np, glibc 2.34): a worker starts
/// with its standard descriptors only, whatever its parent holds without close-on-exec (a
/// server's listener and clients' connections, an epoll set, a caller's sockets).
/// Returns 0, or an error number.
int dr_spawn_close_from(posix_spawn_file_actions_t *actions, int low);

/// The descriptors this process has open above standard error (by /proc/self/fd, the
/// listing's own left out): their count (or -1 when /proc cannot be read), the first
/// `capacity` of them in `numbers`.
int dr_open_descriptors(int *numbers, int capacity);

/// For tests: whether the descriptor number `fd` is usable in this process, as bits: 1
/// fcntl(F_GETFD), 2 read, 4 write (both of 0 bytes), 8 epoll_ctl (EPOLL_CTL_DEL of standard
/// input); each set when the call failed with something other than EBADF. 0: not open here.
int dr_descriptor_probe(int fd);

/// For tests: a new epoll set watching `fd` for input, without close-on-exec (as a server's
/// event loop holds one). Returns it, or -1.
int dr_epoll_watching(int fd);

/// What `dr_sandbox_probe` tries, each a way out of the sandbox.
enum {
  DR_PROBE_SOCKET,       ///< socket(AF_INET) or socketpair
  DR_PROBE_PROCESS,      ///< posix_spawn, fork, or execve
  DR_PROBE_FILE,         ///< a file opened for writing: open, openat, creat, O_TMPFILE, openat2
  DR_PROBE_MKNOD,        ///< mknodat
  DR_PROBE_IO_URING,     ///< io_uring_setup
  DR_PROBE_SIGNAL,       ///< tgkill or kill to `target`
  DR_PROBE_READ_MEMORY,  ///< process_vm_readv of `secret` in `target`
  DR_PROBE_PIDFD,        ///< pidfd_open of `target`, pidfd_getfd of its descriptor 0
  DR_PROBE_PTRACE,       ///< PTRACE_ATTACH to `target`
  DR_PROBE_READ_OUTSIDE, ///< reading `folder`/outside.txt, which it was not handed
  DR_PROBE_COUNT
};

/// For tests, inside a sandboxed worker: tries each way out above, against `target` (the
/// parent; this process itself for a control run, which skips execve) and in `folder`, and
/// sets `results[i]` to 1 for each that worked (a hole in the sandbox). Returns 0.
int dr_sandbox_probe(const char *folder, int target, const void *secret,
                     int results[DR_PROBE_COUNT]);

#endif
