/* store_engine.h — the message store of the store plugin: an append-only
 * commit log whose records are the stored-message bytes of
 * protocol-messages.md §10.3.1, one consume queue per (topic, queue id) of
 * 20-byte entries, the key index, checkpoint / abort / lock, recovery,
 * flushing (async, or sync with group commit) and retention — all in Java
 * 4.9.8's on-disk layout (§10.15), so a Java broker opens what this writes and
 * the other way round. Knows nothing of the remoting protocol (no rmq_cmd, no
 * SDK types): the plugin layer turns requests into calls here.
 * Thread-safe: every function may be called from any thread; appends are
 * serialised inside, reads run concurrently with them. */
#ifndef STORE_ENGINE_H
#define STORE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct store_engine store_engine;

typedef enum store_flush_type { STORE_ASYNC_FLUSH = 0, STORE_SYNC_FLUSH = 1 } store_flush_type;
enum { STORE_CL_WRITE_AUTO = 0, STORE_CL_WRITE_MMAP = 1, STORE_CL_WRITE_PWRITE = 2 };
enum { STORE_CQ_LOAD_LAZY = 0, STORE_CQ_LOAD_AT_START = 1, STORE_CQ_LOAD_ON_USE = 2 };

/* MessageStoreConfig names in comments. Strings are copied by store_open. */
typedef struct store_config {
    const char *root_dir;          /* storePathRootDir */
    const char *commitlog_dir;     /* storePathCommitLog (NULL: root_dir/commitlog) */
    int64_t commitlog_file_size;   /* mappedFileSizeCommitLog (1 GiB) */
    int64_t cq_file_size;          /* mappedFileSizeConsumeQueue, rounded up to 20 (6,000,000) */
    store_flush_type flush_type;   /* flushDiskType */
    int64_t flush_interval_ms;     /* flushIntervalCommitLog (500): async flush period */
    int64_t sync_flush_timeout_ms; /* syncFlushTimeout (5000) */
    int64_t file_reserved_hours;   /* fileReservedTime (72) */
    const char *delete_when;       /* deleteWhen ("04"; ';'-separated hours) */
    int32_t disk_max_used_ratio;   /* diskMaxUsedSpaceRatio (75) */
    bool message_index_enable;     /* messageIndexEnable (true) */
    int32_t max_hash_slot_num;     /* maxHashSlotNum (5,000,000) */
    int32_t max_index_num;         /* maxIndexNum (20,000,000) */
    int64_t max_message_size;      /* maxMessageSize (4 MiB) */
    bool check_crc_on_recover;     /* checkCRCOnRecover (true) */
    int32_t access_message_in_memory_max_ratio; /* accessMessageInMemoryMaxRatio (40) */
    int32_t max_transfer_bytes_in_memory;       /* maxTransferBytesOnMessageInMemory (262144) */
    int32_t max_transfer_count_in_memory;       /* maxTransferCountOnMessageInMemory (32) */
    int32_t max_transfer_bytes_in_disk;         /* maxTransferBytesOnMessageInDisk (65536) */
    int32_t max_transfer_count_in_disk;         /* maxTransferCountOnMessageInDisk (8) */
    int32_t max_msgs_num_batch;                 /* maxMsgsNumBatch (64): QUERY_MESSAGE cap */

    /* Log sink (level: 0 error, 1 warn, 2 info, 3 debug). May be NULL. */
    void (*log)(void *ud, int level, const char *msg);
    void *log_ud;

    /* Called once per appended record that got a consume-queue entry, after
     * it is readable, outside every engine lock, on the appending thread:
     * long polling wakes held PULLs from here (§10.8.8). max_offset = the
     * record's queue offset + 1. `props` is the record's properties string
     * (not NUL-terminated), valid during the call. May be NULL. */
    void (*on_arrival)(void *ud, const char *topic, int32_t queue_id, int64_t max_offset,
                       int64_t tags_code, const char *props, size_t props_len, int64_t store_ts);
    void *arrival_ud;

    /* ---- added by the engine (defaults set by store_config_defaults) ---- */
    int32_t disk_warning_ratio;     /* diskSpaceWarningLevelRatio (90 %): above it puts are
                                       refused (STORE_PUT_SERVICE_NOT_AVAILABLE) until usage
                                       falls back; reads keep working */
    int64_t disk_check_interval_ms; /* how often disk usage / writeability is re-checked (10000) */
    int64_t clean_interval_ms;      /* cleanResourceInterval (10000): retention period */
    bool clean_file_forcibly;       /* cleanFileForciblyEnable (true): above 85 % disk use
                                       retention deletes files whatever their age */
    int64_t page_cache_keep_bytes;  /* commitLogPageCacheKeep (512 MiB): commit-log bytes more
                                       than this far behind the flushed end are dropped from
                                       the page cache (written back first), so new segments
                                       reuse those pages; 0 keeps everything (Java) */
    int64_t mapped_keep_bytes;      /* commitLogMappedKeep (4 MiB): flushed commit log more
                                       than this far behind the flushed end is unmapped from the
                                       process (MADV_DONTNEED: the pages stay in the page cache,
                                       a later read maps them again), so the RSS does not hold
                                       the whole recent log; 0 keeps it mapped */
    int32_t commitlog_write;        /* commitLogWrite: how records reach the commit log.
                                       STORE_CL_WRITE_AUTO (default): pwrite under SYNC_FLUSH,
                                       mmap under ASYNC_FLUSH. MMAP: encoded into the shared
                                       mapping (cheapest per append; a sync then costs page
                                       write-protection and re-faults). PWRITE: encoded into a
                                       buffer and pwritten (a sync is one fdatasync of clean
                                       page-cache pages; about half the msync's time) */
    int64_t max_mapped_cq_files;    /* maxMappedConsumeQueueFiles (8192): consume-queue files
                                       are mapped on first use; past this many the least
                                       recently used are unmapped (0: no limit). Each mapping is
                                       one of the kernel's vm.max_map_count (65530) and keeps its
                                       touched pages in the RSS */
    /* Consume queues found on disk at start are loaded on first use (a send,
     * a pull, an offset query, a listing) and by a background pass that
     * loads the rest without holding any lock across file I/O; start-up
     * then costs one listing of the consumequeue directory instead of a
     * listing, a stat and a read per queue (12 s at 400,000 queues). */
    int32_t cq_load;        /* STORE_CQ_LOAD_LAZY (default), _AT_START (every queue before
                               store_open returns, as Java), _ON_USE (no background pass:
                               tests) */
    const char *lock_owner; /* who opens the store (the plugin instance's name), written into
                               `lock` next to the pid; read during store_open only; may be NULL */
} store_config;

/* Defaults of every field (Java's), then the caller sets what it needs. */
void store_config_defaults(store_config *c);

/* Open (creating directories and files as needed), take the `lock` file,
 * recover (§10.15.4: normal when no `abort` file, else abnormal with CRC
 * scan from the checkpoint; truncate a torn tail; rebuild consume queues and
 * index past what they cover) and create `abort`. 0 or a negative errno-style
 * code with a reason in err. */
int store_open(const store_config *cfg, store_engine **out, char *err, size_t errlen);
/* Topics of queues found at start and not loaded yet (0 once every queue
 * is loaded): tests and the log. */
size_t store_queues_pending_topics(store_engine *e);
/* Flush everything, write the checkpoint, remove `abort`, release `lock`,
 * unmap, free. NULL is a no-op. */
void store_close(store_engine *e);
/* True when root_dir's `lock` is held by an engine of THIS process opened
 * with the same lock_owner (the holder wrote our pid, start time and owner
 * into it): a hot reload's new generation then opens the store once the old
 * generation has closed it; another instance on the same directory is still
 * refused. Any thread. */
bool store_locked_by_this_process(const char *root_dir, const char *lock_owner);

/* ---- appending -------------------------------------------------------- */

typedef struct store_addr {
    uint8_t ip[16]; /* network order; IPv4 in the first 4 bytes */
    uint8_t ip_len; /* 4 or 16 (sets the V6 sysFlag bits 0x10 / 0x20) */
    int32_t port;
} store_addr;

/* One message to store. The engine assigns QUEUEOFFSET, PHYSICALOFFSET and
 * STORETIMESTAMP under its append lock and computes TOTALSIZE and BODYCRC.
 * Records whose transaction bits (sys_flag & 0xC) are PREPARED (0x4) or
 * ROLLBACK (0xC) get queue offset 0 and no consume-queue entry (§10.11.1). */
typedef struct store_msg {
    const char *topic; /* NUL-terminated, <= 127 bytes */
    int32_t queue_id;
    int32_t flag;
    int32_t sys_flag; /* stored as given, plus 0x10/0x20 from the address sizes */
    int64_t born_ts;
    store_addr born_host;
    store_addr store_host;
    int32_t reconsume_times;
    int64_t prepared_tx_offset;
    const void *body;
    size_t body_len;
    const char *props; /* the properties string exactly as stored */
    size_t props_len;
    int64_t tags_code; /* consume-queue tagsCode: tag hash, or delivery time (schedule topic) */
    /* SYNC_FLUSH, write-through mode: the caller answers only once
     * store_wait_flush covers this put, so its bytes may wait in the engine's
     * buffer for the flusher's single write of the group (readers see the
     * record meanwhile). Otherwise the record is in the file (page cache:
     * it survives a crash of the process) when store_put returns. Of a
     * batch, the first message's flag counts. */
    bool defer_write;
} store_msg;

/* PutMessageStatus. */
typedef enum store_put_status {
    STORE_PUT_OK = 0,
    STORE_PUT_SERVICE_NOT_AVAILABLE, /* closing, or not writeable (disk full, write error) */
    /* topic empty, > 127 bytes, '.', '..' or with '/'; queue id < 0; body > max_message_size;
     * record too big for a segment; a batch of mixed topics/queues */
    STORE_PUT_MESSAGE_ILLEGAL,
    STORE_PUT_PROPERTIES_SIZE_EXCEEDED, /* properties > 32767 bytes */
    STORE_PUT_CREATE_MAPPED_FILE_FAILED,
    STORE_PUT_UNKNOWN_ERROR
} store_put_status;

typedef struct store_put_result {
    store_put_status status;
    int64_t phys_offset;  /* commit-log offset of the (first) record */
    int64_t queue_offset; /* queue offset of the (first) record */
    int64_t store_ts;     /* STORETIMESTAMP given to the record(s) */
    int32_t total_size;   /* bytes of all records appended */
    int64_t end_offset;   /* commit-log write position after this append (for store_wait_flush) */
} store_put_result;

/* Append one record. Returns 0 with out->status set (STORE_PUT_OK or why
 * not); never blocks on disk I/O (the flusher thread writes back). */
int store_put(store_engine *e, const store_msg *m, store_put_result *out);
/* Append n records of one topic and queue atomically: consecutive queue
 * offsets, one STORETIMESTAMP, all in one commit-log file (§10.15.2).
 * phys_offsets[i] receives each record's commit-log offset (for the
 * comma-joined msgId). */
int store_put_batch(store_engine *e, const store_msg *msgs, size_t n, int64_t *phys_offsets,
                    store_put_result *out);

/* SYNC_FLUSH group commit: call done(ud, true) once the commit log is durable
 * (fsync'd) up to end_offset, or done(ud, false) after sync_flush_timeout_ms.
 * Called on the flusher thread, or at once on the caller's thread when
 * already durable. Many waiters share one fsync. Returns 0 or RMQ-style < 0
 * (then done is never called). */
int store_wait_flush(store_engine *e, int64_t end_offset, void (*done)(void *ud, bool ok),
                     void *ud);

/* ---- reading ---------------------------------------------------------- */

/* GetMessageStatus; store_get_status_name() gives Java's enum name (the PULL remark). */
typedef enum store_get_status {
    STORE_GET_FOUND = 0,
    STORE_GET_NO_MATCHED_MESSAGE,
    STORE_GET_MESSAGE_WAS_REMOVING,
    STORE_GET_OFFSET_FOUND_NULL,
    STORE_GET_OFFSET_OVERFLOW_BADLY,
    STORE_GET_OFFSET_OVERFLOW_ONE,
    STORE_GET_OFFSET_TOO_SMALL,
    STORE_GET_NO_MATCHED_LOGIC_QUEUE,
    STORE_GET_NO_MESSAGE_IN_QUEUE
} store_get_status;
const char *store_get_status_name(store_get_status s);

/* Filters of a PULL (§10.8.5). cq: tagsCode stage, NULL = match; record: the
 * SQL92 stage on the whole stored record, NULL = match. They run while the
 * engine holds its structure lock shared: they must not call back into the
 * engine (a nested shared lock can deadlock behind a waiting writer). */
typedef bool (*store_cq_filter_fn)(void *ud, int64_t tags_code);
typedef bool (*store_record_filter_fn)(void *ud, const uint8_t *record, size_t len);

typedef struct store_get_result {
    store_get_status status;
    int64_t next_begin_offset;
    int64_t min_offset;
    int64_t max_offset;
    uint8_t *data; /* malloc'd: the taken records back to back, NULL when none; caller frees */
    size_t len;
    int32_t msg_count;
    bool suggest_slave; /* the last record was "in disk" (for suggestWhichBrokerId) */
} store_get_result;

/* DefaultMessageStore.getMessage (§10.8.3), batch limits included. 0, or
 * < 0 on allocation failure / closed store. */
int store_get_messages(store_engine *e, const char *topic, int32_t queue_id, int64_t offset,
                       int32_t max_msgs, store_cq_filter_fn cq_filter,
                       store_record_filter_fn record_filter, void *filter_ud,
                       store_get_result *out);

/* §10.11: unknown topic/queue = empty (0, 0, -1). */
int64_t store_max_offset(store_engine *e, const char *topic, int32_t queue_id);
int64_t store_min_offset(store_engine *e, const char *topic, int32_t queue_id);
/* Whether the queue has a consume queue (written to, or found at open). */
bool store_queue_exists(store_engine *e, const char *topic, int32_t queue_id);
/* STORETIMESTAMP of the message at a queue offset, -1 if none. */
int64_t store_message_store_time(store_engine *e, const char *topic, int32_t queue_id,
                                 int64_t offset);
int64_t store_earliest_msg_store_time(store_engine *e, const char *topic, int32_t queue_id);
/* SEARCH_OFFSET_BY_TIMESTAMP rule of §10.11.3. */
int64_t store_offset_by_time(store_engine *e, const char *topic, int32_t queue_id,
                             int64_t timestamp_ms);
bool store_check_in_disk_by_consume_offset(store_engine *e, const char *topic, int32_t queue_id,
                                           int64_t offset);

/* The record at commit-log offset phys_offset (TOTALSIZE read there):
 * malloc'd copy. 0 or -ENOENT. */
int store_read_record(store_engine *e, int64_t phys_offset, uint8_t **rec, size_t *len);

typedef struct store_cq_entry {
    int64_t phys_offset;
    int32_t size;
    int64_t tags_code;
} store_cq_entry;
/* Up to max consume-queue entries from queue offset `index`; returns how
 * many were copied (0 past the end). */
size_t store_read_cq(store_engine *e, const char *topic, int32_t queue_id, int64_t index,
                     store_cq_entry *out, size_t max);

/* QUERY_MESSAGE (§10.9.1): records indexed under topic#key with store time in
 * [begin_ms, end_ms], at most min(max_num, max_msgs_num_batch), ascending
 * commit-log offset, exact key match. data malloc'd (NULL when none). */
typedef struct store_query_result {
    uint8_t *data;
    size_t len;
    int32_t count;
    int64_t index_last_update_timestamp;
    int64_t index_last_update_phyoffset;
} store_query_result;
int store_query_by_key(store_engine *e, const char *topic, const char *key, int32_t max_num,
                       int64_t begin_ms, int64_t end_ms, store_query_result *out);

/* ---- administration --------------------------------------------------- */

/* Every queue the store knows; fn returns false to stop. */
typedef bool (*store_queue_fn)(void *ud, const char *topic, int32_t queue_id, int64_t min_offset,
                               int64_t max_offset);
void store_for_each_queue(store_engine *e, store_queue_fn fn, void *ud);
/* cleanUnusedTopic for one topic: drop its consume queues (files included). */
int store_delete_topic(store_engine *e, const char *topic);

typedef struct store_runtime_stats {
    int64_t commitlog_min_offset;
    int64_t commitlog_max_offset;
    int64_t flushed_offset;
    double commitlog_disk_ratio; /* Java's used / (used + usable) of the commit-log partition */
    double consumequeue_disk_ratio;
    double index_disk_ratio; /* of the index directory (the INDEX figure of the 14 remark) */
    bool writeable;
    uint64_t put_message_times_total;
    uint64_t put_message_size_total;
    uint64_t get_message_times_total_found;
    uint64_t get_message_times_total_miss;
    int64_t start_accept_time_ms;
    int64_t dispatch_behind_bytes; /* slave: replicated bytes not yet dispatched; master 0 */
} store_runtime_stats;
void store_runtime_stats_get(store_engine *e, store_runtime_stats *out);

/* cleanExpiredConsumerQueue: destroy every queue (but the schedule topic's)
 * whose last entry ends before the commit log's minimum offset. Returns how
 * many. */
int store_clean_expired_queues(store_engine *e);
/* cleanUnusedTopic: destroy the queues of every topic keep() refuses (never
 * the schedule and op-half topics nor LMQ queues). Returns how many. keep
 * runs under the engine's locks: it must not call back into the engine. */
int store_clean_unused_topics(store_engine *e, bool (*keep)(void *ud, const char *topic), void *ud);

/* fileReservedTime (hours), deleteWhen and diskMaxUsedSpaceRatio at run time
 * (UPDATE_BROKER_CONFIG): the next retention pass uses them. Any thread. */
void store_set_retention(store_engine *e, int64_t reserved_hours, const char *delete_when,
                         int32_t max_used_ratio);

/* maxTransfer{Bytes,Count}OnMessageIn{Memory,Disk},
 * accessMessageInMemoryMaxRatio, maxMsgsNumBatch, syncFlushTimeout,
 * flushIntervalCommitLog and cleanFileForciblyEnable from c at run time
 * (UPDATE_BROKER_CONFIG): the next read, query, SYNC_FLUSH wait, flush or
 * retention pass uses them, as Java reads them at each use. Any thread. */
void store_set_live_limits(store_engine *e, const store_config *c);

/* Run retention now (normally the engine's own timer does it every 10 s). */
void store_clean_expired(store_engine *e, bool force);

/* ---- added by the engine ------------------------------------------------ */

/* TEST ONLY: make every later segment / queue / index file creation fail with
 * `err` (an errno; 0 clears), as a full or failing disk would; the store
 * becomes not writeable at the next file creation and recovers by itself
 * (housekeeper re-check) once cleared. */
void store_test_inject_file_error(store_engine *e, int err);
/* TEST ONLY: while held, a deleted topic's renamed files stay on disk (the
 * housekeeper does not remove them), as if the process died first. */
void store_test_hold_trash(store_engine *e, bool hold);
/* TEST ONLY: make commit-log pwrites (write-through mode) fail with `err`
 * (0 clears): the put is refused, nothing of it is published, the store is
 * not writeable until the housekeeper's re-check after clearing. */
void store_test_inject_write_error(store_engine *e, int err);
/* TEST ONLY: make reserving blocks for mapped files fail with `err` (0
 * clears), as a full disk would: the put is refused before anything of it
 * is written, the store resumes by itself once cleared. */
void store_test_inject_back_error(store_engine *e, int err);
/* TEST ONLY: make commit-log syncs (fdatasync / msync) fail with `err` (0
 * clears): SYNC_FLUSH waiters of what the failed sync covered are answered
 * not flushed, even after a later sync succeeds; puts are refused until a
 * sync succeeds again and the store's re-check passes. */
void store_test_inject_sync_error(store_engine *e, int err);
/* TEST ONLY: run the periodic disk / writeability re-check now. */
void store_test_recheck_disk(store_engine *e);

/* ---- replication (store_ha.c, protocol-ha.md §2) -------------------------- */

/* The commit log's readable end (CommitLog#getMaxOffset) and first byte. */
int64_t store_ha_max_offset(store_engine *e);
int64_t store_ha_min_offset(store_engine *e);
/* Master: copy up to max log bytes from `off` into buf, never past the
 * segment holding `off` (a frame never spans two files, §2.3) nor the
 * readable end. Returns the bytes copied (0: none there yet), -ENOENT when
 * `off` lies below the first segment. */
int64_t store_ha_read(store_engine *e, int64_t off, uint8_t *buf, int64_t max);
/* Start reading [off, off + len) of the commit log (up to the log end)
 * into the page cache in the background: a slave far behind is served from
 * log the page-cache window dropped (commitLogPageCacheKeep), and read
 * through the mapping page by page each fault waits for the disk. */
void store_ha_prefetch(store_engine *e, int64_t off, int64_t len);
/* Slave: append a transfer frame's body that starts at phys (§2.5). An empty
 * log starts at phys (which must be file-aligned: a fresh slave receives the
 * master's last file). Records are dispatched to consume queues and the index
 * by store_ha_dispatch (the slave acknowledges first, as Java's reput runs
 * behind its append). 0; -EPROTO: phys is not our log end (divergent or
 * resent history); -EXDEV: the bytes cross our segment end or an empty log's
 * start is not file-aligned (mappedFileSizeCommitLog differs from the
 * master's); -EIO / -ENOMEM: write failure; -ECANCELED closing. */
int store_ha_append(store_engine *e, int64_t phys, const uint8_t *data, int64_t len);
/* The slave's appended log end (what it acknowledges; >= the readable end). */
int64_t store_ha_appended(store_engine *e);
/* Dispatch the whole records appended since the last call to consume queues
 * and the index, then make them readable. */
void store_ha_dispatch(store_engine *e);
/* Promotion: dispatch what is whole and cut a partial record at the log end
 * (a frame may end inside one), so appends start at a record boundary.
 * Returns the bytes cut. */
int64_t store_ha_end_replication(store_engine *e);
/* A demoted master rejoining its new master (ha_rejoin.c): cut the log at
 * `to` (a record boundary, at or below the end): the bytes past it are
 * zeroed, later files removed, consume-queue entries at or past it dropped,
 * the index resumes there. last_off/last_size: the record ending at `to`
 * (size 0: unknown), for the clean-stop state. 0; -ERANGE: `to` is outside
 * the log; -EIO: a staged write failed. */
int store_ha_truncate(store_engine *e, int64_t to, int64_t last_off, int64_t last_size);
/* Role SLAVE: puts are refused (STORE_PUT_SERVICE_NOT_AVAILABLE, Java's
 * checkStoreStatus); the log grows only by store_ha_append. */
void store_set_slave(store_engine *e, bool slave);
bool store_is_slave(store_engine *e);

#endif
