/* store_settings.c — the store plugin's settings, declared with Java's
 * MessageStoreConfig / BrokerConfig names (protocol-messages.md §10.14) so
 * they appear in `rmqhostd --list-settings`, and their translation into the
 * engine's store_config. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store_plugin.h"

#define MIB (1024LL * 1024)

const rmq_setting_decl STORE_SETTINGS[] = {
    /* MessageStoreConfig */
    {"storePathRootDir", RMQ_SETTING_STRING, "", "store root (empty: <state_dir>/store)", 0, 0},
    {"storePathCommitLog", RMQ_SETTING_STRING, "",
     "commit-log directory (empty: <storePathRootDir>/commitlog)", 0, 0},
    {"mappedFileSizeCommitLog", RMQ_SETTING_INT, "1073741824", "commit-log file size (bytes)",
     64 * 1024, 64LL * 1024 * MIB},
    {"mappedFileSizeConsumeQueue", RMQ_SETTING_INT, "6000000",
     "consume-queue file size (bytes, rounded up to a multiple of 20)", 20, 1024 * MIB},
    {"flushDiskType", RMQ_SETTING_STRING, "ASYNC_FLUSH",
     "ASYNC_FLUSH: answer after the append (page cache); SYNC_FLUSH: after fsync", 0, 0},
    {"syncFlushTimeout", RMQ_SETTING_INT, "5000",
     "SYNC_FLUSH: FLUSH_DISK_TIMEOUT after this many ms", 1, 3600000},
    {"flushIntervalCommitLog", RMQ_SETTING_INT, "500", "ASYNC_FLUSH write-back period (ms)", 1,
     3600000},
    {"fileReservedTime", RMQ_SETTING_INT, "72", "hours a commit-log file is kept", 0, 24 * 3650},
    {"deleteWhen", RMQ_SETTING_STRING, "04", "hours (';'-separated) when expired files go", 0, 0},
    {"diskMaxUsedSpaceRatio", RMQ_SETTING_INT, "75", "disk use (%) that forces deletion", 10, 95},
    {"cleanResourceInterval", RMQ_SETTING_INT, "10000",
     "ms between retention runs and disk-usage / writeability checks", 100, 3600000},
    {"cleanFileForciblyEnable", RMQ_SETTING_BOOL, "true",
     "above 85 % disk use delete the oldest files whatever their age", 0, 0},
    {"maxMessageSize", RMQ_SETTING_INT, "4194304", "largest message body (bytes)", 1, 64 * MIB},
    {"messageIndexEnable", RMQ_SETTING_BOOL, "true", "key index for QUERY_MESSAGE", 0, 0},
    {"maxHashSlotNum", RMQ_SETTING_INT, "5000000", "index file hash slots", 1, 50000000},
    {"maxIndexNum", RMQ_SETTING_INT, "20000000", "index file entries", 1, 200000000},
    {"checkCRCOnRecover", RMQ_SETTING_BOOL, "true", "verify BODYCRC when recovering", 0, 0},
    {"accessMessageInMemoryMaxRatio", RMQ_SETTING_INT, "40",
     "% of RAM behind the log end beyond which a message is 'in disk'", 0, 100},
    {"maxTransferBytesOnMessageInMemory", RMQ_SETTING_INT, "262144", "pull byte limit (memory)", 1,
     64 * MIB},
    {"maxTransferCountOnMessageInMemory", RMQ_SETTING_INT, "32", "pull count limit (memory)", 1,
     100000},
    {"maxTransferBytesOnMessageInDisk", RMQ_SETTING_INT, "65536", "pull byte limit (disk)", 1,
     64 * MIB},
    {"maxTransferCountOnMessageInDisk", RMQ_SETTING_INT, "8", "pull count limit (disk)", 1, 100000},
    {"maxMsgsNumBatch", RMQ_SETTING_INT, "64", "QUERY_MESSAGE result cap", 1, 100000},
    {"defaultQueryMaxNum", RMQ_SETTING_INT, "32", "unique-key QUERY_MESSAGE max results", 1,
     100000},
    {"messageDelayLevel", RMQ_SETTING_STRING,
     "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h",
     "delay levels (DELAY property, retries)", 0, 0},
    /* 5.x timer messages (timer_service.c) */
    {"timerWheelEnable", RMQ_SETTING_BOOL, "true",
     "TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS messages wait in the timer wheel "
     "(false: refused, SYSTEM_ERROR)",
     0, 0},
    {"timerMaxDelaySec", RMQ_SETTING_INT, "259200",
     "latest delivery time accepted, seconds ahead (MESSAGE_ILLEGAL beyond)", 1, 315360000},
    {"timerPrecisionMs", RMQ_SETTING_INT, "1000",
     "delivery times are rounded down to this (ms); the wheel's slot width", 10, 3600000},
    /* replication (protocol-ha.md §1.3) */
    {"brokerRole", RMQ_SETTING_STRING, "ASYNC_MASTER",
     "ASYNC_MASTER, SYNC_MASTER (a send is answered once a slave holds it) or SLAVE", 0, 0},
    {"haListenPort", RMQ_SETTING_INT, "0",
     "HA port slaves connect to (0: the server's port + 1, as Java; unlike 4.9.8 a value is "
     "honoured)",
     0, 65535},
    {"haMasterAddress", RMQ_SETTING_STRING, "",
     "SLAVE: the master's HA address host:port (empty: the haServerAddr of the NameServer's "
     "REGISTER_BROKER answer)",
     0, 0},
    {"haSendHeartbeatInterval", RMQ_SETTING_INT, "5000",
     "slave report / master empty-frame period (ms)", 100, 3600000},
    {"haHousekeepingInterval", RMQ_SETTING_INT, "20000",
     "an HA connection silent this long is closed (ms)", 1000, 3600000},
    {"haTransferBatchSize", RMQ_SETTING_INT, "32768", "largest transfer frame body (bytes)", 1024,
     4 * MIB - 12},
    {"haSlaveFallbehindMax", RMQ_SETTING_INT, "268435456",
     "SYNC_MASTER: a slave further behind is not usable (SLAVE_NOT_AVAILABLE)", 0, INT64_MAX},
    {"slaveTimeout", RMQ_SETTING_INT, "3000", "SYNC_MASTER: FLUSH_SLAVE_TIMEOUT after this (ms)", 1,
     3600000},
    {"offsetCheckInSlave", RMQ_SETTING_BOOL, "false",
     "SLAVE: correct out-of-range pull offsets like a master (false: PULL_RETRY_IMMEDIATELY)", 0,
     0},
    /* BrokerConfig */
    {"slaveReadEnable", RMQ_SETTING_BOOL, "false",
     "PULL's suggestWhichBrokerId may send consumers of 'in disk' messages to a slave", 0, 0},
    {"regionId", RMQ_SETTING_STRING, "DefaultRegion", "MSG_REGION of send answers", 0, 0},
    {"autoDeleteUnusedStats", RMQ_SETTING_BOOL, "false",
     "DELETE_TOPIC_IN_BROKER also drops the topic's VIEW_BROKER_STATS_DATA counters", 0, 0},
    {"traceOn", RMQ_SETTING_BOOL, "true", "TRACE_ON of send answers", 0, 0},
    {"rejectTransactionMessage", RMQ_SETTING_BOOL, "false", "refuse TRAN_MSG sends", 0, 0},
    {"startAcceptSendRequestTimeStamp", RMQ_SETTING_INT, "0",
     "refuse sends before this wall time (ms)", 0, INT64_MAX},
    {"longPollingEnable", RMQ_SETTING_BOOL, "true",
     "hold PULLs up to suspendTimeoutMillis (else shortPollingTimeMills)", 0, 0},
    {"shortPollingTimeMills", RMQ_SETTING_INT, "1000", "hold time without long polling (ms)", 1,
     3600000},
    {"filterSupportRetry", RMQ_SETTING_BOOL, "false", "SQL92 filters apply to %RETRY% topics", 0,
     0},
    {"transactionTimeOut", RMQ_SETTING_INT, "6000", "half-message immunity before a check (ms)", 0,
     INT64_MAX},
    {"transactionCheckMax", RMQ_SETTING_INT, "15", "checks before a half message is dropped", 0,
     1000000},
    {"transactionCheckInterval", RMQ_SETTING_INT, "60000", "check-back period (ms)", 1, INT64_MAX},
    {"storeReplyMessageEnable", RMQ_SETTING_BOOL, "true", "store reply messages too", 0, 0},
    {"enableRetryTopicV2", RMQ_SETTING_BOOL, "false",
     "POP retry topic %RETRY%<group>+<topic> (false: %RETRY%<group>_<topic>); read at start", 0, 0},
    {"popResponseReturnActualRetryTopic", RMQ_SETTING_BOOL, "false",
     "POP answers a retry-topic message as stored (false: under the topic asked for, with "
     "POP_CK, as Java's default); read at start",
     0, 0},
    {"sendMessageThreadPoolNums", RMQ_SETTING_INT, "4", "send executor threads", 1, 256},
    {"sendThreadPoolQueueCapacity", RMQ_SETTING_INT, "10000", "send executor queue", 1, 10000000},
    {"pullMessageThreadPoolNums", RMQ_SETTING_INT, "20", "pull executor threads", 1, 256},
    {"pullThreadPoolQueueCapacity", RMQ_SETTING_INT, "100000", "pull executor queue", 1, 10000000},
    {"queryMessageThreadPoolNums", RMQ_SETTING_INT, "10", "query executor threads", 1, 256},
    {"queryThreadPoolQueueCapacity", RMQ_SETTING_INT, "20000", "query executor queue", 1, 10000000},
    {"putStatsWindowMillis", RMQ_SETTING_INT, "60000",
     "window of 28's putMessageDistributeTime / putLatency99 (Java: printTPSInterval, 60 s)", 1000,
     86400000},
    {"adminBrokerThreadPoolNums", RMQ_SETTING_INT, "4", "offset/stats executor threads", 1, 256},
    {"popPollingSize", RMQ_SETTING_INT, "1024",
     "POPs (and NOTIFICATIONs) waiting per (topic, group, queueId) beyond which one is refused "
     "POLLING_FULL",
     0, INT32_MAX},
    {"maxPopPollingSize", RMQ_SETTING_INT, "100000",
     "POPs (and NOTIFICATIONs, counted apart) waiting in all from which one is refused "
     "POLLING_FULL",
     0, INT64_MAX},
    /* rmqhost */
    {"sendMessageInline", RMQ_SETTING_BOOL, "true",
     "process sends on the IO thread (the append never waits for the disk); false: executor", 0, 0},
    {"pullMessageInline", RMQ_SETTING_BOOL, "true",
     "process pulls on the IO thread (a copy from the page cache); false: executor", 0, 0},
    {"commitLogPageCacheKeep", RMQ_SETTING_INT, "536870912",
     "commit-log bytes kept in the page cache behind the flushed end (older: dropped, "
     "their pages reused by new segments; 0: keep all, as Java)",
     0, INT64_MAX},
    {"commitLogMappedKeep", RMQ_SETTING_INT, "4194304",
     "flushed commit-log bytes kept mapped in the process behind the flushed end (older: "
     "unmapped, still in the page cache, so they leave the RSS; 0: keep all mapped)",
     0, INT64_MAX},
    {"maxMappedConsumeQueueFiles", RMQ_SETTING_INT, "8192",
     "consume-queue files mapped at once (mapped on first use, least recently used unmapped "
     "past this; 0: no limit)",
     0, 1000000},
    {"commitLogWrite", RMQ_SETTING_STRING, "auto",
     "how records reach the commit log: pwrite (a sync is one fdatasync), mmap (copied into "
     "the mapping), auto (pwrite under SYNC_FLUSH, mmap under ASYNC_FLUSH)",
     0, 0},
    {NULL, RMQ_SETTING_STRING, NULL, NULL, 0, 0},
};

/* A setting's value: what UPDATE_BROKER_CONFIG persisted (u), else conf.d's. */
static int64_t st_int(store_plugin *sp, json_t *u, const char *name)
{
    const char *o = json_string_value(json_object_get(u, name));
    return o ? strtoll(o, NULL, 10) : sp->api->setting_int(sp->ctx, name);
}

static bool st_bool(store_plugin *sp, json_t *u, const char *name)
{
    const char *o = json_string_value(json_object_get(u, name));
    return o ? strcasecmp(o, "true") == 0 : sp->api->setting_bool(sp->ctx, name);
}

static const char *st_str(store_plugin *sp, json_t *u, const char *name)
{
    const char *o = json_string_value(json_object_get(u, name));
    return o ? o : sp->api->setting_string(sp->ctx, name);
}

/* Which of names (NULL-ended) a word setting holds, its index (unset:
 * 0, the default); -1, after logging what it must be, when it is none. */
static int st_choice(store_plugin *sp, json_t *u, const char *name, const char *const *names,
                     const char *must)
{
    const char *v = st_str(sp, u, name);
    if (!v)
        return 0;
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    sp->api->log(sp->ctx, RMQ_LOG_ERROR, "%s must be %s, not \"%s\"", name, must, v);
    return -1;
}

/* The settings Java's processors read on every request (BrokerConfig /
 * MessageStoreConfig getters called per send, pull or query), so an
 * UPDATE_BROKER_CONFIG changes them at once: each is one atomic store,
 * read by the workers with one atomic load. */
static const char *const LIVE[] = {
    "traceOn",
    "rejectTransactionMessage",
    "startAcceptSendRequestTimeStamp",
    "longPollingEnable",
    "shortPollingTimeMills",
    "defaultQueryMaxNum",
    "filterSupportRetry",
    "offsetCheckInSlave",
    "slaveReadEnable",
    "haSlaveFallbehindMax",
    "regionId",
    "popPollingSize",    /* PopLongPollingService.polling, per request */
    "maxPopPollingSize", /* and again when a held POP's wait ends */
};

bool store_setting_is_live(const char *name)
{
    for (size_t i = 0; i < sizeof LIVE / sizeof LIVE[0]; i++)
        if (strcmp(name, LIVE[i]) == 0)
            return true;
    return false;
}

void store_settings_apply_live(store_plugin *sp, json_t *u)
{
    store_settings *s = &sp->set;
    s->trace_on = st_bool(sp, u, "traceOn");
    s->reject_transaction_message = st_bool(sp, u, "rejectTransactionMessage");
    s->start_accept_send_ts = st_int(sp, u, "startAcceptSendRequestTimeStamp");
    s->long_polling_enable = st_bool(sp, u, "longPollingEnable");
    s->short_polling_ms = st_int(sp, u, "shortPollingTimeMills");
    s->default_query_max_num = (int32_t)st_int(sp, u, "defaultQueryMaxNum");
    s->filter_support_retry = st_bool(sp, u, "filterSupportRetry");
    s->offset_check_in_slave = st_bool(sp, u, "offsetCheckInSlave");
    s->slave_read_enable = st_bool(sp, u, "slaveReadEnable");
    s->ha_fallbehind_max = st_int(sp, u, "haSlaveFallbehindMax");
    s->pop_polling_size = st_int(sp, u, "popPollingSize");
    s->max_pop_polling_size = st_int(sp, u, "maxPopPollingSize");
    const char *region = st_str(sp, u, "regionId");
    if (live_text_set(&s->region_id, region ? region : "") != 0)
        sp->api->log(sp->ctx, RMQ_LOG_ERROR, "regionId: out of memory, the old value stays");
}

/* The engine's settings Java's store reads at each use. */
static const char *const ENGINE_LIVE[] = {
    "maxTransferBytesOnMessageInMemory",
    "maxTransferCountOnMessageInMemory",
    "maxTransferBytesOnMessageInDisk",
    "maxTransferCountOnMessageInDisk",
    "maxMsgsNumBatch",
    "syncFlushTimeout",
    "flushIntervalCommitLog",
    "accessMessageInMemoryMaxRatio",
    "cleanFileForciblyEnable",
    "messageIndexEnable",
};

bool store_setting_is_engine_live(const char *name)
{
    for (size_t i = 0; i < sizeof ENGINE_LIVE / sizeof ENGINE_LIVE[0]; i++)
        if (strcmp(name, ENGINE_LIVE[i]) == 0)
            return true;
    return false;
}

void store_settings_apply_engine(store_plugin *sp, store_engine *e, json_t *u)
{
    store_config c = sp->set.engine; /* the start values, updated below */
    c.max_transfer_bytes_in_memory = (int32_t)st_int(sp, u, "maxTransferBytesOnMessageInMemory");
    c.max_transfer_count_in_memory = (int32_t)st_int(sp, u, "maxTransferCountOnMessageInMemory");
    c.max_transfer_bytes_in_disk = (int32_t)st_int(sp, u, "maxTransferBytesOnMessageInDisk");
    c.max_transfer_count_in_disk = (int32_t)st_int(sp, u, "maxTransferCountOnMessageInDisk");
    c.max_msgs_num_batch = (int32_t)st_int(sp, u, "maxMsgsNumBatch");
    c.sync_flush_timeout_ms = st_int(sp, u, "syncFlushTimeout");
    c.flush_interval_ms = st_int(sp, u, "flushIntervalCommitLog");
    c.access_message_in_memory_max_ratio = (int32_t)st_int(sp, u, "accessMessageInMemoryMaxRatio");
    c.clean_file_forcibly = st_bool(sp, u, "cleanFileForciblyEnable");
    c.message_index_enable = st_bool(sp, u, "messageIndexEnable");
    store_set_live_limits(e, &c);
}

static int read_all(store_plugin *sp, json_t *u)
{
    store_settings *s = &sp->set;
    store_config *e = &s->engine;
    store_config_defaults(e);

    e->root_dir = s->root_dir;
    const char *cl = st_str(sp, u, "storePathCommitLog");
    if (cl && *cl) {
        snprintf(s->commitlog_dir, sizeof s->commitlog_dir, "%s", cl);
        e->commitlog_dir = s->commitlog_dir;
    }
    e->commitlog_file_size = st_int(sp, u, "mappedFileSizeCommitLog");
    int64_t cq = st_int(sp, u, "mappedFileSizeConsumeQueue");
    e->cq_file_size = (cq + 19) / 20 * 20;
    static const char *const FLUSH[] = {"ASYNC_FLUSH", "SYNC_FLUSH", NULL};
    int ft = st_choice(sp, u, "flushDiskType", FLUSH, "ASYNC_FLUSH or SYNC_FLUSH");
    if (ft < 0)
        return RMQ_EINVAL;
    e->flush_type = ft == 1 ? STORE_SYNC_FLUSH : STORE_ASYNC_FLUSH;
    e->sync_flush_timeout_ms = st_int(sp, u, "syncFlushTimeout");
    e->flush_interval_ms = st_int(sp, u, "flushIntervalCommitLog");
    e->file_reserved_hours = st_int(sp, u, "fileReservedTime");
    snprintf(s->delete_when, sizeof s->delete_when, "%s", st_str(sp, u, "deleteWhen"));
    e->delete_when = s->delete_when;
    e->disk_max_used_ratio = (int32_t)st_int(sp, u, "diskMaxUsedSpaceRatio");
    /* Java checks the disk in its clean service, at this same period */
    e->clean_interval_ms = st_int(sp, u, "cleanResourceInterval");
    e->disk_check_interval_ms = e->clean_interval_ms;
    e->clean_file_forcibly = st_bool(sp, u, "cleanFileForciblyEnable");
    e->max_message_size = st_int(sp, u, "maxMessageSize");
    e->message_index_enable = st_bool(sp, u, "messageIndexEnable");
    e->max_hash_slot_num = (int32_t)st_int(sp, u, "maxHashSlotNum");
    e->max_index_num = (int32_t)st_int(sp, u, "maxIndexNum");
    e->check_crc_on_recover = st_bool(sp, u, "checkCRCOnRecover");
    e->access_message_in_memory_max_ratio = (int32_t)st_int(sp, u, "accessMessageInMemoryMaxRatio");
    e->max_transfer_bytes_in_memory = (int32_t)st_int(sp, u, "maxTransferBytesOnMessageInMemory");
    e->max_transfer_count_in_memory = (int32_t)st_int(sp, u, "maxTransferCountOnMessageInMemory");
    e->max_transfer_bytes_in_disk = (int32_t)st_int(sp, u, "maxTransferBytesOnMessageInDisk");
    e->max_transfer_count_in_disk = (int32_t)st_int(sp, u, "maxTransferCountOnMessageInDisk");
    e->max_msgs_num_batch = (int32_t)st_int(sp, u, "maxMsgsNumBatch");
    e->page_cache_keep_bytes = st_int(sp, u, "commitLogPageCacheKeep");
    e->mapped_keep_bytes = st_int(sp, u, "commitLogMappedKeep");
    e->max_mapped_cq_files = st_int(sp, u, "maxMappedConsumeQueueFiles");
    static const char *const WRITE[] = {"auto", "mmap", "pwrite", NULL};
    int cw = st_choice(sp, u, "commitLogWrite", WRITE, "auto, pwrite or mmap");
    if (cw < 0)
        return RMQ_EINVAL;
    e->commitlog_write = cw == 1   ? STORE_CL_WRITE_MMAP
                         : cw == 2 ? STORE_CL_WRITE_PWRITE
                                   : STORE_CL_WRITE_AUTO;

    static const char *const ROLE[] = {"ASYNC_MASTER", "SYNC_MASTER", "SLAVE", NULL};
    int role = st_choice(sp, u, "brokerRole", ROLE, "ASYNC_MASTER, SYNC_MASTER or SLAVE");
    if (role < 0)
        return RMQ_EINVAL;
    s->role = role == 1 ? HA_SYNC_MASTER : role == 2 ? HA_SLAVE : HA_ASYNC_MASTER;
    s->ha_listen_port = (int32_t)st_int(sp, u, "haListenPort");
    snprintf(s->ha_master_address, sizeof s->ha_master_address, "%s",
             st_str(sp, u, "haMasterAddress") ? st_str(sp, u, "haMasterAddress") : "");
    s->ha_heartbeat_ms = st_int(sp, u, "haSendHeartbeatInterval");
    s->ha_housekeeping_ms = st_int(sp, u, "haHousekeepingInterval");
    s->ha_batch = (int32_t)st_int(sp, u, "haTransferBatchSize");
    s->slave_timeout_ms = st_int(sp, u, "slaveTimeout");

    s->auto_delete_unused_stats = st_bool(sp, u, "autoDeleteUnusedStats");
    store_settings_apply_live(sp, u);
    s->send_inline = st_bool(sp, u, "sendMessageInline");
    s->pull_inline = st_bool(sp, u, "pullMessageInline");
    s->send_threads = (int32_t)st_int(sp, u, "sendMessageThreadPoolNums");
    s->send_queue = (int32_t)st_int(sp, u, "sendThreadPoolQueueCapacity");
    s->pull_threads = (int32_t)st_int(sp, u, "pullMessageThreadPoolNums");
    s->pull_queue = (int32_t)st_int(sp, u, "pullThreadPoolQueueCapacity");
    s->query_threads = (int32_t)st_int(sp, u, "queryMessageThreadPoolNums");
    s->query_queue = (int32_t)st_int(sp, u, "queryThreadPoolQueueCapacity");
    s->admin_threads = (int32_t)st_int(sp, u, "adminBrokerThreadPoolNums");
    s->put_stats_window_ms = st_int(sp, u, "putStatsWindowMillis");
    s->admin_queue = 10000;
    return 0;
}

int store_settings_read(store_plugin *sp)
{
    const rmq_host_api *a = sp->api;
    store_settings *s = &sp->set;
    /* first: the updates file lives under it */
    const char *root = a->setting_string(sp->ctx, "storePathRootDir");
    if (root && *root)
        snprintf(s->root_dir, sizeof s->root_dir, "%s", root);
    else
        snprintf(s->root_dir, sizeof s->root_dir, "%s/store", a->state_dir(sp->ctx));
    json_t *u = store_updates_read(sp);
    if (!u)
        return RMQ_ENOMEM;
    if (json_object_size(u))
        a->log(sp->ctx, RMQ_LOG_INFO,
               "%zu setting(s) from UPDATE_BROKER_CONFIG (%s/config/store.properties)",
               json_object_size(u), s->root_dir);
    int rc = read_all(sp, u);
    json_decref(u);
    return rc;
}
