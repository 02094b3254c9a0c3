/* test_broker_stats_units.c — the counters behind VIEW_BROKER_STATS_DATA
 * (stats_items.c: StatsItem's snapshot lists and computeStatsData) and
 * GET_BROKER_RUNTIME_INFO's put latency (put_latency.c: the last closed
 * window, Java's percentile interpolation, failed puts). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "put_latency.h"
#include "stats_items.h"

static void minute_window_is_last_minus_first_snapshot(void **state)
{
    (void)state;
    stats_items *s = stats_items_new();
    assert_non_null(s);
    stats_view v[STATS_WINDOWS];
    assert_false(stats_items_view(s, 0, "T", v)); /* never added: "not exist" */
    stats_items_add(s, "T", 1, 7, 1);             /* created: no snapshot yet */
    assert_true(stats_items_view(s, 0, "T", v));
    assert_int_equal(v[STATS_MINUTE].sum, 0);
    assert_true(v[STATS_MINUTE].tps == 0.0);
    stats_items_sample(s, STATS_MINUTE, 10000);
    assert_true(stats_items_view(s, 0, "T", v));
    /* one snapshot: Java divides 0 by 0 */
    assert_int_equal(v[STATS_MINUTE].sum, 0);
    assert_true(isnan(v[STATS_MINUTE].tps));
    stats_items_add(s, "T", 30, 3000, 3); /* three sends of ten messages, 1,000 bytes each */
    stats_items_sample(s, STATS_MINUTE, 20000);
    assert_true(stats_items_view(s, 0, "T", v));
    assert_int_equal(v[STATS_MINUTE].sum, 30);
    assert_true(fabs(v[STATS_MINUTE].tps - 3.0) < 1e-9);
    assert_true(fabs(v[STATS_MINUTE].avgpt - 10.0) < 1e-9);
    /* hour and day lists are sampled on their own schedule */
    assert_int_equal(v[STATS_HOUR].sum, 0);
    assert_int_equal(v[STATS_DAY].sum, 0);
    /* the second series (the SIZE set) has its own values, the same calls */
    assert_true(stats_items_view(s, 1, "T", v));
    assert_int_equal(v[STATS_MINUTE].sum, 3000);
    assert_true(fabs(v[STATS_MINUTE].tps - 300.0) < 1e-9);
    assert_true(fabs(v[STATS_MINUTE].avgpt - 1000.0) < 1e-9);
    assert_false(stats_items_view(s, 2, "T", v));
    stats_items_free(s);
}

static void minute_list_keeps_seven_snapshots(void **state)
{
    (void)state;
    stats_items *s = stats_items_new();
    for (int i = 0; i < 10; i++) {
        stats_items_add(s, "k", 5, 50, 1);
        stats_items_sample(s, STATS_MINUTE, (uint64_t)(i + 1) * 10000);
    }
    stats_view v[STATS_WINDOWS];
    assert_true(stats_items_view(s, 0, "k", v));
    /* 7 snapshots: 6 intervals of 5 */
    assert_int_equal(v[STATS_MINUTE].sum, 30);
    assert_true(fabs(v[STATS_MINUTE].tps - 0.5) < 1e-9);
    stats_items_free(s);
}

/* StatsItem's lists as Java keeps them (every snapshot stored, timed): the
 * compact lists must read the same through any sequence of adds and
 * samples. */
typedef struct ref_snap {
    uint64_t at;
    int64_t value, times;
} ref_snap;

static void ref_push(ref_snap *l, size_t *n, size_t keep, ref_snap x)
{
    l[(*n)++] = x;
    if (*n > keep) {
        memmove(l, l + 1, (*n - 1) * sizeof *l);
        (*n)--;
    }
}

static void assert_same_view(stats_view got, const ref_snap *l, size_t n)
{
    if (n == 0) {
        assert_int_equal(got.sum, 0);
        assert_true(got.tps == 0.0 && got.avgpt == 0.0);
        return;
    }
    int64_t sum = l[n - 1].value - l[0].value, td = l[n - 1].times - l[0].times;
    double tps = ((double)sum * 1000.0) / (double)((int64_t)l[n - 1].at - (int64_t)l[0].at);
    assert_int_equal(got.sum, sum);
    if (isnan(tps))
        assert_true(isnan(got.tps));
    else
        assert_true(got.tps == tps);
    assert_true(got.avgpt == (td > 0 ? (double)sum / (double)td : 0.0));
}

static void compact_lists_read_as_full_lists(void **state)
{
    (void)state;
    static const size_t keep[STATS_WINDOWS] = {7, 7, 25};
    enum { KEYS = 5 };
    stats_items *s = stats_items_new();
    ref_snap ref[KEYS][STATS_WINDOWS][26];
    size_t rn[KEYS][STATS_WINDOWS] = {{0}};
    int64_t val[KEYS] = {0}, tim[KEYS] = {0};
    bool made[KEYS] = {false};
    char key[8];
    srand(7);
    uint64_t now = 1000;
    for (int step = 0; step < 4000; step++) {
        int k = rand() % KEYS;
        int what = rand() % 10;
        snprintf(key, sizeof key, "k%d", k);
        if (what < 4 && (k != 0 || step < 40)) { /* k0 goes idle: its lists settle */
            int64_t v = rand() % 100, t = 1 + rand() % 3;
            stats_items_add(s, key, v, 0, t);
            val[k] += v;
            tim[k] += t;
            made[k] = true;
        } else if (what < 7) {
            int w = rand() % STATS_WINDOWS;
            now += 1 + (uint64_t)(rand() % 5000);
            stats_items_sample(s, w, now);
            for (int j = 0; j < KEYS; j++)
                if (made[j])
                    ref_push(ref[j][w], &rn[j][w], keep[w], (ref_snap){now, val[j], tim[j]});
        } else {
            stats_view v[STATS_WINDOWS];
            assert_int_equal(stats_items_view(s, 0, key, v), made[k]);
            for (int w = 0; made[k] && w < STATS_WINDOWS; w++)
                assert_same_view(v[w], ref[k][w], rn[k][w]);
        }
    }
    stats_items_free(s);
}

static void deleted_topic_keys_go(void **state)
{
    (void)state;
    stats_items *s = stats_items_new();
    stats_items_add(s, "T@g1", 1, 0, 1);
    stats_items_add(s, "T@g2", 1, 0, 1);
    stats_items_add(s, "TT@g1", 1, 0, 1);
    stats_items_add(s, "T", 1, 0, 1);
    stats_items_sample(s, STATS_MINUTE, 10000);
    stats_items_add(s, "T@g1", 5, 0, 1);
    stats_items_sample(s, STATS_MINUTE, 20000); /* T@g1 holds a ring now */
    assert_int_equal(stats_items_remove_prefix(s, "T@"), 2);
    stats_view v[STATS_WINDOWS];
    assert_false(stats_items_view(s, 0, "T@g1", v));
    assert_false(stats_items_view(s, 0, "T@g2", v));
    assert_true(stats_items_view(s, 0, "TT@g1", v));
    assert_true(stats_items_remove(s, "T"));
    assert_false(stats_items_remove(s, "T"));
    assert_false(stats_items_view(s, 0, "T", v));
    stats_items_add(s, "T", 2, 0, 1); /* a re-created topic starts again */
    assert_true(stats_items_view(s, 0, "T", v));
    assert_int_equal(v[STATS_MINUTE].sum, 0);
    stats_items_free(s);
}

static void latency_shows_the_last_closed_window(void **state)
{
    (void)state;
    put_latency pl;
    memset(&pl, 0, sizeof pl);
    pl.window_ms = 1000;
    char text[512];
    put_latency_text(&pl, text, sizeof text);
    assert_string_equal(text, "null"); /* no window closed yet */
    put_latency_tick(&pl, 100000);
    for (int i = 0; i < 4; i++)
        put_latency_record(&pl, coarse_now_ms() + 1000); /* began "later": 0 ms */
    put_latency_failed(&pl);
    put_latency_text(&pl, text, sizeof text);
    assert_string_equal(text, "null");
    put_latency_tick(&pl, 100500); /* still inside the window */
    put_latency_text(&pl, text, sizeof text);
    assert_string_equal(text, "null");
    put_latency_tick(&pl, 101001);
    put_latency_text(&pl, text, sizeof text);
    assert_string_equal(text, "[<=0ms]:4 [0~10ms]:0 [10~50ms]:0 [50~100ms]:0 [100~200ms]:0 "
                              "[200~500ms]:0 [500ms~1s]:0 [1~2s]:0 [2~3s]:0 [3~4s]:0 [4~5s]:0 "
                              "[5~10s]:0 [10s~]:0 ");
    assert_int_equal(atomic_load(&pl.failed), 1);
    /* 4 puts of 0 ms in the first percentile bucket (<= 1 ms): rank
     * (long)(4 * 0.99) = 3 of 4 -> 1 * 3 / 4 */
    assert_true(fabs(put_latency_percentile(&pl, 0.99) - 0.75) < 1e-9);
    /* the next window is empty: everything reads 0 again */
    put_latency_tick(&pl, 102002);
    put_latency_text(&pl, text, sizeof text);
    assert_non_null(strstr(text, "[<=0ms]:0 "));
    assert_true(put_latency_percentile(&pl, 0.999) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(minute_window_is_last_minus_first_snapshot),
        cmocka_unit_test(minute_list_keeps_seven_snapshots),
        cmocka_unit_test(compact_lists_read_as_full_lists),
        cmocka_unit_test(deleted_topic_keys_go),
        cmocka_unit_test(latency_shows_the_last_closed_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
