#define _GNU_SOURCE
#include "CLinuxSockDiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Socket states from include/net/tcp_states.h (connected UDP sockets are TCP_ESTABLISHED). */
#define BLOCKD_TCP_CONNECTED ((1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 8) | (1u << 9) | (1u << 11) | (1u << 12))
#define BLOCKD_UDP_CONNECTED (1u << 1)

struct blockd_diag_request {
    struct nlmsghdr nlh;
    struct inet_diag_req_v2 req;
};

static int blockd_diag_send(int fd, uint16_t type, uint16_t flags, const struct inet_diag_req_v2 *req) {
    struct blockd_diag_request msg;
    memset(&msg, 0, sizeof msg);
    msg.nlh.nlmsg_len = sizeof msg;
    msg.nlh.nlmsg_type = type;
    msg.nlh.nlmsg_flags = NLM_F_REQUEST | flags;
    msg.req = *req;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &msg, sizeof msg, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) return -errno;
    return 0;
}

/* nuids < 0: any owner. */
static int blockd_owner_listed(uint32_t uid, const uint32_t *uids, int nuids) {
    if (nuids < 0) return 1;
    for (int i = 0; i < nuids; i++)
        if (uids[i] == uid) return 1;
    return 0;
}

static int blockd_addr_listed(const struct inet_diag_sockid *id, int family, const uint8_t *addrs, int count) {
    size_t len = family == AF_INET ? 4 : 16;
    for (int i = 0; i < count; i++)
        if (memcmp(id->idiag_dst, addrs + 16 * i, len) == 0) return 1;
    return 0;
}

/* The dump: collects the ids of matching sockets into *out (grown with realloc). */
static int blockd_diag_collect(int fd, const struct inet_diag_req_v2 *req, const uint8_t *addrs, int count,
                               const uint32_t *uids, int nuids, struct inet_diag_sockid **out, int *n) {
    int err = blockd_diag_send(fd, SOCK_DIAG_BY_FAMILY, NLM_F_DUMP, req);
    if (err) return err;
    char buf[32768];
    for (;;) {
        ssize_t len = recv(fd, buf, sizeof buf, 0);
        if (len < 0 && errno == EINTR) continue;
        if (len < 0) return -errno;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
            if (h->nlmsg_type == NLMSG_DONE) return 0;
            if (h->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *e = NLMSG_DATA(h);
                return e->error ? e->error : -EPROTO;
            }
            struct inet_diag_msg *m = NLMSG_DATA(h);
            if (!blockd_addr_listed(&m->id, req->sdiag_family, addrs, count)) continue;
            if (!blockd_owner_listed(m->idiag_uid, uids, nuids)) continue;
            struct inet_diag_sockid *grown = realloc(*out, sizeof **out * (size_t)(*n + 1));
            if (!grown) return -ENOMEM;
            *out = grown;
            (*out)[(*n)++] = m->id;
        }
    }
}

/* One SOCK_DESTROY and its acknowledgement: 0, or -errno from the kernel. */
static int blockd_diag_destroy_one(int fd, struct inet_diag_req_v2 req, const struct inet_diag_sockid *id) {
    req.id = *id;
    req.idiag_states = ~0u;
    int err = blockd_diag_send(fd, SOCK_DESTROY, NLM_F_ACK, &req);
    if (err) return err;
    char buf[1024];
    for (;;) {
        ssize_t len = recv(fd, buf, sizeof buf, 0);
        if (len < 0 && errno == EINTR) continue;
        if (len < 0) return -errno;
        struct nlmsghdr *h = (struct nlmsghdr *)buf;
        if (!NLMSG_OK(h, (size_t)len) || h->nlmsg_type != NLMSG_ERROR) return -EPROTO;
        return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
    }
}

int blockd_sockdiag_destroy(int family, int protocol, const uint8_t *addrs, int count,
                            const uint32_t *uids, int nuids, int *matched) {
    *matched = 0;
    if (count <= 0 || nuids == 0) return 0;
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -errno;
    struct inet_diag_req_v2 req;
    memset(&req, 0, sizeof req);
    req.sdiag_family = (uint8_t)family;
    req.sdiag_protocol = (uint8_t)protocol;
    req.idiag_states = protocol == IPPROTO_TCP ? BLOCKD_TCP_CONNECTED : BLOCKD_UDP_CONNECTED;
    struct inet_diag_sockid *ids = NULL;
    int n = 0;
    int result = blockd_diag_collect(fd, &req, addrs, count, uids, nuids, &ids, &n);
    *matched = n;
    int destroyed = 0, last = 0;
    for (int i = 0; result == 0 && i < n; i++) {
        int err = blockd_diag_destroy_one(fd, req, &ids[i]);
        /* ENOENT: the socket closed between the dump and now, which is what we wanted. */
        if (err == 0 || err == -ENOENT) { destroyed++; continue; }
        last = err;
        if (err == -EOPNOTSUPP || err == -EPERM) break;
    }
    free(ids);
    close(fd);
    if (result < 0) return result;
    return destroyed == 0 && last ? last : destroyed;
}
