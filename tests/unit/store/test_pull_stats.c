/* test_pull_stats.c — per topic@group pull counters (pull_stats.c): each
 * group's rate is its own, and a key stays findable after the call that
 * created it has returned and its stack has been reused (the map borrows
 * its keys, so they must live in the stats, not in a caller's buffer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pull_stats.h"
#include "state_blob.h"

/* Overwrites the stack area the previous calls used. */
static __attribute__((noinline)) void scribble_stack(void)
{
    volatile char junk[8192];
    memset((char *)junk, 'x', sizeof junk);
}

static void rates_per_group_survive_the_callers_stack(void **state)
{
    (void)state;
    pull_stats *ps = pull_stats_new();
    assert_non_null(ps);
    pull_stats_found(ps, "g1", "TopicA", 10, 1000);
    scribble_stack();
    pull_stats_found(ps, "g2", "TopicA", 40, 1000);
    scribble_stack();
    pull_stats_found(ps, "g1", "TopicA", 10, 1500);
    scribble_stack();
    /* from the snapshot made at each key's creation (t=1000, value 0) */
    assert_true(pull_stats_group_tps(ps, "g1", "TopicA", 3000) > 9.99);
    assert_true(pull_stats_group_tps(ps, "g1", "TopicA", 3000) < 10.01);
    assert_true(pull_stats_group_tps(ps, "g2", "TopicA", 3000) > 19.99);
    assert_true(pull_stats_group_tps(ps, "g2", "TopicA", 3000) < 20.01);
    assert_true(pull_stats_group_tps(ps, "g3", "TopicA", 3000) == 0.0);
    assert_int_equal(pull_stats_transferred(ps), 60);
    pull_stats_free(ps);
}

/* A hot reload hands the counters over: the importing stats give the same
 * totals and rates, and a truncated blob is refused. */
static void export_then_import_keeps_every_figure(void **state)
{
    (void)state;
    pull_stats *ps = pull_stats_new();
    pull_stats_found(ps, "g1", "TopicA", 10, 1000);
    pull_stats_found(ps, "g2", "TopicB", 40, 1000);
    pull_stats_sample(ps, 11000);
    pull_stats_found(ps, "g1", "TopicA", 5, 12000);
    pull_stats_lookup_ms(ps, 7);
    blob_writer w = {0};
    pull_stats_export(ps, &w);
    assert_false(w.failed);

    pull_stats *in = pull_stats_new();
    blob_reader r = {w.buf, w.len, true};
    assert_true(pull_stats_import(in, &r));
    assert_int_equal(r.left, 0);
    assert_int_equal(pull_stats_transferred(in), 55);
    assert_int_equal(pull_stats_lookup_max_ms(in), 7);
    for (int i = 0; i < 2; i++) {
        const char *g = i ? "g2" : "g1", *t = i ? "TopicB" : "TopicA";
        assert_true(pull_stats_group_tps(in, g, t, 21000) == pull_stats_group_tps(ps, g, t, 21000));
    }
    assert_true(pull_stats_group_tps(in, "g1", "TopicA", 21000) > 0);

    pull_stats *cut = pull_stats_new();
    blob_reader rc = {w.buf, w.len - 3, true};
    assert_false(pull_stats_import(cut, &rc));
    pull_stats_free(cut);
    pull_stats_free(in);
    pull_stats_free(ps);
    free(w.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rates_per_group_survive_the_callers_stack),
        cmocka_unit_test(export_then_import_keeps_every_figure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
