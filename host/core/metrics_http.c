/* metrics_http.c — serves GET /metrics in the Prometheus text format over
 * HTTP/1.0 (one request per connection) on a loopback address only. Does not
 * compute figures: it calls the render function it was given. */
#include "metrics_http.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_REQ_MAX 8192

struct metrics_http {
    rmq_host *host;
    uv_tcp_t listener;
    metrics_render_fn render;
    int port;
    int open_handles;
    bool stopping;
    struct scrape *conns;
};

typedef struct scrape {
    uv_tcp_t tcp;
    metrics_http *m;
    char req[METRICS_REQ_MAX];
    size_t len;
    bool answered;
    uv_write_t wr;
    char *out;
    struct scrape *next;
} scrape;

static void maybe_free(metrics_http *m)
{
    if (m->stopping && m->open_handles == 0)
        free(m);
}

static void on_scrape_closed(uv_handle_t *hd)
{
    scrape *s = hd->data;
    metrics_http *m = s->m;
    free(s->out);
    free(s);
    m->open_handles--;
    maybe_free(m);
}

static void scrape_close(scrape *s)
{
    if (uv_is_closing((uv_handle_t *)&s->tcp))
        return;
    for (scrape **pp = &s->m->conns; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    uv_close((uv_handle_t *)&s->tcp, on_scrape_closed);
}

static void on_written(uv_write_t *w, int status)
{
    (void)status;
    scrape_close(w->data);
}

static void answer(scrape *s, int status, const char *reason, const char *ctype, const char *body,
                   size_t blen)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.0 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, reason, ctype, blen);
    s->out = malloc((size_t)n + blen);
    if (!s->out) {
        scrape_close(s);
        return;
    }
    memcpy(s->out, head, (size_t)n);
    memcpy(s->out + n, body, blen);
    uv_buf_t buf = uv_buf_init(s->out, (unsigned)((size_t)n + blen));
    s->wr.data = s;
    s->answered = true;
    if (uv_write(&s->wr, (uv_stream_t *)&s->tcp, &buf, 1, on_written) != 0)
        scrape_close(s);
}

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    scrape *s = hd->data;
    *buf = uv_buf_init(s->req + s->len, (unsigned)(sizeof(s->req) - 1 - s->len));
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    scrape *s = st->data;
    if (nread < 0) {
        scrape_close(s);
        return;
    }
    if (s->answered)
        return;
    s->len += (size_t)nread;
    s->req[s->len] = 0;
    if (!strstr(s->req, "\r\n\r\n") && !strstr(s->req, "\n\n")) {
        if (s->len >= sizeof(s->req) - 1)
            answer(s, 431, "Request Header Fields Too Large", "text/plain", "", 0);
        return;
    }
    uv_read_stop(st);
    if (strncmp(s->req, "GET /metrics ", 13) != 0 && strncmp(s->req, "GET / ", 6) != 0) {
        static const char nf[] = "only GET /metrics is served here\n";
        answer(s, 404, "Not Found", "text/plain", nf, sizeof(nf) - 1);
        return;
    }
    size_t len = 0;
    char *text = s->m->render(s->m->host, &len);
    if (!text) {
        answer(s, 500, "Internal Server Error", "text/plain", "", 0);
        return;
    }
    answer(s, 200, "OK", "text/plain; version=0.0.4", text, len);
    free(text);
}

static void on_connection(uv_stream_t *server, int status)
{
    metrics_http *m = server->data;
    if (status < 0 || m->stopping)
        return;
    scrape *s = calloc(1, sizeof(*s));
    if (!s)
        return;
    s->m = m;
    uv_tcp_init(server->loop, &s->tcp);
    s->tcp.data = s;
    m->open_handles++;
    s->next = m->conns;
    m->conns = s;
    if (uv_accept(server, (uv_stream_t *)&s->tcp) != 0) {
        scrape_close(s);
        return;
    }
    uv_read_start((uv_stream_t *)&s->tcp, on_alloc, on_read);
}

static int parse_loopback(const char *spec, struct sockaddr_storage *ss)
{
    char host[128];
    const char *colon = strrchr(spec, ':');
    if (!colon)
        return -1;
    int port = atoi(colon + 1);
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof(host) || port < 0 || port > 65535)
        return -1;
    memcpy(host, spec, hl);
    host[hl] = 0;
    memset(ss, 0, sizeof(*ss));
    if (host[0] == '[') {
        size_t n = strlen(host);
        if (n < 3 || host[n - 1] != ']')
            return -1;
        host[n - 1] = 0;
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        if (uv_ip6_addr(host + 1, port, a) != 0 || !IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
            return -1;
        return 0;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    if (uv_ip4_addr(host, port, a) != 0 || (ntohl(a->sin_addr.s_addr) >> 24) != 127)
        return -1;
    return 0;
}

static void on_listener_closed(uv_handle_t *hd)
{
    metrics_http *m = hd->data;
    m->open_handles--;
    maybe_free(m);
}

int metrics_http_start(rmq_host *h, uv_loop_t *loop, const char *listen, metrics_render_fn render,
                       metrics_http **out, char *err, size_t errlen)
{
    *out = NULL;
    struct sockaddr_storage ss;
    if (parse_loopback(listen, &ss) != 0) {
        snprintf(err, errlen,
                 "%s: metrics_listen '%s' must be a loopback ip:port "
                 "(127.0.0.1:9100 or [::1]:9100)",
                 h->conf.host_file, listen);
        return -1;
    }
    metrics_http *m = calloc(1, sizeof(*m));
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    m->host = h;
    m->render = render;
    uv_tcp_init(loop, &m->listener);
    m->listener.data = m;
    m->open_handles = 1;
    int rc = uv_tcp_bind(&m->listener, (struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&m->listener, 16, on_connection);
    if (rc != 0) {
        snprintf(err, errlen, "metrics_listen %s: %s", listen, uv_strerror(rc));
        m->stopping = true;
        uv_close((uv_handle_t *)&m->listener, on_listener_closed);
        return -1;
    }
    struct sockaddr_storage bound;
    int blen = sizeof(bound);
    uv_tcp_getsockname(&m->listener, (struct sockaddr *)&bound, &blen);
    m->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                          : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    HLOG_INFO(h, "metrics on http://%s/metrics (port %d)", listen, m->port);
    *out = m;
    return 0;
}

int metrics_http_port(const metrics_http *m)
{
    return m ? m->port : -1;
}

void metrics_http_stop(metrics_http *m)
{
    if (!m)
        return;
    m->stopping = true;
    while (m->conns)
        scrape_close(m->conns);
    uv_close((uv_handle_t *)&m->listener, on_listener_closed);
}
