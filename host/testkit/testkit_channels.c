/* testkit_channels.c — the kit's client connections to its in-process
 * server: requests are encoded and written as a client would, answers read
 * back by opaque, so dispatch is the daemon's own. Also the channel events
 * a test raises. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testkit_internal.h"

static tk_channel *channel_of(rmq_testkit *kit, int ch)
{
    if (!kit || !kit->started || ch < 1 || (size_t)ch > kit->nchannels)
        return NULL;
    tk_channel *c = &kit->channels[ch - 1];
    return c->fd >= 0 ? c : NULL;
}

void tk_channel_learned(rmq_testkit *kit, rmq_channel_id id, const char *peer)
{
    const char *colon = strrchr(peer, ':');
    int port = colon ? atoi(colon + 1) : -1;
    pthread_mutex_lock(&kit->mu);
    for (size_t i = 0; i < kit->nchannels; i++)
        if (kit->channels[i].local_port == port && !kit->channels[i].id)
            kit->channels[i].id = id;
    pthread_cond_broadcast(&kit->cv);
    pthread_mutex_unlock(&kit->mu);
}

int rmq_tk_open_channel(rmq_testkit *kit)
{
    if (!kit || !kit->started)
        return RMQ_EINVAL;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return RMQ_EIO;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)kit->port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* Bind first: the local port must be on record before connect(), or the
     * CONNECT event naming it could arrive before the channel is. */
    struct sockaddr_in local = {.sin_family = AF_INET};
    local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t ll = sizeof(local);
    if (bind(fd, (struct sockaddr *)&local, sizeof(local)) != 0 ||
        getsockname(fd, (struct sockaddr *)&local, &ll) != 0) {
        close(fd);
        return RMQ_EIO;
    }
    pthread_mutex_lock(&kit->mu);
    tk_channel *nc = realloc(kit->channels, (kit->nchannels + 1) * sizeof(*nc));
    if (!nc) {
        pthread_mutex_unlock(&kit->mu);
        close(fd);
        return RMQ_ENOMEM;
    }
    kit->channels = nc;
    tk_channel *c = &nc[kit->nchannels++];
    memset(c, 0, sizeof(*c));
    rmq_frame_reader_init(&c->rd, (size_t)kit->host.conf.max_frame_bytes);
    c->fd = fd;
    c->local_port = ntohs(local.sin_port);
    int handle = (int)kit->nchannels;
    pthread_mutex_unlock(&kit->mu);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        pthread_mutex_lock(&kit->mu);
        kit->channels[handle - 1].fd = -1;
        pthread_mutex_unlock(&kit->mu);
        close(fd);
        return RMQ_ECONNREFUSED;
    }
    pthread_mutex_lock(&kit->mu);
    /* CONNECT reaches listeners on the server's event thread: wait for it so
     * the test can name the channel (and a plugin has seen it) at once. */
    uint64_t deadline = host_now_ms() + 5000;
    while (!kit->channels[handle - 1].id && host_now_ms() < deadline) {
        pthread_mutex_unlock(&kit->mu);
        usleep(200);
        pthread_mutex_lock(&kit->mu);
    }
    pthread_mutex_unlock(&kit->mu);
    return handle;
}

rmq_channel_id rmq_tk_channel_id(rmq_testkit *kit, int ch)
{
    if (!kit || ch < 1 || (size_t)ch > kit->nchannels)
        return 0;
    pthread_mutex_lock(&kit->mu);
    rmq_channel_id id = kit->channels[ch - 1].id;
    pthread_mutex_unlock(&kit->mu);
    return id;
}

static void drop_stash(tk_channel *c)
{
    while (c->stash) {
        tk_frame *n = c->stash->next;
        rmq_cmd_free(c->stash->cmd);
        free(c->stash);
        c->stash = n;
    }
    rmq_frame_reader_free(&c->rd);
}

int rmq_tk_close_channel(rmq_testkit *kit, int ch)
{
    tk_channel *c = channel_of(kit, ch);
    if (!c)
        return RMQ_ENOENT;
    close(c->fd);
    c->fd = -1;
    drop_stash(c);
    return 0;
}

void tk_channels_close_all(rmq_testkit *kit)
{
    for (size_t i = 0; i < kit->nchannels; i++) {
        if (kit->channels[i].fd >= 0)
            close(kit->channels[i].fd);
        kit->channels[i].fd = -1;
        drop_stash(&kit->channels[i]);
    }
    free(kit->channels);
    kit->channels = NULL;
    kit->nchannels = 0;
}

int rmq_tk_raise_event(rmq_testkit *kit, int ch, rmq_channel_event ev)
{
    tk_channel *c = channel_of(kit, ch);
    server *s = kit ? host_server(&kit->host, TK_SERVER) : NULL;
    if (!c || !s || !c->id)
        return RMQ_ENOENT;
    if (ev != RMQ_CHANNEL_IDLE && ev != RMQ_CHANNEL_EXCEPTION)
        return RMQ_EINVAL; /* CONNECT and CLOSE come with opening and closing */
    char peer[64];
    snprintf(peer, sizeof(peer), "127.0.0.1:%d", c->local_port);
    event_thread_post(&s->events, ev, c->id, peer);
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return RMQ_EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int rmq_tk_send_frame(rmq_testkit *kit, int ch, const void *frame, size_t len)
{
    tk_channel *c = channel_of(kit, ch);
    if (!c || !frame)
        return RMQ_EINVAL;
    return write_all(c->fd, frame, len);
}

int rmq_tk_send(rmq_testkit *kit, int ch, rmq_cmd *req, int32_t *opaque)
{
    tk_channel *c = channel_of(kit, ch);
    if (!c || !req) {
        rmq_cmd_free(req);
        return RMQ_EINVAL;
    }
    req->opaque = ++kit->next_opaque;
    if (opaque)
        *opaque = req->opaque;
    size_t n = rmq_cmd_encoded_size_bound(req);
    uint8_t *buf = n ? malloc(n) : NULL;
    size_t w = buf ? rmq_cmd_encode(req, buf, n) : 0;
    rmq_cmd_free(req);
    int rc = w ? write_all(c->fd, buf, w) : RMQ_EINVAL;
    free(buf);
    return rc;
}

bool rmq_tk_channel_closed_by_host(rmq_testkit *kit, int ch, int timeout_ms)
{
    tk_channel *c = channel_of(kit, ch);
    if (!c)
        return false;
    uint64_t deadline = rmq_frame_reader_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        /* answers still in flight are kept for rmq_tk_wait_answer */
        rmq_cmd *cmd = rmq_frame_reader_next(&c->rd, c->fd, deadline);
        if (cmd) {
            tk_frame *f = malloc(sizeof(*f));
            if (!f) {
                rmq_cmd_free(cmd);
                continue;
            }
            f->cmd = cmd;
            f->next = c->stash;
            c->stash = f;
            continue;
        }
        if (rmq_frame_reader_now_ms() >= deadline)
            break;
        char b;
        ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return true;
    }
    char b;
    ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

rmq_cmd *rmq_tk_wait_answer(rmq_testkit *kit, int ch, int32_t opaque, int timeout_ms)
{
    tk_channel *c = channel_of(kit, ch);
    if (!c)
        return NULL;
    for (tk_frame **pp = &c->stash; *pp; pp = &(*pp)->next) {
        if ((*pp)->cmd->opaque == opaque) {
            tk_frame *f = *pp;
            *pp = f->next;
            rmq_cmd *cmd = f->cmd;
            free(f);
            return cmd;
        }
    }
    uint64_t deadline = rmq_frame_reader_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        rmq_cmd *cmd = rmq_frame_reader_next(&c->rd, c->fd, deadline);
        if (!cmd)
            return NULL;
        if (cmd->opaque == opaque && (cmd->flag & RMQ_FLAG_RESPONSE))
            return cmd;
        tk_frame *f = malloc(sizeof(*f));
        if (!f) {
            rmq_cmd_free(cmd);
            continue;
        }
        f->cmd = cmd;
        f->next = NULL;
        tk_frame **pp = &c->stash;
        while (*pp)
            pp = &(*pp)->next;
        *pp = f;
    }
}

rmq_cmd *rmq_tk_call(rmq_testkit *kit, int ch, rmq_cmd *req, int timeout_ms)
{
    if (!req)
        return NULL;
    bool oneway = (req->flag & RMQ_FLAG_ONEWAY) != 0;
    int32_t opaque;
    if (rmq_tk_send(kit, ch, req, &opaque) != 0)
        return NULL;
    return oneway ? NULL : rmq_tk_wait_answer(kit, ch, opaque, timeout_ms);
}
