/* bcm_heartbeat_bench — load generator for broker-client-mgr: opens N
 * connections to a broker port, each a consumer client of group
 * (i % groups), and keeps one HEART_BEAT in flight per connection (closed
 * loop) for a duration; prints requests/s. With -p PID it also prints the
 * daemon's RSS before connecting and after every client has registered, and
 * the difference per client. Owns nothing but its sockets; JSON frames are
 * built by hand so it needs no project library.
 *
 *   bcm_heartbeat_bench -P port [-c clients] [-g groups] [-d seconds] [-p pid]
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct conn {
    int fd;
    unsigned char *frame; /* the heartbeat request of this client */
    size_t frame_len, sent;
    unsigned char rbuf[4096];
    size_t rlen;
    uint32_t opaque;
    uint64_t answered;
} conn;

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static long rss_kb(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void build_frame(conn *c, int i, int groups)
{
    char header[256], body[1024];
    int hl = snprintf(header, sizeof header,
                      "{\"code\":34,\"flag\":0,\"language\":\"JAVA\",\"opaque\":%u,"
                      "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":409}",
                      c->opaque);
    int bl = snprintf(
        body, sizeof body,
        "{\"clientID\":\"10.0.0.1@bench-%d\",\"consumerDataSet\":[{\"consumeFromWhere\":"
        "\"CONSUME_FROM_LAST_OFFSET\",\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":"
        "\"BenchGroup%d\",\"messageModel\":\"CLUSTERING\",\"subscriptionDataSet\":[{"
        "\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\",\"subString\":"
        "\"*\",\"subVersion\":1700000000000,\"tagsSet\":[],\"topic\":\"BenchTopic\"}],"
        "\"unitMode\":false}],\"producerDataSet\":[{\"groupName\":\"CLIENT_INNER_PRODUCER\"}]}",
        i, i % groups);
    c->frame_len = 8 + (size_t)hl + (size_t)bl;
    c->frame = realloc(c->frame, c->frame_len);
    put32(c->frame, (uint32_t)(4 + hl + bl));
    put32(c->frame + 4, (uint32_t)hl); /* serialize type 0 = JSON */
    memcpy(c->frame + 8, header, (size_t)hl);
    memcpy(c->frame + 8 + hl, body, (size_t)bl);
    c->sent = 0;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* Drive every connection until `until_us` or, when until_us is 0, until each
 * has `target` answers. Returns answers received. */
static uint64_t run(conn *cs, struct pollfd *pfds, int n, int groups, uint64_t until_us,
                    uint64_t target)
{
    uint64_t total = 0;
    for (;;) {
        if (until_us && now_us() >= until_us)
            break;
        int pending = 0;
        for (int i = 0; i < n; i++) {
            pfds[i].fd = cs[i].fd;
            pfds[i].events = POLLIN | (cs[i].sent < cs[i].frame_len ? POLLOUT : 0);
            if (!until_us && cs[i].answered < target)
                pending++;
        }
        if (!until_us && pending == 0)
            break;
        if (poll(pfds, (nfds_t)n, 100) < 0 && errno != EINTR)
            return total;
        for (int i = 0; i < n; i++) {
            conn *c = &cs[i];
            if ((pfds[i].revents & POLLOUT) && c->sent < c->frame_len) {
                ssize_t w = write(c->fd, c->frame + c->sent, c->frame_len - c->sent);
                if (w > 0)
                    c->sent += (size_t)w;
            }
            if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = read(c->fd, c->rbuf + c->rlen, sizeof c->rbuf - c->rlen);
            if (r <= 0) {
                fprintf(stderr, "connection %d closed by the server\n", i);
                exit(1);
            }
            c->rlen += (size_t)r;
            while (c->rlen >= 4) {
                uint32_t len = ((uint32_t)c->rbuf[0] << 24) | ((uint32_t)c->rbuf[1] << 16) |
                               ((uint32_t)c->rbuf[2] << 8) | c->rbuf[3];
                if (len + 4 > sizeof c->rbuf) {
                    fprintf(stderr, "frame too large\n");
                    exit(1);
                }
                if (c->rlen < len + 4)
                    break;
                /* responses have flag bit 0; NOTIFY requests (flag 2) are skipped */
                bool response = memmem(c->rbuf + 8, len - 4, "\"flag\":1", 8) != NULL;
                memmove(c->rbuf, c->rbuf + len + 4, c->rlen - len - 4);
                c->rlen -= len + 4;
                if (!response)
                    continue;
                c->answered++;
                total++;
                c->opaque++;
                if (until_us || c->answered < target)
                    build_frame(c, i, groups);
            }
        }
    }
    return total;
}

int main(int argc, char **argv)
{
    int port = 0, clients = 1000, groups = 100, seconds = 10, pid = 0, opt;
    while ((opt = getopt(argc, argv, "P:c:g:d:p:")) != -1) {
        switch (opt) {
        case 'P': port = atoi(optarg); break;
        case 'c': clients = atoi(optarg); break;
        case 'g': groups = atoi(optarg); break;
        case 'd': seconds = atoi(optarg); break;
        case 'p': pid = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s -P port [-c clients] [-g groups] [-d seconds] [-p pid]\n",
                    argv[0]);
            return 2;
        }
    }
    if (port <= 0 || clients <= 0 || groups <= 0) {
        fprintf(stderr, "need -P port\n");
        return 2;
    }
    long rss0 = pid ? rss_kb(pid) : -1;
    conn *cs = calloc((size_t)clients, sizeof *cs);
    struct pollfd *pfds = calloc((size_t)clients, sizeof *pfds);
    for (int i = 0; i < clients; i++) {
        cs[i].fd = connect_to(port);
        if (cs[i].fd < 0) {
            fprintf(stderr, "connect %d failed: %s\n", i, strerror(errno));
            return 1;
        }
        cs[i].opaque = 1;
        build_frame(&cs[i], i, groups);
    }
    /* warm-up: every client registered once (groups, retry topics created) */
    uint64_t t0 = now_us();
    run(cs, pfds, clients, groups, 0, 1);
    uint64_t t1 = now_us();
    long rss1 = pid ? rss_kb(pid) : -1;
    printf("clients %d groups %d: all registered in %.1f ms\n", clients, groups,
           (t1 - t0) / 1000.0);
    if (pid)
        printf("daemon RSS %ld kB before, %ld kB with %d clients: %.2f kB per client\n", rss0, rss1,
               clients, (double)(rss1 - rss0) / clients);
    if (seconds > 0) {
        for (int i = 0; i < clients; i++)
            build_frame(&cs[i], i, groups);
        uint64_t start = now_us();
        uint64_t n = run(cs, pfds, clients, groups, start + (uint64_t)seconds * 1000000u, 0);
        double secs = (now_us() - start) / 1e6;
        printf("HEART_BEAT: %llu answers in %.2f s = %.0f requests/s\n", (unsigned long long)n,
               secs, n / secs);
    }
    for (int i = 0; i < clients; i++) {
        close(cs[i].fd);
        free(cs[i].frame);
    }
    free(cs);
    free(pfds);
    return 0;
}
