/* filter_engine.h — the TAG/SQL92 expression engine behind the "filter.expr"
 * service: compile to a self-contained block, evaluate without allocation,
 * validate a subscription as CHECK_CLIENT_CONFIG does (protocol.md §6.4–6.7). */
#ifndef RMQ_FILTER_ENGINE_H
#define RMQ_FILTER_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rmqhost/rmqhost.h"
#include "rmqhost/services/filter_service.h"

/* Bounds on parenthesis/NOT nesting and on tree depth (long AND/OR chains):
 * Java would overflow its stack somewhere above them; we refuse cleanly
 * instead, and evaluation recursion stays bounded (docs/compat.md). */
#define RMQ_FX_MAX_NESTING 256
#define RMQ_FX_MAX_DEPTH 2048

typedef struct rmq_fx_options {
    bool ops5x; /* CONTAINS / STARTSWITH / ENDSWITH (RocketMQ 5.x grammar) */
} rmq_fx_options;

/* Compile `len` bytes of `text`. type NULL/""/"TAG" → TAG, "SQL92" → SQL92
 * (case-sensitive), anything else → RMQ_ENOENT. Returns 0 and *out (one
 * malloc block, free() it), RMQ_EINVAL with err and err_pos (1-based character
 * position, 0 when not positional), or RMQ_ENOMEM. */
int rmq_fx_compile(const char *type, const char *text, size_t len, const rmq_fx_options *opt,
                   struct rmq_filter_expr **out, char *err, size_t errlen, int *err_pos);

/* SQL92 only (type already resolved). */
int rmq_fx_compile_sql92(const char *text, size_t len, const rmq_fx_options *opt,
                         struct rmq_filter_expr **out, char *err, size_t errlen, int *err_pos);
int rmq_fx_compile_tag(const char *text, size_t len, struct rmq_filter_expr **out, char *err,
                       size_t errlen);

/* Evaluate; see rmq_filter_expr_service.evaluate. Never allocates. */
rmq_filter_result rmq_fx_evaluate(const struct rmq_filter_expr *e, const char *tag,
                                  rmq_filter_lookup_fn lookup, void *lookup_ud, char *err,
                                  size_t errlen);
rmq_filter_result rmq_fx_evaluate_sql92(const struct rmq_filter_expr *e,
                                        rmq_filter_lookup_fn lookup, void *lookup_ud, char *err,
                                        size_t errlen);

/* The expression text a block was compiled from (NUL-terminated). */
const char *rmq_fx_text(const struct rmq_filter_expr *e);
bool rmq_fx_is_sql92(const struct rmq_filter_expr *e);

/* CHECK_CLIENT_CONFIG steps 2–5 (§6.7): 0, 1 or 23; remark into err. */
int32_t rmq_fx_check(bool enable_property_filter, const rmq_fx_options *opt, const char *type,
                     const char *expression, char *err, size_t errlen);

/* Java String.hashCode() of UTF-8 text (UTF-16 units, malformed → U+FFFD). */
int32_t rmq_java_string_hash(const char *utf8, size_t len);

#endif
