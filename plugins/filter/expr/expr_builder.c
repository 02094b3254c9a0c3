/* expr_builder.c — owns the temporary arrays of a compilation and their
 * packing into one self-contained block. Knows nothing about syntax. */
#include "expr_builder.h"

#include <stdlib.h>
#include <string.h>

void rmq_fxb_init(rmq_fx_builder *b)
{
    memset(b, 0, sizeof(*b));
}

void rmq_fxb_dispose(rmq_fx_builder *b)
{
    free(b->nodes);
    free(b->lists);
    free(b->pool);
    memset(b, 0, sizeof(*b));
}

static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    uint32_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > UINT32_MAX / 2)
            return false;
        nc *= 2;
    }
    void *p = realloc(*arr, (size_t)nc * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = nc;
    return true;
}

uint32_t rmq_fxb_node(rmq_fx_builder *b, const rmq_fx_node *n)
{
    if (b->oom || !grow((void **)&b->nodes, &b->node_cap, b->node_count + 1, sizeof(*n))) {
        b->oom = true;
        return UINT32_MAX;
    }
    b->nodes[b->node_count] = *n;
    return b->node_count++;
}

rmq_fx_str rmq_fxb_string(rmq_fx_builder *b, const char *s, size_t len)
{
    rmq_fx_str r = {0, 0};
    if (b->oom || len > UINT32_MAX / 2 || b->pool_size > UINT32_MAX / 2 ||
        !grow((void **)&b->pool, &b->pool_cap, b->pool_size + (uint32_t)len + 1, 1)) {
        b->oom = true;
        return r;
    }
    if (len)
        memcpy(b->pool + b->pool_size, s, len);
    b->pool[b->pool_size + len] = '\0';
    r.off = b->pool_size;
    r.len = (uint32_t)len;
    b->pool_size += (uint32_t)len + 1;
    return r;
}

uint32_t rmq_fxb_list(rmq_fx_builder *b, rmq_fx_str s)
{
    if (b->oom || !grow((void **)&b->lists, &b->list_cap, b->list_count + 1, sizeof(s))) {
        b->oom = true;
        return UINT32_MAX;
    }
    b->lists[b->list_count] = s;
    return b->list_count++;
}

struct rmq_filter_expr *rmq_fxb_pack(rmq_fx_builder *b, rmq_fx_type type, bool match_all,
                                     uint32_t root, rmq_fx_str text)
{
    if (b->oom)
        return NULL;
    size_t hdr = rmq_fx_align8(sizeof(struct rmq_filter_expr));
    size_t nodes = rmq_fx_align8((size_t)b->node_count * sizeof(rmq_fx_node));
    size_t lists = rmq_fx_align8((size_t)b->list_count * sizeof(rmq_fx_str));
    size_t total = hdr + nodes + lists + b->pool_size;
    if (total > UINT32_MAX)
        return NULL;
    struct rmq_filter_expr *e = calloc(1, total ? total : 1);
    if (!e)
        return NULL;
    e->magic = RMQ_FX_MAGIC;
    e->format = RMQ_FX_FORMAT;
    e->total_size = (uint32_t)total;
    e->type = (uint8_t)type;
    e->match_all = match_all ? 1 : 0;
    e->node_count = b->node_count;
    e->root = root;
    e->list_count = b->list_count;
    e->pool_size = b->pool_size;
    e->text = text;
    if (b->node_count)
        memcpy((char *)e + hdr, b->nodes, (size_t)b->node_count * sizeof(rmq_fx_node));
    if (b->list_count)
        memcpy((char *)e + hdr + nodes, b->lists, (size_t)b->list_count * sizeof(rmq_fx_str));
    if (b->pool_size)
        memcpy((char *)e + hdr + nodes + lists, b->pool, b->pool_size);
    return e;
}
