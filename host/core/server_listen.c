/* server_listen.c — binds each needed server's listening socket (IPv4 or
 * [v6], SO_REUSEADDR so a restart can take the port at once, backlog 1024
 * as Java) and its optional VIP socket, tells which one a connection came
 * through, and accepts on loop 0, spreading connections round-robin over the
 * I/O loops. A plain frame never starts with 0x16, so TLS hellos are closed
 * by the frame check. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host.h"

#define LISTEN_BACKLOG 1024

/* Bind one listening socket on `spec`; the bound address goes to
 * bound_host/bound_port. The fd, or -1 with err set. */
static int bind_listener(rmq_host *h, server *s, const char *spec, const char *key,
                         char *bound_host, size_t bhlen, int *bound_port, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t len;
    const server_conf *sc = host_conf_server(&h->conf, s->name);
    if (socket_address_parse(spec, true, &ss, &len) != 0) {
        snprintf(err, errlen,
                 "%s:%d: server '%s': bad %s address '%s' (use ip:port or "
                 "[v6]:port)",
                 sc ? sc->file : "host.conf", sc ? sc->line : 0, s->name, key, spec);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "server '%s': socket: %s", s->name, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        snprintf(err, errlen, "server '%s': cannot listen on %s: %s", s->name, spec,
                 strerror(errno));
        close(fd);
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    getsockname(fd, (struct sockaddr *)&bound, &blen);
    char ip[INET6_ADDRSTRLEN] = "";
    if (bound.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&bound;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        *bound_port = ntohs(a->sin_port);
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&bound;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        *bound_port = ntohs(a->sin6_port);
    }
    snprintf(bound_host, bhlen, "%s", ip);
    return fd;
}

int server_bind(rmq_host *h, server *s, char *err, size_t errlen)
{
    int fd = bind_listener(h, s, s->listen_spec, "listen", s->bound_host, sizeof(s->bound_host),
                           &s->bound_port, err, errlen);
    if (fd < 0)
        return -1;
    s->vip_fd = -1;
    if (s->vip_spec[0]) {
        s->vip_fd = bind_listener(h, s, s->vip_spec, "vip_listen", s->vip_bound_host,
                                  sizeof(s->vip_bound_host), &s->vip_bound_port, err, errlen);
        if (s->vip_fd < 0) {
            close(fd);
            return -1;
        }
    }
    s->fd = fd;
    s->listening = true;
    return 0;
}

void server_close_listeners(server *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    if (s->vip_fd >= 0)
        close(s->vip_fd);
    s->vip_fd = -1;
}

/* Whether `c` was accepted on the server's VIP listener: its local port is
 * the VIP one. Asked once per connection, only for RMQ_PROC_NOT_ON_VIP
 * codes. On the connection's I/O thread. */
bool server_conn_on_vip(connection *c)
{
    server *s = c->srv;
    if (!s || s->vip_fd < 0)
        return false;
    if (c->vip_state == 0) {
        uv_os_fd_t fd;
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        int port = -1;
        if (uv_fileno((const uv_handle_t *)&c->tcp, &fd) == 0 &&
            getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
            port = ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
                                           : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        c->vip_state = port == s->vip_bound_port ? 2 : 1;
    }
    return c->vip_state == 2;
}

static void on_acceptable(uv_poll_t *poll, int status, int events);

static void on_backoff_over(uv_timer_t *t)
{
    server *s = t->data;
    if (s->polling)
        uv_poll_start(&s->poll, UV_READABLE, on_acceptable);
    if (s->vip_polling)
        uv_poll_start(&s->vip_poll, UV_READABLE, on_acceptable);
}

static void on_acceptable(uv_poll_t *poll, int status, int events)
{
    (void)events;
    server *s = poll->data;
    rmq_host *h = s->host;
    if (status < 0)
        return;
    int lfd = poll == &s->vip_poll ? s->vip_fd : s->fd;
    for (int i = 0; i < 256; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                /* The pending connection stays readable: without a pause the
                 * loop would spin on it. Connections already open carry on. */
                HLOG_ERROR(h,
                           "server %s: accept: %s; not accepting for 1 s (raise the "
                           "open-file limit)",
                           s->name, strerror(errno));
                uv_poll_stop(&s->poll);
                if (s->vip_polling)
                    uv_poll_stop(&s->vip_poll);
                uv_timer_start(&s->accept_backoff, on_backoff_over, 1000, 0);
            }
            break;
        }
        io_loop *l = &h->loops[s->next_loop++ % (unsigned)h->nloops];
        if (loop_is_current(l)) {
            conn_adopt(l, s, fd);
            continue;
        }
        loop_task *t = calloc(1, sizeof(*t));
        if (!t) {
            close(fd);
            continue;
        }
        t->type = LT_ADOPT;
        t->fd = fd;
        t->srv = s;
        loop_post(l, t);
    }
}

/* On loop 0 (LT_START_ACCEPT). */
void server_poll_start(io_loop *l0, server *s)
{
    if (s->polling)
        return;
    if (uv_poll_init_socket(&l0->loop, &s->poll, s->fd) != 0) {
        HLOG_ERROR(l0->host, "server %s: cannot watch the listening socket", s->name);
        return;
    }
    s->poll.data = s;
    uv_timer_init(&l0->loop, &s->accept_backoff);
    s->accept_backoff.data = s;
    s->backoff_inited = true;
    uv_poll_start(&s->poll, UV_READABLE, on_acceptable);
    s->polling = true;
    if (s->vip_fd >= 0 && uv_poll_init_socket(&l0->loop, &s->vip_poll, s->vip_fd) == 0) {
        s->vip_poll.data = s;
        uv_poll_start(&s->vip_poll, UV_READABLE, on_acceptable);
        s->vip_polling = true;
    }
}

int server_start_accepting(rmq_host *h, server *s)
{
    loop_task *t = calloc(1, sizeof(*t));
    if (!t)
        return RMQ_ENOMEM;
    t->type = LT_START_ACCEPT;
    t->srv = s;
    loop_post(&h->loops[0], t);
    return 0;
}

void server_stop_accepting(rmq_host *h, server *s)
{
    loop_task *t = calloc(1, sizeof(*t));
    if (!t)
        return;
    t->type = LT_STOP_ACCEPT;
    t->srv = s;
    loop_post(&h->loops[0], t);
}
