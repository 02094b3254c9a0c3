/* testkit_clock.c — the kit's virtual clock: what plugins read as
 * now_monotonic_ms / now_wall_ms, and the schedule of their timers, which
 * the host hands over (rmq_host.timer_takeover) instead of arming real ones.
 * rmq_tk_advance fires due ticks through the host's own timers_fire. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testkit_internal.h"

#define TK_CLOCK_START 1000000u

/* The API's clock entries take no context, so the clock is per process:
 * the kit's header says one kit runs at a time. */
static _Atomic uint64_t tk_vnow = TK_CLOCK_START;
static _Atomic uint64_t tk_wall_base;

static uint64_t tk_now_mono(void)
{
    return atomic_load(&tk_vnow);
}

static uint64_t tk_now_wall(void)
{
    return atomic_load(&tk_wall_base) + (atomic_load(&tk_vnow) - TK_CLOCK_START);
}

void tk_clock_install(rmq_testkit *kit)
{
    atomic_store(&tk_vnow, TK_CLOCK_START);
    atomic_store(&tk_wall_base, host_wall_ms());
    kit->host.api.now_monotonic_ms = tk_now_mono;
    kit->host.api.now_wall_ms = tk_now_wall;
    kit->host.api.cancel_timer = tk_cancel_timer;
    kit->host.timer_takeover = tk_timer_takeover;
}

void tk_clock_release(rmq_testkit *kit)
{
    free(kit->timers);
    kit->timers = NULL;
    kit->ntimers = kit->cap_timers = 0;
}

uint64_t rmq_tk_now_ms(rmq_testkit *kit)
{
    (void)kit;
    return tk_now_mono();
}

static int schedule(rmq_testkit *kit, timer_rec *t, uint64_t due)
{
    if (kit->ntimers == kit->cap_timers) {
        size_t ncap = kit->cap_timers ? kit->cap_timers * 2 : 16;
        tk_timer *nt = realloc(kit->timers, ncap * sizeof(*nt));
        if (!nt)
            return RMQ_ENOMEM;
        kit->timers = nt;
        kit->cap_timers = ncap;
    }
    kit->timers[kit->ntimers++] = (tk_timer){t, due, kit->timer_seq++};
    return 0;
}

static void unschedule_at(rmq_testkit *kit, size_t i)
{
    kit->timers[i] = kit->timers[--kit->ntimers];
}

void tk_timer_takeover(rmq_host *h, plugin_inst *p, bool activate)
{
    rmq_testkit *kit = tk_of_host(h);
    pthread_mutex_lock(&kit->mu);
    if (activate) {
        uint64_t now = tk_now_mono();
        for (timer_rec *t = p->timers; t; t = t->next)
            if (!atomic_load(&t->cancelled) && schedule(kit, t, now + t->first_ms) != 0)
                HLOG_ERROR(h, "testkit: out of memory scheduling a timer of %s", p->conf.name);
    } else {
        for (size_t i = kit->ntimers; i-- > 0;)
            if (kit->timers[i].t->plugin == p)
                unschedule_at(kit, i);
    }
    pthread_mutex_unlock(&kit->mu);
}

int tk_cancel_timer(rmq_plugin_ctx *ctx, rmq_timer_id id)
{
    rmq_testkit *kit = tk_of_host(((plugin_inst *)(void *)ctx)->host);
    pthread_mutex_lock(&kit->mu);
    for (size_t i = 0; i < kit->ntimers; i++) {
        if (kit->timers[i].t->id == id) {
            atomic_store(&kit->timers[i].t->cancelled, true);
            unschedule_at(kit, i);
            break;
        }
    }
    pthread_mutex_unlock(&kit->mu);
    return 0;
}

/* Earliest entry due at or before `limit` (ties: first scheduled), or -1. */
static long next_due(rmq_testkit *kit, uint64_t limit)
{
    long best = -1;
    for (size_t i = 0; i < kit->ntimers; i++) {
        const tk_timer *e = &kit->timers[i];
        if (e->due > limit)
            continue;
        if (best < 0 || e->due < kit->timers[best].due ||
            (e->due == kit->timers[best].due && e->seq < kit->timers[best].seq))
            best = (long)i;
    }
    return best;
}

/* An executor tick is waited for so that, when advance returns, whatever the
 * tick did is visible to the test. */
static void wait_tick(rmq_testkit *kit, timer_rec *t)
{
    uint64_t deadline = host_now_ms() + 30000;
    while (atomic_load(&t->running) != 0) {
        if (host_now_ms() > deadline) {
            HLOG_ERROR(&kit->host,
                       "testkit: a timer tick of %s still runs after 30 s (blocked in "
                       "invoke_sync? set a responder)",
                       t->plugin->conf.name);
            return;
        }
        usleep(100);
    }
}

int rmq_tk_advance(rmq_testkit *kit, uint64_t ms)
{
    if (!kit || !kit->started)
        return RMQ_EINVAL;
    uint64_t target = tk_now_mono() + ms;
    for (;;) {
        pthread_mutex_lock(&kit->mu);
        long i = next_due(kit, target);
        if (i < 0) {
            pthread_mutex_unlock(&kit->mu);
            break;
        }
        tk_timer e = kit->timers[i];
        if (e.t->period_ms) {
            kit->timers[i].due = e.due + e.t->period_ms;
            kit->timers[i].seq = kit->timer_seq++;
        } else {
            unschedule_at(kit, (size_t)i);
        }
        pthread_mutex_unlock(&kit->mu);
        atomic_store(&tk_vnow, e.due);
        tk_calls_expire(kit, e.due);
        timers_fire(e.t);
        if (e.t->ex)
            wait_tick(kit, e.t);
    }
    atomic_store(&tk_vnow, target);
    tk_calls_expire(kit, target);
    return 0;
}
