/* pop_poll_limit.c — how many POPs and NOTIFICATIONs may wait (long
 * polling) at once, as Java 5.x's PopLongPollingService limits them: per
 * polling key (topic@group@queueId, the queueId as the request asked, -1
 * for all queues) a request is refused when more than popPollingSize
 * (1024) already wait for that key, and in all when maxPopPollingSize
 * (100000) wait. POPs and NOTIFICATIONs are counted apart (Java has one
 * polling service for each). A refused POP is answered POLLING_FULL (209)
 * at once, a refused NOTIFICATION SUCCESS with hasMsg false and
 * pollingFull true (pop_processors.c, pop_peek_notify.c). The counts live
 * here, not in the held list, so an admission costs one hash look-up
 * rather than a walk over every held request. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header_numbers.h"
#include "pop_service.h"

#define POLL_BUCKETS 4096

typedef struct poll_key {
    struct poll_key *next;
    size_t count;
    char key[];
} poll_key;

struct pop_poll_counts {
    pthread_mutex_t mu;
    poll_key *buckets[POLL_BUCKETS];
    size_t total[2]; /* [0] POPs, [1] NOTIFICATIONs */
};

static uint32_t key_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* The polling key of a held request, prefixed by its kind ('P' POP, 'N'
 * NOTIFICATION) so both services count apart; false when it has none. */
static bool key_of(store_plugin *sp, const rmq_cmd *cmd, char *out, size_t cap, int *kind)
{
    const rmq_host_api *a = sp->api;
    int32_t code = a->cmd_code(cmd);
    if (code != POP_POP_MESSAGE && code != POP_NOTIFICATION)
        return false;
    const char *g = a->cmd_ext_get(cmd, "consumerGroup");
    const char *t = a->cmd_ext_get(cmd, "topic");
    int32_t q = 0;
    if (!g || !t || java_parse_int(a->cmd_ext_get(cmd, "queueId"), &q) != 0)
        return false;
    *kind = code == POP_POP_MESSAGE ? 0 : 1;
    int n = snprintf(out, cap, "%c%s@%s@%d", *kind ? 'N' : 'P', t, g, q < 0 ? -1 : (int)q);
    return n > 0 && (size_t)n < cap;
}

int pop_poll_counts_init(pop_service *ps)
{
    ps->poll_counts = calloc(1, sizeof *ps->poll_counts);
    if (!ps->poll_counts)
        return RMQ_ENOMEM;
    pthread_mutex_init(&ps->poll_counts->mu, NULL);
    return 0;
}

void pop_poll_counts_fini(pop_service *ps)
{
    struct pop_poll_counts *pc = ps->poll_counts;
    if (!pc)
        return;
    for (size_t i = 0; i < POLL_BUCKETS; i++)
        while (pc->buckets[i]) {
            poll_key *k = pc->buckets[i];
            pc->buckets[i] = k->next;
            free(k);
        }
    pthread_mutex_destroy(&pc->mu);
    free(pc);
    ps->poll_counts = NULL;
}

int pop_poll_enter(store_plugin *sp, const rmq_cmd *cmd)
{
    pop_service *ps = pop_service_of(sp);
    struct pop_poll_counts *pc = ps ? ps->poll_counts : NULL;
    char key[600];
    int kind = 0;
    if (!pc || !key_of(sp, cmd, key, sizeof key, &kind))
        return 0;
    int64_t per_key = sp->set.pop_polling_size;
    int64_t max_total = sp->set.max_pop_polling_size;
    uint32_t b = key_hash(key) % POLL_BUCKETS;
    int rc = 0;
    pthread_mutex_lock(&pc->mu);
    poll_key *k = pc->buckets[b];
    while (k && strcmp(k->key, key) != 0)
        k = k->next;
    if ((int64_t)pc->total[kind] >= max_total || (k && (int64_t)k->count > per_key)) {
        rc = RMQ_EBUSY;
    } else if (!k && !(k = calloc(1, sizeof *k + strlen(key) + 1))) {
        rc = RMQ_ENOMEM;
    } else {
        if (k->count == 0 && !k->key[0]) {
            memcpy(k->key, key, strlen(key) + 1);
            k->next = pc->buckets[b];
            pc->buckets[b] = k;
        }
        k->count++;
        pc->total[kind]++;
    }
    pthread_mutex_unlock(&pc->mu);
    return rc;
}

void pop_poll_leave(store_plugin *sp, const rmq_cmd *cmd)
{
    pop_service *ps = pop_service_of(sp);
    struct pop_poll_counts *pc = ps ? ps->poll_counts : NULL;
    char key[600];
    int kind = 0;
    if (!pc || !key_of(sp, cmd, key, sizeof key, &kind))
        return;
    uint32_t b = key_hash(key) % POLL_BUCKETS;
    pthread_mutex_lock(&pc->mu);
    poll_key **pp = &pc->buckets[b];
    while (*pp && strcmp((*pp)->key, key) != 0)
        pp = &(*pp)->next;
    if (*pp) {
        poll_key *k = *pp;
        if (pc->total[kind])
            pc->total[kind]--;
        if (--k->count == 0) { /* no entry per key ever polled: drop it */
            *pp = k->next;
            free(k);
        }
    }
    pthread_mutex_unlock(&pc->mu);
}

rmq_cmd *pop_poll_answer_at_end(store_plugin *sp, const rmq_cmd *cmd, rmq_cmd *r)
{
    pop_service *ps = pop_service_of(sp);
    struct pop_poll_counts *pc = ps ? ps->poll_counts : NULL;
    const rmq_host_api *a = sp->api;
    char key[600];
    int kind = 0;
    if (!r || !pc || !key_of(sp, cmd, key, sizeof key, &kind))
        return r;
    /* found nothing: a POP's POLLING_TIMEOUT, a NOTIFICATION's hasMsg false */
    const char *has = a->cmd_ext_get(r, "hasMsg");
    if (kind == 0 ? a->cmd_code(r) != RC_POLLING_TIMEOUT : !has || strcmp(has, "false") != 0)
        return r;
    pthread_mutex_lock(&pc->mu);
    bool full = (int64_t)pc->total[kind] >= sp->set.max_pop_polling_size;
    pthread_mutex_unlock(&pc->mu);
    if (!full)
        return r;
    if (kind == 1) {
        a->cmd_ext_set(r, "pollingFull", "true");
        return r;
    }
    rmq_cmd *f = pop_polling_full_answer(sp, cmd);
    if (!f)
        return r;
    a->cmd_free(r);
    return f;
}

rmq_cmd *pop_polling_full_answer(store_plugin *sp, const rmq_cmd *cmd)
{
    const rmq_host_api *a = sp->api;
    /* Java answers the POP it could not hold with the empty result's
     * header and its status name as remark */
    rmq_cmd *r = a->cmd_new_response(cmd, RC_POLLING_FULL, "NO_MESSAGE_IN_QUEUE");
    if (!r)
        return NULL;
    int64_t invisible = 0;
    (void)java_parse_long(a->cmd_ext_get(cmd, "invisibleTime"), &invisible);
    const char *order = a->cmd_ext_get(cmd, "order");
    store_ext_i64(sp, r, "popTime", (int64_t)a->now_wall_ms());
    store_ext_i64(sp, r, "invisibleTime", invisible);
    store_ext_i64(sp, r, "reviveQid", order && strcmp(order, "true") == 0 ? 999 : 0);
    store_ext_i64(sp, r, "restNum", 0);
    a->cmd_ext_set(r, "startOffsetInfo", "");
    a->cmd_ext_set(r, "msgOffsetInfo", "");
    return r;
}
