#ifndef BLOCKD_CNFTABLES_SHIM_H
#define BLOCKD_CNFTABLES_SHIM_H
/* E5: blockd's own nftables table, applied atomically through libnftables. */
#include <nftables/libnftables.h>
#endif
