/* compiled_expr.h — layout of a compiled filter expression: one malloc()
 * block holding a header, the node array, string-list entries and a string
 * pool. Blocks hold offsets, never pointers, so they survive a reload of the
 * plugin and can be released with free(). Internal to the filter engine. */
#ifndef RMQ_FILTER_COMPILED_EXPR_H
#define RMQ_FILTER_COMPILED_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RMQ_FX_MAGIC 0x58465152u /* "RQFX" */
#define RMQ_FX_FORMAT 1u

typedef enum rmq_fx_type { RMQ_FX_TYPE_TAG = 1, RMQ_FX_TYPE_SQL92 = 2 } rmq_fx_type;

/* SQL92 node kinds, named after the Java expression class they mirror. */
typedef enum rmq_fx_kind {
    FX_CONST_NULL = 1, /* BooleanConstantExpression(null): boolean-typed */
    FX_CONST_TRUE,
    FX_CONST_FALSE,
    FX_CONST_INT,    /* java.lang.Integer */
    FX_CONST_LONG,   /* java.lang.Long */
    FX_CONST_DOUBLE, /* java.lang.Double */
    FX_CONST_STRING,
    FX_PROPERTY,
    FX_NEGATE,    /* UnaryExpression "-": not boolean-typed */
    FX_BOOL_CAST, /* a property used where a boolean is needed */
    FX_NOT,
    FX_AND,
    FX_OR,
    FX_EQ, /* also IS NULL (right = NULL constant); <> is NOT(EQ) */
    FX_GT,
    FX_GE,
    FX_LT,
    FX_LE,
    FX_IN,       /* flags & FX_FLAG_NOT: NOT IN */
    FX_CONTAINS, /* 5.x operators; flags & FX_FLAG_NOT for the NOT forms */
    FX_STARTSWITH,
    FX_ENDSWITH
} rmq_fx_kind;

#define FX_FLAG_NOT 0x1u

typedef struct rmq_fx_str {
    uint32_t off; /* into the pool; the bytes are NUL-terminated there */
    uint32_t len;
} rmq_fx_str;

typedef struct rmq_fx_node {
    uint8_t kind;
    uint8_t flags;
    uint16_t reserved;
    uint32_t left;  /* child node index (unary: the operand) */
    uint32_t right; /* child node index */
    union {
        int64_t i;    /* INT, LONG */
        double d;     /* DOUBLE */
        rmq_fx_str s; /* STRING, PROPERTY, CONTAINS... search string */
        struct {
            uint32_t first; /* into the list array */
            uint32_t count;
        } list; /* IN */
    } v;
} rmq_fx_node;

/* The block. For TAG: `lists` holds the tag set (tag_count entries), and
 * match_all is set for null/empty/`*` subscriptions. */
struct rmq_filter_expr {
    uint32_t magic;
    uint32_t format;
    uint32_t total_size;
    uint8_t type; /* rmq_fx_type */
    uint8_t match_all;
    uint16_t reserved;
    uint32_t node_count;
    uint32_t root;
    uint32_t list_count;
    uint32_t pool_size;
    rmq_fx_str text; /* the expression as given (pool) */
    /* followed by: rmq_fx_node nodes[node_count]; rmq_fx_str lists[list_count];
     * char pool[pool_size]; each part aligned to 8 bytes. */
};

static inline size_t rmq_fx_align8(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

static inline const rmq_fx_node *rmq_fx_nodes(const struct rmq_filter_expr *e)
{
    return (const rmq_fx_node *)(const void *)((const char *)e +
                                               rmq_fx_align8(sizeof(struct rmq_filter_expr)));
}

static inline const rmq_fx_str *rmq_fx_lists(const struct rmq_filter_expr *e)
{
    return (const rmq_fx_str *)(const void *)((const char *)rmq_fx_nodes(e) +
                                              rmq_fx_align8(e->node_count * sizeof(rmq_fx_node)));
}

static inline const char *rmq_fx_pool(const struct rmq_filter_expr *e)
{
    return (const char *)rmq_fx_lists(e) + rmq_fx_align8(e->list_count * sizeof(rmq_fx_str));
}

static inline const char *rmq_fx_string(const struct rmq_filter_expr *e, rmq_fx_str s)
{
    return rmq_fx_pool(e) + s.off;
}

#endif
