#define _GNU_SOURCE
#include "CLinux.h"

#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* CLinux.h spells MSG_NOSIGNAL as a constant of its own (see there); it must be the kernel's. */
_Static_assert(BLOCKD_MSG_NOSIGNAL == MSG_NOSIGNAL, "MSG_NOSIGNAL");

int blockd_timerfd_create(int boottime) {
    return timerfd_create(boottime ? CLOCK_BOOTTIME : CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
}

int blockd_timerfd_arm(int fd, int64_t deadline_ns, int cancel_on_set) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (deadline_ns > 0) {
        spec.it_value.tv_sec = deadline_ns / 1000000000;
        spec.it_value.tv_nsec = deadline_ns % 1000000000;
    }
    int flags = TFD_TIMER_ABSTIME | (cancel_on_set ? TFD_TIMER_CANCEL_ON_SET : 0);
    return timerfd_settime(fd, flags, &spec, NULL);
}

int64_t blockd_timerfd_read(int fd) {
    uint64_t count = 0;
    ssize_t n = read(fd, &count, sizeof count);
    if (n != (ssize_t)sizeof count) return -1;
    return (int64_t)count;
}

int64_t blockd_clock_ns(int boottime) {
    struct timespec ts;
    clock_gettime(boottime ? CLOCK_BOOTTIME : CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int blockd_inotify_init(void) { return inotify_init1(IN_CLOEXEC | IN_NONBLOCK); }
int blockd_inotify_add_watch(int fd, const char *path, uint32_t mask) { return inotify_add_watch(fd, path, mask); }

int blockd_mount_watch_open(const char *path, int *mountinfo) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    /* POLLPRI and POLLERR only: the file is always readable, and that is no news. */
    struct epoll_event ev = { .events = EPOLLPRI | EPOLLERR, .data = { .fd = fd } };
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int saved = errno;
        if (ep >= 0) close(ep);
        close(fd);
        errno = saved;
        return -1;
    }
    *mountinfo = fd;
    return ep;
}

void blockd_mount_watch_take(int epfd) {
    struct epoll_event ev;
    int n;
    do { n = epoll_wait(epfd, &ev, 1, 0); } while (n < 0 && errno == EINTR);
}
int blockd_poller_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int blockd_poller_add(int epfd, int fd, uint64_t id) {
    struct epoll_event ev = { .events = EPOLLIN, .data = { .u64 = id } };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int blockd_poller_remove(int epfd, int fd) { return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); }

int blockd_poller_wait(int epfd, uint64_t *ids, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n;
    do { n = epoll_wait(epfd, events, max, timeout_ms); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) ids[i] = events[i].data.u64;
    return n;
}

uint32_t blockd_in_close_write(void) { return IN_CLOSE_WRITE; }
uint32_t blockd_in_moved_to(void) { return IN_MOVED_TO; }
uint32_t blockd_in_create(void) { return IN_CREATE; }
uint32_t blockd_in_delete(void) { return IN_DELETE; }
uint32_t blockd_in_modify(void) { return IN_MODIFY; }
uint32_t blockd_in_attrib(void) { return IN_ATTRIB; }

int blockd_accept(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

int blockd_peer_credentials(int fd, uint32_t *uid, uint32_t *gid, int32_t *pid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *uid = cred.uid;
    *gid = cred.gid;
    *pid = cred.pid;
    return 0;
}

int blockd_user_in_group(uint32_t uid, uint32_t gid, uint32_t gid_wanted) {
    if (gid == gid_wanted) return 1;
    struct passwd pw, *result = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &result) != 0 || result == NULL) return 0;
    int count = 64;
    for (int attempt = 0; attempt < 4; attempt++) {
        gid_t *groups = malloc(sizeof(gid_t) * (size_t)count);
        if (!groups) return 0;
        int n = count;
        if (getgrouplist(pw.pw_name, gid, groups, &n) >= 0) {
            int found = 0;
            for (int i = 0; i < n; i++) if (groups[i] == gid_wanted) found = 1;
            free(groups);
            return found;
        }
        free(groups);
        count = n > count ? n : count * 4;
    }
    return 0;
}

int blockd_group_id(const char *name, uint32_t *gid) {
    struct group gr, *result = NULL;
    char buf[8192];
    if (getgrnam_r(name, &gr, buf, sizeof buf, &result) != 0 || result == NULL) return -1;
    *gid = gr.gr_gid;
    return 0;
}

void blockd_malloc_trim(void) { malloc_trim(0); }
