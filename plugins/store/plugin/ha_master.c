/* ha_master.c — the master side of replication (protocol-ha.md §2.2–§2.4,
 * §3): a listener on the HA port, one thread per connected slave that reads
 * its 8-byte offset reports and streams the commit log from the offset it
 * first reported in Java's frames (≤ haTransferBatchSize, never across a
 * file), with empty frames as heartbeats; and the SYNC_MASTER wait, whose
 * waiters complete as acknowledgements arrive (one ack answers every send
 * below it, like the SYNC_FLUSH group commit). Plain POSIX threads and
 * sockets: the HA port is no remoting protocol. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "ha.h"

/* commit log read ahead of a slave's stream (see store_ha_prefetch) */
#define HA_READAHEAD (16 * 1048576)

typedef struct ha_conn {
    struct ha_master *m;
    int fd;
    int wake_fd; /* eventfd: new log bytes, stop */
    _Atomic bool idle;
    pthread_t th;
    char peer[64];
    _Atomic int64_t ack;       /* last report; -1 none yet */
    _Atomic int64_t next;      /* next offset to send; -1 not chosen */
    _Atomic int64_t lag_since; /* wall ms since the slave is behind; 0 caught up */
    _Atomic bool done;
    _Atomic int64_t tell_end; /* divergent slave: one empty frame at our end, then nothing */
    /* figures (stats/metrics): when the last report came, and the
     * acknowledged bytes per second over the last window of >= 1 s */
    _Atomic int64_t ack_wall_ms, rate_bps;
    int64_t rate_t0, rate_a0; /* conn thread only */
    struct ha_conn *next_c;
} ha_conn;

typedef struct ha_waiter {
    int64_t end;
    uint64_t deadline_ms;
    void (*done)(void *ud, int code);
    void *ud;
    struct ha_waiter *next, *prev;
} ha_waiter;

struct ha_master {
    store_plugin *sp;
    int listen_fd;
    int stop_fd; /* eventfd */
    pthread_t acceptor;
    bool acceptor_started;
    _Atomic bool stopping;
    pthread_mutex_t mu; /* conns, waiters */
    ha_conn *conns;
    /* ordered by end, lowest first: an ack completes a prefix. Sends are
     * stored in offset order, so a new waiter goes last (with several I/O
     * threads, a few places before it) */
    ha_waiter *waiters, *waiters_tail;
    _Atomic int64_t push2slave; /* highest acknowledged offset (HAService push2SlaveMaxOffset) */
    _Atomic int reporting;      /* connections that reported at least once */
    _Atomic int sleepers;       /* connections with `idle` set: notify looks only then */
};

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void wake(int fd)
{
    uint64_t one = 1;
    if (write(fd, &one, sizeof one) < 0) {
        /* an eventfd at its maximum is awake already */
    }
}

static void drain(int fd)
{
    uint64_t v;
    if (read(fd, &v, sizeof v) < 0) {
        /* nothing pending */
    }
}

static void waiter_unlink(struct ha_master *m, ha_waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        m->waiters = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        m->waiters_tail = w->prev;
}

/* Complete every waiter the acks cover (a prefix of the list: an ack looks
 * at no other), or with `expire` also those whose deadline passed (the whole
 * list, every 100 ms). Answered in offset order. */
static void complete_waiters(struct ha_master *m, bool expire)
{
    int64_t acked = atomic_load(&m->push2slave);
    uint64_t now = expire ? mono_ms() : 0;
    bool all = atomic_load(&m->stopping);
    ha_waiter *ready = NULL, **last = &ready;
    pthread_mutex_lock(&m->mu);
    ha_waiter *w = m->waiters;
    while (w) {
        ha_waiter *nx = w->next;
        bool ok = w->end <= acked;
        if (!ok && !expire && !all)
            break;
        if (ok || all || now >= w->deadline_ms) {
            waiter_unlink(m, w);
            w->end = ok ? 0 : -1;
            w->next = NULL;
            *last = w;
            last = &w->next;
        }
        w = nx;
    }
    pthread_mutex_unlock(&m->mu);
    while (ready) {
        ha_waiter *w = ready;
        ready = w->next;
        w->done(w->ud, w->end == 0 ? 0 : RC_FLUSH_SLAVE_TIMEOUT);
        free(w);
    }
}

static bool send_all(int fd, const uint8_t *p, size_t n, struct ha_master *m)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            if (atomic_load(&m->stopping))
                return false;
            if (poll(&pf, 1, 1000) < 0 && errno != EINTR)
                return false;
            continue;
        }
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* One report value: the first chooses where to start (§2.4), all are acks. */
static void on_report(ha_conn *c, int64_t v)
{
    struct ha_master *m = c->m;
    store_plugin *sp = m->sp;
    int64_t max = store_ha_max_offset(sp->engine);
    bool first = atomic_load(&c->ack) < 0;
    atomic_store(&c->ack, v);
    if (first) {
        atomic_fetch_add(&m->reporting, 1);
        int64_t fs = sp->set.engine.commitlog_file_size;
        int64_t start = v == 0 ? max - max % fs : v;
        if (v > max) {
            /* its log is longer than ours: streaming would mix two histories
             * (Java accepts it and diverges silently, protocol-ha.md §4.5) */
            sp->api->log(sp->ctx, RMQ_LOG_ERROR,
                         "HA slave %s reports offset %lld beyond this master's log end %lld: its "
                         "data diverges from ours; not replicating to it (wipe its store or "
                         "make it the master)",
                         c->peer, (long long)v, (long long)max);
            start = -2;
            atomic_store(&c->tell_end, max);
        } else if (v != 0 && v < store_ha_min_offset(sp->engine)) {
            sp->api->log(sp->ctx, RMQ_LOG_ERROR,
                         "HA slave %s reports offset %lld below this master's first commit-log "
                         "byte %lld: it cannot catch up (wipe its store)",
                         c->peer, (long long)v, (long long)store_ha_min_offset(sp->engine));
        }
        atomic_store(&c->next, start);
        sp->api->log(sp->ctx, RMQ_LOG_INFO, "HA slave %s: first report %lld, streaming from %lld",
                     c->peer, (long long)v, (long long)start);
        /* A slave that was this broker's master a moment ago (restarted on
         * its old conf.d, then demoted) registered as brokerId 0 and then 1
         * from one address, and the NameServer dropped our brokerId 0 entry
         * with its own (Java's rule): without a registration now the route
         * would name no master until our next periodic one (up to
         * registerNameServerPeriod). One extra REGISTER_BROKER per slave
         * connection costs nothing otherwise. */
        ha_register_now(sp);
    }
    int64_t now = (int64_t)wall_ms();
    atomic_store(&c->ack_wall_ms, now);
    if (first || v < c->rate_a0) {
        c->rate_t0 = now;
        c->rate_a0 = v;
    } else if (now - c->rate_t0 >= 1000) {
        atomic_store(&c->rate_bps, (v - c->rate_a0) * 1000 / (now - c->rate_t0));
        c->rate_t0 = now;
        c->rate_a0 = v;
    }
    /* an ack beyond our end acknowledges nothing of ours (§3.1 trap) */
    if (v <= max) {
        int64_t cur = atomic_load(&m->push2slave);
        while (v > cur && !atomic_compare_exchange_weak(&m->push2slave, &cur, v)) {
        }
        complete_waiters(m, false);
    }
    if (v >= max)
        atomic_store(&c->lag_since, 0);
    else if (atomic_load(&c->lag_since) == 0)
        atomic_store(&c->lag_since, (int64_t)wall_ms());
}

static void *conn_main(void *arg)
{
    ha_conn *c = arg;
    struct ha_master *m = c->m;
    store_plugin *sp = m->sp;
    size_t batch = (size_t)sp->set.ha_batch;
    if (batch > HA_MAX_BODY)
        batch = HA_MAX_BODY;
    uint8_t *frame = malloc(HA_HEADER + batch);
    uint8_t rbuf[8192], rep[8];
    size_t rep_len = 0;
    uint64_t last_read = mono_ms(), last_write = mono_ms();
    bool below_logged = false;
    int64_t ra_end = -1; /* the commit log is being read ahead up to here */
    while (frame && !atomic_load(&m->stopping)) {
        /* reports: the last complete 8-byte group of what arrived (§2.2) */
        ssize_t n = recv(c->fd, rbuf, sizeof rbuf, MSG_DONTWAIT);
        if (n == 0)
            break;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            break;
        if (n > 0) {
            last_read = mono_ms();
            int64_t last = -1;
            for (ssize_t i = 0; i < n; i++) {
                rep[rep_len++] = rbuf[i];
                if (rep_len == 8) {
                    last = ha_get_be64(rep);
                    rep_len = 0;
                }
            }
            if (last >= 0)
                on_report(c, last);
            continue;
        }
        uint64_t now = mono_ms();
        if (now - last_read > (uint64_t)sp->set.ha_housekeeping_ms) {
            sp->api->log(sp->ctx, RMQ_LOG_WARN,
                         "HA slave %s silent for %lld ms: closing its connection", c->peer,
                         (long long)(now - last_read));
            break;
        }
        int64_t tell = atomic_exchange(&c->tell_end, -1);
        if (tell >= 0) {
            /* one empty frame at our end: an rmqhost slave sees that the logs
             * diverge and halts with that reason; a Java slave closes and
             * comes back (never accept-then-close ourselves, §2.5) */
            ha_put_be64(frame, tell);
            memset(frame + 8, 0, 4);
            if (!send_all(c->fd, frame, HA_HEADER, m))
                break;
            last_write = now;
        }
        int64_t next = atomic_load(&c->next);
        int64_t got = 0;
        if (next >= 0 && next + HA_READAHEAD / 2 >= ra_end) {
            int64_t from = next > ra_end ? next : ra_end;
            store_ha_prefetch(sp->engine, from, next + HA_READAHEAD - from);
            ra_end = next + HA_READAHEAD;
        }
        if (next >= 0) {
            got = store_ha_read(sp->engine, next, frame + HA_HEADER, (int64_t)batch);
            if (got == -ENOENT && !below_logged) {
                below_logged = true;
                sp->api->log(sp->ctx, RMQ_LOG_ERROR,
                             "HA slave %s needs offset %lld, deleted here: it stalls", c->peer,
                             (long long)next);
            }
            if (got < 0)
                got = 0;
        }
        bool heartbeat =
            next >= 0 && got == 0 && now - last_write > (uint64_t)sp->set.ha_heartbeat_ms;
        if (got > 0 || heartbeat) {
            ha_put_be64(frame, next);
            frame[8] = (uint8_t)(got >> 24);
            frame[9] = (uint8_t)(got >> 16);
            frame[10] = (uint8_t)(got >> 8);
            frame[11] = (uint8_t)got;
            if (!send_all(c->fd, frame, HA_HEADER + (size_t)got, m))
                break;
            atomic_store(&c->next, next + got);
            last_write = now;
            if (got > 0)
                continue;
        }
        /* idle: wait for a report, new log bytes or a heartbeat's time.
         * `idle` and `sleepers` are set before the log end is read again, and
         * an appender moves the end before it reads `sleepers` (both sides
         * fenced): either we see the new bytes or it sees us and wakes us. */
        atomic_fetch_add(&m->sleepers, 1);
        atomic_store(&c->idle, true);
        atomic_thread_fence(memory_order_seq_cst);
        int64_t again = atomic_load(&c->next);
        if (again >= 0 && again < store_ha_max_offset(sp->engine)) {
            atomic_store(&c->idle, false);
            atomic_fetch_sub(&m->sleepers, 1);
            continue;
        }
        struct pollfd pf[2] = {{.fd = c->fd, .events = POLLIN},
                               {.fd = c->wake_fd, .events = POLLIN}};
        int rc = poll(pf, 2, 100);
        atomic_store(&c->idle, false);
        atomic_fetch_sub(&m->sleepers, 1);
        if (rc > 0 && (pf[1].revents & POLLIN))
            drain(c->wake_fd);
        if (rc > 0 && (pf[0].revents & (POLLERR | POLLHUP | POLLNVAL)) && !(pf[0].revents & POLLIN))
            break;
    }
    free(frame);
    if (atomic_load(&c->ack) >= 0)
        atomic_fetch_sub(&m->reporting, 1);
    sp->api->log(sp->ctx, RMQ_LOG_INFO, "HA slave %s disconnected (acknowledged %lld)", c->peer,
                 (long long)atomic_load(&c->ack));
    shutdown(c->fd, SHUT_RDWR);
    atomic_store(&c->done, true);
    return NULL;
}

static void reap(struct ha_master *m, bool all)
{
    pthread_mutex_lock(&m->mu);
    ha_conn **pp = &m->conns, *dead = NULL;
    while (*pp) {
        ha_conn *c = *pp;
        if (all || atomic_load(&c->done)) {
            *pp = c->next_c;
            c->next_c = dead;
            dead = c;
        } else {
            pp = &c->next_c;
        }
    }
    pthread_mutex_unlock(&m->mu);
    while (dead) {
        ha_conn *c = dead;
        dead = c->next_c;
        shutdown(c->fd, SHUT_RDWR);
        wake(c->wake_fd);
        pthread_join(c->th, NULL);
        close(c->fd);
        close(c->wake_fd);
        free(c);
    }
}

static void *acceptor_main(void *arg)
{
    struct ha_master *m = arg;
    store_plugin *sp = m->sp;
    while (!atomic_load(&m->stopping)) {
        struct pollfd pf[2] = {{.fd = m->listen_fd, .events = POLLIN},
                               {.fd = m->stop_fd, .events = POLLIN}};
        int rc = poll(pf, m->listen_fd >= 0 ? 2 : 1, 100);
        (void)rc;
        complete_waiters(m, true); /* deadlines, in 100 ms steps */
        reap(m, false);
        if (m->listen_fd < 0 || !(pf[0].revents & POLLIN))
            continue;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(m->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ha_conn *c = calloc(1, sizeof *c);
        int wfd = c ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
        if (!c || wfd < 0) {
            /* keep no half-made slave: Java slaves reconnect at once after a
             * close, but this is allocation failure only */
            free(c);
            close(fd);
            continue;
        }
        c->m = m;
        c->fd = fd;
        c->wake_fd = wfd;
        atomic_init(&c->ack, -1);
        atomic_init(&c->next, -1);
        atomic_init(&c->tell_end, -1);
        char host[INET6_ADDRSTRLEN] = "?";
        int port = 0;
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a4->sin_addr, host, sizeof host);
            port = ntohs(a4->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof host);
            port = ntohs(a6->sin6_port);
        }
        snprintf(c->peer, sizeof c->peer, "%s:%d", host, port);
        if (pthread_create(&c->th, NULL, conn_main, c) != 0) {
            close(fd);
            close(wfd);
            free(c);
            continue;
        }
        pthread_mutex_lock(&m->mu);
        c->next_c = m->conns;
        m->conns = c;
        pthread_mutex_unlock(&m->mu);
        sp->api->log(sp->ctx, RMQ_LOG_INFO, "HA slave connected from %s", c->peer);
    }
    return NULL;
}

int ha_master_port(store_plugin *sp)
{
    char host[128] = "";
    int port = 0;
    if (sp->api->server_address(sp->ctx, host, sizeof host, &port) != 0)
        port = 10911;
    return sp->set.ha_listen_port > 0 ? sp->set.ha_listen_port : port + 1;
}

int ha_master_start(store_plugin *sp)
{
    struct ha_master *m = calloc(1, sizeof *m);
    if (!m)
        return RMQ_ENOMEM;
    m->sp = sp;
    m->listen_fd = -1;
    pthread_mutex_init(&m->mu, NULL);
    m->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int ha_port = ha_master_port(sp);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)ha_port)};
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 50) != 0) {
        sp->api->log(sp->ctx, RMQ_LOG_WARN,
                     "HA port %d: %s — slaves cannot replicate from this broker (set "
                     "haListenPort to a free port)",
                     ha_port, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    } else {
        sp->api->log(sp->ctx, RMQ_LOG_INFO, "HA: listening for slaves on port %d", ha_port);
    }
    m->listen_fd = fd;
    if (m->stop_fd < 0 || pthread_create(&m->acceptor, NULL, acceptor_main, m) != 0) {
        if (fd >= 0)
            close(fd);
        if (m->stop_fd >= 0)
            close(m->stop_fd);
        pthread_mutex_destroy(&m->mu);
        free(m);
        return RMQ_ENOMEM;
    }
    m->acceptor_started = true;
    sp->ha_m = m;
    return 0;
}

void ha_master_stop(store_plugin *sp)
{
    struct ha_master *m = sp->ha_m;
    if (!m)
        return;
    atomic_store(&m->stopping, true);
    wake(m->stop_fd);
    if (m->acceptor_started)
        pthread_join(m->acceptor, NULL);
    reap(m, true);
    complete_waiters(m, true); /* stopping: every waiter times out */
    if (m->listen_fd >= 0)
        close(m->listen_fd);
    close(m->stop_fd);
    pthread_mutex_destroy(&m->mu);
    sp->ha_m = NULL;
    free(m);
}

void ha_master_notify(store_plugin *sp)
{
    struct ha_master *m = sp->ha_m;
    if (!m)
        return;
    /* every send calls this: no lock unless a connection sleeps (see conn_main) */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&m->sleepers, memory_order_relaxed) == 0)
        return;
    pthread_mutex_lock(&m->mu);
    for (ha_conn *c = m->conns; c; c = c->next_c)
        if (atomic_exchange(&c->idle, false))
            wake(c->wake_fd);
    pthread_mutex_unlock(&m->mu);
}

void ha_master_wait_replica(store_plugin *sp, int64_t end_offset, void (*done)(void *ud, int code),
                            void *ud)
{
    struct ha_master *m = sp->ha_m;
    /* HAService#isSlaveOK: a slave is connected (here: has reported) and not
     * further behind than haSlaveFallbehindMax */
    if (!m || atomic_load(&m->reporting) <= 0 ||
        end_offset - atomic_load(&m->push2slave) >= sp->set.ha_fallbehind_max) {
        done(ud, RC_SLAVE_NOT_AVAILABLE);
        return;
    }
    if (atomic_load(&m->push2slave) >= end_offset) {
        done(ud, 0);
        return;
    }
    ha_waiter *w = malloc(sizeof *w);
    if (!w) {
        done(ud, RC_FLUSH_SLAVE_TIMEOUT);
        return;
    }
    w->end = end_offset;
    w->deadline_ms = mono_ms() + (uint64_t)sp->set.slave_timeout_ms;
    w->done = done;
    w->ud = ud;
    pthread_mutex_lock(&m->mu);
    ha_waiter *after = m->waiters_tail;
    while (after && after->end > end_offset)
        after = after->prev;
    w->prev = after;
    w->next = after ? after->next : m->waiters;
    if (w->next)
        w->next->prev = w;
    else
        m->waiters_tail = w;
    if (after)
        after->next = w;
    else
        m->waiters = w;
    pthread_mutex_unlock(&m->mu);
    /* an ack may have come in meanwhile: it completes the list's prefix */
    if (atomic_load(&m->push2slave) >= end_offset)
        complete_waiters(m, false);
}

size_t ha_master_status(store_plugin *sp, ha_slave_status *out, size_t max, int64_t *push2slave_max)
{
    struct ha_master *m = sp->ha_m;
    *push2slave_max = m ? atomic_load(&m->push2slave) : 0;
    if (!m)
        return 0;
    int64_t end = store_ha_max_offset(sp->engine);
    uint64_t now = wall_ms();
    size_t n = 0;
    pthread_mutex_lock(&m->mu);
    for (ha_conn *c = m->conns; c; c = c->next_c) {
        if (atomic_load(&c->done))
            continue;
        if (n < max) {
            ha_slave_status *s = &out[n];
            snprintf(s->peer, sizeof s->peer, "%s", c->peer);
            s->ack_offset = atomic_load(&c->ack);
            s->behind_bytes = s->ack_offset >= 0 && end > s->ack_offset ? end - s->ack_offset : 0;
            int64_t since = atomic_load(&c->lag_since);
            s->behind_ms = s->behind_bytes > 0 && since > 0 ? (int64_t)now - since : 0;
            int64_t at = atomic_load(&c->ack_wall_ms);
            s->ack_age_ms = at > 0 ? (int64_t)now - at : -1;
            /* no report for a whole window: nothing moves */
            s->rate_bps =
                s->ack_age_ms >= 0 && s->ack_age_ms < 2000 ? atomic_load(&c->rate_bps) : 0;
        }
        n++;
    }
    pthread_mutex_unlock(&m->mu);
    return n;
}
