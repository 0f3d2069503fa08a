/* Round trips of one request line over a Unix stream socket, the same way for blockd and
 * for the redis-server baseline: CLIENTS threads, each on its own connection,
 * each sending REQUEST+"\n" and reading up to the reply's LF before the next request (no
 * pipelining). Prints: "<round trips per second> <errors>". Every reply must start with
 * EXPECT. A reply ends at an LF once it is at least MIN_BYTES long (0 by default; redis's bulk
 * reply to GET, "$N\r\n<value>\r\n", has CRLFs before its end).
 * Usage: linebench SOCKET REQUEST EXPECT CLIENTS REQUESTS_PER_CLIENT [MIN_BYTES] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *path, *request, *expect;
static int per_client;
static size_t min_bytes;
static pthread_barrier_t barrier;
static long errors_total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *client(void *arg) {
    (void)arg;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char line[4200];
    size_t len = strlen(request);
    memcpy(line, request, len);
    line[len++] = '\n';
    static __thread char buf[1 << 20];
    size_t expect_len = strlen(expect);
    long errors = 0;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < per_client; i++) {
        if (send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len) { perror("send"); exit(1); }
        size_t have = 0;
        for (;;) {
            ssize_t n = recv(fd, buf + have, sizeof buf - have, 0);
            if (n <= 0) { fprintf(stderr, "linebench: connection closed or timed out\n"); exit(1); }
            have += (size_t)n;
            if (buf[have - 1] == '\n' && have >= min_bytes) break;
            if (have == sizeof buf) { fprintf(stderr, "linebench: reply longer than 1 MiB\n"); exit(1); }
        }
        if (have < expect_len || memcmp(buf, expect, expect_len) != 0) errors++;
    }
    pthread_barrier_wait(&barrier);
    close(fd);
    pthread_mutex_lock(&lock);
    errors_total += errors;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) { fprintf(stderr, "usage: linebench SOCKET REQUEST EXPECT CLIENTS REQUESTS_PER_CLIENT [MIN_BYTES]\n"); return 2; }
    if (argc == 7) min_bytes = (size_t)atol(argv[6]);
    path = argv[1]; request = argv[2]; expect = argv[3];
    int clients = atoi(argv[4]);
    per_client = atoi(argv[5]);
    pthread_barrier_init(&barrier, NULL, (unsigned)clients + 1);
    pthread_t *t = calloc((size_t)clients, sizeof *t);
    for (int i = 0; i < clients; i++) pthread_create(&t[i], NULL, client, NULL);
    struct timespec a, b;
    pthread_barrier_wait(&barrier);
    clock_gettime(CLOCK_MONOTONIC, &a);
    pthread_barrier_wait(&barrier);
    clock_gettime(CLOCK_MONOTONIC, &b);
    for (int i = 0; i < clients; i++) pthread_join(t[i], NULL);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    printf("%.0f %ld\n", (double)clients * per_client / s, errors_total);
    return 0;
}
