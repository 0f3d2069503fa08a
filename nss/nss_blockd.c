/* libnss_blockd.so.2: whole-site and per-user web blocks for glibc's resolver (W1, U3).
 *
 * A `hosts:` module, placed first on that line of /etc/nsswitch.conf by `make install`. It
 * reads TABLE_DIR/all, the names blocked for everyone, and, for the calling process's user U
 * (its real uid; see "Whose table" below), TABLE_DIR/U: tables blockd writes (one blocked
 * name a line, lower case, `#` comments). It answers a listed name with the sink blockd's hosts
 * section uses (E5: 127.0.0.253 and 100::1, refused by its nftables table), so the answer is
 * authoritative and no later module (`files`, `dns`) is asked. Any other name, a missing table
 * or one it does not trust gives NSS_STATUS_NOTFOUND: the next module answers as if this one
 * were not there.
 *
 * A listed name covers itself and every name under it (W1: `example.com` answers for
 * `www.example.com` and `a.b.example.com`, never for `badexample.com`), which the hosts file,
 * having no wildcards, cannot do. ASCII case and one trailing dot are ignored.
 *
 * Allow-only time (W2): a `*` line blocks every name, and a `!name` line lets that name and
 * the names under it through. The most specific line covering a name decides (a listed name
 * wins over a `!` of the same name); a `*` never covers a single label, localhost or this
 * machine's host name, and the `*` of `all` holds for login users only (uids 1000 to 60000):
 * root and system services keep resolving. Each table decides on its own and any table that
 * blocks a name blocks it, so two windows at once let through only what both allow.
 *
 * Trust: the directory and the table must be owned by root and not writable by group or
 * others, the table a regular file reached without a symlink. The directory is compiled in;
 * no environment variable moves it, since any user could set one to lift their own block
 * (tests put a tmpfs over /run/blockd in a private mount namespace instead). A table is
 * readable by root and its user only (mode 0640 with the POSIX ACL entry user:UID:r--, written
 * by blockd), or by everyone (0644) where the file system has no ACLs; `all` is 0644.
 *
 * Whose table (U3): the tables are keyed on uids of the initial user namespace. There, and
 * only there, /proc/self/uid_map is the identity map `0 0 4294967295` and getuid() is that
 * uid. In any other user namespace (`unshare -r`, a rootless container), or where uid_map
 * cannot be read, getuid() is not to be believed: uid_map maps it one level up only, and in
 * a namespace made inside another (`unshare -r` twice) that level is another namespace's 0.
 * The module then asks the kernel instead, whose permission checks use the process's real
 * uid in the initial namespace: a process that may write the table directory is root and
 * reads root's table; any other reads every table it can open, which with ACLs is exactly
 * its own user's and without them is every user's (more blocked, never less: it fails
 * closed). Owned by root there means owned by uid 0 or by the overflow uid (65534), which is
 * how root's files look from a namespace that does not map root.
 *
 * The module allocates nothing, keeps no state (thread-safe by construction), reads the
 * table through a fixed buffer with bounded lines, and keeps errno as it found it except
 * where the NSS contract sets *errnop. */
#define _GNU_SOURCE
#include <dirent.h>
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
/* The names blocked for every user (W1), readable by all; the hosts file has no wildcards. */
#define MACHINE_TABLE "all"
/* Login users, as Debian's /etc/login.defs has them (UID_MIN, UID_MAX): a machine-wide
 * allow-only window restricts them, never root or system services. */
#define LOGIN_UID_MIN 1000
#define LOGIN_UID_MAX 60000

/* Only the four entry points leave the library (-fvisibility=hidden for the rest). */
#define EXPORT __attribute__((visibility("default")))

enum { NAME_MAX_LEN = 253, LINE_MAX_LEN = 255, READ_CHUNK = 4096, DIRENT_CHUNK = 2048, SMALL_FILE = 128 };

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

/* Up to SMALL_FILE - 1 bytes of a /proc file, NUL-terminated; false when it cannot be read. */
static bool read_small(const char *path, char out[SMALL_FILE]) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return false;
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fd, out + used, SMALL_FILE - 1 - used);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        used += (size_t)n;
        if (used == SMALL_FILE - 1) break;
    }
    close(fd);
    out[used] = '\0';
    return used > 0;
}

/* The decimal number at *p (after blanks), moved past; false when there is none or it does
 * not fit 32 bits. */
static bool number(const char **p, unsigned long *out) {
    while (**p == ' ' || **p == '\t') (*p)++;
    if (**p < '0' || **p > '9') return false;
    unsigned long v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        v = v * 10 + (unsigned long)(**p - '0');
        if (v > 4294967295UL) return false;
    }
    *out = v;
    return true;
}

/* Whether getuid() is a uid of the initial user namespace: uid_map is the identity map, one
 * line `0 0 4294967295` (read at every lookup: a process may unshare(CLONE_NEWUSER) later). */
static bool initial_namespace(void) {
    char map[SMALL_FILE];
    if (!read_small("/proc/self/uid_map", map)) return false;
    const char *p = map;
    unsigned long inside, outside, count;
    if (!number(&p, &inside) || !number(&p, &outside) || !number(&p, &count)) return false;
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    return *p == '\0' && inside == 0 && outside == 0 && count == 4294967295UL;
}

/* How root's files look from a user namespace that does not map root. */
static unsigned long overflow_uid(void) {
    char text[SMALL_FILE];
    const char *p = text;
    unsigned long uid;
    return read_small("/proc/sys/kernel/overflowuid", text) && number(&p, &uid) ? uid : 65534;
}

static bool trusted(int fd, bool directory, bool initial) {
    struct stat st;
    if (fstat(fd, &st) != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return false;
    if (st.st_uid != 0 && (initial || (unsigned long)st.st_uid != overflow_uid())) return false;
    return directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

/* A table's file name: a uid in decimal, without leading zeros. */
static bool uid_name(const char *name) {
    const char *p = name;
    unsigned long uid;
    return (name[0] != '0' || name[1] == '\0') && number(&p, &uid) && *p == '\0';
}

/* The table `file` in the directory, or -1 when it cannot be opened or is not to be trusted. */
static int open_table(int dir, const char *file, bool initial) {
    int fd = openat(dir, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0 && !trusted(fd, false, initial)) { close(fd); fd = -1; }
    return fd;
}

/* How much of the wanted name a table line covers: the line's length when it is the name or a
 * parent domain of it (W1: `example.com` covers `www.example.com`, not `badexample.com`),
 * else 0. ASCII case in the line is ignored. */
static size_t covers(const char *line, size_t len, const char *want, size_t want_len) {
    if (len == 0 || len > want_len) return 0;
    if (len < want_len && want[want_len - len - 1] != '.') return 0;
    const char *tail = want + (want_len - len);
    for (size_t i = 0; i < len; i++) {
        char c = line[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != tail[i]) return 0;
    }
    return len;
}

/* What one table says of the wanted name (W2): the longest listed (blocked) line covering it,
 * the longest `!` (allowed) line covering it, and whether the table has a `*` line. */
struct verdict { size_t blocked, allowed; bool star; };

/* One table line: surrounding blanks and a CR are ignored, as are blank and `#` lines. */
static void judge(const char *line, size_t len, const char *want, size_t want_len, struct verdict *v) {
    while (len > 0 && (line[0] == ' ' || line[0] == '\t')) { line++; len--; }
    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r')) len--;
    if (len == 0 || line[0] == '#') return;
    if (len == 1 && line[0] == '*') { v->star = true; return; }
    if (line[0] == '!') {
        size_t n = covers(line + 1, len - 1, want, want_len);
        if (n > v->allowed) v->allowed = n;
        return;
    }
    size_t n = covers(line, len, want, want_len);
    if (n > v->blocked) v->blocked = n;
}

/* Reads the open table into a verdict. Lines longer than LINE_MAX_LEN judge nothing (no name
 * can be that long) and are skipped to their end. */
static struct verdict scan(int fd, const char *want, size_t want_len) {
    char chunk[READ_CHUNK], line[LINE_MAX_LEN + 1];
    struct verdict v = {0, 0, false};
    size_t used = 0;
    bool overlong = false;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; i++) {
            if (chunk[i] == '\n') {
                if (!overlong) judge(line, used, want, want_len, &v);
                used = 0;
                overlong = false;
            } else if (used < LINE_MAX_LEN) {
                line[used++] = chunk[i];
            } else {
                overlong = true;
            }
        }
    }
    if (!overlong && used > 0) judge(line, used, want, want_len, &v);
    return v;
}

/* Names a `*` never covers: a single label, localhost and the names under it, and this
 * machine's own host name, so the session and local services keep working (W2). */
static bool exempt(const char *want, size_t want_len) {
    if (memchr(want, '.', want_len) == NULL) return true;
    if (covers("localhost", 9, want, want_len) != 0) return true;
    char host[NAME_MAX_LEN + 2];
    if (gethostname(host, sizeof host) != 0) return false;
    host[sizeof host - 1] = '\0';
    size_t n = strlen(host);
    return n == want_len && covers(host, n, want, want_len) == n;
}

/* Whether a table's verdict blocks the name: the most specific covering line decides, a
 * listed name winning over a `!` line of the same name; with no covering line, a `*` blocks
 * (when `star_applies`) every name but the exempt ones. */
static bool blocks(struct verdict v, bool star_applies, const char *want, size_t want_len) {
    if (v.blocked > 0 && v.blocked >= v.allowed) return true;
    if (v.allowed > 0) return false;
    return v.star && star_applies && !exempt(want, want_len);
}

/* Whether the table `file` blocks the name (a table that cannot be opened blocks nothing). */
static bool table_blocks(int dir, const char *file, bool initial, bool star_applies, const char *want, size_t want_len) {
    int fd = open_table(dir, file, initial);
    if (fd < 0) return false;
    struct verdict v = scan(fd, want, want_len);
    close(fd);
    return blocks(v, star_applies, want, want_len);
}

/* Whether `uid`'s table blocks the name. */
static bool uid_lists(int dir, unsigned long uid, bool initial, const char *want, size_t want_len) {
    char file[24], digits[24];
    size_t len = 0;
    do { digits[len++] = (char)('0' + uid % 10); uid /= 10; } while (uid != 0);
    for (size_t i = 0; i < len; i++) file[i] = digits[len - 1 - i];
    file[len] = '\0';
    return table_blocks(dir, file, initial, true, want, want_len);
}

/* Outside the initial user namespace: whether any table this process may open blocks the
 * name (the kernel lets it open its own user's only, or every one where there are no ACLs). */
static bool any_readable_lists(int dir, const char *want, size_t want_len) {
    alignas(struct dirent64) char entries[DIRENT_CHUNK];
    for (;;) {
        ssize_t n = getdents64(dir, entries, sizeof entries);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        for (ssize_t at = 0; at < n;) {
            const struct dirent64 *d = (const struct dirent64 *)(entries + at);
            at += d->d_reclen;
            if (!uid_name(d->d_name)) continue;
            if (table_blocks(dir, d->d_name, false, true, want, want_len)) return true;
        }
    }
}

/* Whether the machine-wide table or the calling user's table blocks `name` (see "Whose
 * table" above). */
static bool blocked(const char *name, char canonical[NAME_MAX_LEN + 1]) {
    if (!normalize(name, canonical)) return false;
    size_t want_len = strlen(canonical);
    bool initial = initial_namespace();
    int dir = open(BLOCKD_TABLE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return false;
    bool found = false;
    if (trusted(dir, true, initial)) {
        /* The `*` of `all` (a machine-wide allow-only window) holds for login users only; where
         * the uid is not to be believed it holds too (fail closed). */
        uid_t uid = getuid();
        bool login = !initial || (uid >= LOGIN_UID_MIN && uid <= LOGIN_UID_MAX);
        if (table_blocks(dir, MACHINE_TABLE, initial, login, canonical, want_len)) found = true;
        else if (initial) found = uid_lists(dir, (unsigned long)uid, true, canonical, want_len);
        /* Write access to the directory, which the kernel checks with the real uid: root. */
        else if (faccessat(dir, ".", W_OK, 0) == 0) found = uid_lists(dir, 0, false, canonical, want_len);
        else found = any_readable_lists(dir, canonical, want_len);
    }
    close(dir);
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
