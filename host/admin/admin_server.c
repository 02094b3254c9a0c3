/* admin_server.c — the admin channel's transport: a UNIX stream socket (mode
 * 0600, peers of another uid refused) on the control thread's loop, one JSON
 * request per line in, one JSON response per line out. Never listens on a
 * TCP port; what a command does lives in admin_commands.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "admin_context.h"
#include "metrics_http.h"
#include "readiness.h"

#define ADMIN_LINE_MAX (1 << 20)

typedef struct admin_conn {
    uv_pipe_t pipe;
    admin_ctx *a;
    byte_buf in;
    struct admin_conn *next;
} admin_conn;

typedef struct admin_write {
    uv_write_t req;
    char *text;
    admin_conn *close_after; /* refusals: close once the answer is out */
} admin_write;

/* The context lives until its last handle is closed; conns are listed so
 * stop can close them. */
typedef struct admin_state {
    admin_ctx ctx;
    admin_conn *conns;
    int open_handles;
    bool stopping;
} admin_state;

static admin_state *state_of(admin_ctx *a)
{
    return (admin_state *)(void *)a;
}

static void maybe_free(admin_state *st)
{
    if (st->stopping && st->open_handles == 0)
        free(st);
}

static void on_ctx_handle_closed(uv_handle_t *hd)
{
    admin_state *st = hd->data;
    st->open_handles--;
    maybe_free(st);
}

static void on_conn_closed(uv_handle_t *hd)
{
    admin_conn *c = hd->data;
    admin_state *st = state_of(c->a);
    byte_buf_free(&c->in);
    free(c);
    st->open_handles--;
    maybe_free(st);
}

static void conn_close_admin(admin_conn *c)
{
    if (uv_is_closing((uv_handle_t *)&c->pipe))
        return;
    admin_state *st = state_of(c->a);
    for (admin_conn **pp = &st->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    uv_close((uv_handle_t *)&c->pipe, on_conn_closed);
}

static void on_written(uv_write_t *req, int status)
{
    (void)status;
    admin_write *w = (admin_write *)req;
    if (w->close_after && status != UV_ECANCELED)
        conn_close_admin(w->close_after);
    free(w->text);
    free(w);
}

/* uv_close would cancel a queued write: a last answer closes from its
 * write callback instead. */
static void send_json_then(admin_conn *c, json_t *resp, bool close_after)
{
    char *text = json_dumps(resp, JSON_COMPACT);
    if (!text)
        return;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return;
    }
    line[n] = '\n';
    line[n + 1] = 0;
    admin_write *w = calloc(1, sizeof(*w));
    if (!w) {
        free(line);
        return;
    }
    w->text = line;
    w->close_after = close_after ? c : NULL;
    uv_buf_t buf = uv_buf_init(line, (unsigned)(n + 1));
    if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &buf, 1, on_written) != 0) {
        free(line);
        free(w);
        if (close_after)
            conn_close_admin(c);
    }
}

static void send_json(admin_conn *c, json_t *resp)
{
    send_json_then(c, resp, false);
}

static json_t *error_response(int code, const char *text)
{
    return json_pack("{s:i, s:s}", "exit", code, "text", text);
}

static void handle_line(admin_conn *c, const char *line, size_t len)
{
    json_error_t jerr;
    json_t *req = json_loadb(line, len, 0, &jerr);
    json_t *resp;
    if (!req || !json_is_object(req)) {
        char text[300];
        snprintf(text, sizeof(text), "bad admin request: %s", req ? "not an object" : jerr.text);
        resp = error_response(2, text);
    } else {
        resp = admin_execute(c->a, req);
    }
    json_decref(req);
    if (resp) {
        send_json(c, resp);
        json_decref(resp);
    }
    if (c->a->retired.n)
        admin_schedule_sweep(c->a);
}

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf)
{
    admin_conn *c = hd->data;
    if (byte_buf_reserve(&c->in, suggested) != 0) {
        *buf = uv_buf_init(NULL, 0);
        return;
    }
    *buf = uv_buf_init((char *)c->in.data + c->in.len, (unsigned)(c->in.cap - c->in.len));
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    admin_conn *c = stream->data;
    if (nread < 0) {
        conn_close_admin(c);
        return;
    }
    c->in.len += (size_t)nread;
    size_t start = 0;
    for (size_t i = 0; i < c->in.len; i++) {
        if (c->in.data[i] != '\n')
            continue;
        if (i > start)
            handle_line(c, (const char *)c->in.data + start, i - start);
        start = i + 1;
    }
    if (start > 0) {
        memmove(c->in.data, c->in.data + start, c->in.len - start);
        c->in.len -= start;
    }
    if (c->in.len > ADMIN_LINE_MAX) {
        json_t *resp = error_response(2, "admin request line too long");
        uv_read_stop(stream);
        c->in.len = 0;
        send_json_then(c, resp, true);
        json_decref(resp);
    }
}

/* File mode keeps other users out; the uid check also covers a socket made
 * reachable by a mistaken chmod or a permissive directory. root may always
 * talk to the daemon. */
static bool peer_allowed(admin_conn *c, char *why, size_t whylen)
{
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0)
        return false;
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        snprintf(why, whylen, "cannot read peer credentials: %s", strerror(errno));
        return false;
    }
    if (cred.uid == geteuid() || cred.uid == 0)
        return true;
    snprintf(why, whylen, "refused: uid %u may not use the admin socket of uid %u",
             (unsigned)cred.uid, (unsigned)geteuid());
    return false;
}

static void on_connection(uv_stream_t *server, int status)
{
    admin_ctx *a = server->data;
    admin_state *st = state_of(a);
    if (status < 0 || st->stopping)
        return;
    admin_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return;
    c->a = a;
    uv_pipe_init(a->loop, &c->pipe, 0);
    c->pipe.data = c;
    st->open_handles++;
    c->next = st->conns;
    st->conns = c;
    if (uv_accept(server, (uv_stream_t *)&c->pipe) != 0) {
        conn_close_admin(c);
        return;
    }
    char why[160];
    if (!peer_allowed(c, why, sizeof(why))) {
        HLOG_WARN(a->host, "admin socket: %s", why);
        json_t *resp = error_response(2, why);
        send_json_then(c, resp, true);
        json_decref(resp);
        return;
    }
    uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
}

/* A path that exists is ours to replace only if it is a socket nobody
 * accepts on (left behind by a daemon that died). */
static int clear_stale(rmq_host *h, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "admin_socket %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "admin_socket %s exists and is not a socket; refusing to replace it",
                 path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "admin_socket: socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    int e = errno;
    close(fd);
    if (rc == 0) {
        snprintf(err, errlen,
                 "admin_socket %s is in use by another process (is a daemon already "
                 "running with this configuration?)",
                 path);
        return -1;
    }
    if (e != ECONNREFUSED) {
        snprintf(err, errlen, "admin_socket %s: cannot tell whether it is stale: %s", path,
                 strerror(e));
        return -1;
    }
    HLOG_INFO(h, "removing stale admin socket %s", path);
    if (unlink(path) != 0) {
        snprintf(err, errlen, "cannot remove stale admin socket %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int open_socket(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(err, errlen, "admin_socket path %s is longer than %zu bytes", path,
                 sizeof(sa.sun_path) - 1);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "admin_socket: socket: %s", strerror(errno));
        return -1;
    }
    /* On Linux the inode bind creates takes the socket's mode: 0600 from the
     * first instant, no window where another user could connect. */
    fchmod(fd, 0600);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
        listen(fd, 16) != 0) {
        snprintf(err, errlen, "admin_socket %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void ensure_parent_dir(const char *path)
{
    char dir[CONF_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        mkdir(dir, 0700);
    }
}

static void on_sweep(uv_timer_t *t)
{
    admin_ctx *a = t->data;
    if (plugin_retired_sweep(a->host, &a->retired, NULL, 0) == 0)
        uv_timer_stop(t);
}

void admin_schedule_sweep(admin_ctx *a)
{
    if (a->sweep_init && !uv_is_active((uv_handle_t *)&a->sweep))
        uv_timer_start(&a->sweep, on_sweep, 100, 100);
}

/* Runs on the first turn of the control loop, i.e. after host_start
 * returned: the servers listen and listen.addrs is written. */
static void on_ready(uv_timer_t *t)
{
    admin_ctx *a = t->data;
    if (!a->host->started)
        return;
    int rc = readiness_notify("READY=1");
    if (rc < 0)
        HLOG_WARN(a->host, "cannot notify the service manager: %s", strerror(-rc));
    else if (rc == 0)
        HLOG_DEBUG(a->host, "notified the service manager: READY=1");
}

static void init_handle(admin_state *st, uv_handle_t *hd)
{
    hd->data = &st->ctx;
    st->open_handles++;
}

int admin_server_start(rmq_host *h, uv_loop_t *loop, char *err, size_t errlen)
{
    admin_state *st = calloc(1, sizeof(*st));
    if (!st) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    admin_ctx *a = &st->ctx;
    a->host = h;
    a->loop = loop;
    snprintf(a->path, sizeof(a->path), "%s", h->conf.admin_socket);
    h->admin = a;
    if (a->path[0]) {
        ensure_parent_dir(a->path);
        if (clear_stale(h, a->path, err, errlen) != 0)
            goto fail;
        int fd = open_socket(a->path, err, errlen);
        if (fd < 0)
            goto fail;
        uv_pipe_init(loop, &a->listener, 0);
        init_handle(st, (uv_handle_t *)&a->listener);
        if (uv_pipe_open(&a->listener, fd) != 0 ||
            uv_listen((uv_stream_t *)&a->listener, 16, on_connection) != 0) {
            snprintf(err, errlen, "admin_socket %s: cannot listen", a->path);
            unlink(a->path);
            a->path[0] = 0;
            goto fail;
        }
        a->listening = true;
    }
    uv_timer_init(loop, &a->sweep);
    init_handle(st, (uv_handle_t *)&a->sweep);
    a->sweep_init = true;
    uv_timer_init(loop, &a->ready);
    init_handle(st, (uv_handle_t *)&a->ready);
    a->ready_init = true;
    uv_timer_start(&a->ready, on_ready, 0, 0);
    if (h->conf.metrics_listen[0] &&
        metrics_http_start(h, loop, h->conf.metrics_listen, admin_stats_prometheus, &a->metrics,
                           err, errlen) != 0)
        goto fail;
    HLOG_INFO(h, "admin socket %s", a->path[0] ? a->path : "(none)");
    return 0;
fail:
    admin_server_stop(h);
    return -1;
}

void admin_server_stop(rmq_host *h)
{
    admin_ctx *a = h->admin;
    if (!a)
        return;
    admin_state *st = state_of(a);
    h->admin = NULL;
    st->stopping = true;
    metrics_http_stop(a->metrics);
    a->metrics = NULL;
    while (st->conns)
        conn_close_admin(st->conns);
    if (a->listener.data && !uv_is_closing((uv_handle_t *)&a->listener))
        uv_close((uv_handle_t *)&a->listener, on_ctx_handle_closed);
    if (a->listening)
        unlink(a->path);
    if (a->sweep_init)
        uv_close((uv_handle_t *)&a->sweep, on_ctx_handle_closed);
    if (a->ready_init)
        uv_close((uv_handle_t *)&a->ready, on_ctx_handle_closed);
    plugin_retired_drain(h, &a->retired);
    maybe_free(st);
}

int host_reload_config(rmq_host *h, char *msg, size_t msglen)
{
    if (!h->admin) {
        snprintf(msg, msglen, "the admin channel is not running");
        return -1;
    }
    int rc = admin_reload_config(h->admin, msg, msglen);
    if (((admin_ctx *)h->admin)->retired.n)
        admin_schedule_sweep(h->admin);
    return rc;
}
