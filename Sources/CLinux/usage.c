#define _GNU_SOURCE
#include "CLinuxUsage.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/fanotify.h>

int blockd_fanotify_init_notify(void) {
    return fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
}

int blockd_fanotify_mark_exec(int group, int fd, int remove) {
    /* dirfd = the file itself and no pathname: exactly the inode that was resolved. */
    unsigned int flags = remove ? FAN_MARK_REMOVE : FAN_MARK_ADD;
    return fanotify_mark(group, flags, FAN_OPEN_EXEC, fd, NULL);
}
