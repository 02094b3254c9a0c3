/* pull_filter.c — the filter of a PULL (§10.8.5): TAG subscriptions as a
 * set of Java String hash codes checked against the consume queue's
 * tagsCode, SQL92 through the filter plugin's "filter.expr" service with the
 * record's stored properties as the variable map. */
#include <stdlib.h>
#include <string.h>

#include "message_properties.h"
#include "pull_request.h"
#include "stored_record.h"

void pull_req_free(pull_req *p)
{
    if (!p)
        return;
    if (p->codes && p->codes != p->codes_inline)
        free(p->codes);
    free(p->sql);
    free(p);
}

void pull_filter_reset(pull_req *p)
{
    if (p->codes && p->codes != p->codes_inline)
        free(p->codes);
    free(p->sql);
    p->codes = p->codes_inline;
    p->ncodes = 0;
    p->sql = NULL;
    p->match_all = false;
    p->is_sql = false;
    p->filter_ready = false;
}

/* Parse "TagA || TagB" into hash codes (protocol.md §6.4). 0 or RMQ_ENOMEM. */
int pull_filter_parse_tags(pull_req *p, const char *sub)
{
    p->codes = p->codes_inline;
    p->ncodes = 0;
    size_t cap = sizeof p->codes_inline / sizeof p->codes_inline[0];
    if (!sub || !*sub || strcmp(sub, "*") == 0) {
        p->match_all = true;
        return 0;
    }
    const char *s = sub;
    while (*s) {
        const char *e = strstr(s, "||");
        size_t n = e ? (size_t)(e - s) : strlen(s);
        const char *b = s, *t = s + n;
        while (b < t && (unsigned char)*b <= ' ')
            b++;
        while (t > b && (unsigned char)t[-1] <= ' ')
            t--;
        if (t > b) {
            if (p->ncodes == cap) {
                size_t ncap = cap * 2;
                int32_t *nc = malloc(ncap * sizeof *nc);
                if (!nc)
                    return RMQ_ENOMEM;
                memcpy(nc, p->codes, p->ncodes * sizeof *nc);
                if (p->codes != p->codes_inline)
                    free(p->codes);
                p->codes = nc;
                cap = ncap;
            }
            p->codes[p->ncodes++] = java_string_hash(b, (size_t)(t - b));
        }
        s += n;
        if (e)
            s += 2;
    }
    if (p->ncodes == 0)
        p->match_all = true;
    return 0;
}

static bool tag_match(const pull_req *p, int64_t tags_code)
{
    if (p->match_all || p->is_sql)
        return true;
    int32_t c = (int32_t)tags_code;
    for (size_t i = 0; i < p->ncodes; i++)
        if (p->codes[i] == c)
            return true;
    return false;
}

/* NUL-terminated copy of the properties for the SQL92 lookup. */
typedef struct sql_vars {
    props_view pv;
    char *buf;
    size_t cap;
} sql_vars;

static const char *sql_lookup(void *ud, const char *name)
{
    sql_vars *v = ud;
    size_t nl = strlen(name);
    for (size_t k = 0; k < v->pv.n; k++)
        if (v->pv.e[k].name_len == nl && memcmp(v->pv.e[k].name, name, nl) == 0)
            return v->pv.e[k].value;
    return NULL;
}

/* Evaluate p's SQL92 expression over a properties string. */
static bool sql_match(store_plugin *sp, pull_req *p, const char *props, size_t len)
{
    if (!p->sql)
        return true;
    sql_vars *v = malloc(sizeof *v);
    if (!v)
        return false;
    v->buf = malloc(len + 1);
    if (!v->buf) {
        free(v);
        return false;
    }
    memcpy(v->buf, props, len);
    v->buf[len] = 0;
    props_parse(v->buf, len, &v->pv);
    for (size_t k = 0; k < v->pv.n; k++) {
        /* the bytes after a name and a value are separators: make them NULs */
        ((char *)v->pv.e[k].name)[v->pv.e[k].name_len] = 0;
        ((char *)v->pv.e[k].value)[v->pv.e[k].value_len] = 0;
    }
    bool ok = false;
    const void *tbl;
    void *ud;
    rmq_service_ref ref;
    if (sp->api->service_acquire(sp->ctx, RMQ_FILTER_EXPR_SERVICE, RMQ_FILTER_EXPR_VERSION, &tbl,
                                 &ud, &ref) == 0) {
        const rmq_filter_expr_service *f = tbl;
        ok = f->evaluate(ud, p->sql, NULL, sql_lookup, v, NULL, 0) == RMQ_FILTER_TRUE;
        sp->api->service_release(sp->ctx, ref);
    }
    free(v->buf);
    free(v);
    return ok;
}

bool pull_filter_cq(void *ud, int64_t tags_code)
{
    return tag_match(((pull_filter_ctx *)ud)->p, tags_code);
}

bool pull_filter_record(void *ud, const uint8_t *rec, size_t len)
{
    pull_filter_ctx *r = ud;
    if (!r->p->is_sql || !r->p->sql)
        return true;
    stored_record sr;
    if (stored_record_decode(rec, len, false, &sr) != STORED_RECORD_OK)
        return false;
    return sql_match(r->sp, r->p, sr.props, sr.props_len);
}

bool pull_req_matches(store_plugin *sp, pull_req *p, int64_t tags_code, const char *props,
                      size_t props_len)
{
    if (!tag_match(p, tags_code))
        return false;
    if (p->is_sql && p->sql && props)
        return sql_match(sp, p, props, props_len);
    return true;
}
