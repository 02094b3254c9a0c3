/* route_encoder.c — writes route-table views as fastjson-shaped JSON. Owns
 * the key order and dialect rules of every body it emits; must not modify
 * the route table. */
#include "route_encoder.h"

#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **sorted_keys(const str_map *m, size_t *n)
{
    *n = 0;
    if (str_map_count(m) == 0)
        return NULL;
    const char **keys = malloc(str_map_count(m) * sizeof(*keys));
    if (!keys)
        return NULL;
    str_map_iter it;
    const char *k;
    str_map_iter_init(&it, m);
    while (str_map_iter_next(&it, &k, NULL))
        keys[(*n)++] = k;
    qsort(keys, *n, sizeof(*keys), cmp_str);
    return keys;
}

static void put_broker_addrs(text_buf *o, const broker_data *bd, bool standard)
{
    tb_puts(o, "{");
    for (size_t i = 0; i < bd->naddr; i++) {
        if (i)
            tb_putc(o, ',');
        if (standard)
            tb_putc(o, '"');
        tb_int(o, bd->addrs[i].id);
        if (standard)
            tb_putc(o, '"');
        tb_putc(o, ':');
        tb_json_str(o, bd->addrs[i].addr, standard);
    }
    tb_putc(o, '}');
}

static void put_broker_data(text_buf *o, const broker_data *bd, bool standard)
{
    tb_puts(o, "{\"brokerAddrs\":");
    put_broker_addrs(o, bd, standard);
    tb_puts(o, ",\"brokerName\":");
    tb_json_str(o, bd->name, standard);
    if (bd->cluster) {
        tb_puts(o, ",\"cluster\":");
        tb_json_str(o, bd->cluster, standard);
    }
    tb_putc(o, '}');
}

static void put_queue_data(text_buf *o, const queue_data *q, bool standard)
{
    tb_puts(o, "{\"brokerName\":");
    tb_json_str(o, q->broker_name, standard);
    tb_puts(o, ",\"perm\":");
    tb_int(o, q->perm);
    tb_puts(o, ",\"readQueueNums\":");
    tb_int(o, q->read_queue_nums);
    tb_puts(o, ",\"topicSysFlag\":");
    tb_int(o, q->topic_sys_flag);
    tb_puts(o, ",\"writeQueueNums\":");
    tb_int(o, q->write_queue_nums);
    tb_putc(o, '}');
}

void broker_fragments_init(broker_fragments *f)
{
    f->items = NULL;
    f->n = 0;
    f->cap = 0;
}

void broker_fragments_free(broker_fragments *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->items[i].text[0]);
        free(f->items[i].text[1]);
    }
    free(f->items);
    broker_fragments_init(f);
}

/* The cached rendering of bd, created on first use; NULL on OOM. */
static const broker_fragment *fragment_for(broker_fragments *f, const broker_data *bd)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->items[i].bd == bd)
            return &f->items[i];
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 8;
        broker_fragment *ni = realloc(f->items, nc * sizeof(*ni));
        if (!ni)
            return NULL;
        f->items = ni;
        f->cap = nc;
    }
    broker_fragment *frag = &f->items[f->n];
    frag->bd = bd;
    for (int d = 0; d < 2; d++) {
        text_buf b;
        tb_init(&b);
        put_broker_data(&b, bd, d == 1);
        frag->text[d] = tb_take(&b, &frag->len[d]);
    }
    if (!frag->text[0] || !frag->text[1]) {
        free(frag->text[0]);
        free(frag->text[1]);
        return NULL;
    }
    f->n++;
    return frag;
}

static void put_route(const route_table *rt, const topic_entry *te, const broker_data *const *bds,
                      size_t nbd, const char *order_conf, bool standard, text_buf *out,
                      broker_fragments *frags)
{
    tb_reserve(out, 160 * nbd + 110 * te->nqd + 64);
    tb_puts(out, "{\"brokerDatas\":[");
    for (size_t i = 0; i < nbd; i++) {
        if (i)
            tb_putc(out, ',');
        const broker_fragment *fr = frags ? fragment_for(frags, bds[i]) : NULL;
        if (fr)
            tb_putn(out, fr->text[standard], fr->len[standard]);
        else
            put_broker_data(out, bds[i], standard);
    }
    tb_puts(out, "],\"filterServerTable\":{");
    /* grouped per broker, sorted by id within one: deterministic output */
    bool first = true;
    if (str_map_count(&rt->filters) > 0) {
        for (size_t i = 0; i < nbd; i++) {
            for (size_t j = 0; j < bds[i]->naddr; j++) {
                const filter_entry *fe = route_table_filter(rt, bds[i]->addrs[j].addr);
                if (!fe)
                    continue;
                if (!first)
                    tb_putc(out, ',');
                first = false;
                tb_json_str(out, fe->addr, standard);
                tb_puts(out, ":[");
                for (size_t k = 0; k < fe->n; k++) {
                    if (k)
                        tb_putc(out, ',');
                    tb_json_str(out, fe->servers[k], standard);
                }
                tb_putc(out, ']');
            }
        }
    }
    tb_putc(out, '}');
    if (order_conf) {
        tb_puts(out, ",\"orderTopicConf\":");
        tb_json_str(out, order_conf, standard);
    }
    tb_puts(out, ",\"queueDatas\":[");
    for (size_t i = 0; i < te->nqd; i++) {
        if (i)
            tb_putc(out, ',');
        put_queue_data(out, &te->qds[i], standard);
    }
    tb_puts(out, "]}");
}

bool encode_topic_route_both(const route_table *rt, const char *topic, const char *order_conf,
                             text_buf *native, text_buf *standard, broker_fragments *frags)
{
    const topic_entry *te = route_table_topic(rt, topic);
    if (!te || te->nqd == 0)
        return false;
    const broker_data *stack_bds[8];
    const broker_data **bds = te->nqd <= 8 ? stack_bds : malloc(te->nqd * sizeof(*bds));
    if (!bds)
        return false;
    size_t nbd = 0;
    for (size_t i = 0; i < te->nqd; i++) {
        const broker_data *bd = route_table_broker(rt, te->qds[i].broker_name);
        if (bd)
            bds[nbd++] = bd;
    }
    if (nbd > 0) {
        if (native)
            put_route(rt, te, bds, nbd, order_conf, false, native, frags);
        if (standard)
            put_route(rt, te, bds, nbd, order_conf, true, standard, frags);
    }
    if (bds != stack_bds)
        free(bds);
    return nbd > 0;
}

bool encode_topic_route(const route_table *rt, const char *topic, const char *order_conf,
                        bool standard, text_buf *out)
{
    return encode_topic_route_both(rt, topic, order_conf, standard ? NULL : out,
                                   standard ? out : NULL, NULL);
}

void encode_cluster_info(const route_table *rt, text_buf *out)
{
    size_t n;
    const char **names = sorted_keys(&rt->brokers, &n);
    tb_puts(out, "{\"brokerAddrTable\":{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            tb_putc(out, ',');
        tb_json_str(out, names[i], false);
        tb_putc(out, ':');
        put_broker_data(out, route_table_broker(rt, names[i]), false);
    }
    free(names);
    tb_puts(out, "},\"clusterAddrTable\":{");
    names = sorted_keys(&rt->clusters, &n);
    for (size_t i = 0; i < n; i++) {
        const cluster_entry *ce = route_table_cluster(rt, names[i]);
        if (i)
            tb_putc(out, ',');
        tb_json_str(out, names[i], false);
        tb_puts(out, ":[");
        for (size_t j = 0; j < ce->n; j++) {
            if (j)
                tb_putc(out, ',');
            tb_json_str(out, ce->brokers[j], false);
        }
        tb_putc(out, ']');
    }
    free(names);
    tb_puts(out, "}}");
}

static bool wanted(const topic_entry *te, topic_list_kind kind)
{
    if (kind == TOPIC_LIST_ALL)
        return true;
    if (te->nqd == 0)
        return false;
    int32_t f = te->qds[0].topic_sys_flag; /* Java looks at the first QueueData only */
    switch (kind) {
    case TOPIC_LIST_UNIT: return (f & 1) != 0;
    case TOPIC_LIST_HAS_UNIT_SUB: return (f & 2) != 0;
    case TOPIC_LIST_HAS_UNIT_SUB_UNUNIT: return !(f & 1) && (f & 2);
    default: return false;
    }
}

static void put_name_list(text_buf *out, const char **names, size_t n)
{
    tb_puts(out, "{\"topicList\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            tb_putc(out, ',');
        tb_json_str(out, names[i], false);
    }
    tb_puts(out, "]}");
}

void encode_topic_list(const route_table *rt, topic_list_kind kind, text_buf *out)
{
    size_t n;
    const char **names = sorted_keys(&rt->topics, &n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (wanted(route_table_topic(rt, names[i]), kind))
            names[k++] = names[i];
    put_name_list(out, names, k);
    free(names);
}

void encode_topics_by_cluster(const route_table *rt, const char *cluster, text_buf *out)
{
    const cluster_entry *ce = route_table_cluster(rt, cluster);
    size_t n;
    const char **names = ce ? sorted_keys(&rt->topics, &n) : NULL;
    size_t k = 0;
    for (size_t i = 0; names && i < n; i++) {
        const topic_entry *te = route_table_topic(rt, names[i]);
        bool hit = false;
        for (size_t q = 0; q < te->nqd && !hit; q++)
            for (size_t b = 0; b < ce->n && !hit; b++)
                hit = strcmp(te->qds[q].broker_name, ce->brokers[b]) == 0;
        if (hit)
            names[k++] = names[i];
    }
    put_name_list(out, names, k);
    free(names);
}

void encode_system_topic_list(const route_table *rt, text_buf *out)
{
    size_t nc, nb;
    const char **clusters = sorted_keys(&rt->clusters, &nc);
    const char **brokers = sorted_keys(&rt->brokers, &nb);
    const char *addr = NULL;
    if (nb > 0) {
        const broker_data *bd = route_table_broker(rt, brokers[0]);
        if (bd->naddr > 0)
            addr = bd->addrs[0].addr;
    }
    tb_putc(out, '{');
    if (addr) {
        tb_puts(out, "\"brokerAddr\":");
        tb_json_str(out, addr, false);
        tb_putc(out, ',');
    }
    tb_puts(out, "\"topicList\":[");
    bool first = true;
    for (size_t i = 0; i < nc; i++) {
        if (!first)
            tb_putc(out, ',');
        first = false;
        tb_json_str(out, clusters[i], false);
    }
    for (size_t i = 0; i < nb; i++) {
        /* a set: a broker named like a cluster appears once */
        if (route_table_cluster(rt, brokers[i]))
            continue;
        if (!first)
            tb_putc(out, ',');
        first = false;
        tb_json_str(out, brokers[i], false);
    }
    tb_puts(out, "]}");
    free(clusters);
    free(brokers);
}

void encode_broker_member_group(const route_table *rt, const char *cluster,
                                const char *broker_name, text_buf *out)
{
    const broker_data *bd = route_table_broker(rt, broker_name);
    tb_puts(out, "{\"brokerMemberGroup\":{\"brokerAddrs\":");
    if (bd)
        put_broker_addrs(out, bd, false);
    else
        tb_puts(out, "{}");
    if (broker_name) {
        tb_puts(out, ",\"brokerName\":");
        tb_json_str(out, broker_name, false);
    }
    if (cluster) {
        tb_puts(out, ",\"cluster\":");
        tb_json_str(out, cluster, false);
    }
    tb_puts(out, "}}");
}
