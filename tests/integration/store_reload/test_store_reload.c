/* test_store_reload.c — `rmqhostctl reload store` while producers send
 * (SYNC_FLUSH store: sends waiting for the flush and sends answered at once)
 * and consumers long-poll: every reload succeeds, every send and every pull
 * is answered, every acknowledged message is pulled exactly once with its
 * body at its queue offset, and nothing else is in the queues; the runtime
 * statistics (28, 208) carry over. Real daemon on ephemeral ports; always
 * stopped. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

#define TOPIC "TopicReload"
#define QUEUES 4
#define PRODUCERS 4
#ifndef RELOADS
#define RELOADS 6
#endif
#define PER_QUEUE 65536 /* offsets tracked per queue */
#define MAX_MSGS (QUEUES * PER_QUEUE / 2)

typedef struct acked {
    int queue;
    long long offset;
    char body[32];
} acked;

typedef struct run {
    int port;
    atomic_bool stop_producers, stop_consumers;
    atomic_long sent_ok, send_failed;
    atomic_long pulls_sent, pulls_unanswered, pull_errors;
    pthread_mutex_t mu;
    acked *acks;
    size_t nacks;
    /* per queue: body seen at each offset, how often */
    char *seen_body[QUEUES][PER_QUEUE];
    int seen_count[QUEUES][PER_QUEUE];
    long long next[QUEUES];
} run;

typedef struct producer_arg {
    run *r;
    int id;
} producer_arg;

static void record_ack(run *r, const rmq_cmd *a, const char *body)
{
    pthread_mutex_lock(&r->mu);
    if (r->nacks < MAX_MSGS) {
        acked *k = &r->acks[r->nacks++];
        k->queue = (int)st_ext_ll(a, "queueId");
        k->offset = st_ext_ll(a, "queueOffset");
        snprintf(k->body, sizeof k->body, "%s", body);
    }
    pthread_mutex_unlock(&r->mu);
    atomic_fetch_add(&r->sent_ok, 1);
}

static void *producer(void *p)
{
    producer_arg *pa = p;
    run *r = pa->r;
    int fd = rmq_tc_connect(r->port);
    if (fd < 0) {
        atomic_fetch_add(&r->send_failed, 1);
        return NULL;
    }
    /* a fast machine stops at MAX_MSGS (wait_sends counts that as progress) */
    for (int seq = 0; !atomic_load(&r->stop_producers) && atomic_load(&r->sent_ok) < MAX_MSGS - 64;
         seq++) {
        char body[32];
        snprintf(body, sizeof body, "p%d-%d", pa->id, seq);
        int q = (pa->id + seq) % QUEUES;
        /* even producers wait for the fsync (the flusher answers), odd ones
         * are answered at once */
        const char *props = pa->id % 2 == 0 ? "WAIT\001true" : "WAIT\001false";
        rmq_cmd *a = st_send(fd, seq + 1, TOPIC, q, props, body, NULL);
        if (!a || a->code != 0) {
            if (a)
                fprintf(stderr, "send %s answered %d: %s\n", body, a->code,
                        a->remark ? a->remark : "");
            else
                fprintf(stderr, "send %s not answered\n", body);
            atomic_fetch_add(&r->send_failed, 1);
            rmq_cmd_free(a);
            break;
        }
        record_ack(r, a, body);
        rmq_cmd_free(a);
    }
    close(fd);
    return NULL;
}

typedef struct consumer_arg {
    run *r;
    int queue;
} consumer_arg;

static void *consumer(void *p)
{
    consumer_arg *ca = p;
    run *r = ca->r;
    int q = ca->queue;
    int fd = rmq_tc_connect(r->port);
    if (fd < 0) {
        atomic_fetch_add(&r->pulls_unanswered, 1);
        return NULL;
    }
    stored_record *recs = calloc(64, sizeof *recs);
    for (int op = 1; !atomic_load(&r->stop_consumers) && recs; op++) {
        st_pull_args pa = {.topic = TOPIC,
                           .queue = q,
                           .offset = r->next[q],
                           .max = 32,
                           .sys_flag = 4 | 2,
                           .suspend_ms = 2000};
        atomic_fetch_add(&r->pulls_sent, 1);
        rmq_cmd *a = st_pull(fd, op, &pa);
        if (!a) {
            fprintf(stderr, "pull of queue %d at %lld not answered (producers %s)\n", q, pa.offset,
                    atomic_load(&r->stop_producers) ? "stopped" : "sending");
            atomic_fetch_add(&r->pulls_unanswered, 1);
            break;
        }
        if (a->code == 0) {
            size_t n = st_records(a, recs, 64);
            pthread_mutex_lock(&r->mu);
            for (size_t i = 0; i < n; i++) {
                long long off = recs[i].queue_offset;
                if (recs[i].queue_id != q || off < 0 || off >= PER_QUEUE) {
                    atomic_fetch_add(&r->pull_errors, 1);
                    continue;
                }
                if (r->seen_count[q][off]++ == 0)
                    r->seen_body[q][off] =
                        strndup((const char *)recs[i].body, (size_t)recs[i].body_len);
            }
            pthread_mutex_unlock(&r->mu);
        } else if (a->code != 19 && a->code != 20) {
            fprintf(stderr, "pull of queue %d at %lld answered %d: %s\n", q, pa.offset, a->code,
                    a->remark ? a->remark : "");
            atomic_fetch_add(&r->pull_errors, 1);
        }
        long long nb = st_ext_ll(a, "nextBeginOffset");
        if (nb >= r->next[q])
            r->next[q] = nb;
        rmq_cmd_free(a);
    }
    free(recs);
    close(fd);
    return NULL;
}

static bool wait_sends(run *r, long target, int timeout_ms)
{
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    if (target > MAX_MSGS - 64)
        target = MAX_MSGS - 64;
    while (atomic_load(&r->sent_ok) < target && atomic_load(&r->send_failed) == 0) {
        if (rmq_test_now_ms() > deadline)
            return false;
        usleep(2000);
    }
    return atomic_load(&r->send_failed) == 0;
}

typedef struct fixture {
    rmq_test_daemon d;
    bool started;
    run *r;
    pthread_t pt[PRODUCERS], ct[QUEUES];
    producer_arg pa[PRODUCERS];
    consumer_arg ca[QUEUES];
    int np, nc;
} fixture;

static void join_producers(fixture *f)
{
    atomic_store(&f->r->stop_producers, true);
    for (; f->np > 0; f->np--)
        pthread_join(f->pt[f->np - 1], NULL);
}

static void join_consumers(fixture *f)
{
    atomic_store(&f->r->stop_consumers, true);
    for (; f->nc > 0; f->nc--)
        pthread_join(f->ct[f->nc - 1], NULL);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    *state = f;
    f->r = calloc(1, sizeof *f->r);
    if (!f->r || !(f->r->acks = calloc(MAX_MSGS, sizeof *f->r->acks)))
        return -1;
    pthread_mutex_init(&f->r->mu, NULL);
    /* SYNC_FLUSH: a send with WAIT=true is answered by the flusher */
    f->r->port = st_start(&f->d, "flushDiskType = \"SYNC_FLUSH\";");
    f->started = f->r->port > 0;
    return f->started ? 0 : -1;
}

/* Always: threads joined, daemon stopped, even after a failed assertion. */
static int teardown(void **state)
{
    fixture *f = *state;
    int rc = 0;
    if (f->r) {
        join_producers(f);
        join_consumers(f);
    }
    if (f->started && rmq_td_stop_reporting(&f->d) != 0)
        rc = -1;
    rmq_td_cleanup(&f->d);
    if (f->r) {
        for (int q = 0; q < QUEUES; q++)
            for (int o = 0; o < PER_QUEUE; o++)
                free(f->r->seen_body[q][o]);
        pthread_mutex_destroy(&f->r->mu);
        free(f->r->acks);
        free(f->r);
    }
    free(f);
    return rc;
}

static void reloads_under_load_lose_and_duplicate_nothing(void **state)
{
    fixture *f = *state;
    run *r = f->r;
    /* the topic exists (auto-created by a first send per queue) before the
     * consumers pull it */
    int fd = rmq_tc_connect(r->port);
    assert_true(fd >= 0);
    for (int q = 0; q < QUEUES; q++) {
        char body[32];
        snprintf(body, sizeof body, "first-%d", q);
        rmq_cmd *a = st_send(fd, q + 1, TOPIC, q, "WAIT\001true", body, NULL);
        assert_non_null(a);
        assert_int_equal(a->code, 0);
        record_ack(r, a, body);
        rmq_cmd_free(a);
    }
    close(fd);
    for (int i = 0; i < PRODUCERS; i++) {
        f->pa[i] = (producer_arg){r, i};
        assert_int_equal(pthread_create(&f->pt[i], NULL, producer, &f->pa[i]), 0);
        f->np++;
    }
    for (int q = 0; q < QUEUES; q++) {
        f->ca[q] = (consumer_arg){r, q};
        assert_int_equal(pthread_create(&f->ct[q], NULL, consumer, &f->ca[q]), 0);
        f->nc++;
    }

    char expect[64];
    for (int i = 0; i < RELOADS; i++) {
        /* traffic between reloads: some sends land in each generation */
        assert_true(wait_sends(r, atomic_load(&r->sent_ok) + 30, 60000));
        int status = -1;
        const char *out = rmq_td_ctl_output(&f->d, &status, "reload", "store", NULL);
        assert_non_null(out);
        fprintf(stderr, "%s", out);
        snprintf(expect, sizeof expect, "store reloaded: generation %d -> %d", i + 1, i + 2);
        assert_non_null(strstr(out, expect));
        assert_int_equal(status, 0);
    }
    assert_true(wait_sends(r, atomic_load(&r->sent_ok) + 30, 60000));
    join_producers(f);
    assert_int_equal(atomic_load(&r->send_failed), 0);

    /* the consumers catch up with every acknowledged offset */
    long long want[QUEUES] = {0};
    for (size_t i = 0; i < r->nacks; i++)
        if (r->acks[i].offset + 1 > want[r->acks[i].queue])
            want[r->acks[i].queue] = r->acks[i].offset + 1;
    uint64_t deadline = rmq_test_now_ms() + 60000;
    for (bool done = false; !done && rmq_test_now_ms() < deadline;) {
        done = true;
        pthread_mutex_lock(&r->mu);
        for (int q = 0; q < QUEUES; q++)
            for (long long o = 0; o < want[q] && done; o++)
                if (r->seen_count[q][o] == 0)
                    done = false;
        pthread_mutex_unlock(&r->mu);
        if (!done)
            usleep(5000);
    }
    join_consumers(f);

    /* every pull was answered; nothing refused */
    assert_int_equal(atomic_load(&r->pulls_unanswered), 0);
    assert_int_equal(atomic_load(&r->pull_errors), 0);
    /* every acknowledged send pulled exactly once, with its body */
    for (size_t i = 0; i < r->nacks; i++) {
        acked *k = &r->acks[i];
        assert_in_range(k->queue, 0, QUEUES - 1);
        assert_in_range(k->offset, 0, PER_QUEUE - 1);
        assert_int_equal(r->seen_count[k->queue][k->offset], 1);
        assert_string_equal(r->seen_body[k->queue][k->offset], k->body);
    }
    /* and the queues hold nothing else: offsets are dense and each one is
     * an acknowledged send (the count matches) */
    size_t pulled = 0;
    for (int q = 0; q < QUEUES; q++) {
        assert_int_equal(st_max_offset(r->port, TOPIC, q), want[q]);
        for (long long o = 0; o < PER_QUEUE; o++)
            if (r->seen_count[q][o]) {
                assert_int_equal(r->seen_count[q][o], 1);
                pulled++;
            }
    }
    assert_int_equal(pulled, r->nacks);
    fprintf(stderr, "%zu messages acknowledged and pulled once across %d reloads, %ld pulls\n",
            r->nacks, RELOADS, atomic_load(&r->pulls_sent));
}

/* A message delayed (level 1, 1 s) before two reloads is delivered to its
 * real topic once, by whichever generation runs the schedule then: the delay
 * progress went with the store. */
static void delayed_message_delivered_once_across_reloads(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->r->port);
    assert_true(fd >= 0);
    rmq_cmd *a = st_send(fd, 1, "TopicDelayR", 0, "DELAY\0011\002WAIT\001true", "later", NULL);
    assert_non_null(a);
    assert_int_equal(a->code, 0);
    rmq_cmd_free(a);
    for (int i = 0; i < 2; i++) {
        int status = -1;
        rmq_td_ctl_output(&f->d, &status, "reload", "store", NULL);
        assert_int_equal(status, 0);
    }
    /* long-poll the real topic until it arrives */
    stored_record rec[4];
    size_t got = 0;
    long long next = 0;
    uint64_t deadline = rmq_test_now_ms() + 30000;
    for (int op = 10; got == 0 && rmq_test_now_ms() < deadline; op++) {
        st_pull_args pa = {.topic = "TopicDelayR",
                           .queue = 0,
                           .offset = next,
                           .sys_flag = 4 | 2,
                           .suspend_ms = 2000};
        rmq_cmd *r = st_pull(fd, op, &pa);
        assert_non_null(r);
        if (r->code == 0) {
            got = st_records(r, rec, 4);
            assert_int_equal(got, 1);
            assert_int_equal(rec[0].body_len, 5);
            assert_memory_equal(rec[0].body, "later", 5);
        }
        long long nb = st_ext_ll(r, "nextBeginOffset");
        if (nb > next)
            next = nb;
        rmq_cmd_free(r);
    }
    assert_int_equal(got, 1);
    /* a further reload does not deliver it again: after a full schedule
     * round of the newest generation the queue still holds one message */
    int status = -1;
    rmq_td_ctl_output(&f->d, &status, "reload", "store", NULL);
    assert_int_equal(status, 0);
    st_pull_args pa = {
        .topic = "TopicDelayR", .queue = 0, .offset = 1, .sys_flag = 4 | 2, .suspend_ms = 3000};
    rmq_cmd *r = st_pull(fd, 99, &pa);
    assert_non_null(r);
    assert_int_equal(r->code, 19);
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->r->port, "TopicDelayR", 0), 1);
    close(fd);
}

/* GET_BROKER_RUNTIME_INFO (28): the value of `key` in the table (malloc'd;
 * "" when absent). The values are plain numbers and texts without quotes. */
static char *runtime_value(int port, const char *key)
{
    rmq_cmd *r = bcm_call(port, 28, NULL, NULL);
    char *out = NULL;
    if (r && r->code == 0 && r->body_len) {
        char *body = strndup((const char *)r->body, r->body_len);
        char needle[128];
        snprintf(needle, sizeof needle, "\"%s\":\"", key);
        const char *at = body ? strstr(body, needle) : NULL;
        if (at) {
            at += strlen(needle);
            const char *end = strchr(at, '"');
            out = end ? strndup(at, (size_t)(end - at)) : NULL;
        }
        free(body);
    }
    rmq_cmd_free(r);
    return out ? out : strdup("");
}

/* consumeTps of GET_CONSUME_STATS (208) for group/topic; -1 on failure. */
static double consume_tps(int port, const char *group, const char *topic)
{
    const char *kv[] = {"consumerGroup", group, "topic", topic, NULL};
    rmq_cmd *r = bcm_call(port, 208, kv, NULL);
    double tps = -1;
    if (r && r->code == 0) {
        char *body = strndup((const char *)r->body, r->body_len);
        const char *at = body ? strstr(body, "\"consumeTps\":") : NULL;
        tps = at ? atof(at + 13) : -1;
        free(body);
    }
    rmq_cmd_free(r);
    return tps;
}

/* The statistics behind 28 and 208 go on in the new generation: the same
 * totals, boot time and put-latency distribution before and after a reload
 * with no traffic between, and the group's pulled-message rate. */
static void runtime_statistics_survive_a_reload(void **state)
{
    fixture *f = *state;
    int port = f->r->port;
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    for (int i = 0; i < 5; i++) {
        rmq_cmd *a = st_send(fd, i + 1, "TopicStatsR", 0, "WAIT\001true", "stat", NULL);
        assert_non_null(a);
        assert_int_equal(a->code, 0);
        rmq_cmd_free(a);
    }
    st_pull_args pa = {.group = "CGStatsR", .topic = "TopicStatsR", .max = 32};
    rmq_cmd *p = st_pull(fd, 10, &pa);
    assert_non_null(p);
    assert_int_equal(p->code, 0);
    rmq_cmd_free(p);
    static const char *const keys[] = {
        "putMessageTimesTotal",     "putMessageSizeTotal",     "getMessageTimesTotalFound",
        "msgPutTotalTodayNow",      "msgGetTotalTodayNow",     "bootTimestamp",
        "putMessageDistributeTime", "putMessageEntireTimeMax", "getMessageEntireTimeMax"};
    enum { NKEYS = sizeof keys / sizeof keys[0] };
    char *before[NKEYS];
    for (size_t i = 0; i < NKEYS; i++)
        before[i] = runtime_value(port, keys[i]);
    assert_string_equal(before[0], "5");
    assert_string_equal(before[4], "5");

    int status = -1;
    rmq_td_ctl_output(&f->d, &status, "reload", "store", NULL);
    assert_int_equal(status, 0);

    for (size_t i = 0; i < NKEYS; i++) {
        char *now = runtime_value(port, keys[i]);
        if (strcmp(now, before[i]) != 0)
            fail_msg("%s: %s before the reload, %s after", keys[i], before[i], now);
        free(now);
        free(before[i]);
    }
    /* the group's counter and snapshots came along: its rate is not 0 */
    double tps = 0;
    uint64_t deadline = rmq_test_now_ms() + 10000;
    while ((tps = consume_tps(port, "CGStatsR", "TopicStatsR")) <= 0 &&
           rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(200);
    assert_true(tps > 0);
    /* and the new generation counts on from there */
    rmq_cmd *a = st_send(fd, 20, "TopicStatsR", 0, "WAIT\001true", "stat", NULL);
    assert_non_null(a);
    assert_int_equal(a->code, 0);
    rmq_cmd_free(a);
    char *total = runtime_value(port, "putMessageTimesTotal");
    assert_string_equal(total, "6");
    free(total);
    close(fd);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(reloads_under_load_lose_and_duplicate_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(delayed_message_delivered_once_across_reloads, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(runtime_statistics_survive_a_reload, setup, teardown),
    };
    struct CMUnitTest sel[sizeof all / sizeof all[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            sel[n++] = all[i];
    return _cmocka_run_group_tests("store_reload", sel, n, NULL, NULL);
}
