#ifndef BLOCKD_CLINUX_SOCKDIAG_H
#define BLOCKD_CLINUX_SOCKDIAG_H
/* E5: cutting what is open. Established TCP and connected UDP (QUIC) sockets whose peer is
   one of a list of addresses are found with a NETLINK_SOCK_DIAG dump and destroyed with
   SOCK_DESTROY (needs CAP_NET_ADMIN and a kernel with CONFIG_INET_DIAG_DESTROY). */
#include <stdint.h>

/* family: AF_INET or AF_INET6; protocol: IPPROTO_TCP or IPPROTO_UDP. addrs holds count
   addresses of 16 bytes each (an IPv4 address in the first 4). Destroys every socket of that
   family and protocol that is connected (TCP: any state but LISTEN, TIME_WAIT and CLOSE;
   UDP: connected) to one of them and, when nuids >= 0, owned by one of the nuids uids
   (idiag_uid: the uid that created the socket; nuids == 0 matches nothing). Returns how many were destroyed (>= 0) and sets *matched
   to how many matched; or -errno: -EOPNOTSUPP when the kernel cannot destroy sockets,
   -EPERM without CAP_NET_ADMIN, other values from netlink. */
int blockd_sockdiag_destroy(int family, int protocol, const uint8_t *addrs, int count,
                            const uint32_t *uids, int nuids, int *matched);

#endif
