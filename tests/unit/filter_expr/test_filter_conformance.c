/* test_filter_conformance.c — runs every row of the conformance table
 * (conformance_cases.c) through compile + evaluate in the grammar modes the
 * row holds for, and reports every mismatching row before failing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conformance_case.h"
#include "filter_engine.h"

static const char *outcome_name(expected_outcome o)
{
    static const char *names[] = {"FALSE", "TRUE", "NULL", "eval-error", "compile-error"};
    return names[o];
}

static expected_outcome run_case(const conformance_case *c, bool ops5x, char *detail, size_t dlen)
{
    rmq_fx_options opt = {.ops5x = ops5x};
    struct rmq_filter_expr *e = NULL;
    int pos = 0;
    int rc = rmq_fx_compile(c->type, c->expr, strlen(c->expr), &opt, &e, detail, dlen, &pos);
    if (rc != 0)
        return R_CE;
    rmq_filter_result r =
        rmq_fx_evaluate(e, c->tag, rmq_filter_kv_lookup, (void *)c->props, detail, dlen);
    free(e);
    switch (r) {
    case RMQ_FILTER_TRUE: return R_T;
    case RMQ_FILTER_FALSE: return R_F;
    case RMQ_FILTER_NULL: return R_N;
    default: return R_ERR;
    }
}

static void test_every_conformance_row_gives_javas_outcome(void **state)
{
    (void)state;
    size_t failures = 0, runs = 0;
    for (size_t i = 0; i < conformance_case_count; i++) {
        const conformance_case *c = &conformance_cases[i];
        for (int m = 0; m < 2; m++) {
            unsigned mode = m ? M5X : M49;
            if (!(c->modes & mode))
                continue;
            char detail[512] = "";
            expected_outcome got = run_case(c, mode == M5X, detail, sizeof detail);
            runs++;
            if (got != c->want) {
                failures++;
                fprintf(stderr, "conformance_cases.c:%d [%s] %s `%s`: want %s, got %s (%s)\n",
                        c->line, mode == M5X ? "5x" : "4.9", c->type, c->expr,
                        outcome_name(c->want), outcome_name(got), detail);
            }
        }
    }
    fprintf(stderr, "%zu rows, %zu runs, %zu mismatches\n", conformance_case_count, runs, failures);
    assert_true(conformance_case_count >= 200);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_conformance_row_gives_javas_outcome),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
