/* baseline_server.c — the practical ceiling for rmqbench: answers every
 * complete request frame with a canned route-sized SUCCESS response carrying
 * the request's opaque, in the request's serialize type. It must do nothing
 * else (no dispatch, no decode beyond code/opaque/flag), so its figures show
 * what loopback + libuv + framing cost on this machine. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "response_peek.h"

/* A TopicRouteData as protocol.md §4.2 shows it (standard form). */
static const char route_body[] =
    "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"127.0.0.1:10911\",\"1\":\"127.0.0.1:10921\"},"
    "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\"}],\"filterServerTable\":{},"
    "\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,\"readQueueNums\":4,"
    "\"topicSysFlag\":0,\"writeQueueNums\":4}]}";
static const char json_head[] = "{\"code\":0,\"flag\":1,\"language\":\"JAVA\",\"opaque\":";
static const char json_tail[] = ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":409}";

#define BODY_LEN (sizeof(route_body) - 1u)
/* Binary header: code 0, JAVA, version 409, opaque, flag 1, no remark, no ext. */
#define BINARY_HEADER_LEN 21u
#define MAX_RESPONSE_LEN (8u + sizeof(json_head) + 11u + sizeof(json_tail) + BODY_LEN)
#define READ_BUF_INITIAL (64u * 1024u)
#define READ_BUF_MIN_FREE (16u * 1024u)
/* Stop reading a connection whose unsent answers pass this (slow reader). */
#define PENDING_HIGH_WATER (4u * 1024u * 1024u)
#define MAX_THREADS 64

typedef struct server_config {
    struct sockaddr_storage addr; /* port filled in after the first bind */
    socklen_t addr_len;
} server_config;

typedef struct server_loop {
    uv_loop_t loop;
    uv_tcp_t listener;
    int listen_fd;
    pthread_t thread;
} server_loop;

typedef struct out_buf {
    uint8_t *data;
    size_t len, cap;
} out_buf;

typedef struct srv_conn {
    uv_tcp_t tcp;
    uv_write_t write_req;
    uint8_t *rbuf;
    size_t rcap, rlen;
    out_buf out[2]; /* [fill] collects answers, the other is being written */
    unsigned fill;
    int writing;
    int reading;
    int closing;
} srv_conn;

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static int out_reserve(out_buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64u * 1024u;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

/* Render the answer straight into the send buffer: fixed head, the opaque
 * digits, fixed tail, canned body — the header is re-rendered, not parsed. */
static size_t render_json(uint8_t *dst, int32_t opaque)
{
    char digits[12];
    size_t n = 0;
    uint32_t u = opaque < 0 ? (uint32_t)0 - (uint32_t)opaque : (uint32_t)opaque;
    do {
        digits[sizeof(digits) - 1 - n++] = (char)('0' + u % 10u);
        u /= 10u;
    } while (u);
    if (opaque < 0)
        digits[sizeof(digits) - 1 - n++] = '-';
    size_t head = sizeof(json_head) - 1u, tail = sizeof(json_tail) - 1u;
    size_t hlen = head + n + tail;
    uint8_t *p = dst + 8;
    memcpy(p, json_head, head);
    memcpy(p + head, digits + sizeof(digits) - n, n);
    memcpy(p + head + n, json_tail, tail);
    memcpy(p + hlen, route_body, BODY_LEN);
    put_be32(dst, (uint32_t)(4u + hlen + BODY_LEN));
    put_be32(dst + 4, (uint32_t)hlen);
    return 8u + hlen + BODY_LEN;
}

static size_t render_binary(uint8_t *dst, int32_t opaque)
{
    static const uint8_t head[13] = {0x00, 0x00, 0x00, 0x01, 0x99};
    put_be32(dst, 4u + BINARY_HEADER_LEN + BODY_LEN);
    put_be32(dst + 4, 0x01000000u | BINARY_HEADER_LEN);
    memcpy(dst + 8, head, 5);
    put_be32(dst + 13, (uint32_t)opaque);
    put_be32(dst + 17, 1u); /* flag: response */
    put_be32(dst + 21, 0u); /* remark length */
    put_be32(dst + 25, 0u); /* ext length */
    memcpy(dst + 29, route_body, BODY_LEN);
    return 29u + BODY_LEN;
}

static void on_closed(uv_handle_t *h)
{
    srv_conn *c = h->data;
    free(c->rbuf);
    free(c->out[0].data);
    free(c->out[1].data);
    free(c);
}

static void conn_close(srv_conn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    srv_conn *c = h->data;
    if (c->rcap - c->rlen < READ_BUF_MIN_FREE) {
        uint8_t *p = realloc(c->rbuf, c->rcap * 2);
        if (p) {
            c->rbuf = p;
            c->rcap *= 2;
        }
    }
    *buf = uv_buf_init((char *)c->rbuf + c->rlen, (unsigned)(c->rcap - c->rlen));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void flush(srv_conn *c);

static void on_write(uv_write_t *req, int status)
{
    srv_conn *c = req->data;
    c->writing = 0;
    c->out[c->fill ^ 1u].len = 0;
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (!c->reading && uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = 1;
    flush(c);
}

static void flush(srv_conn *c)
{
    out_buf *b = &c->out[c->fill];
    if (c->writing || c->closing || b->len == 0)
        return;
    uv_buf_t ub = uv_buf_init((char *)b->data, (unsigned)b->len);
    c->write_req.data = c;
    if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &ub, 1, on_write) != 0) {
        conn_close(c);
        return;
    }
    c->writing = 1;
    c->fill ^= 1u;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    srv_conn *c = s->data;
    if (nread == 0)
        return;
    if (nread < 0) {
        conn_close(c);
        return;
    }
    c->rlen += (size_t)nread;
    size_t off = 0;
    for (;;) {
        size_t total;
        int st = rmq_peek_frame_size(c->rbuf + off, c->rlen - off, 16u * 1024u * 1024u, &total);
        if (st == 0)
            break;
        rmq_frame_peek pk;
        if (st < 0 || rmq_peek_frame(c->rbuf + off, total, &pk) != 0) {
            conn_close(c); /* as Java: undecodable input closes the connection */
            return;
        }
        off += total;
        if (pk.flag & 0x3) /* responses and oneway requests get no answer */
            continue;
        out_buf *b = &c->out[c->fill];
        if (out_reserve(b, MAX_RESPONSE_LEN) != 0) {
            conn_close(c);
            return;
        }
        b->len += pk.serialize_type == 1 ? render_binary(b->data + b->len, pk.opaque)
                                         : render_json(b->data + b->len, pk.opaque);
    }
    memmove(c->rbuf, c->rbuf + off, c->rlen - off);
    c->rlen -= off;
    flush(c);
    if (c->out[c->fill].len > PENDING_HIGH_WATER && c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = 0;
    }
}

static void on_connection(uv_stream_t *listener, int status)
{
    if (status < 0)
        return;
    srv_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return;
    c->rcap = READ_BUF_INITIAL;
    c->rbuf = malloc(c->rcap);
    uv_tcp_init(listener->loop, &c->tcp);
    c->tcp.data = c;
    if (!c->rbuf || uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        conn_close(c);
        return;
    }
    c->reading = 1;
}

/* A listening socket of its own per thread; SO_REUSEPORT lets the kernel
 * spread connections over the threads' sockets on one port. */
static int open_listener(server_config *cfg, int first)
{
    int fd = socket(cfg->addr.ss_family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&cfg->addr, cfg->addr_len) != 0 || listen(fd, 1024) != 0) {
        close(fd);
        return -1;
    }
    if (first) {
        /* Port 0 becomes the real port, so later threads bind the same one. */
        socklen_t len = sizeof(cfg->addr);
        getsockname(fd, (struct sockaddr *)&cfg->addr, &len);
        cfg->addr_len = len;
    }
    return fd;
}

static void *loop_thread(void *arg)
{
    server_loop *l = arg;
    uv_run(&l->loop, UV_RUN_DEFAULT);
    return NULL;
}

static int parse_listen(server_config *cfg, const char *spec)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon || (size_t)(colon - spec) >= sizeof(host))
        return -1;
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    if (getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res) != 0 || !res)
        return -1;
    memcpy(&cfg->addr, res->ai_addr, res->ai_addrlen);
    cfg->addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int main(int argc, char **argv)
{
    server_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    const char *listen_spec = "127.0.0.1:0";
    unsigned threads = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-l") == 0 && i + 1 < argc) {
            listen_spec = argv[++i];
        } else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: baseline_server [-l host:port] [-t threads]\n");
            return 2;
        }
    }
    if (threads < 1 || threads > MAX_THREADS || parse_listen(&cfg, listen_spec) != 0) {
        fprintf(stderr, "baseline_server: bad -l '%s' or -t\n", listen_spec);
        return 2;
    }
    server_loop *loops = calloc(threads, sizeof(*loops));
    if (!loops)
        return 1;
    for (unsigned i = 0; i < threads; i++) {
        server_loop *l = &loops[i];
        l->listen_fd = open_listener(&cfg, i == 0);
        if (l->listen_fd < 0 || uv_loop_init(&l->loop) != 0 ||
            uv_tcp_init(&l->loop, &l->listener) != 0 ||
            uv_tcp_open(&l->listener, l->listen_fd) != 0 ||
            uv_listen((uv_stream_t *)&l->listener, 1024, on_connection) != 0) {
            fprintf(stderr, "baseline_server: cannot listen on %s: %s\n", listen_spec,
                    strerror(errno));
            return 1;
        }
    }
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (cfg.addr.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&cfg.addr;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
        port = ntohs(a->sin_port);
    } else {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&cfg.addr;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
        port = ntohs(a->sin6_port);
    }
    printf("listening %s:%d\n", host, port);
    fflush(stdout);
    for (unsigned i = 1; i < threads; i++)
        if (pthread_create(&loops[i].thread, NULL, loop_thread, &loops[i]) != 0)
            return 1;
    /* Runs until killed: a benchmark fixture has no graceful shutdown. */
    loop_thread(&loops[0]);
    return 0;
}
