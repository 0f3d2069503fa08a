#ifndef BLOCKD_CLINUX_H
#define BLOCKD_CLINUX_H
/* Kernel interfaces that Swift's Glibc module does not expose (§11): timerfd,
   inotify, SO_PEERCRED. Thin wrappers only; all policy stays in Swift. */
#include <stdint.h>
#include <sys/types.h>
/* SwiftPM uses CLinux.h as the umbrella header because it is named after the target, so the
   other headers in include/ are visible to Swift only through it. */
#include "CLinuxShield.h"
#include "CLinuxUsage.h"
#include "CLinuxSockDiag.h"

/* send(2)'s MSG_NOSIGNAL (a client that went away gives EPIPE, not SIGPIPE), as a constant of
   this module: which module Swift credits the glibc macro to depends on which one the compiler
   loaded first (libsystemd's headers include <sys/socket.h> too), so a file that imports only
   Glibc may not see it. */
enum { BLOCKD_MSG_NOSIGNAL = 0x4000 };

/* timerfd (T6, T7, T9). clock: 0 = CLOCK_REALTIME, 1 = CLOCK_BOOTTIME. */
int blockd_timerfd_create(int boottime);
/* Arms an absolute one-shot deadline in nanoseconds on the timer's clock; 0 disarms.
   cancel_on_set: for CLOCK_REALTIME timers, reads fail with ECANCELED when the clock is set. */
int blockd_timerfd_arm(int fd, int64_t deadline_ns, int cancel_on_set);
/* Reads the expiry count: >= 0 expirations, -1 with errno set (EAGAIN, ECANCELED). */
int64_t blockd_timerfd_read(int fd);
/* Current time in nanoseconds: 0 = CLOCK_REALTIME, 1 = CLOCK_BOOTTIME. */
int64_t blockd_clock_ns(int boottime);

/* inotify (T7: /etc/localtime; E1: the hosts file). */
int blockd_inotify_init(void);
int blockd_inotify_add_watch(int fd, const char *path, uint32_t mask);

/* U3: the mount table's own notification (proc(5): /proc/self/mountinfo signals POLLPRI when a
   mount is added, removed or changed). An epoll descriptor that is readable only while such a
   change is unread, or -1; *mountinfo receives the file, which must stay open with it. `path`
   is /proc/self/mountinfo (a test gives another process's). */
int blockd_mount_watch_open(const char *path, int *mountinfo);
/* Takes what the watch reported, without waiting. An epoll that watches the descriptor (as
   Dispatch's does) has already seen the change by then, so the caller acts on being woken. */
void blockd_mount_watch_take(int epfd);
uint32_t blockd_in_close_write(void);
uint32_t blockd_in_moved_to(void);
uint32_t blockd_in_create(void);
uint32_t blockd_in_delete(void);
uint32_t blockd_in_modify(void);
uint32_t blockd_in_attrib(void);

/* §8: the control server's one reader of every connection (ReadPoller.swift). An epoll
   descriptor (close-on-exec), or -1. epoll_event is packed on x86-64, so Swift never sees it:
   a descriptor is added for EPOLLIN with a 64-bit id, removed, and waited for as ids. */
int blockd_poller_create(void);
/* 0, or -1 with errno. */
int blockd_poller_add(int epfd, int fd, uint64_t id);
int blockd_poller_remove(int epfd, int fd);
/* Waits up to timeout_ms (-1: for ever) and fills at most `max` ids; their count, 0, or -1
   with errno (EINTR is retried here). */
int blockd_poller_wait(int epfd, uint64_t *ids, int max, int timeout_ms);

/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC (Glibc's module lacks accept4). */
int blockd_accept(int fd);

/* SO_PEERCRED (§5). Returns 0 and fills uid/gid/pid, or -1 with errno. */
int blockd_peer_credentials(int fd, uint32_t *uid, uint32_t *gid, int32_t *pid);
/* Whether the user `uid` (primary group `gid`) belongs to the group `gid_wanted`,
   through its supplementary groups in the group database. */
int blockd_user_in_group(uint32_t uid, uint32_t gid, uint32_t gid_wanted);
/* The gid of a group by name: 0 and fills gid, or -1 when there is no such group. */
int blockd_group_id(const char *name, uint32_t *gid);
/* malloc_trim(3): gives freed heap memory back to the kernel (Glibc's module lacks malloc.h). */
void blockd_malloc_trim(void);

#endif
