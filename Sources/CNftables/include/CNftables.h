#ifndef BLOCKD_CNFTABLES_H
#define BLOCKD_CNFTABLES_H
/* E5: blockd's own nftables table, applied atomically through libnftables. The functions are
 * defined in CNftables.c, which loads libnftables.so.1 only when one is first called (P1). */
#include <nftables/libnftables.h>

/* Loads libnftables.so.1 if it is not loaded yet: NULL once it is, else what the dynamic
 * loader said (dlerror). */
const char *blockd_nftables_load_error(void);
#endif
