/* bench_stats.c — counting and merging rmqbench figures. Owns no clocks and
 * no I/O; per-thread copies are merged once after the threads end, so no
 * locking is needed here. */
#include "bench_stats.h"

#include <string.h>

void rmq_stats_init(rmq_bench_stats *s)
{
    memset(s, 0, sizeof(*s));
    rmq_hist_reset(&s->hist);
}

void rmq_stats_reset_window(rmq_bench_stats *s)
{
    rmq_bench_errors keep = s->errors;
    rmq_stats_init(s);
    s->errors = keep;
}

int rmq_stats_count_code(rmq_bench_stats *s, int32_t code)
{
    for (uint32_t i = 0; i < s->code_kinds; i++) {
        if (s->codes[i].code == code) {
            s->codes[i].count++;
            return 0;
        }
    }
    if (s->code_kinds == RMQ_BENCH_MAX_CODES) {
        s->other_codes++;
        return 0;
    }
    s->codes[s->code_kinds].code = code;
    s->codes[s->code_kinds].count = 1;
    s->code_kinds++;
    return 1;
}

void rmq_stats_merge(rmq_bench_stats *dst, const rmq_bench_stats *src)
{
    dst->sent += src->sent;
    dst->responses += src->responses;
    dst->messages += src->messages;
    for (uint32_t i = 0; i < src->code_kinds; i++) {
        uint32_t j = 0;
        while (j < dst->code_kinds && dst->codes[j].code != src->codes[i].code)
            j++;
        if (j == dst->code_kinds) {
            if (j == RMQ_BENCH_MAX_CODES) {
                dst->other_codes += src->codes[i].count;
                continue;
            }
            dst->codes[j].code = src->codes[i].code;
            dst->codes[j].count = 0;
            dst->code_kinds++;
        }
        dst->codes[j].count += src->codes[i].count;
    }
    dst->other_codes += src->other_codes;
    rmq_hist_merge(&dst->hist, &src->hist);
    dst->errors.connect += src->errors.connect;
    dst->errors.closed += src->errors.closed;
    dst->errors.bad_frame += src->errors.bad_frame;
    dst->errors.unmatched += src->errors.unmatched;
}

uint64_t rmq_stats_error_total(const rmq_bench_stats *s)
{
    return s->errors.connect + s->errors.closed + s->errors.bad_frame + s->errors.unmatched;
}
