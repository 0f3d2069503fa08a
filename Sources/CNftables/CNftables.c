/* libnftables, loaded when first used (dlopen), not by the dynamic loader at start: only blockd
 * with its firewall (E5) calls it, and blockc and the agent, the same executable (P1), would
 * otherwise load it and the five libraries behind it at every start. As CSystemd.c does for
 * libsystemd: each function is defined, hidden, under the library's own name and calls the
 * library's; without the library (the package depends on libnftables1) nft_ctx_new returns
 * NULL and blockd_nftables_load_error() says why. */
/* The C library's first, so that only the library's declarations below are hidden. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>
#pragma GCC visibility push(hidden)
#include "CNftables.h"
#pragma GCC visibility pop

#define FUNCTIONS(X) \
    X(nft_ctx_new) X(nft_ctx_free) X(nft_ctx_buffer_output) X(nft_ctx_buffer_error) \
    X(nft_ctx_get_error_buffer) X(nft_run_cmd_from_buffer)

static struct {
#define MEMBER(name) __typeof__(name) *name;
    FUNCTIONS(MEMBER)
#undef MEMBER
} lib;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *handle = dlopen("libnftables.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "%s", why ? why : "libnftables.so.1: cannot be loaded");
        return;
    }
#define RESOLVE(name)                                                                  \
    lib.name = (__typeof__(name) *)dlsym(handle, #name);                               \
    if (lib.name == NULL && load_error[0] == 0)                                        \
        snprintf(load_error, sizeof load_error, "libnftables.so.1 has no %s", #name);
    FUNCTIONS(RESOLVE)
#undef RESOLVE
}

#define FN(name) (pthread_once(&once, load), lib.name)

const char *blockd_nftables_load_error(void) {
    pthread_once(&once, load);
    return load_error[0] ? load_error : NULL;
}

struct nft_ctx *nft_ctx_new(uint32_t flags) {
    return FN(nft_ctx_new) ? lib.nft_ctx_new(flags) : NULL;
}
void nft_ctx_free(struct nft_ctx *ctx) {
    if (FN(nft_ctx_free)) lib.nft_ctx_free(ctx);
}
int nft_ctx_buffer_output(struct nft_ctx *ctx) {
    return FN(nft_ctx_buffer_output) ? lib.nft_ctx_buffer_output(ctx) : -1;
}
int nft_ctx_buffer_error(struct nft_ctx *ctx) {
    return FN(nft_ctx_buffer_error) ? lib.nft_ctx_buffer_error(ctx) : -1;
}
const char *nft_ctx_get_error_buffer(struct nft_ctx *ctx) {
    return FN(nft_ctx_get_error_buffer) ? lib.nft_ctx_get_error_buffer(ctx) : NULL;
}
int nft_run_cmd_from_buffer(struct nft_ctx *nft, const char *buf) {
    return FN(nft_run_cmd_from_buffer) ? lib.nft_run_cmd_from_buffer(nft, buf) : -1;
}
