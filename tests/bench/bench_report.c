/* bench_report.c — formats rmqbench results. Owns the meaning of every
 * printed figure (docs/benchmarks.md explains them); must not measure. */
#include "bench_report.h"

#include <inttypes.h>

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

void rmq_report_text(FILE *out, const rmq_bench_options *o, const rmq_bench_result *r)
{
    const rmq_bench_stats *t = &r->total;
    const rmq_latency_histogram *h = &t->hist;
    fprintf(out, "target %s  code %d  %s%s  connections %u  depth %u  threads %u\n", o->target,
            (int)o->code, o->rocketmq ? "ROCKETMQ" : "JSON", o->oneway ? " oneway" : "",
            o->connections, o->depth, o->threads);
    fprintf(out, "window %.3f s (after %.3f s warm-up)\n", r->window_seconds, o->warmup_seconds);
    fprintf(out, "requests/s: %.1f\n", r->requests_per_sec);
    if (o->mode == RMQ_BENCH_MODE_PULL)
        fprintf(out, "messages/s: %.1f (%" PRIu64 " messages)\n", r->messages_per_sec, t->messages);
    fprintf(out, "requests: %" PRIu64 " sent, %" PRIu64 " answered\n", t->sent, t->responses);
    fprintf(out, "responses:");
    for (uint32_t i = 0; i < t->code_kinds; i++)
        fprintf(out, "%s code %d: %" PRIu64, i ? "," : "", (int)t->codes[i].code,
                t->codes[i].count);
    if (t->other_codes)
        fprintf(out, "%s other codes: %" PRIu64, t->code_kinds ? "," : "", t->other_codes);
    if (t->code_kinds == 0 && t->other_codes == 0)
        fprintf(out, " none");
    fputc('\n', out);
    fprintf(out,
            "errors: %" PRIu64 " (connect %" PRIu64 ", closed %" PRIu64 ", bad frame %" PRIu64
            ", unmatched %" PRIu64 ")\n",
            rmq_stats_error_total(t), t->errors.connect, t->errors.closed, t->errors.bad_frame,
            t->errors.unmatched);
    if (h->count == 0) {
        fprintf(out, "latency: no samples\n");
        return;
    }
    fprintf(out, "latency us: p50 %.1f  p99 %.1f  p999 %.1f  max %.1f  (mean %.1f, min %.1f)\n",
            us(rmq_hist_quantile_ns(h, 0.50)), us(rmq_hist_quantile_ns(h, 0.99)),
            us(rmq_hist_quantile_ns(h, 0.999)), us(h->max_ns), us(h->sum_ns) / (double)h->count,
            us(h->min_ns));
}

void rmq_report_json(FILE *out, const rmq_bench_options *o, const rmq_bench_result *r)
{
    const rmq_bench_stats *t = &r->total;
    const rmq_latency_histogram *h = &t->hist;
    fprintf(out, "{\"target\":");
    json_string(out, o->target);
    fprintf(out,
            ",\"code\":%d,\"serialize\":\"%s\",\"oneway\":%s,\"connections\":%u,\"depth\":%u,"
            "\"threads\":%u,\"warmup_seconds\":%.3f,\"seconds\":%.6f,\"requests_per_sec\":%.1f,"
            "\"sent\":%" PRIu64 ",\"requests\":%" PRIu64 ",\"responses\":{",
            (int)o->code, o->rocketmq ? "ROCKETMQ" : "JSON", o->oneway ? "true" : "false",
            o->connections, o->depth, o->threads, o->warmup_seconds, r->window_seconds,
            r->requests_per_sec, t->sent, o->oneway ? t->sent : t->responses);
    for (uint32_t i = 0; i < t->code_kinds; i++)
        fprintf(out, "%s\"%d\":%" PRIu64, i ? "," : "", (int)t->codes[i].code, t->codes[i].count);
    fprintf(out,
            "},\"other_codes\":%" PRIu64 ",\"errors\":%" PRIu64
            ",\"error_detail\":{\"connect\":%" PRIu64 ",\"closed\":%" PRIu64
            ",\"bad_frame\":%" PRIu64 ",\"unmatched\":%" PRIu64 "},",
            t->other_codes, rmq_stats_error_total(t), t->errors.connect, t->errors.closed,
            t->errors.bad_frame, t->errors.unmatched);
    fprintf(out,
            "\"messages\":%" PRIu64
            ",\"messages_per_sec\":%.1f,\"latency_us\":{\"samples\":%" PRIu64
            ",\"p50\":%.1f,\"p99\":%.1f,\"p999\":%.1f,"
            "\"max\":%.1f,\"mean\":%.1f,\"min\":%.1f},\"failed\":%s}\n",
            t->messages, r->messages_per_sec, h->count, us(rmq_hist_quantile_ns(h, 0.50)),
            us(rmq_hist_quantile_ns(h, 0.99)), us(rmq_hist_quantile_ns(h, 0.999)), us(h->max_ns),
            h->count ? us(h->sum_ns) / (double)h->count : 0.0, h->count ? us(h->min_ns) : 0.0,
            r->failed ? "true" : "false");
}
