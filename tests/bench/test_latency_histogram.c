/* test_latency_histogram.c — proves the log-bucket histogram's quantiles stay
 * within its stated precision and that merging equals recording together. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "latency_histogram.h"

static rmq_latency_histogram *new_hist(void)
{
    rmq_latency_histogram *h = malloc(sizeof(*h));
    assert_non_null(h);
    rmq_hist_reset(h);
    return h;
}

/* Bucket precision is 1/64 of the value; allow exactly that. */
static void assert_close(uint64_t got, uint64_t want)
{
    uint64_t tol = want / 64u + 1u;
    assert_true(got + tol >= want);
    assert_true(got <= want + tol);
}

static void test_quantiles_of_uniform_samples_stay_within_bucket_precision(void **state)
{
    (void)state;
    rmq_latency_histogram *h = new_hist();
    for (uint64_t v = 1; v <= 100000; v++)
        rmq_hist_record(h, v * 1000u); /* 1 us .. 100 ms */
    assert_int_equal(h->count, 100000);
    assert_close(rmq_hist_quantile_ns(h, 0.50), 50000u * 1000u);
    assert_close(rmq_hist_quantile_ns(h, 0.99), 99000u * 1000u);
    assert_close(rmq_hist_quantile_ns(h, 0.999), 99900u * 1000u);
    assert_int_equal(rmq_hist_quantile_ns(h, 1.0), 100000u * 1000u);
    assert_int_equal(h->min_ns, 1000u);
    assert_int_equal(h->max_ns, 100000u * 1000u);
    free(h);
}

static void test_small_values_are_exact(void **state)
{
    (void)state;
    rmq_latency_histogram *h = new_hist();
    for (uint64_t v = 0; v < 100; v++)
        rmq_hist_record(h, v);
    assert_int_equal(rmq_hist_quantile_ns(h, 0.5), 49);
    assert_int_equal(rmq_hist_quantile_ns(h, 0.01), 0);
    free(h);
}

static void test_quantile_never_exceeds_max(void **state)
{
    (void)state;
    rmq_latency_histogram *h = new_hist();
    rmq_hist_record(h, 1000001u);
    assert_int_equal(rmq_hist_quantile_ns(h, 0.5), 1000001u);
    rmq_hist_record(h, UINT64_C(1) << 50); /* beyond the tracked range: clamped */
    assert_int_equal(rmq_hist_quantile_ns(h, 1.0), UINT64_C(1) << 50);
    free(h);
}

static void test_empty_histogram_reports_zero(void **state)
{
    (void)state;
    rmq_latency_histogram *h = new_hist();
    assert_int_equal(rmq_hist_quantile_ns(h, 0.99), 0);
    free(h);
}

static void test_merge_equals_recording_into_one(void **state)
{
    (void)state;
    rmq_latency_histogram *a = new_hist(), *b = new_hist(), *both = new_hist();
    for (uint64_t v = 1; v <= 5000; v++) {
        rmq_latency_histogram *half = (v % 2) ? a : b;
        rmq_hist_record(half, v * 977u);
        rmq_hist_record(both, v * 977u);
    }
    rmq_hist_merge(a, b);
    assert_int_equal(a->count, both->count);
    assert_int_equal(a->sum_ns, both->sum_ns);
    assert_int_equal(a->min_ns, both->min_ns);
    assert_int_equal(a->max_ns, both->max_ns);
    for (double q = 0.1; q < 1.0; q += 0.1)
        assert_int_equal(rmq_hist_quantile_ns(a, q), rmq_hist_quantile_ns(both, q));
    free(a);
    free(b);
    free(both);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantiles_of_uniform_samples_stay_within_bucket_precision),
        cmocka_unit_test(test_small_values_are_exact),
        cmocka_unit_test(test_quantile_never_exceeds_max),
        cmocka_unit_test(test_empty_histogram_reports_zero),
        cmocka_unit_test(test_merge_equals_recording_into_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
