/* fuzz_sql92_parser.c — libFuzzer target for the SQL92 selector compiler
 * and evaluator. Input: first byte picks the grammar (bit 0: 5.x operators)
 * and the property set; the rest is the selector text. Checks that compile
 * never crashes or leaks, that errors always come with a message, and that
 * a compiled selector evaluates to one of the four outcomes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "filter_engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const props_a[] = {"a", "5", "b", "x", "TAGS", "TagA", NULL};
static const char *const props_b[] = {"a", "5.5", "b", "", "c", "true", NULL};
static const char *const props_c[] = {"a", "NaN", "abc", "-0", "d", "\xef\xbc\x91", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    rmq_fx_options opt = {.ops5x = (data[0] & 1) != 0};
    const char *const *props = (data[0] & 6) == 0   ? props_a
                               : (data[0] & 6) == 2 ? props_b
                                                    : props_c;
    size_t len = size - 1;
    char *text = malloc(len + 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, len);
    text[len] = '\0';

    char err[512];
    int pos = -1;
    struct rmq_filter_expr *e = NULL;
    int rc = rmq_fx_compile_sql92(text, len, &opt, &e, err, sizeof err, &pos);
    if (rc == 0) {
        rmq_filter_result r =
            rmq_fx_evaluate(e, NULL, rmq_filter_kv_lookup, (void *)props, err, sizeof err);
        if (r != RMQ_FILTER_TRUE && r != RMQ_FILTER_FALSE && r != RMQ_FILTER_NULL &&
            r != RMQ_FILTER_EVAL_ERROR)
            abort();
        if (r == RMQ_FILTER_EVAL_ERROR && err[0] == '\0')
            abort();
        free(e);
    } else if (rc == RMQ_EINVAL) {
        if (err[0] == '\0' || pos < 0)
            abort();
    }
    /* The same bytes as a TAG subscription. */
    e = NULL;
    if (rmq_fx_compile_tag(text, len, &e, err, sizeof err) == 0) {
        (void)rmq_fx_evaluate(e, "TagA", NULL, NULL, err, sizeof err);
        free(e);
    }
    free(text);
    return 0;
}
