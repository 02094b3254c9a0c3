/* hold_mode.c — rmqbench --hold N: opens N connections to the target from
 * 127.0.0.x source addresses (x = 1, 2, ... so N may exceed one address's
 * ephemeral ports), sends each one request with --hold-request (a route
 * lookup: the server then holds read and write buffers for it), reports how
 * many were opened, holds them for -s seconds, closes them. The open-file
 * limit is raised to its hard limit first; what it allows is reported. */
#include "hold_mode.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "request_template.h"

#define PER_SOURCE 25000

static int read_answer(int fd)
{
    uint8_t pre[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t r = read(fd, pre + got, 4 - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    size_t n = ((size_t)pre[0] << 24) | ((size_t)pre[1] << 16) | ((size_t)pre[2] << 8) | pre[3];
    uint8_t buf[4096];
    while (n > 0) {
        ssize_t r = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));
        if (r <= 0)
            return -1;
        n -= (size_t)r;
    }
    return 0;
}

int rmq_bench_hold_run(const rmq_bench_options *o, FILE *out)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    int *fds = calloc(o->hold, sizeof(int));
    if (!fds)
        return 1;
    rmq_request_template t;
    memset(&t, 0, sizeof(t));
    if (o->hold_request) {
        rmq_request_spec spec = {.code = o->code,
                                 .serialize_type = RMQ_SERIALIZE_JSON,
                                 .ext_keys = o->ext_keys,
                                 .ext_values = o->ext_values,
                                 .ext_count = o->ext_count};
        char err[128];
        if (rmq_template_build(&t, &spec, err, sizeof(err)) != 0) {
            fprintf(stderr, "rmqbench: %s\n", err);
            free(fds);
            return 1;
        }
    }
    const char *why = NULL;
    unsigned n = 0;
    for (; n < o->hold; n++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) {
            why = strerror(errno);
            break;
        }
        struct sockaddr_in src = {.sin_family = AF_INET};
        src.sin_addr.s_addr = htonl(0x7F000001u + n / PER_SOURCE);
        if (bind(fd, (struct sockaddr *)&src, sizeof(src)) != 0 ||
            connect(fd, (const struct sockaddr *)&o->addr, sizeof(struct sockaddr_in)) != 0) {
            why = strerror(errno);
            close(fd);
            break;
        }
        if (o->hold_request &&
            (write(fd, t.frame, t.frame_len) != (ssize_t)t.frame_len || read_answer(fd) != 0)) {
            why = "no answer";
            close(fd);
            break;
        }
        fds[n] = fd;
    }
    fprintf(out, "held %u of %u connections%s%s (open-file limit %llu)\n", n, o->hold,
            why ? "; stopped: " : "", why ? why : "", (unsigned long long)rl.rlim_cur);
    fflush(out);
    struct timespec ts = {(time_t)o->seconds,
                          (long)((o->seconds - (double)(time_t)o->seconds) * 1e9)};
    nanosleep(&ts, NULL);
    for (unsigned i = 0; i < n; i++)
        close(fds[i]);
    free(fds);
    rmq_template_free(&t);
    return n == o->hold ? 0 : 1;
}
