/* test_event_thread.c — a server's channel-event thread across stop and
 * restart. Shutdown stops the event threads before the I/O loops close
 * their connections, so a post can come at any moment of a stop and after
 * it: the lock it takes must stay valid (a destroyed one hung an I/O thread
 * in event_thread_post while io_loop_join waited for it), and a late event
 * is dropped, not delivered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include <cmocka.h>

#include "host.h"

typedef struct seen {
    atomic_long connects, closes;
} seen;

static void on_event(rmq_channel_event ev, rmq_channel_id ch, const char *peer, void *ud)
{
    (void)ch;
    (void)peer;
    seen *s = ud;
    if (ev == RMQ_CHANNEL_CONNECT)
        atomic_fetch_add(&s->connects, 1);
    else if (ev == RMQ_CHANNEL_CLOSE)
        atomic_fetch_add(&s->closes, 1);
}

typedef struct rig {
    server srv;
    server_bindings b;
    listener_entry l;
    plugin_inst *plugin;
    rmq_host *host; /* its log takes the queue-full warning */
    seen seen;
} rig;

static rig *rig_new(void)
{
    rig *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->plugin = calloc(1, sizeof *r->plugin);
    assert_non_null(r->plugin);
    r->l.fn = on_event;
    r->l.ud = &r->seen;
    r->l.plugin = r->plugin;
    r->b.listeners = &r->l;
    r->b.nlisteners = 1;
    r->srv.bindings = &r->b;
    r->host = calloc(1, sizeof *r->host);
    assert_non_null(r->host);
    host_log_init(&r->host->log, RMQ_LOG_ERROR);
    r->srv.host = r->host;
    return r;
}

static void rig_free(rig *r)
{
    host_log_close(&r->host->log);
    free(r->host);
    free(r->plugin);
    free(r);
}

static void late_posts_find_a_usable_lock_and_are_dropped(void **state)
{
    (void)state;
    rig *r = rig_new();
    event_thread *et = &r->srv.events;
    assert_int_equal(event_thread_start(et, &r->srv), 0);
    assert_true(event_thread_running(et));
    event_thread_post(et, RMQ_CHANNEL_CONNECT, 1, "127.0.0.1:1");
    event_thread_stop(et); /* delivers what was queued */
    assert_int_equal(atomic_load(&r->seen.connects), 1);
    assert_false(event_thread_running(et));
    /* an I/O loop closing its connections after the stop */
    event_thread_post(et, RMQ_CHANNEL_CLOSE, 1, "127.0.0.1:1");
    assert_int_equal(pthread_mutex_trylock(&et->mu), 0);
    pthread_mutex_unlock(&et->mu);
    /* a plugin started again on the server restarts the thread */
    assert_int_equal(event_thread_start(et, &r->srv), 0);
    event_thread_post(et, RMQ_CHANNEL_CLOSE, 2, "127.0.0.1:2");
    event_thread_destroy(et);
    assert_int_equal(atomic_load(&r->seen.closes), 1);          /* the late one was dropped */
    event_thread_post(et, RMQ_CHANNEL_CLOSE, 3, "127.0.0.1:3"); /* after destroy: ignored */
    assert_int_equal(atomic_load(&r->seen.closes), 1);
    rig_free(r);
}

typedef struct poster {
    event_thread *et;
    atomic_bool go;
    long posted;
} poster;

static void *post_loop(void *arg)
{
    poster *p = arg;
    while (!atomic_load(&p->go))
        ;
    for (long i = 0; i < 200000; i++) {
        event_thread_post(p->et, RMQ_CHANNEL_CONNECT, (rmq_channel_id)i, "127.0.0.1:9");
        p->posted++;
    }
    return NULL;
}

/* Posts from another thread while the stop runs: every post either lands
 * before the stop (delivered) or is dropped; none touches freed memory (the
 * ASan build checks that) and none blocks. */
static void posts_racing_a_stop(void **state)
{
    (void)state;
    rig *r = rig_new();
    event_thread *et = &r->srv.events;
    assert_int_equal(event_thread_start(et, &r->srv), 0);
    poster p = {.et = et, .posted = 0};
    atomic_init(&p.go, false);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, post_loop, &p), 0);
    atomic_store(&p.go, true);
    event_thread_stop(et);
    pthread_join(t, NULL);
    assert_int_equal(p.posted, 200000);
    long delivered = atomic_load(&r->seen.connects);
    unsigned long dropped_full = atomic_load(&et->dropped);
    assert_true(delivered + (long)dropped_full <= p.posted);
    event_thread_destroy(et);
    assert_int_equal(atomic_load(&r->seen.connects), delivered);
    rig_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(late_posts_find_a_usable_lock_and_are_dropped),
        cmocka_unit_test(posts_racing_a_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
