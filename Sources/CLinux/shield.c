#define _GNU_SOURCE
#include "CLinuxShield.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/fanotify.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc 2.36 has no <sys/fanotify.h> wrappers here; the raw syscalls are stable ABI. */
static int fan_init(unsigned flags, unsigned event_f_flags) {
    return (int)syscall(SYS_fanotify_init, flags, event_f_flags);
}
static int fan_mark(int group, unsigned flags, uint64_t mask, int dirfd, const char *path) {
    return (int)syscall(SYS_fanotify_mark, group, flags, mask, dirfd, path);
}

int blockd_fanotify_init(void) {
    return fan_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
}

uint64_t blockd_fan_open_exec_perm(void) { return FAN_OPEN_EXEC_PERM; }

int blockd_fanotify_probe_exec_perm(int group) {
    int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    int rc = fan_mark(group, FAN_MARK_ADD, FAN_OPEN_EXEC_PERM, dir, NULL);
    int saved = errno;
    if (rc == 0) fan_mark(group, FAN_MARK_REMOVE, FAN_OPEN_EXEC_PERM, dir, NULL);
    close(dir);
    errno = saved;
    return rc;
}

int blockd_fanotify_mark_inode(int group, int fd, int remove) {
    /* dirfd = the file itself and no pathname: the mark lands on exactly the inode that was
       opened and fstat'ed, with no window for the path to be swapped in between. */
    unsigned flags = remove ? FAN_MARK_REMOVE : FAN_MARK_ADD;
    return fan_mark(group, flags, FAN_OPEN_EXEC_PERM, fd, NULL);
}

int blockd_fanotify_respond(int group, int event_fd, int allow) {
    struct fanotify_response r;
    r.fd = event_fd;
    r.response = allow ? FAN_ALLOW : FAN_DENY;
    for (;;) {
        ssize_t n = write(group, &r, sizeof r);
        if (n == (ssize_t)sizeof r) return 0;
        if (n < 0 && errno == EINTR) continue;
        return -1;
    }
}

int blockd_fanotify_read(int group, blockd_fan_event *out, int max) {
    if (max > 64) max = 64;
    /* Aligned for the metadata structs; without FAN_REPORT_* flags every event is exactly
       FAN_EVENT_METADATA_LEN long, so `max` events fit. */
    struct fanotify_event_metadata buf[64];
    ssize_t len;
    do {
        len = read(group, buf, sizeof(buf[0]) * (size_t)max);
    } while (len < 0 && errno == EINTR);
    if (len < 0) return (errno == EAGAIN) ? 0 : -1;

    int count = 0;
    int bad_version = 0;
    struct fanotify_event_metadata *m = buf;
    while (FAN_EVENT_OK(m, len) && count < max) {
        if (m->vers != FANOTIFY_METADATA_VERSION) {
            /* Never leave a permission event unanswered: that would hang the exec. */
            if (m->fd >= 0) {
                blockd_fanotify_respond(group, m->fd, 1);
                close(m->fd);
            }
            bad_version = 1;
        } else {
            blockd_fan_event *e = &out[count++];
            memset(e, 0, sizeof *e);
            e->fd = m->fd;
            e->pid = m->pid;
            e->mask = m->mask;
            e->overflow = (m->mask & FAN_Q_OVERFLOW) ? 1 : 0;
            struct stat st;
            if (m->fd >= 0 && fstat(m->fd, &st) == 0) {
                e->dev = (uint64_t)st.st_dev;
                e->ino = (uint64_t)st.st_ino;
                e->stat_ok = 1;
            }
        }
        m = FAN_EVENT_NEXT(m, len);
    }
    if (bad_version && count == 0) {
        errno = EPROTO;
        return -1;
    }
    return count;
}

/* ---- proc connector ---- */

int blockd_proc_connector_open(void) {
    int sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
    if (sock < 0) return -1;
    struct sockaddr_nl addr;
    memset(&addr, 0, sizeof addr);
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = CN_IDX_PROC;
    addr.nl_pid = 0; /* let the kernel pick a unique port id */
    if (bind(sock, (struct sockaddr *)&addr, sizeof addr) != 0) goto fail;

    /* nlmsghdr | cn_msg | enum proc_cn_mcast_op, laid out by hand: cn_msg ends in a
       flexible array, so it cannot sit inside a struct. */
    union {
        char bytes[NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(enum proc_cn_mcast_op))];
        struct nlmsghdr align;
    } msg;
    memset(&msg, 0, sizeof msg);
    struct nlmsghdr *nl = (struct nlmsghdr *)msg.bytes;
    nl->nlmsg_len = sizeof msg.bytes;
    nl->nlmsg_type = NLMSG_DONE;
    nl->nlmsg_pid = 0;
    struct cn_msg *cn = NLMSG_DATA(nl);
    cn->id.idx = CN_IDX_PROC;
    cn->id.val = CN_VAL_PROC;
    cn->len = sizeof(enum proc_cn_mcast_op);
    enum proc_cn_mcast_op op = PROC_CN_MCAST_LISTEN;
    memcpy(cn->data, &op, sizeof op);
    /* The kernel ignores a LISTEN it refuses (no CAP_NET_ADMIN on older kernels, or outside
       the initial namespaces) without failing the send; its answer is an ack carrying the
       error, with our cookie + 1 in `ack` (cn_proc_ack). Wait briefly for it rather than trust silence. */
    uint32_t cookie = (uint32_t)getpid() ^ 0x626c6b64u;
    cn->ack = cookie;
    if (send(sock, msg.bytes, sizeof msg.bytes, 0) != (ssize_t)sizeof msg.bytes) goto fail;
    for (int waited = 0; waited < 20; waited++) {
        struct pollfd p = { .fd = sock, .events = POLLIN };
        if (poll(&p, 1, 10) <= 0) continue;
        char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
        ssize_t len = recv(sock, buf, sizeof buf, 0);
        if (len <= 0) continue;
        int remaining = (int)len;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, remaining); h = NLMSG_NEXT(h, remaining)) {
            struct cn_msg *c = NLMSG_DATA(h);
            struct proc_event *ev = (struct proc_event *)c->data;
            if (c->id.idx != CN_IDX_PROC || ev->what != PROC_EVENT_NONE || c->ack != cookie + 1) continue;
            if (ev->event_data.ack.err == 0) return sock;
            errno = (int)ev->event_data.ack.err;
            goto fail;
        }
    }
    errno = ETIMEDOUT;
    goto fail;
fail:;
    int saved = errno;
    close(sock);
    errno = saved;
    return -1;
}

int blockd_proc_connector_read(int sock, int32_t *tgids, int max, int *lost) {
    char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
    *lost = 0;
    ssize_t len;
    do {
        len = recv(sock, buf, sizeof buf, 0);
    } while (len < 0 && errno == EINTR);
    if (len < 0) {
        if (errno == EAGAIN) return 0;
        if (errno == ENOBUFS) { *lost = 1; return 0; }
        return -1;
    }
    int count = 0;
    int remaining = (int)len;
    for (struct nlmsghdr *nl = (struct nlmsghdr *)buf; NLMSG_OK(nl, remaining); nl = NLMSG_NEXT(nl, remaining)) {
        if (nl->nlmsg_type == NLMSG_NOOP || nl->nlmsg_type == NLMSG_ERROR) continue;
        struct cn_msg *cn = NLMSG_DATA(nl);
        if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC) continue;
        struct proc_event *ev = (struct proc_event *)cn->data;
        if (ev->what == PROC_EVENT_EXEC && count < max) tgids[count++] = ev->event_data.exec.process_tgid;
    }
    return count;
}

/* ---- processes ---- */

int blockd_pidfd_open(int32_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }
int blockd_pidfd_signal(int pidfd, int sig) { return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0); }
int blockd_pidfd_exited(int pidfd) {
    /* A pidfd polls readable once its process has exited (pidfd_open(2)). */
    struct pollfd p = { .fd = pidfd, .events = POLLIN };
    int rc = poll(&p, 1, 0);
    if (rc < 0) return errno == EINTR ? 0 : -1;
    return rc > 0 ? 1 : 0;
}

/* Reads at most `size - 1` bytes of a /proc file into `buf`, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n;
    do {
        n = read(fd, buf, size - 1);
    } while (n < 0 && errno == EINTR);
    int saved = errno;
    close(fd);
    if (n < 0) { errno = saved; return -1; }
    buf[n] = 0;
    return 0;
}

int blockd_process_users(int32_t pid, uint32_t *real, uint32_t *login) {
    if (pid <= 0) { errno = ESRCH; return -1; }
    char path[48];
    /* `Uid:` is the ninth line of a status file of about 1.5 KB; 2 KB always reach it. */
    char buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (read_small(path, buf, sizeof buf) != 0) { if (errno == ENOENT) errno = ESRCH; return -1; }
    const char *uid = strstr(buf, "\nUid:");
    if (!uid) { errno = EPROTO; return -1; }
    char *end = NULL;
    unsigned long value = strtoul(uid + 5, &end, 10);
    if (end == uid + 5 || value > UINT32_MAX) { errno = EPROTO; return -1; }
    *real = (uint32_t)value;
    *login = UINT32_MAX;
    snprintf(path, sizeof path, "/proc/%d/loginuid", (int)pid);
    if (read_small(path, buf, 32) == 0) {
        value = strtoul(buf, &end, 10);
        if (end != buf && value <= UINT32_MAX) *login = (uint32_t)value;
    }
    return 0;
}

/* ---- small helpers ---- */

int blockd_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void blockd_name_thread(const char *name) {
    char cut[16];
    snprintf(cut, sizeof cut, "%s", name);
    pthread_setname_np(pthread_self(), cut);
}

int blockd_poll2(int fd, int wake, int timeout_ms) {
    struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = wake, .events = POLLIN } };
    int rc = poll(p, 2, timeout_ms);
    if (rc < 0) return errno == EINTR ? 0 : -1;
    if (rc == 0) return 0;
    if (p[1].revents) return 2;
    if (p[0].revents & (POLLERR | POLLNVAL)) { errno = EIO; return -1; }
    return 1;
}

int blockd_inotify_rm_watch(int fd, int wd) { return inotify_rm_watch(fd, wd); }
