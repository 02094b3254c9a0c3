/* filter_service.h — services exported by the `filter` plugin.
 *
 *   "filter.expr"    (version 1): compile TAG / SQL92 subscription expressions,
 *                    evaluate them against a message, validate a subscription
 *                    as CHECK_CLIENT_CONFIG must (protocol.md §6.4–§6.7).
 *   "filter.servers" (version 1): the live filter-server addresses registered
 *                    with this broker by REGISTER_FILTER_SERVER (§6.2), for the
 *                    `filterServerList` of REGISTER_BROKER.
 *
 * Use: api->service_acquire(ctx, RMQ_FILTER_EXPR_SERVICE, 1, &table, &ud, &ref),
 * cast table to the struct below, pass `ud` as the first argument of every
 * call, then api->service_release(ref). Hold a ref for one operation only, so
 * the filter plugin can be hot-reloaded. Check `size` before calling an entry
 * appended after the one you were built with. All functions: any thread.
 */
#ifndef RMQHOST_SERVICES_FILTER_SERVICE_H
#define RMQHOST_SERVICES_FILTER_SERVICE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- "filter.expr" ------------------------------------------------------- */
#define RMQ_FILTER_EXPR_SERVICE "filter.expr"
#define RMQ_FILTER_EXPR_VERSION 1

/* Response codes check() returns (protocol.md §3.2, §6.7). */
#define RMQ_FILTER_CHECK_SUCCESS 0
#define RMQ_FILTER_CHECK_SYSTEM_ERROR 1 /* enablePropertyFilter = false */
#define RMQ_FILTER_CHECK_SUBSCRIPTION_PARSE_FAILED 23

/* Outcome of one evaluation. Only RMQ_FILTER_TRUE means "deliver". */
typedef enum rmq_filter_result {
    RMQ_FILTER_FALSE = 0,
    RMQ_FILTER_TRUE = 1,
    RMQ_FILTER_NULL = 2,      /* SQL92 unknown (e.g. a missing property) */
    RMQ_FILTER_EVAL_ERROR = 3 /* Java would throw; a broker does not deliver */
} rmq_filter_result;

/* A compiled expression. It is ONE malloc() block with no pointers into the
 * provider's code, so the holder may keep it across service_release and
 * across a reload of the filter plugin, and may release it with plain free()
 * (or the table's free_expr, same thing). evaluate() of a later provider
 * generation answers RMQ_FILTER_EVAL_ERROR with the message "stale compiled
 * expression" if the block's format differs: recompile then. Immutable after
 * compile: may be evaluated by several threads at once. */
typedef struct rmq_filter_expr rmq_filter_expr;

/* Property lookup for SQL92 evaluation: the value of property `name`
 * (NUL-terminated, case-sensitive) as a NUL-terminated string, or NULL when
 * the message does not carry it. The string must stay valid until evaluate()
 * returns. All RocketMQ property values are strings, including TAGS/KEYS. */
typedef const char *(*rmq_filter_lookup_fn)(void *lookup_ud, const char *name);

/* One ConsumerFilterData (filled by consumer_filter below). */
typedef struct rmq_consumer_filter_data {
    int64_t client_version;   /* clientVersion: the subVersion it was built from */
    int32_t dead;             /* 1: the group left (deadTime set), 0: alive */
    char expression_type[32]; /* "SQL92"... */
    rmq_filter_expr *compiled;
} rmq_consumer_filter_data;

typedef struct rmq_filter_expr_service {
    uint32_t size; /* sizeof(rmq_filter_expr_service) of the provider */

    /* Compile `expression` of `expression_type` ("TAG", "SQL92"; NULL or "" =
     * TAG as in Java). On success returns 0 and *out (caller owns, see above).
     * On failure returns RMQ_EINVAL (syntax/semantic error: err gets Java's
     * exception text, e.g. "java.lang.RuntimeException: Value ''x'' cannot be
     * compared.", and *err_pos the 1-based position, in characters from the
     * start of the expression, of the offending token or operator, 0 when
     * not positional; err_pos may be NULL), RMQ_ENOENT (unknown type; err
     * "java.lang.NullPointerException") or RMQ_ENOMEM. SQL92 follows the
     * provider's settings (sql92Operators5x). */
    int (*compile)(void *svc_ud, const char *expression_type, const char *expression,
                   rmq_filter_expr **out, char *err, size_t errlen, int *err_pos);

    /* Evaluate against one message. `tag` is the message's tag (NULL = none):
     * TAG expressions test it against their tag set (Java's client-side
     * string match; `*`/blank match everything). SQL92 expressions read every
     * identifier, TAGS included, through `lookup`. Never allocates. On
     * RMQ_FILTER_EVAL_ERROR, err (may be NULL) receives Java's exception text. */
    rmq_filter_result (*evaluate)(void *svc_ud, const rmq_filter_expr *expr, const char *tag,
                                  rmq_filter_lookup_fn lookup, void *lookup_ud, char *err,
                                  size_t errlen);

    /* free(expr); NULL is a no-op. */
    void (*free_expr)(void *svc_ud, rmq_filter_expr *expr);

    /* CHECK_CLIENT_CONFIG semantics (§6.7 steps 2–5) for one subscription:
     * returns RMQ_FILTER_CHECK_SUCCESS for TAG types (not validated) and valid
     * expressions, RMQ_FILTER_CHECK_SYSTEM_ERROR when enablePropertyFilter is
     * false ("The broker does not support consumer to filter message by X"),
     * RMQ_FILTER_CHECK_SUBSCRIPTION_PARSE_FAILED for an expression or type
     * Java would refuse. err (may be NULL) receives the remark to send. */
    int32_t (*check)(void *svc_ud, const char *expression_type, const char *expression, char *err,
                     size_t errlen);

    /* Java String.hashCode() of a UTF-8 tag (over its UTF-16 code units), the
     * tag code a consume queue stores (§6.4). Invalid UTF-8 bytes count as
     * U+FFFD. */
    int32_t (*tag_hash_code)(void *svc_ud, const char *tag);

    /* -- appended after version 1 shipped (check `size` before calling) -- */
    /* ConsumerFilterManager.get(topic, group) (protocol-messages.md §10.8.2
     * checks 7f/7g): the ConsumerFilterData the provider built from the
     * HEART_BEAT subscriptions of `group` (non-TAG types only; entries of
     * groups that left are kept until cleaned, as Java's). 0 with *out
     * filled, RMQ_ENOENT when there is none, RMQ_ENOMEM. out->compiled is
     * the caller's copy of the compiled expression (free() it), NULL when the
     * stored expression no longer compiles (Java: match everything). */
    int (*consumer_filter)(void *svc_ud, const char *topic, const char *group,
                           rmq_consumer_filter_data *out);
} rmq_filter_expr_service;

/* Convenience lookup over a NULL-terminated {key, value, key, value, ..., NULL}
 * array: pass rmq_filter_kv_lookup with the array as lookup_ud. */
static inline const char *rmq_filter_kv_lookup(void *lookup_ud, const char *name)
{
    const char *const *kv = (const char *const *)lookup_ud;
    for (; kv && kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

/* ---- "filter.servers" ---------------------------------------------------- */
#define RMQ_FILTER_SERVERS_SERVICE "filter.servers"
#define RMQ_FILTER_SERVERS_VERSION 1

typedef void (*rmq_filter_server_fn)(void *ud, const char *filter_server_addr);

typedef struct rmq_filter_servers_service {
    uint32_t size; /* sizeof(rmq_filter_servers_service) of the provider */

    /* Call fn once per live registered filter server ("ip:port"), in
     * registration order; the string is valid during the call only. Returns
     * the number of addresses. */
    size_t (*for_each)(void *svc_ud, rmq_filter_server_fn fn, void *ud);

    /* Write the live addresses as a JSON array of strings (`[]` when none),
     * exactly what REGISTER_BROKER's `filterServerList` holds, NUL-terminated,
     * into buf. Returns the length the full text needs (excluding the NUL),
     * like snprintf: a result >= len means it was truncated. */
    size_t (*to_json)(void *svc_ud, char *buf, size_t len);
} rmq_filter_servers_service;

#ifdef __cplusplus
}
#endif
#endif
