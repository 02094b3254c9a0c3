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
        cmocka_unit_test(latency_shows_the_last_closed_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
