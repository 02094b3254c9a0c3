/* ha_resend.c — `rmqhostctl ha-setaside resend FILE [BROKER_ADDR]`: deliver
 * the messages a rejoin set aside (ha_rejoin.c) after all, by sending each
 * record of FILE to the master of this broker name (BROKER_ADDR, else the
 * master address the NameServer answered broker-client-mgr's registration
 * with) as SEND_MESSAGE_V2 with its topic, queue, flag, born time,
 * reconsume count, properties and body as stored. The properties keep
 * UNIQ_KEY, so the message id stays the one a consumer may have seen before
 * the failover. Records of system topics (delayed messages waiting in
 * SCHEDULE_TOPIC_XXXX) and transaction half or rolled-back records are
 * skipped and counted: their delivery depended on the old master's state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/services/broker_service.h>

#include "ha.h"
#include "stored_record.h"

#define SEND_MESSAGE_V2 310
/* compressed, multi tags: the client's bits; the transaction bits are not
 * resent (a half message is skipped) */
#define CLIENT_SYSFLAGS (STORED_SYSFLAG_COMPRESSED | STORED_SYSFLAG_MULTI_TAGS)

static bool master_broker_addr(store_plugin *sp, char *out, size_t cap)
{
    const void *tbl = NULL;
    void *ud = NULL;
    rmq_service_ref ref;
    if (sp->api->service_acquire(sp->ctx, RMQ_BROKER_INFO_SERVICE, RMQ_BROKER_INFO_VERSION, &tbl,
                                 &ud, &ref) != 0)
        return false;
    const rmq_broker_info_v1 *bi = tbl;
    char ha[128] = "";
    bool ok = bi->size >= offsetof(rmq_broker_info_v1, master_addrs) + sizeof bi->master_addrs &&
              bi->master_addrs && bi->master_addrs(ud, out, cap, ha, sizeof ha) == 0 && out[0];
    sp->api->service_release(sp->ctx, ref);
    return ok;
}

static bool system_topic(const stored_record *r)
{
    static const char *const prefixes[] = {"SCHEDULE_TOPIC_XXXX", "RMQ_SYS_", "rmq_sys_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (r->topic_len >= n && memcmp(r->topic, prefixes[i], n) == 0)
            return true;
    }
    return false;
}

/* One record as SEND_MESSAGE_V2; 0 when answered SEND_OK (or one of the
 * stored-anyway answers 10-12), else -1 with why. */
static int send_record(store_plugin *sp, const char *addr, const stored_record *r, char *why,
                       size_t why_cap)
{
    const rmq_host_api *a = sp->api;
    rmq_cmd *req = a->cmd_new_request(SEND_MESSAGE_V2);
    if (!req) {
        snprintf(why, why_cap, "out of memory");
        return -1;
    }
    char topic[256], *props = malloc((size_t)r->props_len + 1), num[32];
    if (!props) {
        a->cmd_free(req);
        snprintf(why, why_cap, "out of memory");
        return -1;
    }
    memcpy(topic, r->topic, r->topic_len);
    topic[r->topic_len] = 0;
    memcpy(props, r->props, r->props_len);
    props[r->props_len] = 0;
    a->cmd_ext_set(req, "a", "RMQHOST_SETASIDE_RESEND");
    a->cmd_ext_set(req, "b", topic);
    a->cmd_ext_set(req, "c", "TBW102");
    a->cmd_ext_set(req, "d", "4");
    snprintf(num, sizeof num, "%d", (int)r->queue_id);
    a->cmd_ext_set(req, "e", num);
    snprintf(num, sizeof num, "%d", (int)(r->sys_flag & CLIENT_SYSFLAGS));
    a->cmd_ext_set(req, "f", num);
    snprintf(num, sizeof num, "%lld", (long long)r->born_ts);
    a->cmd_ext_set(req, "g", num);
    snprintf(num, sizeof num, "%d", (int)r->flag);
    a->cmd_ext_set(req, "h", num);
    a->cmd_ext_set(req, "i", props);
    snprintf(num, sizeof num, "%d", (int)r->reconsume_times);
    a->cmd_ext_set(req, "j", num);
    a->cmd_ext_set(req, "k", "false");
    a->cmd_ext_set(req, "m", "false");
    free(props);
    a->cmd_set_body(req, r->body, (size_t)r->body_len, NULL, NULL);
    rmq_cmd *resp = NULL;
    int rc = a->invoke_sync_addr(sp->ctx, addr, req, 10000, &resp);
    if (rc != 0 || !resp) {
        snprintf(why, why_cap, "no answer from %s (%d)", addr, rc);
        return -1;
    }
    int code = a->cmd_code(resp);
    if (code != RC_SUCCESS && code != RC_FLUSH_DISK_TIMEOUT && code != RC_SLAVE_NOT_AVAILABLE &&
        code != RC_FLUSH_SLAVE_TIMEOUT) {
        const char *remark = a->cmd_remark(resp);
        snprintf(why, why_cap, "%s answered %d: %s", addr, code, remark ? remark : "");
        rc = -1;
    }
    a->cmd_free(resp);
    return rc;
}

int ha_resend(store_plugin *sp, rmq_admin_call *call, const char *dir, const char *file,
              const char *addr_arg)
{
    const rmq_host_api *a = sp->api;
    char addr[128] = "";
    if (addr_arg)
        snprintf(addr, sizeof addr, "%s", addr_arg);
    else if (!master_broker_addr(sp, addr, sizeof addr)) {
        a->admin_write(call, "no master address known yet: give BROKER_HOST:PORT\n");
        return 1;
    }
    if (strchr(file, '/') || !strstr(file, ".commitlog")) {
        a->admin_write(call, "FILE is a .commitlog name as `ha-setaside` lists it\n");
        return 2;
    }
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        a->admin_write(call, "%s: %s\n", path, strerror(errno));
        return 1;
    }
    uint8_t head[4];
    long sent = 0, skipped = 0, failed = 0;
    char why[512] = "";
    while (fread(head, 1, 4, f) == 4) {
        uint32_t size = stored_be32(head);
        uint8_t *rec = size >= 8 && size <= (64u << 20) ? malloc(size) : NULL;
        if (!rec) {
            snprintf(why, sizeof why, "record of %u bytes: not a set-aside file", size);
            failed++;
            break;
        }
        memcpy(rec, head, 4);
        stored_record r;
        bool whole = fread(rec + 4, 1, size - 4, f) == size - 4;
        if (!whole || stored_record_decode(rec, size, true, &r) != STORED_RECORD_OK) {
            snprintf(why, sizeof why, "a damaged record after %ld messages", sent + skipped);
            free(rec);
            failed++;
            break;
        }
        int tx = r.sys_flag & STORED_SYSFLAG_TX_MASK;
        if (system_topic(&r) || tx == STORED_SYSFLAG_TX_PREPARED ||
            tx == STORED_SYSFLAG_TX_ROLLBACK)
            skipped++;
        else if (send_record(sp, addr, &r, why, sizeof why) == 0)
            sent++;
        else
            failed++;
        free(rec);
    }
    fclose(f);
    a->admin_write(call,
                   "resent %ld messages of %s to %s; %ld skipped (system topics, "
                   "transaction halves); %ld failed%s%s\n",
                   sent, file, addr, skipped, failed, failed ? ": " : "", failed ? why : "");
    if (sent > 0 || failed > 0)
        a->log(sp->ctx, failed ? RMQ_LOG_ERROR : RMQ_LOG_WARN,
               "HA set-aside %s: %ld messages resent to %s, %ld skipped, %ld failed", file, sent,
               addr, skipped, failed);
    return failed ? 1 : 0;
}
