#ifndef BLOCKD_CLINUX_USAGE_H
#define BLOCKD_CLINUX_USAGE_H
/* Usage limits (§9): knowing when a limited app starts, without polling. */
#include <stdint.h>

/* A fanotify notification group (FAN_CLASS_NOTIF): it only observes, never holds up an
   exec. Close-on-exec, non-blocking. -1 with errno (EPERM without CAP_SYS_ADMIN). */
int blockd_fanotify_init_notify(void);
/* Adds (remove = 0) or removes (remove = 1) a FAN_OPEN_EXEC mark on the inode of the open
   file `fd` only (never a mount: other programs pay nothing). 0 or -1 with errno. */
int blockd_fanotify_mark_exec(int group, int fd, int remove);

#endif
