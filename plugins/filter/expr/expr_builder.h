/* expr_builder.h — growable arrays a compiler fills while parsing, packed at
 * the end into one compiled-expression block (compiled_expr.h). */
#ifndef RMQ_FILTER_EXPR_BUILDER_H
#define RMQ_FILTER_EXPR_BUILDER_H

#include "compiled_expr.h"

typedef struct rmq_fx_builder {
    rmq_fx_node *nodes;
    uint32_t node_count, node_cap;
    rmq_fx_str *lists;
    uint32_t list_count, list_cap;
    char *pool;
    uint32_t pool_size, pool_cap;
    bool oom;
} rmq_fx_builder;

void rmq_fxb_init(rmq_fx_builder *b);
void rmq_fxb_dispose(rmq_fx_builder *b);
/* Append a node; returns its index (UINT32_MAX and b->oom on failure). */
uint32_t rmq_fxb_node(rmq_fx_builder *b, const rmq_fx_node *n);
/* Copy `len` bytes into the pool (NUL added). */
rmq_fx_str rmq_fxb_string(rmq_fx_builder *b, const char *s, size_t len);
/* Append a list entry; returns its index. */
uint32_t rmq_fxb_list(rmq_fx_builder *b, rmq_fx_str s);
/* Pack into one malloc() block (NULL on OOM). */
struct rmq_filter_expr *rmq_fxb_pack(rmq_fx_builder *b, rmq_fx_type type, bool match_all,
                                     uint32_t root, rmq_fx_str text);

#endif
