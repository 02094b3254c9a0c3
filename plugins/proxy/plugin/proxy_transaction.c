/* proxy_transaction.c — transactional messages of 5.x clients, answered
 * from the store of this process as Java's proxy answers them from its
 * broker:
 *  - SendMessage of a TRANSACTION message stores a half message
 *    (proxy_send.c, TRAN_MSG and the prepared flag, producer group = topic
 *    as Java's proxy) and answers a transaction id that names the half
 *    record: its commit-log offset and its offset in the half queue, the
 *    two numbers END_TRANSACTION needs (Java's proxy encodes the same
 *    pair in its TransactionId);
 *  - EndTransaction → END_TRANSACTION (37) with COMMIT (8) / ROLLBACK (12),
 *    fromTransactionCheck for SOURCE_SERVER_CHECK;
 *  - the store's check-back of an unresolved half message (event
 *    store.transaction_check, published when no 4.x producer of the group
 *    is connected) goes to one producer of the group through its Telemetry
 *    stream as a RecoverOrphanedTransactionCommand, whose answer is an
 *    EndTransaction with SOURCE_SERVER_CHECK. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/services/store_service.h>
#include <rmqhost/services/transaction_check_event.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

#define END_TRANSACTION 37
#define TX_COMMIT "8"
#define TX_ROLLBACK "12"

static void tx_id_format(int64_t phys, int64_t queue_offset, char *out, size_t cap)
{
    snprintf(out, cap, "%016" PRIX64 "%016" PRIX64, (uint64_t)phys, (uint64_t)queue_offset);
}

/* The two offsets and, after them, the broker's name (cluster mode; "" in
 * local mode's ids). */
static bool tx_id_parse(const char *id, int64_t *phys, int64_t *queue_offset, const char **broker)
{
    if (!id || strlen(id) < 32)
        return false;
    *broker = id + 32;
    char a[17], b[17];
    memcpy(a, id, 16);
    memcpy(b, id + 16, 16);
    a[16] = b[16] = '\0';
    char *ea, *eb;
    unsigned long long p = strtoull(a, &ea, 16), q = strtoull(b, &eb, 16);
    if (*ea || *eb)
        return false;
    *phys = (int64_t)p;
    *queue_offset = (int64_t)q;
    return true;
}

void proxy_transaction_id(const char *broker, const char *offset_msg_id, int64_t queue_offset,
                          char *out, size_t cap)
{
    /* the offset message id ends with the commit-log offset (16 hex digits) */
    size_t n = offset_msg_id ? strlen(offset_msg_id) : 0;
    char *end = NULL;
    unsigned long long phys = n >= 16 ? strtoull(offset_msg_id + n - 16, &end, 16) : 0;
    if (!end || *end) {
        out[0] = '\0';
        return;
    }
    tx_id_format((int64_t)phys, queue_offset, out, cap);
    size_t len = strlen(out);
    if (broker && len < cap)
        snprintf(out + len, cap - len, "%s", broker);
}

int proxy_message_by_offset(proxy *px, int64_t phys, void **rec, size_t *len)
{
    const rmq_host_api *api = px->api;
    const void *table = NULL;
    void *tud = NULL;
    rmq_service_ref ref;
    int rc = api->service_acquire(px->ctx, RMQ_STORE_QUEUES_SERVICE, RMQ_STORE_QUEUES_VERSION,
                                  &table, &tud, &ref);
    if (rc != 0)
        return rc;
    const rmq_store_queues_service *sq = table;
    rc = sq->message_by_offset(tud, phys, rec, len);
    api->service_release(px->ctx, ref);
    return rc;
}

static int end_reply(proxy *px, rmq_grpc_call *call, Apache__Rocketmq__V2__Code code,
                     const char *message)
{
    Apache__Rocketmq__V2__EndTransactionResponse resp =
        APACHE__ROCKETMQ__V2__END_TRANSACTION_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    proxy_status(&st, code, message);
    resp.status = &st;
    return proxy_reply(px, call, &resp.base);
}

int proxy_end_transaction(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    Apache__Rocketmq__V2__EndTransactionRequest *req =
        apache__rocketmq__v2__end_transaction_request__unpack(NULL, len, msg);
    if (!req)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                "EndTransactionRequest: undecodable protobuf");
    int rc;
    const char *topic = req->topic && req->topic->name ? req->topic->name : "";
    int64_t phys = 0, qoff = 0;
    const char *broker = NULL;
    if (!topic[0]) {
        rc = end_reply(px, call, PX_ILLEGAL_TOPIC, "topic name cannot be empty");
    } else if (!req->transaction_id || !req->transaction_id[0]) {
        rc = end_reply(px, call, APACHE__ROCKETMQ__V2__CODE__INVALID_TRANSACTION_ID,
                       "transaction id cannot be empty");
    } else if (!tx_id_parse(req->transaction_id, &phys, &qoff, &broker) ||
               (*broker && !proxy_backend_is_cluster(px))) {
        /* Java: TransactionService finds no data for it (local mode's ids
         * name no broker) */
        rc = end_reply(px, call, APACHE__ROCKETMQ__V2__CODE__INVALID_TRANSACTION_ID,
                       "cannot found transaction data");
    } else if (req->resolution != APACHE__ROCKETMQ__V2__TRANSACTION_RESOLUTION__COMMIT &&
               req->resolution != APACHE__ROCKETMQ__V2__TRANSACTION_RESOLUTION__ROLLBACK) {
        /* Java sends TRANSACTION_NOT_TYPE, which the broker ignores */
        rc = end_reply(px, call, PX_OK, "OK");
    } else {
        rmq_cmd *er = api->cmd_new_request(END_TRANSACTION);
        char p[32], q[32];
        snprintf(p, sizeof p, "%" PRId64, phys);
        snprintf(q, sizeof q, "%" PRId64, qoff);
        bool check = req->source == APACHE__ROCKETMQ__V2__TRANSACTION_SOURCE__SOURCE_SERVER_CHECK;
        const char *kv[] = {"producerGroup",
                            topic,
                            "tranStateTableOffset",
                            q,
                            "commitLogOffset",
                            p,
                            "commitOrRollback",
                            req->resolution == APACHE__ROCKETMQ__V2__TRANSACTION_RESOLUTION__COMMIT
                                ? TX_COMMIT
                                : TX_ROLLBACK,
                            "fromTransactionCheck",
                            check ? "true" : "false",
                            "msgId",
                            req->message_id ? req->message_id : "",
                            "transactionId",
                            req->message_id ? req->message_id : "",
                            NULL};
        for (size_t i = 0; er && kv[i]; i += 2)
            api->cmd_ext_set(er, kv[i], kv[i + 1]);
        rmq_cmd *resp = NULL;
        int lrc = er ? proxy_broker_call(px, topic, broker, er, &resp) : RMQ_ENOMEM;
        /* Java's proxy sends END_TRANSACTION oneway and answers OK; the
         * store's refusal is logged here */
        if (lrc < 0 || api->cmd_code(resp) != 0) {
            const char *remark = lrc < 0 ? rmq_strerror(lrc) : api->cmd_remark(resp);
            api->log(px->ctx, RMQ_LOG_WARN, "EndTransaction %s of %s (%s): %s",
                     req->resolution == APACHE__ROCKETMQ__V2__TRANSACTION_RESOLUTION__COMMIT
                         ? "COMMIT"
                         : "ROLLBACK",
                     req->message_id ? req->message_id : "?", topic, remark ? remark : "failed");
        }
        if (resp)
            api->cmd_free(resp);
        rc = end_reply(px, call, PX_OK, "OK");
    }
    apache__rocketmq__v2__end_transaction_request__free_unpacked(req, NULL);
    return rc;
}

int proxy_transaction_push_check(proxy *px, const char *group, const char *prefer_tag,
                                 const uint8_t *record, size_t len, const char *tx_id,
                                 const char *msg_id)
{
    proxy_built *pb = proxy_message_build(record, len);
    if (!pb)
        return RMQ_EINVAL;
    Apache__Rocketmq__V2__Message *m = proxy_message_of(pb);
    m->system_properties->message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION;
    Apache__Rocketmq__V2__RecoverOrphanedTransactionCommand rc =
        APACHE__ROCKETMQ__V2__RECOVER_ORPHANED_TRANSACTION_COMMAND__INIT;
    rc.message = m;
    rc.transaction_id = (char *)tx_id;
    Apache__Rocketmq__V2__TelemetryCommand cmd = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__INIT;
    cmd.command_case =
        APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_RECOVER_ORPHANED_TRANSACTION_COMMAND;
    cmd.recover_orphaned_transaction_command = &rc;
    char client[128] = "";
    int prc = proxy_telemetry_push_to_group(px, group, prefer_tag, &cmd, client, sizeof client);
    if (prc == 0)
        px->api->log(px->ctx, RMQ_LOG_INFO, "transaction check of %s (group %s) sent to client %s",
                     msg_id, group, client);
    proxy_message_free(pb);
    return prc;
}

/* The store's check-back (its check timer's thread): one producer of the
 * group gets a RecoverOrphanedTransactionCommand on its Telemetry stream. */
static void on_transaction_check(const char *event, const void *data, size_t len, void *ud)
{
    (void)event;
    proxy *px = ud;
    const rmq_transaction_check_event *ev = data;
    if (len < sizeof *ev || !ev->producer_group || !ev->record)
        return;
    char tx[40];
    tx_id_format(ev->commit_log_offset, ev->tran_state_table_offset, tx, sizeof tx);
    (void)proxy_transaction_push_check(px, ev->producer_group, NULL, ev->record, ev->record_len, tx,
                                       ev->msg_id);
}

int proxy_transaction_init(proxy *px)
{
    return px->api->subscribe_event(px->ctx, RMQ_STORE_TRANSACTION_CHECK_EVENT,
                                    on_transaction_check, px);
}
