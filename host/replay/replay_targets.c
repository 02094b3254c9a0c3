/* replay_targets.c — the two kinds of replay target. A server at an address
 * gets one TCP connection per channel and answers are read back by opaque;
 * in-process plugins get the same through librmqhost-testkit, whose
 * dispatch is the daemon's. */
#include "replay_targets.h"

#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rmqhost/testkit.h>

#include "frame_reader.h"

typedef struct frame_stash {
    rmq_cmd *cmd;
    struct frame_stash *next;
} frame_stash;

typedef struct addr_channel {
    int fd;
    rmq_frame_reader rd;
    frame_stash *stash;
} addr_channel;

struct replay_target {
    rmq_testkit *kit; /* in-process plugins, or */
    char host[256];   /* a server at host:port */
    char port[16];
    addr_channel ch[REPLAY_MAX_CHANNELS + 1];
    int kit_ch[REPLAY_MAX_CHANNELS + 1];
};

replay_target *replay_target_addr(const char *addr, char *err, size_t errlen)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || !colon[1]) {
        snprintf(err, errlen, "address '%s' is not HOST:PORT", addr);
        return NULL;
    }
    replay_target *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t hl = (size_t)(colon - addr);
    if (addr[0] == '[' && hl > 2 && addr[hl - 1] == ']')
        snprintf(t->host, sizeof(t->host), "%.*s", (int)(hl - 2), addr + 1);
    else
        snprintf(t->host, sizeof(t->host), "%.*s", (int)hl, addr);
    snprintf(t->port, sizeof(t->port), "%s", colon + 1);
    for (int i = 0; i <= REPLAY_MAX_CHANNELS; i++) {
        t->ch[i].fd = -1;
        rmq_frame_reader_init(&t->ch[i].rd, RMQ_DEFAULT_MAX_FRAME_BYTES);
    }
    return t;
}

replay_target *replay_target_kit(size_t n, const char *const *names, const char *const *paths,
                                 const char *const *const *settings, char *err, size_t errlen)
{
    replay_target *t = calloc(1, sizeof(*t));
    rmq_testkit *kit = t ? rmq_tk_new() : NULL;
    if (!kit) {
        free(t);
        snprintf(err, errlen, "cannot create the test kit (out of memory or no temp directory)");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = rmq_tk_add_plugin(kit, names[i], paths[i], settings[i]);
        if (rc != 0) {
            snprintf(err, errlen, "plugin %s (%s): %s", names[i], paths[i], rmq_strerror(rc));
            rmq_tk_free(kit);
            free(t);
            return NULL;
        }
    }
    if (rmq_tk_start(kit, err, errlen) != 0) {
        rmq_tk_free(kit);
        free(t);
        return NULL;
    }
    t->kit = kit;
    return t;
}

static int addr_connect(replay_target *t)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    if (getaddrinfo(t->host, t->port, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

int replay_send(replay_target *t, int ch, const uint8_t *frame, size_t len)
{
    if (ch < 1 || ch > REPLAY_MAX_CHANNELS)
        return -1;
    if (t->kit) {
        if (!t->kit_ch[ch]) {
            int h = rmq_tk_open_channel(t->kit);
            if (h <= 0)
                return -1;
            t->kit_ch[ch] = h;
        }
        return rmq_tk_send_frame(t->kit, t->kit_ch[ch], frame, len) == 0 ? 0 : -1;
    }
    addr_channel *c = &t->ch[ch];
    if (c->fd < 0 && (c->fd = addr_connect(t)) < 0)
        return -1;
    while (len) {
        ssize_t w = send(c->fd, frame, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        frame += w;
        len -= (size_t)w;
    }
    return 0;
}

rmq_cmd *replay_answer(replay_target *t, int ch, int32_t opaque, int timeout_ms)
{
    if (ch < 1 || ch > REPLAY_MAX_CHANNELS)
        return NULL;
    if (t->kit)
        return t->kit_ch[ch] ? rmq_tk_wait_answer(t->kit, t->kit_ch[ch], opaque, timeout_ms) : NULL;
    addr_channel *c = &t->ch[ch];
    if (c->fd < 0)
        return NULL;
    for (frame_stash **pp = &c->stash; *pp; pp = &(*pp)->next) {
        if ((*pp)->cmd->opaque == opaque) {
            frame_stash *s = *pp;
            *pp = s->next;
            rmq_cmd *cmd = s->cmd;
            free(s);
            return cmd;
        }
    }
    uint64_t deadline = rmq_frame_reader_now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        rmq_cmd *cmd = rmq_frame_reader_next(&c->rd, c->fd, deadline);
        if (!cmd)
            return NULL;
        if ((cmd->flag & RMQ_FLAG_RESPONSE) && cmd->opaque == opaque)
            return cmd;
        /* server pushes (e.g. NOTIFY_CONSUMER_IDS_CHANGED) are not answers */
        if (!(cmd->flag & RMQ_FLAG_RESPONSE)) {
            rmq_cmd_free(cmd);
            continue;
        }
        frame_stash *s = malloc(sizeof(*s));
        if (!s) {
            rmq_cmd_free(cmd);
            continue;
        }
        s->cmd = cmd;
        s->next = c->stash;
        c->stash = s;
    }
}

void replay_answer_free(replay_target *t, rmq_cmd *c)
{
    if (t->kit)
        rmq_tk_cmd_free(c);
    else
        rmq_cmd_free(c);
}

void replay_target_close(replay_target *t)
{
    if (!t)
        return;
    if (t->kit)
        rmq_tk_free(t->kit);
    for (int i = 0; i <= REPLAY_MAX_CHANNELS; i++) {
        addr_channel *c = &t->ch[i];
        if (c->fd >= 0)
            close(c->fd);
        while (c->stash) {
            frame_stash *n = c->stash->next;
            rmq_cmd_free(c->stash->cmd);
            free(c->stash);
            c->stash = n;
        }
        rmq_frame_reader_free(&c->rd);
    }
    free(t);
}
