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

const char **sorted_keys(const rmq_str_map *m, size_t *n)
{
    *n = 0;
    if (rmq_str_map_count(m) == 0)
        return NULL;
    const char **keys = malloc(rmq_str_map_count(m) * sizeof(*keys));
    if (!keys)
        return NULL;
    rmq_str_map_iter it;
    const char *k;
    rmq_str_map_iter_init(&it, m);
    while (rmq_str_map_iter_next(&it, &k, NULL))
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

void encode_broker_data(const broker_data *bd, bool standard, text_buf *o)
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

void encode_queue_data_head(const char *broker_name, bool standard, text_buf *o)
{
    tb_puts(o, "{\"brokerName\":");
    tb_json_str(o, broker_name, standard);
    tb_puts(o, ",\"perm\":");
}

void encode_queue_data_tail(const queue_data *q, text_buf *o)
{
    tb_int(o, q->perm);
    tb_puts(o, ",\"readQueueNums\":");
    tb_int(o, q->read_queue_nums);
    tb_puts(o, ",\"topicSysFlag\":");
    tb_int(o, q->topic_sys_flag);
    tb_puts(o, ",\"writeQueueNums\":");
    tb_int(o, q->write_queue_nums);
    tb_putc(o, '}');
}

void encode_filter_table_members(const route_table *rt, const broker_data *const *bds, size_t nbd,
                                 bool standard, text_buf *out)
{
    if (rmq_str_map_count(&rt->filters) == 0)
        return;
    /* grouped per broker, sorted by id within one: deterministic output */
    bool first = true;
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

static void put_route(const route_table *rt, const topic_entry *te, const broker_data *const *bds,
                      size_t nbd, const char *order_conf, bool standard, text_buf *out)
{
    tb_reserve(out, 160 * nbd + 110 * te->nqd + 64);
    tb_puts(out, "{\"brokerDatas\":[");
    for (size_t i = 0; i < nbd; i++) {
        if (i)
            tb_putc(out, ',');
        encode_broker_data(bds[i], standard, out);
    }
    tb_puts(out, "],\"filterServerTable\":{");
    encode_filter_table_members(rt, bds, nbd, standard, out);
    tb_putc(out, '}');
    if (order_conf) {
        tb_puts(out, ",\"orderTopicConf\":");
        tb_json_str(out, order_conf, standard);
    }
    tb_puts(out, ",\"queueDatas\":[");
    for (size_t i = 0; i < te->nqd; i++) {
        if (i)
            tb_putc(out, ',');
        encode_queue_data_head(te->qds[i].broker_name, standard, out);
        encode_queue_data_tail(&te->qds[i], out);
    }
    tb_puts(out, "]}");
}

bool encode_topic_route(const route_table *rt, const char *topic, const char *order_conf,
                        bool standard, text_buf *out)
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
    if (nbd > 0)
        put_route(rt, te, bds, nbd, order_conf, standard, out);
    if (bds != stack_bds)
        free(bds);
    return nbd > 0;
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
        encode_broker_data(route_table_broker(rt, names[i]), false, out);
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

/* Java's getSystemTopicList: every cluster name and every broker name that a
 * cluster's set holds — also a name whose BrokerData is gone (an UNREGISTER
 * through another cluster removes the data but only that cluster's entry),
 * so the names come from the cluster table, not from the broker table. */
void encode_system_topic_list(const route_table *rt, text_buf *out)
{
    size_t nc, nb;
    const char **clusters = sorted_keys(&rt->clusters, &nc);
    const char **brokers = sorted_keys(&rt->brokers, &nb);
    const char *addr = NULL;
    for (size_t i = 0; i < nb && !addr; i++) {
        const broker_data *bd = route_table_broker(rt, brokers[i]);
        if (bd->naddr > 0)
            addr = bd->addrs[0].addr;
    }
    size_t nnames = 0;
    for (size_t i = 0; i < nc; i++)
        nnames += route_table_cluster(rt, clusters[i])->n;
    const char **names = nnames ? malloc(nnames * sizeof(*names)) : NULL;
    if (nnames && !names)
        nnames = 0; /* out of memory: the cluster names alone */
    size_t k = 0;
    for (size_t i = 0; i < nc && names; i++) {
        const cluster_entry *ce = route_table_cluster(rt, clusters[i]);
        for (size_t j = 0; j < ce->n; j++)
            names[k++] = ce->brokers[j];
    }
    if (k > 1)
        qsort(names, k, sizeof(*names), cmp_str);
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
    for (size_t i = 0; i < k; i++) {
        /* a set: a name listed by two clusters, or named like a cluster,
         * appears once */
        if ((i > 0 && strcmp(names[i], names[i - 1]) == 0) || route_table_cluster(rt, names[i]))
            continue;
        if (!first)
            tb_putc(out, ',');
        first = false;
        tb_json_str(out, names[i], false);
    }
    tb_puts(out, "]}");
    free(names);
    free(clusters);
    free(brokers);
}

void encode_broker_member_group(const route_table *rt, const char *cluster, const char *broker_name,
                                text_buf *out)
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
