/* ha_slave.c — the slave side of replication (protocol-ha.md §2.5): one
 * thread connects to the master's HA address (haMasterAddress, else the
 * haServerAddr the NameServer returned to our registration), reports its
 * commit-log end at once and then every haSendHeartbeatInterval, appends
 * every transfer frame at its log end and acknowledges the new end.
 * Unlike Java it waits 5 s after a close too (no reconnect storm), notices
 * a silent master, and halts — loudly — when the master's bytes would not
 * continue its own log (divergent history or a different
 * mappedFileSizeCommitLog) instead of mixing two histories. A demoted
 * master first compares its log with the master's (ha_rejoin.c). */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ha.h"
#include "ha_broker_info.h"

#define RETRY_MS 5000

struct ha_slave {
    store_plugin *sp;
    pthread_t th;
    int stop_fd;
    _Atomic bool stopping;
    pthread_mutex_t mu; /* info */
    ha_slave_info info;
    ha_rejoin rj; /* slave thread only */
};

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Sleep up to ms; false when stopping. */
static bool nap(struct ha_slave *s, int ms)
{
    struct pollfd pf = {.fd = s->stop_fd, .events = POLLIN};
    poll(&pf, 1, ms);
    return !atomic_load(&s->stopping);
}

/* The master's HA address: the setting (Java: if at least 6 characters),
 * else what the NameServer told broker-client-mgr. */
static bool master_address(struct ha_slave *s, char *out, size_t cap)
{
    store_plugin *sp = s->sp;
    if (strlen(sp->set.ha_master_address) >= 6) {
        snprintf(out, cap, "%s", sp->set.ha_master_address);
        return true;
    }
    char master[128] = "", ha[128] = "";
    if (broker_info_master_addrs(sp, master, sizeof master, ha, sizeof ha) != 0 || strlen(ha) < 6)
        return false;
    snprintf(out, cap, "%s", ha);
    return true;
}

static int dial(const char *addr)
{
    char host[128];
    snprintf(host, sizeof host, "%s", addr);
    char *colon = strrchr(host, ':');
    if (!colon)
        return -1;
    *colon = 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || !res)
        return -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        struct timeval tv = {.tv_sec = 5};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

static bool report(int fd, int64_t v)
{
    uint8_t b[8];
    ha_put_be64(b, v);
    size_t off = 0;
    while (off < sizeof b) {
        ssize_t w = send(fd, b + off, sizeof b - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        off += (size_t)w;
    }
    return true;
}

static void set_halted(struct ha_slave *s, const char *why)
{
    pthread_mutex_lock(&s->mu);
    s->info.stopped = true;
    snprintf(s->info.why, sizeof s->info.why, "%s", why);
    pthread_mutex_unlock(&s->mu);
    s->sp->api->log(s->sp->ctx, RMQ_LOG_ERROR, "HA: replication STOPPED: %s", why);
}

/* The rejoin's progress for `rmqhostctl ha` (slave thread). */
static void publish_rejoin(struct ha_slave *s, bool live)
{
    pthread_mutex_lock(&s->mu);
    s->info.rejoining = s->rj.active;
    s->info.rejoin_connected = s->rj.active && live;
    s->info.rejoin_from = s->rj.from;
    s->info.rejoin_pos = s->rj.pos;
    s->info.rejoin_end = s->rj.end;
    snprintf(s->info.set_aside, sizeof s->info.set_aside, "%s", s->rj.set_aside);
    pthread_mutex_unlock(&s->mu);
}

/* The master closed the connection (or it broke) during a comparison. */
static void rejoin_closed(struct ha_slave *s, bool kept_alive)
{
    if (!s->rj.active || s->rj.compared || !kept_alive)
        return;
    char why[512];
    if (ha_rejoin_master_closed(s->sp, &s->rj, why, sizeof why) == HA_REJOIN_FAILED)
        set_halted(s, why);
}

/* One connection's life; returns when it closes. */
static void run_connection(struct ha_slave *s, int fd, ha_frame_reader *rd)
{
    store_plugin *sp = s->sp;
    store_engine *e = sp->engine;
    /* a demoted master first compares its log with the master's */
    int64_t reported = s->rj.active ? ha_rejoin_begin(sp, &s->rj) : store_ha_appended(e);
    publish_rejoin(s, true);
    uint64_t last_write = mono_ms(), last_read = mono_ms();
    bool kept_alive = false; /* a keep-alive report went out */
    /* report at once (Java waits haSendHeartbeatInterval; a Java master
     * takes whatever arrives first as the start) */
    if (!report(fd, reported))
        return;
    ha_frame_reader_reset(rd);
    while (!atomic_load(&s->stopping)) {
        struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = s->stop_fd, .events = POLLIN}};
        int rc = poll(pf, 2, 100);
        uint64_t now = mono_ms();
        if (rc > 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            size_t room;
            uint8_t *dst = ha_frame_reader_space(rd, &room);
            ssize_t n = room ? recv(fd, dst, room, MSG_DONTWAIT) : 0;
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                rejoin_closed(s, kept_alive);
                return;
            }
            if (n > 0) {
                ha_frame_reader_added(rd, (size_t)n);
                last_read = now;
            }
            bool appended = false;
            for (;;) {
                int64_t phys;
                const uint8_t *body;
                int32_t len;
                ha_frame_rc fr = ha_frame_next(rd, HA_MAX_BODY, &phys, &body, &len);
                if (fr == HA_FRAME_MORE)
                    break;
                if (fr == HA_FRAME_BAD) {
                    sp->api->log(sp->ctx, RMQ_LOG_WARN, "HA: malformed frame from the master");
                    store_ha_dispatch(e);
                    return;
                }
                if (s->rj.active) {
                    int32_t used = 0;
                    char why[512];
                    ha_rejoin_rc jr =
                        ha_rejoin_frame(sp, &s->rj, phys, body, len, &used, why, sizeof why);
                    publish_rejoin(s, jr == HA_REJOIN_MORE);
                    if (jr == HA_REJOIN_FAILED)
                        set_halted(s, why);
                    if (jr == HA_REJOIN_FAILED || jr == HA_REJOIN_RECONNECT)
                        return;
                    if (jr == HA_REJOIN_MORE) {
                        ha_frame_consume(rd);
                        continue;
                    }
                    phys += used, body += used, len -= used;
                }
                int arc = store_ha_append(e, phys, body, len);
                if (arc == -EPROTO || arc == -EXDEV) {
                    char why[256];
                    int64_t mine = store_ha_appended(e);
                    if (arc == -EXDEV)
                        snprintf(why, sizeof why,
                                 "the master's frame at %lld (%d bytes) does not fit this "
                                 "slave's commit-log files: mappedFileSizeCommitLog (%lld) must "
                                 "equal the master's",
                                 (long long)phys, len,
                                 (long long)sp->set.engine.commitlog_file_size);
                    else
                        snprintf(why, sizeof why,
                                 "the master sends offset %lld but this slave's log ends at %lld: "
                                 "the two logs diverge (master restored from an older disk?); "
                                 "wipe this slave's store or promote it",
                                 (long long)phys, (long long)mine);
                    set_halted(s, why);
                    store_ha_dispatch(e);
                    return;
                }
                if (arc != 0) {
                    sp->api->log(sp->ctx, RMQ_LOG_ERROR, "HA: append at %lld failed: %s",
                                 (long long)phys, strerror(-arc));
                    store_ha_dispatch(e);
                    return;
                }
                ha_frame_consume(rd);
                appended = true;
            }
            /* ack what arrived (page cache, as Java), then dispatch it */
            int64_t mine = s->rj.active ? s->rj.pos : store_ha_appended(e);
            if (mine > reported) {
                if (!report(fd, mine)) {
                    store_ha_dispatch(e);
                    return;
                }
                reported = mine;
                last_write = now;
            }
            if (appended)
                store_ha_dispatch(e);
        }
        if (now - last_write >= (uint64_t)sp->set.ha_heartbeat_ms) {
            if (!report(fd, reported)) {
                rejoin_closed(s, kept_alive);
                return;
            }
            last_write = now;
            kept_alive = true;
        }
        if (now - last_read > (uint64_t)sp->set.ha_housekeeping_ms) {
            sp->api->log(sp->ctx, RMQ_LOG_WARN, "HA: master silent for %lld ms, reconnecting",
                         (long long)(now - last_read));
            return;
        }
    }
}

static void *slave_main(void *arg)
{
    struct ha_slave *s = arg;
    store_plugin *sp = s->sp;
    ha_frame_reader rd;
    if (ha_frame_reader_init(&rd, 4u << 20) != 0)
        return NULL;
    char addr[128] = "", logged[128] = "";
    while (!atomic_load(&s->stopping)) {
        pthread_mutex_lock(&s->mu);
        bool halted = s->info.stopped;
        pthread_mutex_unlock(&s->mu);
        if (halted || !master_address(s, addr, sizeof addr)) {
            if (!nap(s, RETRY_MS))
                break;
            continue;
        }
        int fd = dial(addr);
        if (fd < 0) {
            if (strcmp(logged, addr) != 0)
                sp->api->log(sp->ctx, RMQ_LOG_WARN, "HA: cannot connect to master %s, retrying",
                             addr);
            snprintf(logged, sizeof logged, "%s", addr);
            if (!nap(s, RETRY_MS))
                break;
            continue;
        }
        logged[0] = 0;
        pthread_mutex_lock(&s->mu);
        snprintf(s->info.master, sizeof s->info.master, "%s", addr);
        s->info.connected = true;
        s->info.reconnects++;
        pthread_mutex_unlock(&s->mu);
        sp->api->log(sp->ctx, RMQ_LOG_INFO, "HA: connected to master %s, log end %lld", addr,
                     (long long)store_ha_max_offset(sp->engine));
        run_connection(s, fd, &rd);
        close(fd);
        publish_rejoin(s, false);
        pthread_mutex_lock(&s->mu);
        s->info.connected = false;
        pthread_mutex_unlock(&s->mu);
        if (!atomic_load(&s->stopping))
            sp->api->log(sp->ctx, RMQ_LOG_INFO, "HA: connection to master %s closed", addr);
        if (!nap(s, RETRY_MS))
            break;
    }
    ha_frame_reader_free(&rd);
    return NULL;
}

int ha_slave_start(store_plugin *sp)
{
    struct ha_slave *s = calloc(1, sizeof *s);
    if (!s)
        return RMQ_ENOMEM;
    s->sp = sp;
    ha_rejoin_load(sp, &s->rj);
    pthread_mutex_init(&s->mu, NULL);
    publish_rejoin(s, false);
    s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->stop_fd < 0 || pthread_create(&s->th, NULL, slave_main, s) != 0) {
        if (s->stop_fd >= 0)
            close(s->stop_fd);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return RMQ_ENOMEM;
    }
    sp->ha_s = s;
    return 0;
}

void ha_slave_stop(store_plugin *sp)
{
    struct ha_slave *s = sp->ha_s;
    if (!s)
        return;
    atomic_store(&s->stopping, true);
    uint64_t one = 1;
    if (write(s->stop_fd, &one, sizeof one) < 0) {
        /* already signalled */
    }
    pthread_join(s->th, NULL);
    close(s->stop_fd);
    pthread_mutex_destroy(&s->mu);
    sp->ha_s = NULL;
    free(s);
}

void ha_slave_info_get(store_plugin *sp, ha_slave_info *out)
{
    memset(out, 0, sizeof *out);
    struct ha_slave *s = sp->ha_s;
    if (s) {
        pthread_mutex_lock(&s->mu);
        *out = s->info;
        pthread_mutex_unlock(&s->mu);
    }
    out->max_offset = sp->engine ? store_ha_max_offset(sp->engine) : 0;
}
