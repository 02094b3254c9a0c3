/* test_executor.c — a plugin executor's queue: tasks run in submit order
 * while the ring grows from its first slots up to the declared capacity,
 * and a submit past the capacity is refused (RMQ_EBUSY), as before the ring
 * was allocated on demand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host.h"

typedef struct order {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;       /* the gate task waits until this is set */
    long seen[5000]; /* ids in the order they ran */
    size_t n;
} order;

typedef struct job {
    order *o;
    long id;
} job;

static void gate(void *arg)
{
    order *o = arg;
    pthread_mutex_lock(&o->mu);
    while (!o->open)
        pthread_cond_wait(&o->cv, &o->mu);
    pthread_mutex_unlock(&o->mu);
}

static void record(void *arg)
{
    job *j = arg;
    pthread_mutex_lock(&j->o->mu);
    j->o->seen[j->o->n++] = j->id;
    pthread_cond_broadcast(&j->o->cv);
    pthread_mutex_unlock(&j->o->mu);
}

static void run_in_order_up_to_capacity(int cap, int submits)
{
    static order o;
    memset(&o, 0, sizeof o);
    pthread_mutex_init(&o.mu, NULL);
    pthread_cond_init(&o.cv, NULL);
    executor ex;
    assert_int_equal(executor_start(&ex, NULL, "t/q", 1, cap), 0);
    /* the worker holds the gate: everything else queues (the gate itself
     * may still be queued, so one slot can be its) */
    assert_int_equal(executor_submit(&ex, gate, &o), 0);
    job *jobs = calloc((size_t)submits, sizeof *jobs);
    long *ids = calloc((size_t)submits, sizeof *ids); /* accepted, in order */
    int accepted = 0, refused = 0;
    for (int i = 0; i < submits; i++) {
        jobs[i] = (job){&o, i};
        int rc = executor_submit(&ex, record, &jobs[i]);
        if (rc == 0)
            ids[accepted++] = i;
        else {
            assert_int_equal(rc, RMQ_EBUSY);
            refused++;
        }
    }
    /* cap slots: the gate's (taken or not yet) and the records' */
    assert_true(accepted == cap - 1 || accepted == cap);
    assert_int_equal(accepted + refused, submits);
    pthread_mutex_lock(&o.mu);
    o.open = true;
    pthread_cond_broadcast(&o.cv);
    while (o.n < (size_t)accepted)
        pthread_cond_wait(&o.cv, &o.mu);
    pthread_mutex_unlock(&o.mu);
    /* submit order through every growth. The accepted ids need not be
     * 0..accepted-1: the worker may take the gate after the queue filled,
     * and the slot it frees goes to a later submit. */
    for (int i = 0; i < accepted; i++)
        assert_int_equal(o.seen[i], ids[i]);
    executor_stop(&ex);
    free(ids);
    free(jobs);
}

static void ring_grows_in_order_and_refuses_past_capacity(void **state)
{
    (void)state;
    run_in_order_up_to_capacity(1000, 1500); /* grows 256 -> 512 -> 1000 */
    run_in_order_up_to_capacity(100, 300);   /* below the first slots */
}

/* The ring turns while it grows: tasks taken from the middle of the ring
 * must keep their order when it is re-laid out. */
static void growth_with_a_wrapped_ring_keeps_order(void **state)
{
    (void)state;
    static order o;
    memset(&o, 0, sizeof o);
    pthread_mutex_init(&o.mu, NULL);
    pthread_cond_init(&o.cv, NULL);
    executor ex;
    assert_int_equal(executor_start(&ex, NULL, "t/w", 1, 4000), 0);
    static job jobs[3000];
    long next = 0;
    for (int round = 0; round < 3; round++) {
        /* 200 pass through (head moves forward), then 800 queue behind a
         * gate: the ring wraps before it grows */
        for (int i = 0; i < 200; i++, next++) {
            jobs[next] = (job){&o, next};
            assert_int_equal(executor_submit(&ex, record, &jobs[next]), 0);
        }
        pthread_mutex_lock(&o.mu);
        while (o.n < (size_t)next)
            pthread_cond_wait(&o.cv, &o.mu);
        o.open = false;
        pthread_mutex_unlock(&o.mu);
        assert_int_equal(executor_submit(&ex, gate, &o), 0);
        for (int i = 0; i < 800; i++, next++) {
            jobs[next] = (job){&o, next};
            assert_int_equal(executor_submit(&ex, record, &jobs[next]), 0);
        }
        pthread_mutex_lock(&o.mu);
        o.open = true;
        pthread_cond_broadcast(&o.cv);
        while (o.n < (size_t)next)
            pthread_cond_wait(&o.cv, &o.mu);
        pthread_mutex_unlock(&o.mu);
    }
    for (long i = 0; i < next; i++)
        assert_int_equal(o.seen[i], i);
    executor_stop(&ex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_grows_in_order_and_refuses_past_capacity),
        cmocka_unit_test(growth_with_a_wrapped_ring_keeps_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
