/* store_reply.c — answering a request now (reply) or later (deferred_reply)
 * through one call, and small response helpers. */
#include "store_plugin.h"

int store_answer(store_plugin *sp, reply_target *t, rmq_cmd *resp)
{
    if (t->d) {
        rmq_deferred *d = t->d;
        t->d = NULL;
        return sp->api->deferred_reply(d, resp);
    }
    if (!resp)
        return RMQ_OK;
    return sp->api->reply(t->req, resp);
}

bool store_cmd_is_oneway(store_plugin *sp, const rmq_cmd *cmd)
{
    return (sp->api->cmd_flag(cmd) & RMQ_CMD_FLAG_ONEWAY) != 0;
}

int store_reply_code(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, int32_t code,
                     const char *remark)
{
    if (store_cmd_is_oneway(sp, cmd))
        return RMQ_OK;
    rmq_cmd *r = sp->api->cmd_new_response(cmd, code, remark);
    return r ? sp->api->reply(req, r) : RMQ_ENOMEM;
}

/* Decimal text without printf: three of these per send answer. */
void store_ext_i64(store_plugin *sp, rmq_cmd *c, const char *key, int64_t v)
{
    char buf[24];
    char *p = buf + sizeof buf;
    *--p = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    sp->api->cmd_ext_set(c, key, p);
}
