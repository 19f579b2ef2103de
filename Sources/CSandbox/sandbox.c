#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <seccomp.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

// AddressSanitizer and ThreadSanitizer reserve terabytes of address space for their shadow
// memory: under them (Scripts/sanitize.sh) the address-space limit is left off.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DR_SANITIZED 1
#endif
#endif

// The filter is a deny list over a default of "allow": libvips, GLib and the codecs under
// them make many ordinary calls (mmap, futex, threads, reading their own modules), and an
// allow list would break on the next release of any of them. What is denied answers EPERM
// (EACCES for opening to write), so a decoder that tries fails cleanly instead of dying.
static int deny(scmp_filter_ctx ctx, int call, int code) {
  return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(code), call, 0);
}

int dr_sandbox_enter(size_t address_space_bytes, char *error, size_t error_size) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    snprintf(error, error_size, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    return -1;
  }
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
#ifdef DR_SANITIZED
  address_space_bytes = 0;
#endif
  if (address_space_bytes > 0) {
    struct rlimit space = {address_space_bytes, address_space_bytes};
    setrlimit(RLIMIT_AS, &space);
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    snprintf(error, error_size, "seccomp_init failed");
    return -1;
  }
  int rc = 0;
  // No network, nor any other socket (a worker talks to its parent over inherited pipes).
  const int network[] = {SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect),
                         SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept),
                         SCMP_SYS(accept4), SCMP_SYS(sendto), SCMP_SYS(sendmsg),
                         SCMP_SYS(recvfrom), SCMP_SYS(recvmsg)};
  for (size_t i = 0; i < sizeof network / sizeof *network && rc == 0; i++)
    rc = deny(ctx, network[i], EPERM);
  // No new processes or programs. clone is allowed for threads only; clone3 hides its flags
  // in memory a filter cannot read, so it answers ENOSYS and glibc falls back to clone.
  const int spawn[] = {SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat),
                       SCMP_SYS(ptrace), SCMP_SYS(process_vm_writev), SCMP_SYS(kill),
                       SCMP_SYS(tkill)};
  for (size_t i = 0; i < sizeof spawn / sizeof *spawn && rc == 0; i++)
    rc = deny(ctx, spawn[i], EPERM);
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  if (rc == 0) rc = deny(ctx, SCMP_SYS(clone3), ENOSYS);
  if (rc == 0) rc = deny(ctx, SCMP_SYS(openat2), ENOSYS);  // its flags, too, are in memory
  // No writing to files: opening for writing, creating, removing, renaming, linking.
  const unsigned long write_flags[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND};
  for (size_t i = 0; i < sizeof write_flags / sizeof *write_flags && rc == 0; i++) {
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, write_flags[i], write_flags[i]));
    if (rc == 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(open), 1,
                            SCMP_A1(SCMP_CMP_MASKED_EQ, write_flags[i], write_flags[i]));
  }
  const int changes[] = {SCMP_SYS(creat), SCMP_SYS(unlink), SCMP_SYS(unlinkat),
                         SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2),
                         SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink),
                         SCMP_SYS(symlinkat), SCMP_SYS(mkdir), SCMP_SYS(mkdirat),
                         SCMP_SYS(rmdir), SCMP_SYS(truncate), SCMP_SYS(chmod),
                         SCMP_SYS(fchmodat), SCMP_SYS(chown), SCMP_SYS(fchownat)};
  for (size_t i = 0; i < sizeof changes / sizeof *changes && rc == 0; i++)
    rc = deny(ctx, changes[i], EACCES);
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) {
    snprintf(error, error_size, "seccomp: %s", strerror(-rc));
    return -1;
  }
  return 0;
}

int dr_pipe_cloexec(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  // A photo is megabytes: a 1 MiB pipe (the default most-privileged-free size) moves it in
  // 16 times fewer wake-ups of the other side than the default 64 KiB. Best effort.
  fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  return 0;
}

int dr_lock_key(int fd, uint64_t key, int wait) {
  struct flock range = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
  range.l_start = (off_t)(key & ((UINT64_C(1) << 62) - 1));
  for (;;) {
    if (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &range) == 0) return 0;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES) return 1;
    if (errno != EINVAL) return -1;
    break;  // no OFD locks in this kernel
  }
  for (;;) {
    if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0) return 0;
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? 1 : -1;
  }
}

int dr_die_with_parent(void) {
  pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return -1;
  return getppid() == parent ? 0 : -1;  // the parent died before the request took effect
}

void dr_sandbox_probe(const char *folder, int *socket_opened, int *process_started,
                      int *file_created) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  *socket_opened = s >= 0;
  if (s >= 0) close(s);

  pid_t pid = 0;
  char *argv[] = {"true", NULL};
  *process_started = posix_spawnp(&pid, "true", NULL, NULL, argv, environ) == 0;
  if (*process_started) waitpid(pid, NULL, 0);
  pid_t child = fork();
  if (child == 0) _exit(0);
  if (child > 0) {
    *process_started = 1;
    waitpid(child, NULL, 0);
  }

  char path[4096];
  snprintf(path, sizeof path, "%s/sandbox-probe", folder);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  *file_created = fd >= 0;
  if (fd >= 0) {
    close(fd);
    unlink(path);
  }
}
