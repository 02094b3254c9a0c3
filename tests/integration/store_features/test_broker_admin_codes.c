/* test_broker_admin_codes.c — the broker admin codes mqadmin's producer,
 * getBrokerConfig / updateBrokerConfig, exportMetadata, brokerConsumeStats,
 * statsAll, cleanExpiredCQ, deleteExpiredCommitLog and cleanUnusedTopic
 * send, over raw frames against a real rmqhostd (namesrv, broker-client-mgr,
 * filter, store): 328, 26, 25, 305, 317, 315, 306, 329, 316, and the ACL
 * plugin's 52 naming the broker (clusterAclConfigVersion). Every wait polls
 * a condition with a deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "store_test_client.h"

#define WAIT_MS 15000

typedef struct fixture {
    rmq_test_daemon d;
    int ns;
    int port;
    char bcm_extra[256];
} fixture;

/* (Re)write broker-client-mgr's file: declared topic T with 4 queues. */
static int write_bcm(fixture *f)
{
    char bcm[768];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-a\"; brokerClusterName = "
             "\"AdminCluster\"; brokerIP1 = \"127.0.0.1\"; topics = \"T:4\"; %s",
             f->ns, f->bcm_extra);
    return rmq_td_add_plugin(&f->d, "broker-client-mgr", "broker-client-mgr", "broker", bcm);
}

static int start(fixture *f)
{
    if (rmq_td_start(&f->d, NULL) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "broker");
    return f->port > 0 ? 0 : -1;
}

static int setup_with(void **state, const char *store_settings)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char store[512];
    snprintf(store, sizeof store, "mappedFileSizeCommitLog = 1048576; %s", store_settings);
    if (f->ns <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, f->ns, "info", "") != 0 || write_bcm(f) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker", store) != 0)
        return -1;
    return start(f);
}

static int setup(void **state)
{
    return setup_with(state, "");
}

/* every commit-log segment but the last is expired at once */
static int setup_no_retention(void **state)
{
    return setup_with(state, "fileReservedTime = 0;");
}

static int setup_delete_stats(void **state)
{
    return setup_with(state, "autoDeleteUnusedStats = true;");
}

/* with the acl plugin on the broker; loopback is a global white address */
static int setup_acl(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    if (f->ns <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, f->ns, "info", "") != 0 || write_bcm(f) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker",
                          "mappedFileSizeCommitLog = 1048576;") != 0)
        return -1;
    char acl[400], settings[600];
    snprintf(acl, sizeof acl, "%s/plain_acl.yml", f->d.dir);
    FILE *fp = fopen(acl, "w");
    if (!fp)
        return -1;
    fputs("globalWhiteRemoteAddresses:\n- 127.0.0.1\naccounts:\n- accessKey: adminKey\n"
          "  secretKey: adminSecret1\n  admin: true\n",
          fp);
    fclose(fp);
    chmod(acl, 0600);
    snprintf(settings, sizeof settings, "role = \"broker\"; aclFile = \"%s\";", acl);
    if (rmq_td_add_plugin(&f->d, "acl-broker", "acl", "broker", settings) != 0)
        return -1;
    return start(f);
}

static int teardown(void **state)
{
    fixture *f = *state;
    int st = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    free(f);
    return st == 0 ? 0 : -1;
}

static rmq_cmd *send_to(int port, const char *topic, int queue, const char *body)
{
    int fd = rmq_tc_connect(port);
    rmq_cmd *r = fd >= 0 ? st_send(fd, 1, topic, queue, NULL, body, NULL) : NULL;
    if (fd >= 0)
        close(fd);
    return r;
}

static void send_ok(int port, const char *topic, int queue, const char *body)
{
    rmq_cmd *r = send_to(port, topic, queue, body);
    assert_non_null(r);
    if (r->code != 0)
        fail_msg("send to %s-%d: %d %s", topic, queue, r->code, r->remark ? r->remark : "");
    rmq_cmd_free(r);
}

static char *body_text(const rmq_cmd *r)
{
    char *s = malloc(r->body_len + 1);
    assert_non_null(s);
    if (r->body_len)
        memcpy(s, r->body, r->body_len);
    s[r->body_len] = 0;
    return s;
}

/* ---- 328 GET_ALL_PRODUCER_INFO -------------------------------------------- */

static void test_producer_info_lists_heartbeating_producers(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    const char *hb = "{\"clientID\":\"127.0.0.1@prod-1\",\"consumerDataSet\":[],"
                     "\"producerDataSet\":[{\"groupName\":\"PG\"}]}";
    rmq_cmd *req = rmq_tc_request(34, 7, NULL);
    rmq_cmd_set_body(req, hb, strlen(hb), NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = bcm_call(f->port, 328, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    json_t *root = json_loadb((const char *)r->body, r->body_len, 0, NULL);
    rmq_cmd_free(r);
    json_t *list = json_object_get(json_object_get(root, "data"), "PG");
    assert_int_equal(json_array_size(list), 1);
    json_t *p = json_array_get(list, 0);
    assert_string_equal(json_string_value(json_object_get(p, "clientId")), "127.0.0.1@prod-1");
    assert_string_equal(json_string_value(json_object_get(p, "language")), "JAVA");
    assert_int_equal(json_integer_value(json_object_get(p, "version")), 409);
    assert_true(strncmp(json_string_value(json_object_get(p, "remoteIP")), "/127.0.0.1:", 11) == 0);
    assert_true(json_integer_value(json_object_get(p, "lastUpdateTimestamp")) > 1700000000000LL);
    json_decref(root);
    close(fd);
}

/* ---- 305 GET_SYSTEM_TOPIC_LIST_FROM_BROKER ------------------------------- */

static void test_system_topic_list_names_the_broker_topics(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = bcm_call(f->port, 305, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    json_t *root = json_loadb((const char *)r->body, r->body_len, 0, NULL);
    rmq_cmd_free(r);
    json_t *list = json_object_get(root, "topicList");
    static const char *const want[] = {"TBW102",
                                       "SCHEDULE_TOPIC_XXXX",
                                       "AdminCluster",
                                       "broker-a",
                                       "OFFSET_MOVED_EVENT",
                                       "AdminCluster_REPLY_TOPIC",
                                       "RMQ_SYS_TRACE_TOPIC"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        bool found = false;
        for (size_t j = 0; j < json_array_size(list); j++)
            found |= strcmp(json_string_value(json_array_get(list, j)), want[i]) == 0;
        if (!found)
            fail_msg("305 lacks %s", want[i]);
    }
    for (size_t j = 0; j < json_array_size(list); j++) /* a user topic is not a system one */
        assert_string_not_equal(json_string_value(json_array_get(list, j)), "T");
    json_decref(root);
}

/* ---- 26 / 25 broker config ------------------------------------------------ */

static char *get_config(int port, long long *counter)
{
    rmq_cmd *r = bcm_call(port, 26, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    const char *v = rmq_cmd_ext_get(r, "version");
    assert_non_null(v);
    json_t *dv = json_loads(v, 0, NULL);
    assert_non_null(dv);
    *counter = json_integer_value(json_object_get(dv, "counter"));
    json_decref(dv);
    char *s = body_text(r);
    rmq_cmd_free(r);
    return s;
}

static rmq_cmd *update_config(int port, const char *props)
{
    return bcm_call(port, 25, NULL, props);
}

/* GET_ROUTEINFO_BY_TOPIC (105) at the NameServer until the topic's queue
 * data has `perm` (bounded wait). */
static bool wait_route_perm(int ns_port, const char *topic, int perm)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    long long seen = -1;
    while (rmq_test_now_ms() < deadline) {
        const char *kv[] = {"topic", topic, NULL};
        rmq_cmd *r = bcm_call(ns_port, 105, kv, NULL);
        if (r && r->code == 0) {
            json_t *root = json_loadb((const char *)r->body, r->body_len, 0, NULL);
            json_t *q = json_array_get(json_object_get(root, "queueDatas"), 0);
            seen = json_integer_value(json_object_get(q, "perm"));
            json_decref(root);
        }
        rmq_cmd_free(r);
        if (seen == perm)
            return true;
        rmq_test_pause_ms(100);
    }
    fprintf(stderr, "route of %s: perm %lld, want %d\n", topic, seen, perm);
    return false;
}

/* HEART_BEAT of a consumer of `group`; then whether GET_ALL_SUBSCRIPTIONGROUP
 * _CONFIG (201) lists the group. */
static bool heartbeat_creates_group(int port, const char *group)
{
    char hb[512];
    snprintf(hb, sizeof hb,
             "{\"clientID\":\"127.0.0.1@hb-1\",\"consumerDataSet\":[{\"groupName\":\"%s\","
             "\"consumeType\":\"CONSUME_PASSIVELY\",\"messageModel\":\"CLUSTERING\","
             "\"consumeFromWhere\":\"CONSUME_FROM_LAST_OFFSET\",\"subscriptionDataSet\":[],"
             "\"unitMode\":false}],\"producerDataSet\":[]}",
             group);
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    rmq_cmd *req = rmq_tc_request(34, 9, NULL);
    rmq_cmd_set_body(req, hb, strlen(hb), NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    close(fd);
    r = bcm_call(port, 201, NULL, NULL);
    assert_non_null(r);
    char *s = body_text(r);
    rmq_cmd_free(r);
    char needle[300];
    snprintf(needle, sizeof needle, "\"%s\"", group);
    bool found = strstr(s, needle) != NULL;
    free(s);
    return found;
}

static void test_broker_config_update_applies_and_persists(void **state)
{
    fixture *f = *state;
    long long c0, c1;
    /* autoCreateSubscriptionGroup=true (conf.d): a heartbeat creates */
    assert_true(heartbeat_creates_group(f->port, "NewGroupBeforeUpdate"));
    char *cfg = get_config(f->port, &c0);
    assert_non_null(strstr(cfg, "brokerName=broker-a\n"));
    assert_non_null(strstr(cfg, "brokerClusterName=AdminCluster\n"));
    assert_non_null(strstr(cfg, "brokerPermission=6\n"));
    assert_non_null(strstr(cfg, "autoCreateSubscriptionGroup=true\n"));
    assert_null(strstr(cfg, "secretKey"));
    free(cfg);

    /* the black list: Java's three plus configBlackList's entries */
    rmq_cmd *r = update_config(f->port, "brokerConfigPath=/tmp/x\n");
    assert_int_equal(r->code, 16);
    assert_string_equal(r->remark, "Can not update config in black list.");
    rmq_cmd_free(r);

    assert_true(wait_route_perm(f->ns, "T", 6));
    r = update_config(f->port, "brokerPermission=4\nnoSuchSetting=1\n"
                               "autoCreateSubscriptionGroup = false\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    cfg = get_config(f->port, &c1);
    assert_non_null(strstr(cfg, "brokerPermission=4\n"));
    assert_non_null(strstr(cfg, "autoCreateSubscriptionGroup=false\n"));
    assert_null(strstr(cfg, "noSuchSetting")); /* Java ignores unknown keys */
    assert_int_equal(c1, c0 + 1);
    free(cfg);
    /* autoCreateSubscriptionGroup=false holds at once: a new group's
     * heartbeat no longer creates it */
    assert_false(heartbeat_creates_group(f->port, "NewGroupAfterUpdate"));
    /* registerBrokerAll now: the NameServer's route of T turns read-only
     * (Java refuses sends of a read-only broker only to order topics) */
    assert_true(wait_route_perm(f->ns, "T", 4));

    /* persisted: the next start keeps both */
    char path[400];
    snprintf(path, sizeof path, "%s/broker-client-mgr/broker.properties", f->d.state_dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
    assert_int_equal(start(f), 0);
    cfg = get_config(f->port, &c1);
    assert_non_null(strstr(cfg, "brokerPermission=4\n"));
    assert_non_null(strstr(cfg, "autoCreateSubscriptionGroup=false\n"));
    free(cfg);
    r = update_config(f->port, "brokerPermission=6\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_true(wait_route_perm(f->ns, "T", 6));
}

/* ---- 26: every Java key an operator's script may read ------------------- */

/* Java 4.9.8's getBrokerConfig keys (the fields of BrokerConfig, NettyServerConfig,
 * NettyClientConfig and MessageStoreConfig, read from the 4.9.8 jars) that rmqhost
 * lists; docs/compat.md names the ones it leaves out and why. */
static const char *const JAVA_KEYS[] = {
    "namesrvAddr",
    "brokerIP1",
    "brokerIP2",
    "brokerName",
    "brokerClusterName",
    "brokerId",
    "brokerPermission",
    "defaultTopicQueueNums",
    "autoCreateTopicEnable",
    "clusterTopicEnable",
    "brokerTopicEnable",
    "autoCreateSubscriptionGroup",
    "messageStorePlugIn",
    "msgTraceTopicName",
    "traceTopicEnable",
    "sendMessageThreadPoolNums",
    "putMessageFutureThreadPoolNums",
    "pullMessageThreadPoolNums",
    "processReplyMessageThreadPoolNums",
    "queryMessageThreadPoolNums",
    "adminBrokerThreadPoolNums",
    "clientManageThreadPoolNums",
    "consumerManageThreadPoolNums",
    "heartbeatThreadPoolNums",
    "endTransactionThreadPoolNums",
    "flushConsumerOffsetInterval",
    "rejectTransactionMessage",
    "fetchNamesrvAddrByAddressServer",
    "sendThreadPoolQueueCapacity",
    "putThreadPoolQueueCapacity",
    "pullThreadPoolQueueCapacity",
    "replyThreadPoolQueueCapacity",
    "queryThreadPoolQueueCapacity",
    "clientManagerThreadPoolQueueCapacity",
    "consumerManagerThreadPoolQueueCapacity",
    "heartbeatThreadPoolQueueCapacity",
    "endTransactionPoolQueueCapacity",
    "filterServerNums",
    "longPollingEnable",
    "shortPollingTimeMills",
    "notifyConsumerIdsChangedEnable",
    "highSpeedMode",
    "commercialEnable",
    "commercialTimerCount",
    "commercialTransCount",
    "commercialBigCount",
    "commercialBaseCount",
    "transferMsgByHeap",
    "regionId",
    "registerBrokerTimeoutMills",
    "slaveReadEnable",
    "disableConsumeIfConsumerReadSlowly",
    "consumerFallbehindThreshold",
    "brokerFastFailureEnable",
    "waitTimeMillsInSendQueue",
    "waitTimeMillsInPullQueue",
    "waitTimeMillsInHeartbeatQueue",
    "waitTimeMillsInTransactionQueue",
    "startAcceptSendRequestTimeStamp",
    "traceOn",
    "enableCalcFilterBitMap",
    "filterSupportRetry",
    "enablePropertyFilter",
    "compressedRegister",
    "forceRegister",
    "registerNameServerPeriod",
    "transactionTimeOut",
    "transactionCheckMax",
    "transactionCheckInterval",
    "storeReplyMessageEnable",
    "enableDetailStat",
    "autoDeleteUnusedStats",
    "isolateLogEnable",
    "configBlackList",
    "listenPort",
    "useTLS",
    "storePathRootDir",
    "storePathCommitLog",
    "mappedFileSizeCommitLog",
    "mappedFileSizeConsumeQueue",
    "enableConsumeQueueExt",
    "mappedFileSizeConsumeQueueExt",
    "bitMapLengthConsumeQueueExt",
    "flushIntervalCommitLog",
    "commitIntervalCommitLog",
    "useReentrantLockWhenPutMessage",
    "flushCommitLogTimed",
    "flushIntervalConsumeQueue",
    "cleanResourceInterval",
    "deleteWhen",
    "diskMaxUsedSpaceRatio",
    "fileReservedTime",
    "maxMessageSize",
    "checkCRCOnRecover",
    "flushCommitLogLeastPages",
    "commitCommitLogLeastPages",
    "flushLeastPagesWhenWarmMapedFile",
    "flushConsumeQueueLeastPages",
    "flushCommitLogThoroughInterval",
    "commitCommitLogThoroughInterval",
    "flushConsumeQueueThoroughInterval",
    "maxTransferBytesOnMessageInMemory",
    "maxTransferCountOnMessageInMemory",
    "maxTransferBytesOnMessageInDisk",
    "maxTransferCountOnMessageInDisk",
    "accessMessageInMemoryMaxRatio",
    "messageIndexEnable",
    "maxHashSlotNum",
    "maxIndexNum",
    "maxMsgsNumBatch",
    "haListenPort",
    "haSendHeartbeatInterval",
    "haHousekeepingInterval",
    "haTransferBatchSize",
    "haMasterAddress",
    "haSlaveFallbehindMax",
    "brokerRole",
    "flushDiskType",
    "syncFlushTimeout",
    "slaveTimeout",
    "messageDelayLevel",
    "cleanFileForciblyEnable",
    "warmMapedFileEnable",
    "offsetCheckInSlave",
    "debugLockEnable",
    "duplicationEnable",
    "osPageCacheBusyTimeOutMills",
    "defaultQueryMaxNum",
    "transientStorePoolEnable",
    "transientStorePoolSize",
    "fastFailIfNoBufferInStorePool",
    "enableDLegerCommitLog",
    "isEnableBatchPush",
    "enableLmq",
    "enableMultiDispatch",
    "maxLmqConsumeQueueNum",
    "enableScheduleAsyncDeliver",
    "scheduleAsyncDeliverMaxPendingLimit",
    "scheduleAsyncDeliverMaxResendNum2Blocked",
    NULL,
};
/* The value of `key` in a getBrokerConfig body, or NULL. */
static char *config_value(const char *cfg, const char *key)
{
    char needle[160];
    snprintf(needle, sizeof needle, "\n%s=", key);
    const char *p = strstr(cfg, needle);
    if (!p && strncmp(cfg, needle + 1, strlen(needle + 1)) == 0)
        p = cfg - 1; /* the first line */
    if (!p)
        return NULL;
    p += strlen(needle);
    return strndup(p, strcspn(p, "\n"));
}

static void assert_config_value(const char *cfg, const char *key, const char *want)
{
    char *v = config_value(cfg, key);
    if (!v || strcmp(v, want) != 0)
        fail_msg("getBrokerConfig: %s=%s, want %s", key, v ? v : "(absent)", want);
    free(v);
}

static void test_broker_config_lists_java_keys(void **state)
{
    fixture *f = *state;
    long long ver;
    char *cfg = get_config(f->port, &ver);
    for (const char *const *k = JAVA_KEYS; *k; k++) {
        char *v = config_value(cfg, *k);
        if (!v)
            fail_msg("getBrokerConfig lacks Java's key %s", *k);
        free(v);
    }
    /* values that say what this broker does, not Java's defaults */
    assert_config_value(cfg, "brokerIP2", "127.0.0.1");
    assert_config_value(cfg, "useTLS", "false");
    assert_config_value(cfg, "enablePropertyFilter", "false"); /* no filter plugin yet */
    assert_config_value(cfg, "commercialEnable", "false");
    assert_config_value(cfg, "waitTimeMillsInSendQueue", "9223372036854775807");
    assert_config_value(cfg, "endTransactionPoolQueueCapacity", "100000");
    assert_config_value(cfg, "transferMsgByHeap", "true");
    assert_config_value(cfg, "messageIndexEnable", "true");
    assert_config_value(cfg, "regionId", "DefaultRegion");
    assert_config_value(cfg, "brokerFastFailureEnable", "true");
    assert_config_value(cfg, "mappedFileSizeCommitLog", "1048576");
    assert_null(strstr(cfg, "secretKey"));
    free(cfg);
    /* with the filter plugin SQL92 subscriptions are accepted: the key follows */
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
    assert_int_equal(rmq_td_add_plugin(&f->d, "filter", "filter", "broker", NULL), 0);
    assert_int_equal(start(f), 0);
    cfg = get_config(f->port, &ver);
    assert_config_value(cfg, "enablePropertyFilter", "true");
    free(cfg);
}

/* ---- 317 GET_BROKER_CONSUME_STATS ---------------------------------------- */

static void test_broker_consume_stats_covers_every_group(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 3; i++)
        send_ok(f->port, "T", 0, "m");
    const char *group =
        "{\"groupName\":\"SG\",\"consumeEnable\":true,\"consumeFromMinEnable\":true,"
        "\"consumeBroadcastEnable\":true,\"retryQueueNums\":1,\"retryMaxTimes\":16,"
        "\"brokerId\":0,\"whichBrokerWhenConsumeSlowly\":1,"
        "\"notifyConsumerIdsChangedEnable\":true}";
    rmq_cmd *r = bcm_call(f->port, 200, NULL, group);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *kv[] = {"consumerGroup", "SG", "topic", "T", "queueId", "0",
                        "commitOffset",  "1",  NULL};
    r = bcm_call(f->port, 15, kv, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *order[] = {"isOrder", "false", NULL};
    r = bcm_call(f->port, 317, order, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    char *s = body_text(r);
    rmq_cmd_free(r);
    assert_non_null(strstr(s, "{\"brokerAddr\":\"127.0.0.1:"));
    assert_non_null(strstr(s, "{\"SG\":[{\"consumeTps\":0.0,\"offsetTable\":{"));
    assert_non_null(strstr(s, "{\"brokerName\":\"broker-a\",\"queueId\":0,\"topic\":\"T\"}:{"
                              "\"brokerOffset\":3,\"consumerOffset\":1,\"lastTimestamp\":"));
    /* queue 3 of T: written to nobody, consumed by nobody */
    assert_non_null(strstr(s, "{\"brokerName\":\"broker-a\",\"queueId\":3,\"topic\":\"T\"}:{"
                              "\"brokerOffset\":0,\"consumerOffset\":0,\"lastTimestamp\":0}"));
    size_t n = strlen(s);
    const char *tail = "],\"totalDiff\":2}";
    assert_true(n > strlen(tail) && strcmp(s + n - strlen(tail), tail) == 0);
    free(s);
    /* isOrder: T is not an order topic */
    const char *ordered[] = {"isOrder", "true", NULL};
    r = bcm_call(f->port, 317, ordered, NULL);
    s = body_text(r);
    rmq_cmd_free(r);
    assert_non_null(strstr(s, "{\"SG\":[]}"));
    assert_non_null(strstr(s, "\"totalDiff\":0}"));
    free(s);
}

/* ---- 315 VIEW_BROKER_STATS_DATA ------------------------------------------ */

static json_t *view_stats(int port, const char *name, const char *key, int *code)
{
    const char *kv[] = {"statsName", name, "statsKey", key, NULL};
    rmq_cmd *r = bcm_call(port, 315, kv, NULL);
    assert_non_null(r);
    *code = r->code;
    json_t *root = r->code == 0 ? json_loadb((const char *)r->body, r->body_len, 0, NULL) : NULL;
    if (r->code != 0) {
        char want[200];
        snprintf(want, sizeof want, "The stats <%s> <%s> not exist", name, key);
        assert_string_equal(r->remark, want);
    }
    rmq_cmd_free(r);
    return root;
}

/* statsMinute's tps is null while the minute list holds one snapshot (Java:
 * 0/0 written by fastjson as null), a number from two on. */
static int minute_snapshots_seen(json_t *root)
{
    json_t *tps = json_object_get(json_object_get(root, "statsMinute"), "tps");
    return json_is_null(tps) ? 1 : 2;
}

static void test_view_stats_counts_puts_and_gets_per_window(void **state)
{
    fixture *f = *state;
    int code;
    json_t *v = view_stats(f->port, "TOPIC_PUT_NUMS", "T", &code);
    assert_int_equal(code, 1); /* nothing put yet: no such stats item */
    json_decref(v);
    send_ok(f->port, "T", 1, "first");
    /* the item's first snapshot comes with the next 10-second sampling */
    uint64_t deadline = rmq_test_now_ms() + 2 * WAIT_MS;
    v = NULL;
    while (rmq_test_now_ms() < deadline) {
        json_decref(v);
        v = view_stats(f->port, "TOPIC_PUT_NUMS", "T", &code);
        assert_int_equal(code, 0);
        if (minute_snapshots_seen(v) == 1)
            break;
        rmq_test_pause_ms(100);
    }
    assert_int_equal(minute_snapshots_seen(v), 1);
    json_decref(v);
    for (int i = 0; i < 3; i++)
        send_ok(f->port, "T", 1, "next");
    st_pull_args pa = {.group = "PullG", .topic = "T", .queue = 1, .offset = 0, .max = 32};
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *p = st_pull(fd, 3, &pa);
    close(fd);
    assert_non_null(p);
    assert_int_equal(p->code, 0);
    rmq_cmd_free(p);
    /* the next sampling: the window holds the three later sends */
    deadline = rmq_test_now_ms() + 2 * WAIT_MS;
    v = NULL;
    while (rmq_test_now_ms() < deadline) {
        json_decref(v);
        v = view_stats(f->port, "TOPIC_PUT_NUMS", "T", &code);
        if (minute_snapshots_seen(v) == 2)
            break;
        rmq_test_pause_ms(100);
    }
    json_t *m = json_object_get(v, "statsMinute");
    assert_int_equal(json_integer_value(json_object_get(m, "sum")), 3);
    assert_true(json_real_value(json_object_get(m, "tps")) > 0.0);
    assert_true(json_number_value(json_object_get(m, "avgpt")) == 1.0); /* 3 sends of 1 */
    /* hour and day lists are sampled every 10 minutes / hour: one snapshot
     * (at start, before the item existed: none) */
    assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "statsDay"), "sum")), 0);
    json_decref(v);
    /* TOPIC_PUT_SIZE, sampled with it: the stored bytes of the same three
     * sends (each record is longer than its 4-byte body), per send */
    v = view_stats(f->port, "TOPIC_PUT_SIZE", "T", &code);
    assert_int_equal(code, 0);
    m = json_object_get(v, "statsMinute");
    long long bytes = json_integer_value(json_object_get(m, "sum"));
    assert_true(bytes > 3 * 4);
    assert_true(json_number_value(json_object_get(m, "avgpt")) == (double)bytes / 3.0);
    json_decref(v);
    /* the pull: GROUP_GET_NUMS and GROUP_GET_SIZE topic@group exist */
    v = view_stats(f->port, "GROUP_GET_NUMS", "T@PullG", &code);
    assert_int_equal(code, 0);
    json_decref(v);
    v = view_stats(f->port, "GROUP_GET_SIZE", "T@PullG", &code);
    assert_int_equal(code, 0);
    json_decref(v);
    v = view_stats(f->port, "TOPIC_PUT_NUMS", "NoSuchTopic", &code);
    assert_int_equal(code, 1);
    json_decref(v);
}

/* ---- 329 DELETE_EXPIRED_COMMITLOG, 306 CLEAN_EXPIRED_CONSUMEQUEUE -------- */

static long long runtime_ll(int port, const char *key)
{
    rmq_cmd *r = bcm_call(port, 28, NULL, NULL);
    assert_non_null(r);
    json_t *root = json_loadb((const char *)r->body, r->body_len, 0, NULL);
    rmq_cmd_free(r);
    const char *v = json_string_value(json_object_get(json_object_get(root, "table"), key));
    long long n = v ? atoll(v) : -1;
    json_decref(root);
    return n;
}

/* DELETE_TOPIC_IN_BROKER keeps the topic's put counters (4.9.8's default)
 * unless autoDeleteUnusedStats: then VIEW_BROKER_STATS_DATA says "not exist". */
static void delete_topic_then_view(fixture *f, int want_code)
{
    send_ok(f->port, "TD", 1, "one");
    int code;
    json_t *v = view_stats(f->port, "TOPIC_PUT_NUMS", "TD", &code);
    assert_int_equal(code, 0);
    json_decref(v);
    const char *kv[] = {"topic", "TD", NULL};
    rmq_cmd *r = bcm_call(f->port, 215, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    v = view_stats(f->port, "TOPIC_PUT_NUMS", "TD", &code);
    assert_int_equal(code, want_code);
    json_decref(v);
    v = view_stats(f->port, "TOPIC_PUT_SIZE", "TD", &code);
    assert_int_equal(code, want_code);
    json_decref(v);
}

static void test_deleted_topic_keeps_its_stats_by_default(void **state)
{
    delete_topic_then_view(*state, 0);
}

static void test_deleted_topic_stats_go_with_auto_delete_unused_stats(void **state)
{
    delete_topic_then_view(*state, 1);
}

static void test_manual_commitlog_and_queue_cleanup(void **state)
{
    fixture *f = *state;
    char *big = malloc(64 * 1024 + 1);
    assert_non_null(big);
    memset(big, 'b', 64 * 1024);
    big[64 * 1024] = 0;
    send_ok(f->port, "T", 1, big); /* queue 1: only in the first 1 MiB segment */
    for (int i = 0; i < 18; i++)   /* ~1.15 MiB: a second segment */
        send_ok(f->port, "T", 0, big);
    free(big);
    assert_int_equal(runtime_ll(f->port, "commitLogMinOffset"), 0);
    rmq_cmd *r = bcm_call(f->port, 329, NULL, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* fileReservedTime = 0: the first segment is gone */
    assert_int_equal(runtime_ll(f->port, "commitLogMinOffset"), 1048576);
    assert_int_equal(st_max_offset(f->port, "T", 1), 1);
    r = bcm_call(f->port, 306, NULL, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* queue 1 pointed only into the deleted segment: destroyed, starts again */
    assert_int_equal(st_max_offset(f->port, "T", 1), 0);
    assert_int_equal(st_max_offset(f->port, "T", 0), 18);
    assert_true(rmq_td_log_contains(&f->d, "clean expired consume queue T-1"));
}

/* ---- 25 for the store's settings ------------------------------------------ */

/* fileReservedTime applies at once (the retention pass reads it), both keys
 * persist in the store's file, maxMessageSize applies at the next start
 * (Java 4.9.8's put encoder takes it once per send thread, at its first put). */
static void test_store_settings_update_applies_and_persists(void **state)
{
    fixture *f = *state;
    char *big = malloc(64 * 1024 + 1);
    assert_non_null(big);
    memset(big, 'b', 64 * 1024);
    big[64 * 1024] = 0;
    for (int i = 0; i < 18; i++) /* ~1.15 MiB: two 1 MiB segments */
        send_ok(f->port, "T", 0, big);
    free(big);
    rmq_cmd *r = bcm_call(f->port, 329, NULL, NULL);
    rmq_cmd_free(r);
    assert_int_equal(runtime_ll(f->port, "commitLogMinOffset"), 0); /* 72 h kept */
    r = update_config(f->port, "fileReservedTime=0\nmaxMessageSize=1024\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    long long ver;
    char *cfg = get_config(f->port, &ver);
    assert_non_null(strstr(cfg, "fileReservedTime=0\n"));
    assert_non_null(strstr(cfg, "maxMessageSize=1024\n"));
    free(cfg);
    r = bcm_call(f->port, 329, NULL, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(runtime_ll(f->port, "commitLogMinOffset"), 1048576);
    char body[2001];
    memset(body, 'm', 2000);
    body[2000] = 0;
    send_ok(f->port, "T", 1, body); /* the running store keeps its limit */
    char path[400];
    snprintf(path, sizeof path, "%s/store/config/store.properties", f->d.state_dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
    assert_int_equal(start(f), 0);
    cfg = get_config(f->port, &ver);
    assert_non_null(strstr(cfg, "fileReservedTime=0\n"));
    assert_non_null(strstr(cfg, "maxMessageSize=1024\n"));
    free(cfg);
    r = send_to(f->port, "T", 1, body);
    assert_non_null(r);
    assert_int_equal(r->code, 13); /* MESSAGE_ILLEGAL: over the persisted limit */
    rmq_cmd_free(r);
    /* a key an update may not change is ignored, as Java ignores unknown keys */
    r = update_config(f->port, "storePathCommitLog=/tmp/elsewhere\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    cfg = get_config(f->port, &ver);
    assert_null(strstr(cfg, "storePathCommitLog=/tmp/elsewhere"));
    free(cfg);
}

/* The settings Java's processors read per request change at once (Java:
 * Configuration.update sets the live BrokerConfig field, read per send or
 * pull) and persist: traceOn (TRACE_ON of each send answer), longPollingEnable
 * and shortPollingTimeMills (a suspended pull of an empty queue is held
 * shortPollingTimeMills instead of its suspendTimeoutMillis), and the
 * store's maxTransferCountOnMessageInMemory and accessMessageInMemoryMaxRatio
 * (records per pull). */
static void test_per_request_settings_apply_at_once(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = send_to(f->port, "T", 0, "before");
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "TRACE_ON"), "true");
    rmq_cmd_free(r);
    r = update_config(f->port,
                      "traceOn=false\nlongPollingEnable=false\nshortPollingTimeMills=100\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = send_to(f->port, "T", 0, "after");
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "TRACE_ON"), "false");
    rmq_cmd_free(r);
    /* held an hour under long polling; the client waits 25 s for the answer */
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    st_pull_args pa = {.group = "HoldG",
                       .topic = "T",
                       .queue = 2,
                       .offset = 0,
                       .max = 32,
                       .sys_flag = 2 | 4, /* suspend + inline subscription */
                       .suspend_ms = 3600000};
    r = st_pull(fd, 7, &pa);
    close(fd);
    assert_non_null(r);
    assert_int_equal(r->code, 19); /* PULL_NOT_FOUND once the short hold ends */
    rmq_cmd_free(r);
    /* the store's per-read cap (Java's getMessage reads it per call) */
    for (int i = 0; i < 5; i++)
        send_ok(f->port, "T", 3, "capped");
    stored_record recs[8];
    st_pull_args all = {.group = "CapG", .topic = "T", .queue = 3, .offset = 0, .max = 32};
    fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    r = st_pull(fd, 8, &all);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, recs, 8), 5);
    rmq_cmd_free(r);
    r = update_config(f->port, "maxTransferCountOnMessageInMemory=2\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = st_pull(fd, 9, &all);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, recs, 8), 2);
    rmq_cmd_free(r);
    /* no record counts as in memory now: the in-disk cap (8) applies */
    r = update_config(f->port, "accessMessageInMemoryMaxRatio=0\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = st_pull(fd, 10, &all);
    close(fd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, recs, 8), 5);
    rmq_cmd_free(r);
    long long ver;
    char *cfg = get_config(f->port, &ver);
    assert_non_null(strstr(cfg, "longPollingEnable=false\n"));
    assert_non_null(strstr(cfg, "maxTransferCountOnMessageInMemory=2\n"));
    free(cfg);
    /* persisted: the next start reads it */
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
    assert_int_equal(start(f), 0);
    r = send_to(f->port, "T", 0, "restarted");
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "TRACE_ON"), "false");
    rmq_cmd_free(r);
}

/* messageIndexEnable and regionId, which Java 4.9.8 reads per use (its
 * index dispatcher per record, its send processor per answer), change at
 * once and persist: with the index off a new keyed message is not found by
 * QUERY_MESSAGE (12) while one indexed before still is; MSG_REGION of the
 * next send answer is the new region; a restart keeps both. */
static int query_by_key(int port, const char *key)
{
    const char *qk[] = {
        "topic",         "T", "key", key, "maxNum", "32", "beginTimestamp", "0", "endTimestamp",
        "9999999999999", NULL};
    rmq_cmd *r = bcm_call(port, 12, qk, NULL);
    assert_non_null(r);
    int n = -1;
    if (r->code == 0) {
        stored_record rec[4];
        n = (int)st_records(r, rec, 4);
    } else {
        assert_int_equal(r->code, 22); /* QUERY_NOT_FOUND */
        n = 0;
    }
    rmq_cmd_free(r);
    return n;
}

static void send_keyed(int port, const char *key, const char *want_region)
{
    char props[128];
    snprintf(props, sizeof props, "KEYS\001%s", key);
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    rmq_cmd *r = st_send(fd, 1, "T", 0, props, key, NULL);
    close(fd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "MSG_REGION"), want_region);
    rmq_cmd_free(r);
}

static void test_index_and_region_apply_at_once(void **state)
{
    fixture *f = *state;
    send_keyed(f->port, "key-before", "DefaultRegion");
    assert_int_equal(query_by_key(f->port, "key-before"), 1);
    rmq_cmd *r = update_config(f->port, "messageIndexEnable=false\nregionId=RegionB\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    send_keyed(f->port, "key-after", "RegionB");
    assert_int_equal(query_by_key(f->port, "key-after"), 0);
    assert_int_equal(query_by_key(f->port, "key-before"), 1); /* the index stays readable */
    long long ver;
    char *cfg = get_config(f->port, &ver);
    assert_non_null(strstr(cfg, "messageIndexEnable=false\n"));
    assert_non_null(strstr(cfg, "regionId=RegionB\n"));
    free(cfg);
    /* persisted: the next start reads both */
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
    assert_int_equal(start(f), 0);
    send_keyed(f->port, "key-restarted", "RegionB");
    assert_int_equal(query_by_key(f->port, "key-restarted"), 0);
    /* and back on at once */
    r = update_config(f->port, "messageIndexEnable=true\n");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    send_keyed(f->port, "key-on-again", "RegionB");
    assert_int_equal(query_by_key(f->port, "key-on-again"), 1);
}

/* ---- 316 CLEAN_UNUSED_TOPIC ----------------------------------------------- */

static void test_clean_unused_topic_drops_queues_of_unknown_topics(void **state)
{
    fixture *f = *state;
    send_ok(f->port, "AutoT", 0, "auto-created from TBW102");
    send_ok(f->port, "T", 0, "declared");
    rmq_cmd *r = bcm_call(f->port, 316, NULL, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "AutoT", 0), 1); /* still a topic */
    /* the broker's topic table forgets AutoT (another config directory); the
     * store still has its queue */
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
    char dir[400];
    snprintf(dir, sizeof dir, "storePathRootDir = \"%s/other-bcm\";", f->d.dir);
    snprintf(f->bcm_extra, sizeof f->bcm_extra, "%s", dir);
    assert_int_equal(write_bcm(f), 0);
    assert_int_equal(start(f), 0);
    assert_int_equal(st_max_offset(f->port, "AutoT", 0), 1);
    r = bcm_call(f->port, 316, NULL, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "AutoT", 0), 0);
    assert_int_equal(st_max_offset(f->port, "T", 0), 1);
}

/* ---- 52 GET_BROKER_CLUSTER_ACL_INFO names the broker -------------------- */

static void test_acl_info_names_the_broker(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = bcm_call(f->port, 52, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "brokerName"), "broker-a");
    assert_string_equal(rmq_cmd_ext_get(r, "clusterName"), "AdminCluster");
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", f->port);
    assert_string_equal(rmq_cmd_ext_get(r, "brokerAddr"), addr);
    rmq_cmd_free(r);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest all[] = {
        T(test_producer_info_lists_heartbeating_producers),
        T(test_system_topic_list_names_the_broker_topics),
        T(test_broker_config_update_applies_and_persists),
        T(test_broker_config_lists_java_keys),
        T(test_broker_consume_stats_covers_every_group),
        T(test_view_stats_counts_puts_and_gets_per_window),
        T(test_deleted_topic_keeps_its_stats_by_default),
        cmocka_unit_test_setup_teardown(test_deleted_topic_stats_go_with_auto_delete_unused_stats,
                                        setup_delete_stats, teardown),
        cmocka_unit_test_setup_teardown(test_manual_commitlog_and_queue_cleanup, setup_no_retention,
                                        teardown),
        T(test_clean_unused_topic_drops_queues_of_unknown_topics),
        T(test_store_settings_update_applies_and_persists),
        T(test_per_request_settings_apply_at_once),
        T(test_index_and_region_apply_at_once),
        cmocka_unit_test_setup_teardown(test_acl_info_names_the_broker, setup_acl, teardown),
    };
    struct CMUnitTest tests[sizeof all / sizeof all[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (rmq_test_name_selected(only, all[i].name))
            tests[n++] = all[i];
    return _cmocka_run_group_tests("broker_admin_codes", tests, n, NULL, NULL);
}
