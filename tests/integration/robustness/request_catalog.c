/* request_catalog.c — the well-formed starting point of every fuzzed
 * request: one entry per code the three plugins register (read from their
 * processor tables). Builds commands only; never sends or mutates them. */
#include "request_catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcm_test_daemon.h"
#include "rmq_test_bodies.h"

#define NS FUZZ_SERVER_NAMESRV
#define BR FUZZ_SERVER_BROKER
#define BROKER_ID                                                                                  \
    {                                                                                              \
        "brokerId", "0", true                                                                      \
    }
#define FUZZ_BROKER                                                                                \
    {                                                                                              \
        "brokerName", "FuzzBroker", false                                                          \
    }
#define FUZZ_ADDR                                                                                  \
    {                                                                                              \
        "brokerAddr", "127.0.0.1:30911", false                                                     \
    }
#define FUZZ_CLUSTER                                                                               \
    {                                                                                              \
        "clusterName", "FuzzCluster", false                                                        \
    }
#define FUZZ_TOPIC                                                                                 \
    {                                                                                              \
        "topic", "FuzzTopic", false                                                                \
    }
#define FUZZ_GROUP                                                                                 \
    {                                                                                              \
        "consumerGroup", "FuzzGroup", false                                                        \
    }
#define QUEUE_ID                                                                                   \
    {                                                                                              \
        "queueId", "0", true                                                                       \
    }

/* SEND_MESSAGE_V2's single-letter header (SendMessageRequestHeaderV2). */
#define SEND_V2_EXT                                                                                \
    {                                                                                              \
        {"a", "FuzzProducer", false}, {"b", "FuzzTopic", false}, {"c", "TBW102", false},           \
            {"d", "4", true}, {"e", "0", true}, {"f", "0", true}, {"g", "1700000000000", true},    \
            {"h", "0", true}, {"i", "TAGS\001a\002", false}, {"j", "0", true},                     \
            {"k", "false", false},                                                                 \
        {                                                                                          \
            "m", "false", false                                                                    \
        }                                                                                          \
    }
#define SEND_V1_EXT                                                                                \
    {                                                                                              \
        {"producerGroup", "FuzzProducer", false}, {"topic", "FuzzTopic", false},                   \
            {"defaultTopic", "TBW102", false}, {"defaultTopicQueueNums", "4", true}, QUEUE_ID,     \
            {"sysFlag", "0", true}, {"bornTimestamp", "1700000000000", true}, {"flag", "0", true}, \
            {"properties", "TAGS\001a\002", false}, {"reconsumeTimes", "0", true},                 \
            {"unitMode", "false", false},                                                          \
        {                                                                                          \
            "batch", "false", false                                                                \
        }                                                                                          \
    }

static const fuzz_code_entry CATALOG[] = {
    /* namesrv (plugins/namesrv/plugin/namesrv_processors.c BINDINGS) */
    {100,
     "PUT_KV_CONFIG",
     NS,
     FUZZ_BODY_NONE,
     {{"namespace", "FuzzNs", false}, {"key", "k", false}, {"value", "v", false}}},
    {101,
     "GET_KV_CONFIG",
     NS,
     FUZZ_BODY_NONE,
     {{"namespace", "FuzzNs", false}, {"key", "k", false}}},
    {102,
     "DELETE_KV_CONFIG",
     NS,
     FUZZ_BODY_NONE,
     {{"namespace", "FuzzNs", false}, {"key", "k", false}}},
    {103,
     "REGISTER_BROKER",
     NS,
     FUZZ_BODY_REGISTER_BROKER,
     {FUZZ_BROKER,
      FUZZ_ADDR,
      FUZZ_CLUSTER,
      {"haServerAddr", "127.0.0.1:30912", false},
      BROKER_ID,
      {"compressed", "false", false},
      {"bodyCrc32", "0", true}}},
    {104,
     "UNREGISTER_BROKER",
     NS,
     FUZZ_BODY_NONE,
     {FUZZ_BROKER, FUZZ_ADDR, FUZZ_CLUSTER, BROKER_ID}},
    {105,
     "GET_ROUTEINFO_BY_TOPIC",
     NS,
     FUZZ_BODY_NONE,
     {FUZZ_TOPIC, {"acceptStandardJsonOnly", "false", false}}},
    {106, "GET_BROKER_CLUSTER_INFO", NS, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {205, "WIPE_WRITE_PERM_OF_BROKER", NS, FUZZ_BODY_NONE, {FUZZ_BROKER}},
    {206, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER", NS, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {216, "DELETE_TOPIC_IN_NAMESRV", NS, FUZZ_BODY_NONE, {FUZZ_TOPIC, FUZZ_CLUSTER}},
    {217, "REGISTER_TOPIC_IN_NAMESRV", NS, FUZZ_BODY_TOPIC_ROUTE, {FUZZ_TOPIC}},
    {219, "GET_KVLIST_BY_NAMESPACE", NS, FUZZ_BODY_NONE, {{"namespace", "FuzzNs", false}}},
    {224, "GET_TOPICS_BY_CLUSTER", NS, FUZZ_BODY_NONE, {{"cluster", "FuzzCluster", false}}},
    {304, "GET_SYSTEM_TOPIC_LIST_FROM_NS", NS, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {311, "GET_UNIT_TOPIC_LIST", NS, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {312, "GET_HAS_UNIT_SUB_TOPIC_LIST", NS, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {313, "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST", NS, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {318, "UPDATE_NAMESRV_CONFIG", NS, FUZZ_BODY_PROPERTIES, {{NULL, NULL, false}}},
    {319, "GET_NAMESRV_CONFIG", NS, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {322,
     "QUERY_DATA_VERSION",
     NS,
     FUZZ_BODY_DATA_VERSION,
     {FUZZ_BROKER, FUZZ_ADDR, FUZZ_CLUSTER, BROKER_ID}},
    {327, "ADD_WRITE_PERM_OF_BROKER", NS, FUZZ_BODY_NONE, {FUZZ_BROKER}},
    {901, "GET_BROKER_MEMBER_GROUP", NS, FUZZ_BODY_NONE, {FUZZ_CLUSTER, FUZZ_BROKER}},
    {904,
     "BROKER_HEARTBEAT",
     NS,
     FUZZ_BODY_NONE,
     {FUZZ_CLUSTER,
      FUZZ_ADDR,
      FUZZ_BROKER,
      BROKER_ID,
      {"epoch", "1", true},
      {"maxOffset", "100", true},
      {"confirmOffset", "100", true},
      {"heartbeatTimeoutMills", "1000", true},
      {"electionPriority", "1", true}}},
    /* broker-client-mgr: client, consumer and admin processors */
    {34, "HEART_BEAT", BR, FUZZ_BODY_HEARTBEAT, {{NULL, NULL, false}}},
    {35,
     "UNREGISTER_CLIENT",
     BR,
     FUZZ_BODY_NONE,
     {{"clientID", "fuzz-client@1", false}, {"producerGroup", "FuzzProducer", false}, FUZZ_GROUP}},
    {46, "CHECK_CLIENT_CONFIG", BR, FUZZ_BODY_CHECK_CLIENT, {{NULL, NULL, false}}},
    {38, "GET_CONSUMER_LIST_BY_GROUP", BR, FUZZ_BODY_NONE, {FUZZ_GROUP}},
    {14, "QUERY_CONSUMER_OFFSET", BR, FUZZ_BODY_NONE, {FUZZ_GROUP, FUZZ_TOPIC, QUEUE_ID}},
    {15,
     "UPDATE_CONSUMER_OFFSET",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP, FUZZ_TOPIC, QUEUE_ID, {"commitOffset", "7", true}}},
    {203, "GET_CONSUMER_CONNECTION_LIST", BR, FUZZ_BODY_NONE, {FUZZ_GROUP}},
    {204,
     "GET_PRODUCER_CONNECTION_LIST",
     BR,
     FUZZ_BODY_NONE,
     {{"producerGroup", "FuzzProducer", false}}},
    {43, "GET_ALL_CONSUMER_OFFSET", BR, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {17,
     "UPDATE_AND_CREATE_TOPIC",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_TOPIC,
      {"defaultTopic", "TBW102", false},
      {"readQueueNums", "4", true},
      {"writeQueueNums", "4", true},
      {"perm", "6", true},
      {"topicFilterType", "SINGLE_TAG", false},
      {"topicSysFlag", "0", true},
      {"order", "false", false}}},
    {215, "DELETE_TOPIC_IN_BROKER", BR, FUZZ_BODY_NONE, {FUZZ_TOPIC}},
    {21, "GET_ALL_TOPIC_CONFIG", BR, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {200, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", BR, FUZZ_BODY_GROUP_CONFIG, {{NULL, NULL, false}}},
    {201, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", BR, FUZZ_BODY_NONE, {{NULL, NULL, false}}},
    {207,
     "DELETE_SUBSCRIPTIONGROUP",
     BR,
     FUZZ_BODY_NONE,
     {{"groupName", "FuzzGroup", false}, {"cleanOffset", "true", false}}},
    {300, "QUERY_TOPIC_CONSUME_BY_WHO", BR, FUZZ_BODY_NONE, {FUZZ_TOPIC}},
    {41, "LOCK_BATCH_MQ", BR, FUZZ_BODY_LOCK_BATCH, {{NULL, NULL, false}}},
    {42, "UNLOCK_BATCH_MQ", BR, FUZZ_BODY_LOCK_BATCH, {{NULL, NULL, false}}},
    {307,
     "GET_CONSUMER_RUNNING_INFO",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP, {"clientId", "fuzz-client@1", false}, {"jstackEnable", "false", false}}},
    {309,
     "CONSUME_MESSAGE_DIRECTLY",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP,
      {"clientId", "fuzz-client@1", false},
      {"msgId", "7F00000100002A9F0000000000000000", false},
      FUZZ_BROKER}},
    {208, "GET_CONSUME_STATS", BR, FUZZ_BODY_NONE, {FUZZ_GROUP, FUZZ_TOPIC}},
    /* broker-client-mgr storage stubs (answerStorageCodes = true) */
    {11,
     "PULL_MESSAGE",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP,
      FUZZ_TOPIC,
      QUEUE_ID,
      {"queueOffset", "0", true},
      {"maxMsgNums", "32", true},
      {"sysFlag", "2", true},
      {"commitOffset", "0", true},
      {"suspendTimeoutMillis", "100", true},
      {"subscription", "*", false},
      {"subVersion", "0", true},
      {"expressionType", "TAG", false}}},
    {29,
     "SEARCH_OFFSET_BY_TIMESTAMP",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_TOPIC, QUEUE_ID, {"timestamp", "1700000000000", true}}},
    {30, "GET_MAX_OFFSET", BR, FUZZ_BODY_NONE, {FUZZ_TOPIC, QUEUE_ID}},
    {31, "GET_MIN_OFFSET", BR, FUZZ_BODY_NONE, {FUZZ_TOPIC, QUEUE_ID}},
    {10, "SEND_MESSAGE", BR, FUZZ_BODY_MESSAGE, SEND_V1_EXT},
    {310, "SEND_MESSAGE_V2", BR, FUZZ_BODY_MESSAGE, SEND_V2_EXT},
    {320, "SEND_BATCH_MESSAGE", BR, FUZZ_BODY_MESSAGE, SEND_V2_EXT},
    {36,
     "CONSUMER_SEND_MSG_BACK",
     BR,
     FUZZ_BODY_NONE,
     {{"offset", "0", true},
      {"group", "FuzzGroup", false},
      {"delayLevel", "0", true},
      {"originMsgId", "7F00000100002A9F0000000000000000", false},
      {"originTopic", "FuzzTopic", false},
      {"unitMode", "false", false},
      {"maxReconsumeTimes", "16", true}}},
    {324, "SEND_REPLY_MESSAGE", BR, FUZZ_BODY_MESSAGE, SEND_V1_EXT},
    {325, "SEND_REPLY_MESSAGE_V2", BR, FUZZ_BODY_MESSAGE, SEND_V2_EXT},
    /* POP (plugins/store/plugin/pop_processors.c) */
    {200050,
     "POP_MESSAGE",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP,
      FUZZ_TOPIC,
      {"queueId", "-1", true},
      {"maxMsgNums", "32", true},
      {"invisibleTime", "60000", true},
      {"pollTime", "100", true},
      {"bornTime", "1700000000000", true},
      {"initMode", "0", true},
      {"expType", "TAG", false},
      {"exp", "*", false},
      {"order", "false", false}}},
    {200051,
     "ACK_MESSAGE",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP,
      FUZZ_TOPIC,
      QUEUE_ID,
      {"extraInfo", "0 1700000000000 60000 0 0 FuzzBroker 0 0", false},
      {"offset", "0", true}}},
    {200053,
     "CHANGE_MESSAGE_INVISIBLETIME",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP,
      FUZZ_TOPIC,
      QUEUE_ID,
      {"extraInfo", "0 1700000000000 60000 0 0 FuzzBroker 0 0", false},
      {"offset", "0", true},
      {"invisibleTime", "1000", true}}},
    {200151, "BATCH_ACK_MESSAGE", BR, FUZZ_BODY_BATCH_ACK, {{NULL, NULL, false}}},
    /* plugins/store/plugin/pop_peek_notify.c */
    {200052,
     "PEEK_MESSAGE",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP, FUZZ_TOPIC, {"queueId", "-1", true}, {"maxMsgNums", "32", true}}},
    {200054,
     "NOTIFICATION",
     BR,
     FUZZ_BODY_NONE,
     {FUZZ_GROUP,
      FUZZ_TOPIC,
      {"queueId", "-1", true},
      {"pollTime", "100", true},
      {"bornTime", "1700000000000", true},
      {"order", "false", false}}},
    {200055, "POLLING_INFO", BR, FUZZ_BODY_NONE, {FUZZ_GROUP, FUZZ_TOPIC, QUEUE_ID}},
    /* broker-client-mgr assignment_processors.c */
    {400, "QUERY_ASSIGNMENT", BR, FUZZ_BODY_QUERY_ASSIGNMENT, {{NULL, NULL, false}}},
    {401, "SET_MESSAGE_REQUEST_MODE", BR, FUZZ_BODY_REQUEST_MODE, {{NULL, NULL, false}}},
    /* filter (plugins/filter/plugin/filter_server_processor.c) */
    {301,
     "REGISTER_FILTER_SERVER",
     BR,
     FUZZ_BODY_NONE,
     {{"filterServerAddr", "127.0.0.1:30913", false}}},
};

size_t fuzz_catalog_count(void)
{
    return sizeof CATALOG / sizeof CATALOG[0];
}

const fuzz_code_entry *fuzz_catalog_at(size_t i)
{
    return i < fuzz_catalog_count() ? &CATALOG[i] : NULL;
}

const fuzz_code_entry *fuzz_catalog_find(int code)
{
    for (size_t i = 0; i < fuzz_catalog_count(); i++)
        if (CATALOG[i].code == code)
            return &CATALOG[i];
    return NULL;
}

fuzz_server fuzz_catalog_server_of(int code)
{
    const fuzz_code_entry *e = fuzz_catalog_find(code);
    return e ? e->server : FUZZ_SERVER_BROKER;
}

char *fuzz_catalog_body(fuzz_body_kind kind)
{
    char buf[2048];
    switch (kind) {
    case FUZZ_BODY_NONE: return NULL;
    case FUZZ_BODY_REGISTER_BROKER:
        return rmq_tb_register_body_json(1, 1700000000000LL, "FuzzTopic,%RETRY%FuzzGroup:6:1:1");
    case FUZZ_BODY_TOPIC_ROUTE:
        return strdup("{\"brokerDatas\":[],\"queueDatas\":[{\"brokerName\":\"FuzzBroker\","
                      "\"perm\":6,\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]}");
    case FUZZ_BODY_DATA_VERSION: return strdup("{\"counter\":1,\"timestamp\":1700000000000}");
    case FUZZ_BODY_PROPERTIES: return strdup("orderMessageEnable=false\n");
    case FUZZ_BODY_HEARTBEAT:
        return strdup(bcm_consumer_heartbeat(buf, sizeof buf, "fuzz-client@1", "FuzzGroup",
                                             "FuzzTopic", true));
    case FUZZ_BODY_LOCK_BATCH:
        return strdup("{\"clientId\":\"fuzz-client@1\",\"consumerGroup\":\"FuzzGroup\","
                      "\"mqSet\":[{\"brokerName\":\"robust-broker\",\"queueId\":0,"
                      "\"topic\":\"FuzzTopic\"}],\"onlyThisBroker\":false}");
    case FUZZ_BODY_CHECK_CLIENT:
        return strdup("{\"clientId\":\"fuzz-client@1\",\"group\":\"FuzzGroup\","
                      "\"subscriptionData\":{\"classFilterMode\":false,\"codeSet\":[],"
                      "\"expressionType\":\"SQL92\",\"subString\":\"a > 5 AND b IN ('x','y')\","
                      "\"subVersion\":1700000000000,\"tagsSet\":[],\"topic\":\"FuzzTopic\"}}");
    case FUZZ_BODY_GROUP_CONFIG:
        return strdup("{\"brokerId\":0,\"consumeBroadcastEnable\":true,\"consumeEnable\":true,"
                      "\"consumeFromMinEnable\":true,\"groupName\":\"FuzzGroup\","
                      "\"notifyConsumerIdsChangedEnable\":true,\"retryMaxTimes\":16,"
                      "\"retryQueueNums\":1,\"whichBrokerWhenConsumeSlowly\":1}");
    case FUZZ_BODY_MESSAGE: return strdup("hello from the fuzz test");
    case FUZZ_BODY_QUERY_ASSIGNMENT:
        return strdup("{\"clientId\":\"fuzz-client@1\",\"consumerGroup\":\"FuzzGroup\","
                      "\"messageModel\":\"CLUSTERING\",\"strategyName\":\"AVG\","
                      "\"topic\":\"FuzzTopic\"}");
    case FUZZ_BODY_REQUEST_MODE:
        return strdup("{\"consumerGroup\":\"FuzzGroup\",\"mode\":\"POP\","
                      "\"popShareQueueNum\":0,\"topic\":\"FuzzTopic\"}");
    case FUZZ_BODY_BATCH_ACK:
        return strdup("{\"acks\":[{\"b\":[5],\"c\":\"FuzzGroup\",\"it\":60000,\"pt\":0,"
                      "\"q\":0,\"r\":\"0\",\"rq\":0,\"so\":0,\"t\":\"FuzzTopic\"}],"
                      "\"brokerName\":\"FuzzBroker\"}");
    }
    return NULL;
}

void fuzz_catalog_refresh_crc(rmq_cmd *cmd)
{
    if (!rmq_cmd_ext_get(cmd, "bodyCrc32"))
        return;
    char crc[16];
    rmq_tb_body_crc32_text(cmd->body ? (const void *)cmd->body : "", cmd->body_len, crc);
    rmq_cmd_ext_set(cmd, "bodyCrc32", crc);
}

rmq_cmd *fuzz_catalog_build(const fuzz_code_entry *e)
{
    rmq_cmd *c = rmq_cmd_new();
    if (!c)
        return NULL;
    c->code = e->code;
    c->version = 409;
    c->serialize_type = RMQ_SERIALIZE_JSON;
    for (size_t i = 0; i < FUZZ_MAX_EXT && e->ext[i].key; i++) {
        if (rmq_cmd_ext_set(c, e->ext[i].key, e->ext[i].value) != 0)
            goto fail;
        c->has_ext = true;
    }
    char *body = fuzz_catalog_body(e->body);
    if (body) {
        int rc = rmq_cmd_set_body(c, body, strlen(body), NULL, NULL);
        free(body);
        if (rc != 0)
            goto fail;
    }
    fuzz_catalog_refresh_crc(c);
    return c;
fail:
    rmq_cmd_free(c);
    return NULL;
}
