/* helpers.h — header-only conveniences every plugin otherwise writes for
 * itself: ext-field getters with Java's number rules, the oneway rule,
 * answering with code/remark/body in one call, typed ext setters, a before
 * hook's refusal remark (ABI 1.7) and a small string-keyed hash map.
 * Everything goes through the rmq_host_api table a plugin already has, so
 * using them changes nothing in the ABI.
 *
 * Java parse rules (what a Java server does with a header field):
 *   - Long.parseLong / Integer.parseInt: an optional '+' or '-', then one or
 *     more ASCII digits, nothing else (no spaces), within the type's range;
 *     anything else throws NumberFormatException — here RMQ_EINVAL.
 *   - an absent field (or JSON null) is not a number error: RMQ_ENOENT, so a
 *     processor can tell "missing" (often a default) from "garbage".
 *   - Boolean.parseBoolean: "true" in any case is true, anything else false.
 */
#ifndef RMQHOST_HELPERS_H
#define RMQHOST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmqhost/rmqhost.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Java's Double.toString ------------------------------------------------- */

/* What Java's String.valueOf(double) (and fastjson) print: "0.0", "12.5",
 * "1.0E-5", "1.2345678E7", "NaN", "Infinity": the fewest significant digits
 * that read back as `d`, plain notation for 1e-3 <= |d| < 1e7, else
 * computerized scientific notation. Writes at most cap bytes (32 is
 * always enough); returns out. */
static inline char *rmq_java_double_text(double d, char *out, size_t cap)
{
    if (d != d) {
        snprintf(out, cap, "NaN");
        return out;
    }
    if (d - d != 0) {
        snprintf(out, cap, "%sInfinity", d < 0 ? "-" : "");
        return out;
    }
    if (d == 0) {
        snprintf(out, cap, "%s0.0", 1 / d < 0 ? "-" : "");
        return out;
    }
    char e[40];
    int prec = 1;
    for (; prec < 17; prec++) { /* shortest digits that round-trip */
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    snprintf(e, sizeof e, "%.*e", prec - 1, d);
    /* e = [-]D[.DDD]e[+-]XX: split into sign, digits and exponent */
    const char *p = e;
    char sign[2] = {0, 0};
    if (*p == '-')
        sign[0] = *p++;
    char digits[24];
    size_t nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < sizeof digits - 1)
            digits[nd++] = *p;
    digits[nd] = 0;
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = 0;
    int exp = *p == 'e' ? atoi(p + 1) : 0;
    double a = d < 0 ? -d : d;
    if (a >= 1e-3 && a < 1e7) {
        char buf[48];
        size_t n = 0;
        if (exp < 0) {
            n += (size_t)snprintf(buf + n, sizeof buf - n, "0.");
            for (int i = -1; i > exp; i--)
                buf[n++] = '0';
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", digits);
        } else {
            for (int i = 0; i <= exp; i++)
                buf[n++] = (size_t)i < nd ? digits[i] : '0';
            buf[n++] = '.';
            if ((size_t)exp + 1 < nd)
                n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", digits + exp + 1);
            else
                buf[n++] = '0';
            buf[n] = 0;
        }
        snprintf(out, cap, "%s%s", sign, buf);
    } else {
        snprintf(out, cap, "%s%c.%sE%d", sign, digits[0], nd > 1 ? digits + 1 : "0", exp);
    }
    return out;
}

/* ---- number and boolean text, as Java parses it ----------------------------- */

/* Long.parseLong. 0, RMQ_ENOENT (s NULL) or RMQ_EINVAL (not a long). */
static inline int rmq_parse_long(const char *s, int64_t *out)
{
    if (!s)
        return RMQ_ENOENT;
    const char *p = s;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (!*p)
        return RMQ_EINVAL;
    /* Accumulate negatively: INT64_MIN has no positive counterpart. */
    int64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return RMQ_EINVAL;
        int d = *p - '0';
        if (v < (INT64_MIN + d) / 10)
            return RMQ_EINVAL;
        v = v * 10 - d;
    }
    if (!neg) {
        if (v == INT64_MIN)
            return RMQ_EINVAL;
        v = -v;
    }
    if (out)
        *out = v;
    return 0;
}

/* Integer.parseInt. 0, RMQ_ENOENT (s NULL) or RMQ_EINVAL. */
static inline int rmq_parse_int(const char *s, int32_t *out)
{
    int64_t v;
    int rc = rmq_parse_long(s, &v);
    if (rc != 0)
        return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return RMQ_EINVAL;
    if (out)
        *out = (int32_t)v;
    return 0;
}

/* Boolean.parseBoolean (NULL is false). */
static inline bool rmq_parse_bool(const char *s)
{
    if (!s)
        return false;
    const char *t = "true";
    for (; *s && *t; s++, t++)
        if ((*s | 0x20) != *t)
            return false;
    return !*s && !*t;
}

/* ---- ext fields of a command -------------------------------------------------- */

/* The value or NULL (absent or JSON null); owned by cmd. */
static inline const char *rmq_ext_str(const rmq_host_api *api, const rmq_cmd *cmd, const char *key)
{
    return api->cmd_ext_get(cmd, key);
}

/* 0 with *out set, RMQ_ENOENT when absent (*out untouched: pre-set your
 * default), RMQ_EINVAL when present but not a number. */
static inline int rmq_ext_long(const rmq_host_api *api, const rmq_cmd *cmd, const char *key,
                               int64_t *out)
{
    return rmq_parse_long(api->cmd_ext_get(cmd, key), out);
}

static inline int rmq_ext_int(const rmq_host_api *api, const rmq_cmd *cmd, const char *key,
                              int32_t *out)
{
    return rmq_parse_int(api->cmd_ext_get(cmd, key), out);
}

/* 0 with *out = Boolean.parseBoolean(value), or RMQ_ENOENT when absent. */
static inline int rmq_ext_bool(const rmq_host_api *api, const rmq_cmd *cmd, const char *key,
                               bool *out)
{
    const char *v = api->cmd_ext_get(cmd, key);
    if (!v)
        return RMQ_ENOENT;
    if (out)
        *out = rmq_parse_bool(v);
    return 0;
}

/* Set key to a number's decimal text (Java's Long.toString). */
static inline int rmq_ext_set_long(const rmq_host_api *api, rmq_cmd *cmd, const char *key,
                                   int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return api->cmd_ext_set(cmd, key, buf);
}

static inline int rmq_ext_set_bool(const rmq_host_api *api, rmq_cmd *cmd, const char *key, bool v)
{
    return api->cmd_ext_set(cmd, key, v ? "true" : "false");
}

/* ---- requests and answers ------------------------------------------------------- */

/* A oneway request never gets an answer (Java's RemotingCommand.isOnewayRPC). */
static inline bool rmq_is_oneway(const rmq_host_api *api, const rmq_cmd *cmd)
{
    return (api->cmd_flag(cmd) & RMQ_CMD_FLAG_ONEWAY) != 0;
}

/* Answer `req` with code, remark (may be NULL) and body (copied; may be
 * NULL). A oneway request is not answered and RMQ_OK is returned, so a
 * processor can end with `return rmq_answer(...)` whatever the flag. */
static inline int rmq_answer(const rmq_host_api *api, rmq_request *req, const rmq_cmd *cmd,
                             int32_t code, const char *remark, const void *body, size_t len)
{
    if (rmq_is_oneway(api, cmd))
        return RMQ_OK;
    rmq_cmd *resp = api->cmd_new_response(cmd, code, remark);
    if (!resp)
        return RMQ_ENOMEM;
    if (body && len > 0 && api->cmd_set_body(resp, body, len, NULL, NULL) != 0) {
        api->cmd_free(resp);
        return RMQ_ENOMEM;
    }
    return api->reply(req, resp);
}

/* SUCCESS with no remark and no body. */
static inline int rmq_answer_ok(const rmq_host_api *api, rmq_request *req, const rmq_cmd *cmd)
{
    return rmq_answer(api, req, cmd, RMQ_RESPONSE_SUCCESS, NULL, NULL, 0);
}

/* A before hook's refusal remark (ABI 1.7 rmq_rpc_before_remark_fn): format
 * it into the host's buffer, cut to its capacity. Returns the length the
 * full text would have had (as snprintf), or RMQ_EINVAL for a NULL buffer. */
static inline int rmq_remark_printf(rmq_remark_buf *b, const char *fmt, ...) RMQ_PRINTF(2, 3);
static inline int rmq_remark_printf(rmq_remark_buf *b, const char *fmt, ...)
{
    if (!b || !b->data || b->cap == 0)
        return RMQ_EINVAL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->data, b->cap, fmt, ap);
    va_end(ap);
    if (n < 0)
        b->data[0] = '\0';
    return n;
}

/* Same for a finished text (may be NULL: no remark). */
static inline int rmq_remark_set(rmq_remark_buf *b, const char *text)
{
    return rmq_remark_printf(b, "%s", text ? text : "");
}

/* ---- string map ------------------------------------------------------------------- */
/* A chained hash map from C strings to pointers. It owns its nodes only: keys
 * are borrowed (keep them alive, e.g. inside the value) and values are the
 * caller's. Not thread-safe: callers serialise access. */

typedef struct rmq_str_map_node {
    const char *key;
    uint32_t hash;
    void *value;
    struct rmq_str_map_node *next;
} rmq_str_map_node;

typedef struct rmq_str_map {
    rmq_str_map_node **buckets;
    size_t nbuckets; /* power of two, 0 before the first insert */
    size_t count;
} rmq_str_map;

typedef struct rmq_str_map_iter {
    const rmq_str_map *m;
    size_t bucket;
    rmq_str_map_node *next;
} rmq_str_map_iter;

/* FNV-1a: cheap and good enough for topic, group and broker names. */
static inline uint32_t rmq_str_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h;
}

static inline void rmq_str_map_init(rmq_str_map *m)
{
    m->buckets = NULL;
    m->nbuckets = 0;
    m->count = 0;
}

/* Frees the nodes only; values are the caller's. */
static inline void rmq_str_map_destroy(rmq_str_map *m)
{
    for (size_t i = 0; i < m->nbuckets; i++) {
        rmq_str_map_node *n = m->buckets[i];
        while (n) {
            rmq_str_map_node *next = n->next;
            free(n);
            n = next;
        }
    }
    free(m->buckets);
    rmq_str_map_init(m);
}

static inline rmq_str_map_node *rmq_str_map_find_(const rmq_str_map *m, const char *key, uint32_t h)
{
    if (!m->nbuckets)
        return NULL;
    for (rmq_str_map_node *n = m->buckets[h & (m->nbuckets - 1)]; n; n = n->next)
        if (n->hash == h && strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

static inline void *rmq_str_map_get(const rmq_str_map *m, const char *key)
{
    rmq_str_map_node *n = rmq_str_map_find_(m, key, rmq_str_hash(key));
    return n ? n->value : NULL;
}

static inline int rmq_str_map_grow_(rmq_str_map *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : 16;
    rmq_str_map_node **b = (rmq_str_map_node **)calloc(nb, sizeof(*b));
    if (!b)
        return -1;
    for (size_t i = 0; i < m->nbuckets; i++) {
        rmq_str_map_node *n = m->buckets[i];
        while (n) {
            rmq_str_map_node *next = n->next;
            size_t j = n->hash & (nb - 1);
            n->next = b[j];
            b[j] = n;
            n = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
    return 0;
}

/* Insert or replace; returns the previous value (NULL if none). *err (may
 * be NULL) is set to 0, or -1 when out of memory (nothing inserted). */
static inline void *rmq_str_map_put(rmq_str_map *m, const char *key, void *value, int *err)
{
    uint32_t h = rmq_str_hash(key);
    rmq_str_map_node *n = rmq_str_map_find_(m, key, h);
    if (err)
        *err = 0;
    if (n) {
        void *old = n->value;
        n->value = value;
        n->key = key;
        return old;
    }
    /* A failed grow keeps the old table (slower chains, still correct). */
    if (m->count + 1 > m->nbuckets && rmq_str_map_grow_(m) != 0 && !m->nbuckets) {
        if (err)
            *err = -1;
        return NULL;
    }
    n = (rmq_str_map_node *)malloc(sizeof(*n));
    if (!n) {
        if (err)
            *err = -1;
        return NULL;
    }
    n->key = key;
    n->hash = h;
    n->value = value;
    size_t j = h & (m->nbuckets - 1);
    n->next = m->buckets[j];
    m->buckets[j] = n;
    m->count++;
    return NULL;
}

/* Remove and return the value, or NULL. */
static inline void *rmq_str_map_remove(rmq_str_map *m, const char *key)
{
    if (!m->nbuckets)
        return NULL;
    uint32_t h = rmq_str_hash(key);
    rmq_str_map_node **pp = &m->buckets[h & (m->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        rmq_str_map_node *n = *pp;
        if (n->hash == h && strcmp(n->key, key) == 0) {
            void *v = n->value;
            *pp = n->next;
            free(n);
            m->count--;
            return v;
        }
    }
    return NULL;
}

static inline size_t rmq_str_map_count(const rmq_str_map *m)
{
    return m->count;
}

/* Iteration (any order) that tolerates removing the current entry. */
static inline void rmq_str_map_iter_init(rmq_str_map_iter *it, const rmq_str_map *m)
{
    it->m = m;
    it->bucket = 0;
    it->next = m->nbuckets ? m->buckets[0] : NULL;
}

/* Next entry (key and value may be NULL), or false at the end. */
static inline bool rmq_str_map_iter_next(rmq_str_map_iter *it, const char **key, void **value)
{
    while (!it->next) {
        if (++it->bucket >= it->m->nbuckets)
            return false;
        it->next = it->m->buckets[it->bucket];
    }
    rmq_str_map_node *n = it->next;
    it->next = n->next;
    if (key)
        *key = n->key;
    if (value)
        *value = n->value;
    return true;
}

#ifdef __cplusplus
}
#endif
#endif
