/* libnss_blockd.so.2: per-user web blocks for glibc's resolver (U3).
 *
 * A `hosts:` module, placed first on that line of /etc/nsswitch.conf by `make install`. For the
 * calling process's real uid U it reads TABLE_DIR/U, a table blockd writes (one blocked name a
 * line, lower case, `#` comments), and answers a listed name with the sink blockd's hosts
 * section uses (E5: 127.0.0.253 and 100::1, refused by its nftables table), so the answer is
 * authoritative and no later module (`files`, `dns`) is asked. Any other name, a missing table
 * or one it does not trust gives NSS_STATUS_NOTFOUND: the next module answers as if this one
 * were not there.
 *
 * Matching is exact, like the hosts file's section (a name and its `www.` are separate
 * entries there too): ASCII case is ignored, one trailing dot is ignored, subdomains are NOT
 * included.
 *
 * Trust: the directory and the table must be owned by root and not writable by group or
 * others, the table a regular file reached without a symlink. The directory is compiled in;
 * no environment variable moves it, since any user could set one to lift their own block
 * (tests put a tmpfs over /run/blockd in a private mount namespace instead).
 *
 * The module allocates nothing, keeps no state (thread-safe by construction), reads the
 * table through a fixed buffer with bounded lines, and keeps errno as it found it except
 * where the NSS contract sets *errnop. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <nss.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BLOCKD_TABLE_DIR
#define BLOCKD_TABLE_DIR "/run/blockd/users"
#endif

/* Only the four entry points leave the library (-fvisibility=hidden for the rest). */
#define EXPORT __attribute__((visibility("default")))

enum { NAME_MAX_LEN = 253, LINE_MAX_LEN = 255, READ_CHUNK = 4096 };

static const uint8_t sink_v4[4] = {127, 0, 0, 253};
static const uint8_t sink_v6[16] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

/* The table's form of `name` into out (lower case, one trailing dot dropped); false for a
 * name no table can hold. */
static bool normalize(const char *name, char out[NAME_MAX_LEN + 1]) {
    if (name == NULL) return false;
    size_t n = strnlen(name, NAME_MAX_LEN + 2);
    if (n > 0 && name[n - 1] == '.') n--;
    if (n == 0 || n > NAME_MAX_LEN) return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    out[n] = '\0';
    return true;
}

static bool trusted(int fd, bool directory) {
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return false;
    return directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

/* The table for the real uid, or -1 when there is none to trust. */
static int open_table(void) {
    char file[24];
    unsigned long uid = (unsigned long)getuid();
    size_t len = 0;
    char digits[24];
    do { digits[len++] = (char)('0' + uid % 10); uid /= 10; } while (uid != 0);
    for (size_t i = 0; i < len; i++) file[i] = digits[len - 1 - i];
    file[len] = '\0';

    int dir = open(BLOCKD_TABLE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    int fd = -1;
    if (trusted(dir, true)) {
        fd = openat(dir, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd >= 0 && !trusted(fd, false)) { close(fd); fd = -1; }
    }
    close(dir);
    return fd;
}

/* One table line against the wanted name: surrounding blanks and a CR are ignored, as are
 * blank and `#` lines. */
static bool line_matches(const char *line, size_t len, const char *want, size_t want_len) {
    while (len > 0 && (line[0] == ' ' || line[0] == '\t')) { line++; len--; }
    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r')) len--;
    if (len != want_len || len == 0 || line[0] == '#') return false;
    for (size_t i = 0; i < len; i++) {
        char c = line[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != want[i]) return false;
    }
    return true;
}

/* Whether the calling user's table lists `name`. Lines longer than LINE_MAX_LEN match
 * nothing (no name can be that long) and are skipped to their end. */
static bool blocked(const char *name, char canonical[NAME_MAX_LEN + 1]) {
    if (!normalize(name, canonical)) return false;
    size_t want_len = strlen(canonical);
    int fd = open_table();
    if (fd < 0) return false;
    char chunk[READ_CHUNK], line[LINE_MAX_LEN + 1];
    size_t used = 0;
    bool overlong = false, found = false;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t i = 0; i < n && !found; i++) {
            if (chunk[i] == '\n') {
                found = !overlong && line_matches(line, used, canonical, want_len);
                used = 0;
                overlong = false;
            } else if (used < LINE_MAX_LEN) {
                line[used++] = chunk[i];
            } else {
                overlong = true;
            }
        }
        if (found) break;
    }
    if (!found && !overlong && used > 0) found = line_matches(line, used, canonical, want_len);
    close(fd);
    return found;
}

/* Carves `size` bytes aligned to `align` from the caller's buffer; NULL when it is too small. */
static char *carve(char **buffer, size_t *left, size_t size, size_t align) {
    uintptr_t at = (uintptr_t)*buffer;
    size_t pad = (align - at % align) % align;
    if (*left < pad || *left - pad < size) return NULL;
    char *out = *buffer + pad;
    *buffer = out + size;
    *left -= pad + size;
    return out;
}

static enum nss_status not_found(int *errnop, int *h_errnop) {
    *errnop = ENOENT;
    *h_errnop = HOST_NOT_FOUND;
    return NSS_STATUS_NOTFOUND;
}

/* The NSS contract for a buffer too small: glibc grows it and calls again. */
static enum nss_status too_small(int *errnop, int *h_errnop) {
    *errnop = ERANGE;
    *h_errnop = NETDB_INTERNAL;
    return NSS_STATUS_TRYAGAIN;
}

EXPORT enum nss_status _nss_blockd_gethostbyname4_r(const char *name, struct gaih_addrtuple **pat, char *buffer,
                                             size_t buflen, int *errnop, int *h_errnop, int32_t *ttlp) {
    int saved = errno;
    char canonical[NAME_MAX_LEN + 1];
    bool hit = blocked(name, canonical);
    errno = saved;
    if (!hit) return not_found(errnop, h_errnop);
    size_t len = strlen(canonical) + 1;
    char *r_name = carve(&buffer, &buflen, len, 1);
    struct gaih_addrtuple *v4 = (struct gaih_addrtuple *)carve(&buffer, &buflen, sizeof *v4, alignof(struct gaih_addrtuple));
    struct gaih_addrtuple *v6 = (struct gaih_addrtuple *)carve(&buffer, &buflen, sizeof *v6, alignof(struct gaih_addrtuple));
    if (r_name == NULL || v4 == NULL || v6 == NULL) return too_small(errnop, h_errnop);
    memcpy(r_name, canonical, len);
    memset(v4, 0, sizeof *v4);
    memset(v6, 0, sizeof *v6);
    v4->name = r_name;
    v4->family = AF_INET;
    memcpy(v4->addr, sink_v4, sizeof sink_v4);
    v4->next = v6;
    v6->family = AF_INET6;
    memcpy(v6->addr, sink_v6, sizeof sink_v6);
    /* nscd hands in a tuple of its own: the first record goes there (as nss-myhostname does). */
    if (*pat != NULL) **pat = *v4;
    else *pat = v4;
    if (ttlp != NULL) *ttlp = 0;
    return NSS_STATUS_SUCCESS;
}

EXPORT enum nss_status _nss_blockd_gethostbyname3_r(const char *name, int af, struct hostent *host, char *buffer,
                                             size_t buflen, int *errnop, int *h_errnop, int32_t *ttlp,
                                             char **canonp) {
    if (af != AF_INET && af != AF_INET6) {
        *errnop = EAFNOSUPPORT;
        *h_errnop = NO_DATA;
        return NSS_STATUS_UNAVAIL;
    }
    int saved = errno;
    char canonical[NAME_MAX_LEN + 1];
    bool hit = blocked(name, canonical);
    errno = saved;
    if (!hit) return not_found(errnop, h_errnop);
    size_t alen = af == AF_INET ? sizeof sink_v4 : sizeof sink_v6, len = strlen(canonical) + 1;
    char **aliases = (char **)carve(&buffer, &buflen, sizeof(char *), alignof(char *));
    char **addrs = (char **)carve(&buffer, &buflen, 2 * sizeof(char *), alignof(char *));
    char *addr = carve(&buffer, &buflen, alen, alignof(uint32_t));
    char *r_name = carve(&buffer, &buflen, len, 1);
    if (aliases == NULL || addrs == NULL || addr == NULL || r_name == NULL) return too_small(errnop, h_errnop);
    memcpy(addr, af == AF_INET ? sink_v4 : sink_v6, alen);
    memcpy(r_name, canonical, len);
    aliases[0] = NULL;
    addrs[0] = addr;
    addrs[1] = NULL;
    host->h_name = r_name;
    host->h_aliases = aliases;
    host->h_addrtype = af;
    host->h_length = (int)alen;
    host->h_addr_list = addrs;
    if (ttlp != NULL) *ttlp = 0;
    if (canonp != NULL) *canonp = r_name;
    return NSS_STATUS_SUCCESS;
}

EXPORT enum nss_status _nss_blockd_gethostbyname2_r(const char *name, int af, struct hostent *host, char *buffer,
                                             size_t buflen, int *errnop, int *h_errnop) {
    return _nss_blockd_gethostbyname3_r(name, af, host, buffer, buflen, errnop, h_errnop, NULL, NULL);
}

EXPORT enum nss_status _nss_blockd_gethostbyname_r(const char *name, struct hostent *host, char *buffer, size_t buflen,
                                            int *errnop, int *h_errnop) {
    return _nss_blockd_gethostbyname3_r(name, AF_INET, host, buffer, buflen, errnop, h_errnop, NULL, NULL);
}
