#ifndef BLOCKD_CLINUX_SHIELD_H
#define BLOCKD_CLINUX_SHIELD_H
/* Kernel interfaces for the app shield (§4 E2): fanotify exec permission marks on
   single inodes, the proc connector's exec events, pidfds. Thin wrappers only; which
   executables are blocked and what to do about a match is decided in Swift. */
#include <stdint.h>
#include <sys/types.h>

/* ---- fanotify (E2 first choice) ---- */

/* A fanotify group able to answer permission events (FAN_CLASS_CONTENT), close-on-exec and
   non-blocking. -1 with errno: EPERM without CAP_SYS_ADMIN, EINVAL/ENOSYS on old kernels. */
int blockd_fanotify_init(void);
/* Whether this kernel accepts FAN_OPEN_EXEC_PERM (Linux 5.0): marks the root directory's
   inode (which can never be exec'ed, so no event can wait on a reader that is not running
   yet) and removes the mark again. 0 when it does, -1 with errno (EINVAL when it does not). */
int blockd_fanotify_probe_exec_perm(int group);
/* Adds (remove = 0) or removes (remove = 1) a FAN_OPEN_EXEC_PERM mark on the inode of the
   open file `fd` only. Never a mount or filesystem mark: a bug here must not be able to
   hang every exec on the machine (E2). */
int blockd_fanotify_mark_inode(int group, int fd, int remove);

/* One permission event as read: the event's file descriptor (already fstat'ed here so that
   the reader decides without another syscall), the pid that asked and the inode. */
typedef struct {
    int32_t fd;        /* -1 (FAN_NOFD) for an overflow notice */
    int32_t pid;
    uint64_t mask;
    uint64_t dev;
    uint64_t ino;
    int32_t stat_ok;   /* 0 when fstat failed; dev/ino are then 0 */
    int32_t overflow;  /* 1 for FAN_Q_OVERFLOW */
} blockd_fan_event;

/* Reads one batch of at most `max` (<= 64) events into `out`. Returns the count, 0 when
   nothing was ready (EAGAIN/EINTR), -1 with errno on a real error (EPROTO: metadata version
   mismatch, in which case every event fd seen was already answered FAN_ALLOW and closed). */
int blockd_fanotify_read(int group, blockd_fan_event *out, int max);
/* Writes the answer for one event (FAN_ALLOW or FAN_DENY), retrying on EINTR. 0 or -1. */
int blockd_fanotify_respond(int group, int event_fd, int allow);
uint64_t blockd_fan_open_exec_perm(void);

/* ---- proc connector (E2 fallback: exec events over netlink, CAP_NET_ADMIN) ---- */

/* A NETLINK_CONNECTOR socket bound to CN_IDX_PROC with PROC_CN_MCAST_LISTEN sent.
   Non-blocking, close-on-exec. -1 with errno (EPERM without CAP_NET_ADMIN,
   EPROTONOSUPPORT/ENOENT without CONFIG_PROC_EVENTS). */
int blockd_proc_connector_open(void);
/* Reads one datagram; fills `tgids` with the processes that just exec'ed (at most `max`).
   Returns the count (0: no exec event in it, or EAGAIN/EINTR), -1 with errno. Sets
   *lost = 1 when the socket reported ENOBUFS (events were dropped: rescan /proc). */
int blockd_proc_connector_read(int sock, int32_t *tgids, int max, int *lost);

/* ---- processes ---- */

/* pidfd_open(2): a handle that keeps naming the same process even if its pid is reused. */
int blockd_pidfd_open(int32_t pid);
/* pidfd_send_signal(2). 0 or -1 with errno (ESRCH once the process is gone). */
int blockd_pidfd_signal(int pidfd, int sig);
/* 1 when the process behind the pidfd has exited, 0 while it runs, -1 on error. */
int blockd_pidfd_exited(int pidfd);
/* Who a process is, for per-user blocks: the real uid (the first field of `Uid:` in
   /proc/PID/status) and the login uid (/proc/PID/loginuid; 4294967295 when unset or when
   the kernel has no audit support). Stack buffers only: it runs on the fanotify answering
   path. 0, or -1 with errno (ESRCH: the process is gone or not visible here). */
int blockd_process_users(int32_t pid, uint32_t *real, uint32_t *login);

/* ---- small helpers ---- */

/* An eventfd to wake a reader thread out of poll(2). */
int blockd_eventfd(void);
/* Names the calling thread (ps -L, top -H); longer names are cut to 15 bytes. */
void blockd_name_thread(const char *name);
/* Waits for `fd` or `wake` to become readable. 1: fd readable, 2: wake readable, 0: timeout
   or EINTR, -1 on error. timeout_ms < 0 waits forever. */
int blockd_poll2(int fd, int wake, int timeout_ms);
int blockd_inotify_rm_watch(int fd, int wd);

#endif
