// What a decoder never needs, taken away from a worker process before it touches a file.
#ifndef DARKROOM_SANDBOX_H
#define DARKROOM_SANDBOX_H

#include <stddef.h>
#include <stdint.h>

/// Drops what a decoder never needs, for the rest of this process's life: new privileges
/// (PR_SET_NO_NEW_PRIVS), core dumps, address space beyond `address_space_bytes` (0: no
/// limit), and through a seccomp filter: network sockets, new processes and programs
/// (fork, vfork, clone without CLONE_THREAD, execve), tracing, and opening files for writing
/// or removing and renaming them. Threads stay allowed (libvips computes on many). Returns 0,
/// or -1 with a reason in `error`.
int dr_sandbox_enter(size_t address_space_bytes, char *error, size_t error_size);

/// Makes the kernel kill this process when its parent dies (PR_SET_PDEATHSIG), so that a
/// worker stuck in a decoder never outlives the batch that started it. Returns 0, or -1 if
/// the parent is already gone.
int dr_die_with_parent(void);

/// pipe2(fds, O_CLOEXEC), which Swift's Glibc module does not offer (the parent's ends of a
/// worker's pipes must not leak into other workers), with a 1 MiB buffer where allowed.
int dr_pipe_cloexec(int fds[2]);

/// Locks one byte of the file open at `fd`, at offset `key` (below 2^62), for writing: an
/// open-file-description lock (F_OFD_SETLK), held until `fd` is closed. Such locks exclude
/// each other across processes and across threads of one process (each opens its own
/// description), and locks on different bytes never conflict, so one lock file carries a
/// lock per key with no false sharing. `wait` 0 asks without waiting. Where the kernel has
/// no such locks (before Linux 3.15), the whole file is locked with flock instead, which is
/// correct but coarser. Returns 0 when held, 1 when busy (with `wait` 0), -1 on an error
/// (errno set).
int dr_lock_key(int fd, uint64_t key, int wait);

/// For tests, inside a sandboxed worker: whether a network socket can be opened, a process
/// started, and a file created in `folder`. Each is 1 if it succeeded (a sandbox failure).
void dr_sandbox_probe(const char *folder, int *socket_opened, int *process_started,
                      int *file_created);

#endif
