/* route_assembler.c — writes both dialects of a topic's route straight into
 * its cache entry, from fragments shared across topics. Owns the fragment
 * cache of one publication pass; must not modify the route table and must
 * emit exactly what route_encoder's encode_topic_route emits. */
#include "route_assembler.h"

#include <stdlib.h>
#include <string.h>

#include "route_encoder.h"

#define LIT(s) s, (sizeof(s) - 1)

static const char HEAD[] = "{\"brokerDatas\":[";
static const char MID_PLAIN[] = "],\"filterServerTable\":{},\"queueDatas\":[";
static const char TAIL[] = "]}";

void route_assembler_init(route_assembler *a, const route_table *rt)
{
    memset(a, 0, sizeof(*a));
    a->rt = rt;
    rmq_str_map_init(&a->by_name);
    tb_init(&a->tails);
    tb_init(&a->mid[0]);
    tb_init(&a->mid[1]);
}

void route_assembler_free(route_assembler *a)
{
    for (size_t i = 0; i < a->n; i++) {
        route_fragment *f = a->frags[i];
        for (int d = 0; d < 2; d++) {
            free(f->bd_text[d]);
            free(f->qd_head[d]);
        }
        free(f);
    }
    free(a->frags);
    rmq_str_map_destroy(&a->by_name);
    tb_free(&a->tails);
    tb_free(&a->mid[0]);
    tb_free(&a->mid[1]);
    free(a->tail_end);
    free(a->bds);
    memset(a, 0, sizeof(*a));
}

static char *render(text_buf *b, size_t *len)
{
    return b->oom ? (tb_free(b), NULL) : tb_take(b, len);
}

static route_fragment *fragment_new(route_assembler *a, const char *name)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 8;
        route_fragment **nf = realloc(a->frags, nc * sizeof(*nf));
        if (!nf)
            return NULL;
        a->frags = nf;
        a->cap = nc;
    }
    route_fragment *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->bd = route_table_broker(a->rt, name);
    f->name = f->bd ? f->bd->name : name;
    bool ok = true;
    for (int d = 0; d < 2; d++) {
        text_buf b;
        tb_init(&b);
        encode_queue_data_head(f->name, d == 1, &b);
        f->qd_head[d] = render(&b, &f->qd_head_len[d]);
        ok = ok && f->qd_head[d];
        if (f->bd) {
            tb_init(&b);
            encode_broker_data(f->bd, d == 1, &b);
            f->bd_text[d] = render(&b, &f->bd_len[d]);
            ok = ok && f->bd_text[d];
        }
    }
    int err = 0;
    if (ok)
        rmq_str_map_put(&a->by_name, f->name, f, &err);
    if (!ok || err) {
        for (int d = 0; d < 2; d++) {
            free(f->bd_text[d]);
            free(f->qd_head[d]);
        }
        free(f);
        return NULL;
    }
    a->frags[a->n++] = f;
    return f;
}

static route_fragment *fragment_for(route_assembler *a, size_t i, const char *name)
{
    route_fragment *f = i < ROUTE_ASSEMBLER_HINTS ? a->hint[i] : NULL;
    if (f && strcmp(f->name, name) == 0)
        return f;
    f = rmq_str_map_get(&a->by_name, name);
    if (!f)
        f = fragment_new(a, name);
    if (f && i < ROUTE_ASSEMBLER_HINTS)
        a->hint[i] = f;
    return f;
}

static int ensure_scratch(route_assembler *a, size_t nqd)
{
    if (nqd > a->tail_cap) {
        size_t nc = a->tail_cap ? a->tail_cap : 8;
        while (nc < nqd)
            nc *= 2;
        size_t *te = realloc(a->tail_end, nc * sizeof(*te));
        if (!te)
            return -1;
        a->tail_end = te;
        a->tail_cap = nc;
    }
    if (nqd > a->bds_cap) {
        size_t nc = a->bds_cap ? a->bds_cap : 8;
        while (nc < nqd)
            nc *= 2;
        const broker_data **nb = realloc(a->bds, nc * sizeof(*nb));
        if (!nb)
            return -1;
        a->bds = nb;
        a->bds_cap = nc;
    }
    return 0;
}

static char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

route_entry *route_assembler_build(route_assembler *a, const topic_entry *te,
                                   const char *order_conf, bool *absent)
{
    *absent = false;
    size_t nqd = te->nqd;
    if (nqd == 0) {
        *absent = true;
        return NULL;
    }
    if (ensure_scratch(a, nqd) != 0)
        return NULL;
    route_fragment *stack_f[8];
    route_fragment **fs = nqd <= 8 ? stack_f : malloc(nqd * sizeof(*fs));
    if (!fs)
        return NULL;
    route_entry *e = NULL;
    size_t nbd = 0, len[2] = {0, 0};
    a->tails.len = 0;
    for (size_t i = 0; i < nqd; i++) {
        route_fragment *f = fragment_for(a, i, te->qds[i].broker_name);
        if (!f)
            goto out;
        fs[i] = f;
        if (f->bd) {
            a->bds[nbd++] = f->bd;
            for (int d = 0; d < 2; d++)
                len[d] += f->bd_len[d];
        }
        for (int d = 0; d < 2; d++)
            len[d] += f->qd_head_len[d];
        encode_queue_data_tail(&te->qds[i], &a->tails);
        a->tail_end[i] = a->tails.len;
    }
    if (nbd == 0) {
        *absent = true;
        goto out;
    }
    /* filterServerTable and orderTopicConf are rare: rendered per topic */
    bool plain = !order_conf && rmq_str_map_count(&a->rt->filters) == 0;
    const char *mid[2] = {MID_PLAIN, MID_PLAIN};
    size_t mid_len[2] = {sizeof(MID_PLAIN) - 1, sizeof(MID_PLAIN) - 1};
    if (!plain) {
        for (int d = 0; d < 2; d++) {
            text_buf *m = &a->mid[d];
            m->len = 0;
            tb_puts(m, "],\"filterServerTable\":{");
            encode_filter_table_members(a->rt, a->bds, nbd, d == 1, m);
            tb_putc(m, '}');
            if (order_conf) {
                tb_puts(m, ",\"orderTopicConf\":");
                tb_json_str(m, order_conf, d == 1);
            }
            tb_puts(m, ",\"queueDatas\":[");
            if (m->oom)
                goto out;
            mid[d] = m->data;
            mid_len[d] = m->len;
        }
    }
    if (a->tails.oom)
        goto out;
    for (int d = 0; d < 2; d++)
        len[d] += (sizeof(HEAD) - 1) + (nbd - 1) + mid_len[d] + a->tails.len + (nqd - 1) +
                  (sizeof(TAIL) - 1);
    char *out[2];
    e = route_entry_new(a->arena, te->name, strlen(te->name), rmq_str_hash(te->name), len[0],
                        len[1], &out[0], &out[1]);
    if (!e)
        goto out;
    for (int d = 0; d < 2; d++) {
        char *p = put(out[d], LIT(HEAD));
        bool first = true;
        for (size_t i = 0; i < nqd; i++) {
            if (!fs[i]->bd)
                continue;
            if (!first)
                *p++ = ',';
            first = false;
            p = put(p, fs[i]->bd_text[d], fs[i]->bd_len[d]);
        }
        p = put(p, mid[d], mid_len[d]);
        size_t off = 0;
        for (size_t i = 0; i < nqd; i++) {
            if (i)
                *p++ = ',';
            p = put(p, fs[i]->qd_head[d], fs[i]->qd_head_len[d]);
            p = put(p, a->tails.data + off, a->tail_end[i] - off);
            off = a->tail_end[i];
        }
        p = put(p, LIT(TAIL));
    }
out:
    if (fs != stack_f)
        free(fs);
    return e;
}
