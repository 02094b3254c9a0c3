/* namesrv_processors.c — one processor per NameServer request code
 * (protocol.md §4.4). Decodes headers/bodies outside the writer lock, applies
 * the change under it, and answers. GET_ROUTEINFO_BY_TOPIC runs inline and
 * only reads the RCU route cache; everything else runs on the executor. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rmqhost/helpers.h>

#include "namesrv_plugin.h"
#include "body_fingerprint.h"
#include "register_body.h"
#include "route_encoder.h"

enum {
    PUT_KV_CONFIG = 100,
    GET_KV_CONFIG = 101,
    DELETE_KV_CONFIG = 102,
    REGISTER_BROKER = 103,
    UNREGISTER_BROKER = 104,
    GET_ROUTEINFO_BY_TOPIC = 105,
    GET_BROKER_CLUSTER_INFO = 106,
    WIPE_WRITE_PERM_OF_BROKER = 205,
    GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206,
    DELETE_TOPIC_IN_NAMESRV = 216,
    REGISTER_TOPIC_IN_NAMESRV = 217,
    GET_KVLIST_BY_NAMESPACE = 219,
    GET_TOPICS_BY_CLUSTER = 224,
    GET_SYSTEM_TOPIC_LIST_FROM_NS = 304,
    GET_UNIT_TOPIC_LIST = 311,
    GET_HAS_UNIT_SUB_TOPIC_LIST = 312,
    GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST = 313,
    UPDATE_NAMESRV_CONFIG = 318,
    GET_NAMESRV_CONFIG = 319,
    QUERY_DATA_VERSION = 322,
    ADD_WRITE_PERM_OF_BROKER = 327,
    GET_BROKER_MEMBER_GROUP = 901,
    BROKER_HEARTBEAT = 904,
};

enum {
    CODE_SUCCESS = 0,
    CODE_SYSTEM_ERROR = 1,
    CODE_NO_PERMISSION = 16,
    CODE_TOPIC_NOT_EXIST = 17,
    CODE_QUERY_NOT_FOUND = 22,
};

#define VERSION_V3_0_11 37
#define VERSION_V4_9_4 401

static const char DECODE_FAILURE_PREFIX[] =
    "org.apache.rocketmq.remoting.exception.RemotingCommandException: Failed to decode "
    "RegisterBrokerBody, ";

/* ---- helpers -------------------------------------------------------------- */

/* Ext fields, numbers and answers through the SDK's helpers (rmqhost/helpers.h):
 * Java's parse rules and the oneway rule live there once for every plugin. */
static const char *ext(const namesrv_plugin *ns, const rmq_cmd *cmd, const char *key)
{
    return rmq_ext_str(ns->api, cmd, key);
}

/* Sends a response unless the request is oneway; body (may be NULL) is copied. */
static int answer(namesrv_plugin *ns, rmq_request *req, const rmq_cmd *cmd, int code,
                  const char *remark, const char *body, size_t len)
{
    return rmq_answer(ns->api, req, cmd, code, remark, body, len);
}

static int answer_buf(namesrv_plugin *ns, rmq_request *req, const rmq_cmd *cmd, text_buf *b)
{
    if (b->oom) {
        tb_free(b);
        return RMQ_ENOMEM;
    }
    int rc = answer(ns, req, cmd, CODE_SUCCESS, NULL, b->data, b->len);
    tb_free(b);
    return rc;
}

static int fail(namesrv_plugin *ns, rmq_request *req, const rmq_cmd *cmd, const char *remark)
{
    return answer(ns, req, cmd, CODE_SYSTEM_ERROR, remark, NULL, 0);
}

static void publish_locked(namesrv_plugin *ns)
{
    if (namesrv_core_publish(&ns->core) != 0)
        ns->api->log(ns->ctx, RMQ_LOG_ERROR, "out of memory re-encoding routes");
}

/* ---- 105: inline, lock-free ------------------------------------------------ */

static void route_body_release(void *ud, const void *data)
{
    (void)data;
    route_entry_put(ud);
}

static int on_get_route(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    const char *topic = ext(ns, cmd, "topic");
    bool standard = ns->api->cmd_version(cmd) >= VERSION_V4_9_4 ||
                    rmq_parse_bool(ext(ns, cmd, "acceptStandardJsonOnly"));
    const char *body;
    size_t len;
    route_entry *e = topic ? route_cache_get(&ns->core.cache, topic, standard, &body, &len) : NULL;
    if (!e) {
        if (rmq_is_oneway(ns->api, cmd))
            return RMQ_OK;
        const char *t = topic ? topic : "null";
        static const char head[] = "No topic route info in name server for the topic: ";
        static const char tail[] =
            "\nSee http://rocketmq.apache.org/docs/faq/ for further details.";
        size_t n = sizeof(head) + strlen(t) + sizeof(tail);
        char stackbuf[512];
        char *remark = n <= sizeof(stackbuf) ? stackbuf : malloc(n);
        if (!remark)
            return RMQ_ENOMEM;
        snprintf(remark, n, "%s%s%s", head, t, tail);
        int rc = answer(ns, req, cmd, CODE_TOPIC_NOT_EXIST, remark, NULL, 0);
        if (remark != stackbuf)
            free(remark);
        return rc;
    }
    if (rmq_is_oneway(ns->api, cmd)) {
        route_entry_put(e);
        return RMQ_OK;
    }
    rmq_cmd *resp = ns->api->cmd_new_response(cmd, CODE_SUCCESS, NULL);
    if (!resp) {
        route_entry_put(e);
        return RMQ_ENOMEM;
    }
    /* zero-copy: the cached bytes stay alive until the host releases them */
    if (ns->api->cmd_set_body(resp, body, len, route_body_release, e) != 0) {
        route_entry_put(e);
        ns->api->cmd_free(resp);
        return RMQ_ENOMEM;
    }
    return ns->api->reply(req, resp);
}

/* ---- KV ------------------------------------------------------------------- */

static void kv_changed_locked(namesrv_plugin *ns, const char *nsname, const char *key)
{
    namesrv_persist_kv(ns);
    if (strcmp(nsname, KV_NAMESPACE_ORDER_TOPIC_CONFIG) == 0 && ns->core.cfg.order_message_enable) {
        route_table_mark_dirty(&ns->core.routes, key);
        publish_locked(ns);
    }
}

static int on_put_kv(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    const char *nsname = ext(ns, cmd, "namespace"), *key = ext(ns, cmd, "key");
    if (!nsname || !key)
        return fail(ns, req, cmd, "namespace or key is null");
    namesrv_core_lock(&ns->core);
    int rc = kv_store_put(&ns->core.kv, nsname, key, ext(ns, cmd, "value"));
    if (rc == 0)
        kv_changed_locked(ns, nsname, key);
    namesrv_core_unlock(&ns->core);
    if (rc != 0)
        return RMQ_ENOMEM;
    return answer(ns, req, cmd, CODE_SUCCESS, NULL, NULL, 0);
}

static int on_get_kv(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    const char *nsname = ext(ns, cmd, "namespace"), *key = ext(ns, cmd, "key");
    namesrv_core_lock(&ns->core);
    const char *v = kv_store_get(&ns->core.kv, nsname, key);
    char *value = v ? strdup(v) : NULL;
    namesrv_core_unlock(&ns->core);
    if (!value) {
        char remark[1024];
        snprintf(remark, sizeof(remark), "No config item, Namespace: %s Key: %s",
                 nsname ? nsname : "null", key ? key : "null");
        if (rmq_is_oneway(ns->api, cmd))
            return RMQ_OK;
        rmq_cmd *nf = ns->api->cmd_new_response(cmd, CODE_QUERY_NOT_FOUND, remark);
        if (!nf)
            return RMQ_ENOMEM;
        /* Java answers from a GetKVConfigResponseHeader: "extFields":{}. */
        if (ns->api->abi_minor >= 1 && ns->api->cmd_set_ext_present)
            ns->api->cmd_set_ext_present(nf);
        return ns->api->reply(req, nf);
    }
    rmq_cmd *resp = ns->api->cmd_new_response(cmd, CODE_SUCCESS, NULL);
    if (!resp || ns->api->cmd_ext_set(resp, "value", value) != 0) {
        if (resp)
            ns->api->cmd_free(resp);
        free(value);
        return RMQ_ENOMEM;
    }
    free(value);
    return ns->api->reply(req, resp);
}

static int on_delete_kv(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    const char *nsname = ext(ns, cmd, "namespace"), *key = ext(ns, cmd, "key");
    namesrv_core_lock(&ns->core);
    if (kv_store_delete(&ns->core.kv, nsname, key))
        kv_changed_locked(ns, nsname, key);
    namesrv_core_unlock(&ns->core);
    return answer(ns, req, cmd, CODE_SUCCESS, NULL, NULL, 0);
}

static int on_get_kvlist(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    const char *nsname = ext(ns, cmd, "namespace");
    text_buf b;
    tb_init(&b);
    namesrv_core_lock(&ns->core);
    bool found = kv_store_encode_table(&ns->core.kv, nsname, &b);
    namesrv_core_unlock(&ns->core);
    if (!found) {
        tb_free(&b);
        char remark[512];
        snprintf(remark, sizeof(remark), "No config item, Namespace: %s", nsname ? nsname : "null");
        return answer(ns, req, cmd, CODE_QUERY_NOT_FOUND, remark, NULL, 0);
    }
    return answer_buf(ns, req, cmd, &b);
}

/* ---- broker registration -------------------------------------------------- */

/* How a REGISTER_BROKER body is read: the JSON forms can take the
 * fingerprint shortcut, the compressed form is always inflated and decoded. */
typedef struct body_plan {
    bool compressed;
    bool wrapper_only;
} body_plan;

static body_plan plan_body(namesrv_plugin *ns, const rmq_cmd *cmd, const uint8_t *body, size_t len)
{
    int32_t version = ns->api->cmd_version(cmd);
    body_plan p = {false, version < VERSION_V3_0_11};
    /* 5.3.3 brokers deflate with compressed=false: recognise the zlib header */
    if (!p.wrapper_only &&
        (rmq_parse_bool(ext(ns, cmd, "compressed")) || register_body_looks_compressed(body, len)))
        p.compressed = true;
    return p;
}

static int decode_register_body(namesrv_plugin *ns, const rmq_cmd *cmd, const body_plan *p,
                                const uint8_t *body, size_t len, register_body *rb, char *err,
                                size_t errlen)
{
    if (p->compressed)
        return register_body_decode_compressed(body, len, ns->api->cmd_version(cmd), rb, err,
                                               errlen);
    return register_body_parse_json((const char *)body, len, p->wrapper_only, rb, err, errlen);
}

static int decode_failure(namesrv_plugin *ns, rmq_request *req, const rmq_cmd *cmd, const char *err)
{
    char remark[sizeof(DECODE_FAILURE_PREFIX) + 256];
    snprintf(remark, sizeof(remark), "%s%s", DECODE_FAILURE_PREFIX, err);
    ns->api->log(ns->ctx, RMQ_LOG_WARN, "REGISTER_BROKER from %s: %s", ns->api->request_peer(req),
                 err);
    return fail(ns, req, cmd, remark);
}

/* A decoded compressed body's filter list, which its fingerprint (taken
 * before decoding) could not see. */
static void note_filters(body_fingerprint *fp, const register_body *rb)
{
    fp->has_filter_list = rb->has_filter_list;
    fp->filters_empty = rb->nfilters == 0;
}

/* The compressed form's shortcut: the inflated bytes after the DataVersion
 * chunk equal those of the compressed body (or split frame) the table was
 * built from. Inflating stays (the DataVersion is inside the stream); the
 * decode and the topic walk are skipped. The table has the last word
 * (ROUTE_NEED_BODY). */
static bool compressed_quick(namesrv_plugin *ns, const register_request *rr, const uint8_t *raw,
                             size_t raw_len, body_fingerprint *fp, data_version *dv)
{
    bool fp_ok = body_fingerprint_of_inflated(raw, raw_len, fp, dv);
    if (!fp_ok)
        return false;
    body_fingerprint like;
    bool have_like = false;
    if (rr->broker_id == 0 && rr->broker_name) {
        namesrv_core_lock(&ns->core);
        have_like = route_table_broker_fingerprint(&ns->core.routes, rr->broker_name, &like);
        namesrv_core_unlock(&ns->core);
    }
    if (!have_like || like.form != 3)
        return false;
    /* equal bytes after the DataVersion hold the same filter list */
    fp->has_filter_list = like.has_filter_list;
    fp->filters_empty = like.filters_empty;
    return true;
}

/* Reading the body is the costly part of a registration: a JSON body whose
 * bytes equal, outside its DataVersion, the body the broker's QueueData were
 * built from (body_fingerprint.h) is not parsed at all. Java's order of
 * answers stays: crc32 mismatch, then missing fields, then undecodable body. */
static int on_register_broker(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    size_t len = 0;
    const uint8_t *body = ns->api->cmd_body(cmd, &len);
    if (!body)
        len = 0;
    int64_t crc = 0;
    rmq_ext_long(ns->api, cmd, "bodyCrc32", &crc);
    register_request rr = {
        .cluster = ext(ns, cmd, "clusterName"),
        .broker_name = ext(ns, cmd, "brokerName"),
        .broker_addr = ext(ns, cmd, "brokerAddr"),
        .ha_addr = ext(ns, cmd, "haServerAddr"),
        .channel = ns->api->request_channel(req),
    };
    bool has_id = rmq_ext_long(ns->api, cmd, "brokerId", &rr.broker_id) == 0;

    body_plan plan = plan_body(ns, cmd, body, len);
    register_body rb;
    register_body_init(&rb);
    body_fingerprint fp, like;
    memset(&fp, 0, sizeof(fp));
    data_version quick_dv;
    int32_t actual = 0;
    bool parsed = false, quick = false;
    char derr[256] = ""; /* why the body is undecodable */
    if (len > 0 && !plan.compressed) {
        bool have_like = false, frames = false;
        if (has_id && rr.broker_id == 0 && rr.broker_name) {
            namesrv_core_lock(&ns->core);
            have_like = route_table_broker_fingerprint(&ns->core.routes, rr.broker_name, &like);
            frames = route_table_broker_has_frames(&ns->core.routes, rr.broker_name);
            namesrv_core_unlock(&ns->core);
        }
        /* split frames: the table looks the frame up (ROUTE_NEED_BODY when
         * it is not one it knows) */
        quick = have_like && (frames ? body_fingerprint_of_frame(body, len, plan.wrapper_only,
                                                                 &like, &fp, &quick_dv, &actual)
                                     : body_fingerprint_quick(body, len, plan.wrapper_only, &like,
                                                              &fp, &quick_dv, &actual));
        if (!quick) {
            parsed = decode_register_body(ns, cmd, &plan, body, len, &rb, derr, sizeof(derr)) == 0;
            if (parsed)
                body_fingerprint_of_parsed(body, len, plan.wrapper_only, &rb, &fp, &actual);
            else
                actual = body_crc32_masked(body, len);
        }
    } else if (len > 0) {
        actual = body_crc32_masked(body, len);
    }
    if (crc != 0 && (int64_t)actual != crc) {
        register_body_free(&rb);
        return fail(ns, req, cmd, "crc32 not match");
    }
    const char *missing = !has_id ? "java.lang.NullPointerException: brokerId is null"
                          : !rr.broker_name || !rr.broker_addr
                              ? "java.lang.NullPointerException: brokerName or brokerAddr is null"
                          : !rr.cluster ? "clusterName is null"
                                        : NULL;
    if (missing) {
        register_body_free(&rb);
        return fail(ns, req, cmd, missing);
    }
    int64_t hb = 0;
    if (rmq_ext_long(ns->api, cmd, "heartbeatTimeoutMillis", &hb) == 0 && hb > 0)
        rr.heartbeat_timeout_ms = hb;
    uint8_t *raw = NULL; /* the compressed body inflated */
    size_t raw_len = 0;
    if (len > 0 && plan.compressed) {
        if (register_body_inflate(body, len, &raw, &raw_len) != 0) {
            register_body_free(&rb);
            return decode_failure(ns, req, cmd, "not a zlib stream");
        }
        quick = compressed_quick(ns, &rr, raw, raw_len, &fp, &quick_dv);
        if (!quick) {
            parsed = register_body_decode_inflated(raw, raw_len, &rb, derr, sizeof(derr)) == 0;
            if (!parsed) {
                free(raw);
                register_body_free(&rb);
                return decode_failure(ns, req, cmd, derr);
            }
            note_filters(&fp, &rb);
        }
    } else if (len > 0 && !quick && !parsed) {
        register_body_free(&rb);
        return decode_failure(ns, req, cmd, derr);
    }
    if (parsed)
        rr.body = &rb;
    rr.fp = fp.form ? &fp : NULL;
    if (quick) {
        rr.topics_unparsed = true;
        rr.dv = &quick_dv;
    }

    register_result res;
    text_buf kvbody;
    tb_init(&kvbody);
    namesrv_core_lock(&ns->core);
    int rc = route_table_register(&ns->core.routes, &rr, ns->api->now_monotonic_ms(), &res);
    if (rc == ROUTE_NEED_BODY) {
        /* the table changed since the fingerprint was read, or the frame is
         * not one it knows: parse after all */
        namesrv_core_unlock(&ns->core);
        if ((raw ? register_body_decode_inflated(raw, raw_len, &rb, derr, sizeof(derr))
                 : decode_register_body(ns, cmd, &plan, body, len, &rb, derr, sizeof(derr))) != 0) {
            free(raw);
            register_body_free(&rb);
            tb_free(&kvbody);
            return decode_failure(ns, req, cmd, derr);
        }
        if (raw)
            note_filters(&fp, &rb);
        rr.body = &rb;
        rr.topics_unparsed = false;
        rr.dv = NULL;
        namesrv_core_lock(&ns->core);
        rc = route_table_register(&ns->core.routes, &rr, ns->api->now_monotonic_ms(), &res);
    }
    publish_locked(ns);
    if (ns->core.cfg.return_order_topic_config_to_broker)
        kv_store_encode_table(&ns->core.kv, KV_NAMESPACE_ORDER_TOPIC_CONFIG, &kvbody);
    namesrv_core_unlock(&ns->core);
    register_body_free(&rb);
    free(raw);
    if (rc != 0) {
        tb_free(&kvbody);
        return RMQ_ENOMEM;
    }
    if (rmq_is_oneway(ns->api, cmd)) {
        register_result_free(&res);
        tb_free(&kvbody);
        return RMQ_OK;
    }
    rmq_cmd *resp = ns->api->cmd_new_response(cmd, CODE_SUCCESS, NULL);
    int err = resp ? 0 : RMQ_ENOMEM;
    /* Java builds this answer from a header object: a master's answer shows
     * "extFields":{} (protocol.md §4.4.4). */
    if (!err && ns->api->abi_minor >= 1 && ns->api->cmd_set_ext_present)
        err = ns->api->cmd_set_ext_present(resp);
    if (!err && res.master_addr)
        err = ns->api->cmd_ext_set(resp, "masterAddr", res.master_addr);
    if (!err && res.ha_addr)
        err = ns->api->cmd_ext_set(resp, "haServerAddr", res.ha_addr);
    if (!err && kvbody.len > 0 && !kvbody.oom)
        err = ns->api->cmd_set_body(resp, kvbody.data, kvbody.len, NULL, NULL);
    register_result_free(&res);
    tb_free(&kvbody);
    if (err) {
        if (resp)
            ns->api->cmd_free(resp);
        return RMQ_ENOMEM;
    }
    return ns->api->reply(req, resp);
}

static int on_unregister_broker(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    int64_t id;
    if (rmq_ext_long(ns->api, cmd, "brokerId", &id))
        return fail(ns, req, cmd, "java.lang.NullPointerException: brokerId is null");
    namesrv_core_lock(&ns->core);
    route_table_unregister(&ns->core.routes, ext(ns, cmd, "clusterName"),
                           ext(ns, cmd, "brokerName"), ext(ns, cmd, "brokerAddr"), id);
    publish_locked(ns);
    namesrv_core_unlock(&ns->core);
    ns->api->log(ns->ctx, RMQ_LOG_INFO, "unregistered broker %s %s id %lld",
                 ext(ns, cmd, "brokerName") ? ext(ns, cmd, "brokerName") : "null",
                 ext(ns, cmd, "brokerAddr") ? ext(ns, cmd, "brokerAddr") : "null", (long long)id);
    return answer(ns, req, cmd, CODE_SUCCESS, NULL, NULL, 0);
}

static void put_data_version(text_buf *b, const data_version *dv)
{
    tb_puts(b, "{\"counter\":");
    tb_int(b, dv->counter);
    tb_puts(b, ",\"timestamp\":");
    tb_int(b, dv->timestamp);
    tb_putc(b, '}');
}

static int on_query_data_version(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    size_t len = 0;
    const char *body = ns->api->cmd_body(cmd, &len);
    data_version dv;
    if (!body || len == 0)
        return fail(ns, req, cmd, "java.lang.NullPointerException");
    if (data_version_parse_json(body, len, &dv) != 0)
        return fail(ns, req, cmd, "com.alibaba.fastjson.JSONException: bad DataVersion");
    bool changed, has_stored;
    data_version stored;
    namesrv_core_lock(&ns->core);
    route_table_query_data_version(&ns->core.routes, ext(ns, cmd, "brokerAddr"), &dv,
                                   ns->api->now_monotonic_ms(), &changed, &stored, &has_stored);
    namesrv_core_unlock(&ns->core);
    if (rmq_is_oneway(ns->api, cmd))
        return RMQ_OK;
    text_buf b;
    tb_init(&b);
    if (has_stored)
        put_data_version(&b, &stored);
    rmq_cmd *resp = ns->api->cmd_new_response(cmd, CODE_SUCCESS, NULL);
    int err = resp ? ns->api->cmd_ext_set(resp, "changed", changed ? "true" : "false") : RMQ_ENOMEM;
    if (!err && b.len > 0)
        err = ns->api->cmd_set_body(resp, b.data, b.len, NULL, NULL);
    tb_free(&b);
    if (err) {
        if (resp)
            ns->api->cmd_free(resp);
        return RMQ_ENOMEM;
    }
    return ns->api->reply(req, resp);
}

static int on_broker_heartbeat(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    namesrv_core_lock(&ns->core);
    route_table_heartbeat(&ns->core.routes, ext(ns, cmd, "brokerAddr"),
                          ns->api->now_monotonic_ms());
    namesrv_core_unlock(&ns->core);
    return answer(ns, req, cmd, CODE_SUCCESS, NULL, NULL, 0);
}

static int on_member_group(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    text_buf b;
    tb_init(&b);
    namesrv_core_lock(&ns->core);
    encode_broker_member_group(&ns->core.routes, ext(ns, cmd, "clusterName"),
                               ext(ns, cmd, "brokerName"), &b);
    namesrv_core_unlock(&ns->core);
    return answer_buf(ns, req, cmd, &b);
}

/* ---- admin reads and edits ------------------------------------------------ */

static int on_cluster_info(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    text_buf b;
    tb_init(&b);
    namesrv_core_lock(&ns->core);
    encode_cluster_info(&ns->core.routes, &b);
    namesrv_core_unlock(&ns->core);
    return answer_buf(ns, req, cmd, &b);
}

static int on_write_perm(rmq_request *req, const rmq_cmd *cmd, void *ud, bool wipe)
{
    namesrv_plugin *ns = ud;
    namesrv_core_lock(&ns->core);
    int n = route_table_set_write_perm(&ns->core.routes, ext(ns, cmd, "brokerName"), wipe);
    publish_locked(ns);
    namesrv_core_unlock(&ns->core);
    if (rmq_is_oneway(ns->api, cmd))
        return RMQ_OK;
    char num[16];
    snprintf(num, sizeof(num), "%d", n);
    rmq_cmd *resp = ns->api->cmd_new_response(cmd, CODE_SUCCESS, NULL);
    if (!resp || ns->api->cmd_ext_set(resp, wipe ? "wipeTopicCount" : "addTopicCount", num)) {
        if (resp)
            ns->api->cmd_free(resp);
        return RMQ_ENOMEM;
    }
    return ns->api->reply(req, resp);
}

static int on_wipe_perm(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return on_write_perm(req, cmd, ud, true);
}

static int on_add_perm(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return on_write_perm(req, cmd, ud, false);
}

/* 206 and 311-313: one topic list each, switchable as in 5.3.3. */
static int topic_list(rmq_request *req, const rmq_cmd *cmd, namesrv_plugin *ns,
                      topic_list_kind kind, bool enabled)
{
    if (!enabled)
        return fail(ns, req, cmd, "disable");
    text_buf b;
    tb_init(&b);
    namesrv_core_lock(&ns->core);
    encode_topic_list(&ns->core.routes, kind, &b);
    namesrv_core_unlock(&ns->core);
    return answer_buf(ns, req, cmd, &b);
}

static int on_all_topics(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    return topic_list(req, cmd, ns, TOPIC_LIST_ALL, ns->core.cfg.enable_all_topic_list);
}

static int unit_list(rmq_request *req, const rmq_cmd *cmd, void *ud, topic_list_kind kind)
{
    namesrv_plugin *ns = ud;
    return topic_list(req, cmd, ns, kind, ns->core.cfg.enable_topic_list);
}

static int on_unit_topics(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return unit_list(req, cmd, ud, TOPIC_LIST_UNIT);
}

static int on_unit_sub_topics(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return unit_list(req, cmd, ud, TOPIC_LIST_HAS_UNIT_SUB);
}

static int on_unit_sub_ununit_topics(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return unit_list(req, cmd, ud, TOPIC_LIST_HAS_UNIT_SUB_UNUNIT);
}

static int on_topics_by_cluster(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    if (!ns->core.cfg.enable_topic_list)
        return fail(ns, req, cmd, "disable");
    text_buf b;
    tb_init(&b);
    namesrv_core_lock(&ns->core);
    encode_topics_by_cluster(&ns->core.routes, ext(ns, cmd, "cluster"), &b);
    namesrv_core_unlock(&ns->core);
    return answer_buf(ns, req, cmd, &b);
}

static int on_system_topics(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    text_buf b;
    tb_init(&b);
    namesrv_core_lock(&ns->core);
    encode_system_topic_list(&ns->core.routes, &b);
    namesrv_core_unlock(&ns->core);
    return answer_buf(ns, req, cmd, &b);
}

static int on_delete_topic(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    namesrv_core_lock(&ns->core);
    route_table_delete_topic(&ns->core.routes, ext(ns, cmd, "topic"), ext(ns, cmd, "clusterName"));
    publish_locked(ns);
    namesrv_core_unlock(&ns->core);
    return answer(ns, req, cmd, CODE_SUCCESS, NULL, NULL, 0);
}

static int on_register_topic(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    const char *topic = ext(ns, cmd, "topic");
    size_t len = 0;
    const char *body = ns->api->cmd_body(cmd, &len);
    json_t *root = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    json_t *qarr = json_object_get(root, "queueDatas");
    size_t n = json_array_size(qarr);
    queue_data *qds = calloc(n ? n : 1, sizeof(*qds));
    if (!qds) {
        json_decref(root);
        return RMQ_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *q = json_array_get(qarr, i);
        qds[i].broker_name = json_string_value(json_object_get(q, "brokerName"));
        qds[i].perm = (int32_t)json_integer_value(json_object_get(q, "perm"));
        qds[i].read_queue_nums = (int32_t)json_integer_value(json_object_get(q, "readQueueNums"));
        qds[i].write_queue_nums = (int32_t)json_integer_value(json_object_get(q, "writeQueueNums"));
        qds[i].topic_sys_flag = (int32_t)json_integer_value(json_object_get(q, "topicSysFlag"));
    }
    namesrv_core_lock(&ns->core);
    bool applied = route_table_register_topic(&ns->core.routes, topic, qds, n);
    publish_locked(ns);
    namesrv_core_unlock(&ns->core);
    if (!applied)
        ns->api->log(ns->ctx, RMQ_LOG_WARN,
                     "REGISTER_TOPIC_IN_NAMESRV %s ignored: a broker name is not registered",
                     topic ? topic : "null");
    free(qds);
    json_decref(root);
    return answer(ns, req, cmd, CODE_SUCCESS, NULL, NULL, 0);
}

/* ---- configuration -------------------------------------------------------- */

static void refresh_listen_port(namesrv_plugin *ns)
{
    char host[128];
    int port;
    if (ns->api->server_address(ns->ctx, host, sizeof(host), &port) == 0 && port > 0)
        ns->core.cfg.listen_port = port;
}

static int on_get_config(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    text_buf b;
    tb_init(&b);
    namesrv_core_lock(&ns->core);
    refresh_listen_port(ns);
    namesrv_config_properties(&ns->core.cfg, &b);
    namesrv_core_unlock(&ns->core);
    return answer_buf(ns, req, cmd, &b);
}

static int on_update_config(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    namesrv_plugin *ns = ud;
    size_t len = 0;
    const char *body = ns->api->cmd_body(cmd, &len);
    config_update_result res;
    namesrv_core_lock(&ns->core);
    namesrv_config_update(&ns->core.cfg, body, len, &res);
    if (res.code == CODE_SUCCESS && res.applied) {
        refresh_listen_port(ns);
        namesrv_persist_config(ns);
        if (res.order_message_enable_changed) {
            ns->core.routes.all_dirty = true; /* orderTopicConf appears or goes */
            publish_locked(ns);
        }
    }
    namesrv_core_unlock(&ns->core);
    if (res.code != CODE_SUCCESS)
        ns->api->log(ns->ctx, RMQ_LOG_WARN, "UPDATE_NAMESRV_CONFIG from %s refused: %s",
                     ns->api->request_peer(req), res.remark);
    return answer(ns, req, cmd, res.code, res.remark[0] ? res.remark : NULL, NULL, 0);
}

/* ---- registration with the host ------------------------------------------- */

typedef struct processor_binding {
    int32_t code;
    rmq_processor_fn fn;
    bool inline_io;
} processor_binding;

static const processor_binding BINDINGS[] = {
    {PUT_KV_CONFIG, on_put_kv, false},
    {GET_KV_CONFIG, on_get_kv, false},
    {DELETE_KV_CONFIG, on_delete_kv, false},
    {REGISTER_BROKER, on_register_broker, false},
    {UNREGISTER_BROKER, on_unregister_broker, false},
    {GET_ROUTEINFO_BY_TOPIC, on_get_route, true},
    {GET_BROKER_CLUSTER_INFO, on_cluster_info, false},
    {WIPE_WRITE_PERM_OF_BROKER, on_wipe_perm, false},
    {GET_ALL_TOPIC_LIST_FROM_NAMESERVER, on_all_topics, false},
    {DELETE_TOPIC_IN_NAMESRV, on_delete_topic, false},
    {REGISTER_TOPIC_IN_NAMESRV, on_register_topic, false},
    {GET_KVLIST_BY_NAMESPACE, on_get_kvlist, false},
    {GET_TOPICS_BY_CLUSTER, on_topics_by_cluster, false},
    {GET_SYSTEM_TOPIC_LIST_FROM_NS, on_system_topics, false},
    {GET_UNIT_TOPIC_LIST, on_unit_topics, false},
    {GET_HAS_UNIT_SUB_TOPIC_LIST, on_unit_sub_topics, false},
    {GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST, on_unit_sub_ununit_topics, false},
    {UPDATE_NAMESRV_CONFIG, on_update_config, false},
    {GET_NAMESRV_CONFIG, on_get_config, false},
    {QUERY_DATA_VERSION, on_query_data_version, false},
    {ADD_WRITE_PERM_OF_BROKER, on_add_perm, false},
    {GET_BROKER_MEMBER_GROUP, on_member_group, false},
    {BROKER_HEARTBEAT, on_broker_heartbeat, false},
};

int namesrv_register_processors(namesrv_plugin *ns)
{
    for (size_t i = 0; i < sizeof(BINDINGS) / sizeof(BINDINGS[0]); i++) {
        const processor_binding *b = &BINDINGS[i];
        int rc = ns->api->register_processor(ns->ctx, b->code, b->fn, ns,
                                             b->inline_io ? NULL : NAMESRV_EXECUTOR);
        if (rc != 0) {
            ns->api->log(ns->ctx, RMQ_LOG_ERROR, "registering code %d failed: %s", b->code,
                         rmq_strerror(rc));
            return rc;
        }
    }
    return 0;
}
