/* libsystemd, loaded when first used (dlopen), not by the dynamic loader at start: blockd,
 * blockc and blockc-agent are one executable (P1), and blockc, which never calls libsystemd,
 * would otherwise load it and the six libraries behind it at every start, about a millisecond
 * of each `blockc status` (docs/BENCHMARKS.md). Each function blockd calls is defined here
 * under libsystemd's own name and calls the library's: the Swift code is written against
 * libsystemd's headers as before. The definitions are hidden (not exported), so the library,
 * once loaded, still binds its own calls to itself. Without the library (the package depends on
 * libsystemd0) each returns -ELIBACC, or NULL, and blockd_systemd_load_error() says why. */
/* The C library's first, so that only the library's declarations below are hidden. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>
/* sd-journal.h would otherwise turn sd_journal_sendv into a macro adding the caller's file and
 * line; Swift, which imports no such macro, calls sd_journal_sendv itself. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#pragma GCC visibility push(hidden)
#include "CSystemd.h"
#pragma GCC visibility pop

#define FUNCTIONS(X) \
    X(sd_notify) X(sd_listen_fds) X(sd_is_socket_unix) X(sd_watchdog_enabled) X(sd_journal_sendv) \
    X(sd_bus_open_system) X(sd_bus_open_user) X(sd_bus_flush_close_unref) X(sd_bus_call) X(sd_bus_process) \
    X(sd_bus_get_fd) X(sd_bus_get_events) X(sd_bus_get_n_queued_read) X(sd_bus_match_signal) X(sd_bus_add_match) X(sd_bus_slot_unref) \
    X(sd_bus_error_free) X(sd_bus_message_new_method_call) X(sd_bus_message_unref) X(sd_bus_message_append_basic) \
    X(sd_bus_message_open_container) X(sd_bus_message_close_container) X(sd_bus_message_enter_container) \
    X(sd_bus_message_exit_container) X(sd_bus_message_read_basic) X(sd_bus_message_get_member) \
    X(sd_bus_message_get_sender)

static struct {
#define MEMBER(name) __typeof__(name) *name;
    FUNCTIONS(MEMBER)
#undef MEMBER
} lib;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *handle = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "%s", why ? why : "libsystemd.so.0: cannot be loaded");
        return;
    }
#define RESOLVE(name)                                                                  \
    lib.name = (__typeof__(name) *)dlsym(handle, #name);                               \
    if (lib.name == NULL && load_error[0] == 0)                                        \
        snprintf(load_error, sizeof load_error, "libsystemd.so.0 has no %s", #name);
    FUNCTIONS(RESOLVE)
#undef RESOLVE
}

/* The library's function `name`, loaded on the first call; NULL when it cannot be had. */
#define FN(name) (pthread_once(&once, load), lib.name)

const char *blockd_systemd_load_error(void) {
    pthread_once(&once, load);
    return load_error[0] ? load_error : NULL;
}

/* sd-daemon */
int sd_notify(int unset_environment, const char *state) {
    return FN(sd_notify) ? lib.sd_notify(unset_environment, state) : -ELIBACC;
}
int sd_listen_fds(int unset_environment) {
    return FN(sd_listen_fds) ? lib.sd_listen_fds(unset_environment) : -ELIBACC;
}
int sd_is_socket_unix(int fd, int type, int listening, const char *path, size_t length) {
    return FN(sd_is_socket_unix) ? lib.sd_is_socket_unix(fd, type, listening, path, length) : -ELIBACC;
}
int sd_watchdog_enabled(int unset_environment, uint64_t *usec) {
    return FN(sd_watchdog_enabled) ? lib.sd_watchdog_enabled(unset_environment, usec) : -ELIBACC;
}

/* sd-journal */
int sd_journal_sendv(const struct iovec *iov, int n) {
    return FN(sd_journal_sendv) ? lib.sd_journal_sendv(iov, n) : -ELIBACC;
}

/* sd-bus */
int sd_bus_open_system(sd_bus **ret) {
    return FN(sd_bus_open_system) ? lib.sd_bus_open_system(ret) : -ELIBACC;
}
int sd_bus_open_user(sd_bus **ret) {
    return FN(sd_bus_open_user) ? lib.sd_bus_open_user(ret) : -ELIBACC;
}
sd_bus *sd_bus_flush_close_unref(sd_bus *bus) {
    return FN(sd_bus_flush_close_unref) ? lib.sd_bus_flush_close_unref(bus) : NULL;
}
int sd_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply) {
    return FN(sd_bus_call) ? lib.sd_bus_call(bus, m, usec, ret_error, reply) : -ELIBACC;
}
int sd_bus_process(sd_bus *bus, sd_bus_message **r) {
    return FN(sd_bus_process) ? lib.sd_bus_process(bus, r) : -ELIBACC;
}
int sd_bus_get_fd(sd_bus *bus) {
    return FN(sd_bus_get_fd) ? lib.sd_bus_get_fd(bus) : -ELIBACC;
}
int sd_bus_get_events(sd_bus *bus) {
    return FN(sd_bus_get_events) ? lib.sd_bus_get_events(bus) : -ELIBACC;
}
int sd_bus_get_n_queued_read(sd_bus *bus, uint64_t *ret) {
    return FN(sd_bus_get_n_queued_read) ? lib.sd_bus_get_n_queued_read(bus, ret) : -ELIBACC;
}
int sd_bus_match_signal(sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path, const char *interface,
                        const char *member, sd_bus_message_handler_t callback, void *userdata) {
    return FN(sd_bus_match_signal) ? lib.sd_bus_match_signal(bus, ret, sender, path, interface, member, callback, userdata) : -ELIBACC;
}
int sd_bus_add_match(sd_bus *bus, sd_bus_slot **slot, const char *match, sd_bus_message_handler_t callback, void *userdata) {
    return FN(sd_bus_add_match) ? lib.sd_bus_add_match(bus, slot, match, callback, userdata) : -ELIBACC;
}
sd_bus_slot *sd_bus_slot_unref(sd_bus_slot *slot) {
    return FN(sd_bus_slot_unref) ? lib.sd_bus_slot_unref(slot) : NULL;
}
void sd_bus_error_free(sd_bus_error *e) {
    if (FN(sd_bus_error_free)) lib.sd_bus_error_free(e);
}
int sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination, const char *path,
                                   const char *interface, const char *member) {
    return FN(sd_bus_message_new_method_call) ? lib.sd_bus_message_new_method_call(bus, m, destination, path, interface, member) : -ELIBACC;
}
sd_bus_message *sd_bus_message_unref(sd_bus_message *m) {
    return FN(sd_bus_message_unref) ? lib.sd_bus_message_unref(m) : NULL;
}
int sd_bus_message_append_basic(sd_bus_message *m, char type, const void *p) {
    return FN(sd_bus_message_append_basic) ? lib.sd_bus_message_append_basic(m, type, p) : -ELIBACC;
}
int sd_bus_message_open_container(sd_bus_message *m, char type, const char *contents) {
    return FN(sd_bus_message_open_container) ? lib.sd_bus_message_open_container(m, type, contents) : -ELIBACC;
}
int sd_bus_message_close_container(sd_bus_message *m) {
    return FN(sd_bus_message_close_container) ? lib.sd_bus_message_close_container(m) : -ELIBACC;
}
int sd_bus_message_enter_container(sd_bus_message *m, char type, const char *contents) {
    return FN(sd_bus_message_enter_container) ? lib.sd_bus_message_enter_container(m, type, contents) : -ELIBACC;
}
int sd_bus_message_exit_container(sd_bus_message *m) {
    return FN(sd_bus_message_exit_container) ? lib.sd_bus_message_exit_container(m) : -ELIBACC;
}
int sd_bus_message_read_basic(sd_bus_message *m, char type, void *p) {
    return FN(sd_bus_message_read_basic) ? lib.sd_bus_message_read_basic(m, type, p) : -ELIBACC;
}
const char *sd_bus_message_get_member(sd_bus_message *m) {
    return FN(sd_bus_message_get_member) ? lib.sd_bus_message_get_member(m) : NULL;
}
const char *sd_bus_message_get_sender(sd_bus_message *m) {
    return FN(sd_bus_message_get_sender) ? lib.sd_bus_message_get_sender(m) : NULL;
}
