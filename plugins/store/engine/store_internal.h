/* store_internal.h — the engine's private structures shared by its .c files:
 * mapped segment files, the commit log, consume queues, index files, the
 * engine object and its locks. Not for the plugin layer.
 *
 * Locking: `append_mu` serialises appends (and recovery, retention's
 * deletions of consume-queue entries). `maps` (writer-preferring rwlock)
 * guards every structural change: segment lists, the queue hash table,
 * index file list. Readers hold it shared while they copy bytes out of
 * mappings; an appender holds it shared too and upgrades (drop, take
 * exclusive) only to add a segment or a queue. Data become visible to
 * readers through release stores of `committed` (commit log) and each
 * queue's `max_offset` after the bytes are written. */
#ifndef STORE_INTERNAL_H
#define STORE_INTERNAL_H

#include "store_engine.h"
#include "stored_record.h"

#include <pthread.h>
#include <stdatomic.h>
#include <limits.h>

#define STORE_CQ_UNIT 20
#define STORE_INDEX_HEADER 40
#define STORE_INDEX_ENTRY 20
#define STORE_CHECKPOINT_SIZE 4096
#define STORE_STATE_FILE "rmqhost_store_state"

/* One mapped segment file (commit log, consume queue or index). Laid out
 * for the 400,000 queue files of 100,000 topics: the path in the same
 * block, no padding before it. */
typedef struct mfile {
    int64_t start; /* byte offset of the file in its space (its name) */
    int64_t size;
    /* NULL while a lazily mapped file (consume queue) is not mapped: set
     * under cq_map_mu, cleared only with `maps` exclusive; read with
     * mfile_mapped / cq_file_map */
    uint8_t *map;
    /* [0, backed) has real blocks (store_backing.c): nothing is written
     * through the mapping past it */
    _Atomic int64_t backed;
    /* a queue file's queue: its path is derived (mfile_path), path[] is ""
     * (400,000 queue files); NULL for the commit log and index files */
    const struct store_cq *owner;
    _Atomic uint32_t last_use; /* engine's cq_clock at the last access (lazy files) */
    _Atomic int fd;            /* -1; a commit-log segment written with pwrite keeps one */
    /* queue files: set by an access, cleared by the idle sweep
     * (cq_release_idle), which drops the pages of a file found idle for a
     * whole pass from the process (`released`: the sweep's own flag) */
    _Atomic uint8_t touched;
    bool released;
    char path[]; /* allocated with the struct; "" for a queue file (owner) */
} mfile;

/* f's path: f->path, or for a queue file built into buf (PATH_MAX). */
const char *mfile_path(const mfile *f, char *buf, size_t cap);

/* The ordered segments of one byte space (its directory is the engine's:
 * cl_dir, or cq_dir/TOPIC/QID for a queue). A list of one file (most
 * queues) keeps it in `one` instead of an array of its own. Never copied
 * or moved: v may point into it. */
typedef struct mfile_list {
    mfile **v;
    mfile *one;
    int64_t file_size;
    uint32_t n, cap;
    bool random_access; /* no read-ahead (queue files: a fault reads one page) */
    bool lazy_map;      /* files are mapped on first use (queue files) */
} mfile_list;

int mfile_open(const char *path, int64_t start, int64_t size, bool create, bool prealloc,
               mfile **out, char *err, size_t errlen);
/* The same without mapping (f->map NULL): a lazily mapped file of queue
 * owner (its path not kept: mfile_path derives it). */
int mfile_open_unmapped(const char *path, const struct store_cq *owner, int64_t start, int64_t size,
                        bool create, mfile **out, char *err, size_t errlen);
/* Map an unmapped file (the caller serialises): 0 or -errno. */
int mfile_map(mfile *f);
/* Unmap (the caller holds `maps` exclusively: no reader has the pointer). */
void mfile_unmap(mfile *f);
static inline uint8_t *mfile_mapped(const mfile *f)
{
    return __atomic_load_n(&f->map, __ATOMIC_ACQUIRE);
}
void mfile_close(mfile *f, bool remove_file);
/* Open and keep a descriptor for f (pwrite / fdatasync); 0 or -errno. */
int mfile_keep_fd(mfile *f);
/* Small random accesses (queue and index files): without this, the first
 * touch of a sparse file reads ahead (and zero-fills) megabytes per file. */
void mfile_advise_random(mfile *f);
/* Loads the segments found in dir. */
int mfile_list_load(mfile_list *l, const char *dir, char *err, size_t errlen);
int mfile_list_push(mfile_list *l, mfile *f);
void mfile_list_free(mfile_list *l, bool remove_files);
/* The file holding byte `off` or NULL. */
mfile *mfile_list_find(const mfile_list *l, int64_t off);
void mfile_list_drop_first(mfile_list *l, bool remove_file);
void mfile_list_drop_last(mfile_list *l, bool remove_file);
/* store_backing.c. Reserve blocks for [f->backed, to) (capped at the size)
 * before writing there through the mapping: 0, -ESTALE when the file is
 * shorter than mapped (truncated under the store), or -errno (ENOSPC...).
 * e may be NULL (no test injection). Any thread. */
int mfile_back(store_engine *e, mfile *f, int64_t to);
/* The same on a descriptor of a file of expected_size bytes. */
int store_back_fd(int fd, int64_t expected_size, int64_t from, int64_t to);
/* f's file is now shorter than its mapping. */
bool mfile_truncated(const mfile *f);
/* Text for a mfile_back error. */
const char *store_back_error(int rc);
/* Chunks reserved ahead of the entries being written (a queue file's chunk
 * grows from 4 KiB with what the file holds, up to this) */
#define STORE_CQ_BACK_CHUNK (64 * 1024)
#define STORE_INDEX_BACK_CHUNK (1024 * 1024)

void store_name20(char *out, size_t cap, const char *dir, int64_t off);
int store_mkdirs(const char *path);

/* A consume queue: (topic, queue id) -> 20-byte entries in mfile_list.
 * Its directory is derived (cq_dir_path), not kept: 400,000 queues. */
typedef struct store_cq {
    struct store_engine *e; /* its engine (lazy mapping of its files) */
    struct store_cq *next;  /* hash chain */
    mfile_list files;
    _Atomic int64_t max_offset;   /* entries written (next message index) */
    _Atomic int64_t min_offset;   /* first entry still served */
    int64_t max_phys_end;         /* offset + size of the last entry */
    int64_t load_first_phys;      /* offset of the first entry as loaded, -1 unknown */
    _Atomic int64_t prefault_end; /* entries below this have their page faulted in */
    int32_t queue_id;
    uint32_t hash;
    bool pf_queued; /* in e->cq_hot (under cq_hot_mu) */
    char topic[];   /* allocated to its length: 400,000 queues */
} store_cq;

/* The directory of q's files: cq_dir/TOPIC/QID. */
void cq_dir_path(const struct store_engine *e, const store_cq *q, char *out, size_t cap);

typedef struct cq_table {
    store_cq **b;
    size_t nb, count;
} cq_table;

/* A topic directory found under consumequeue/ at start whose queues are
 * not in the table yet (store_cq_lazy.c) */
typedef struct lazy_topic {
    struct lazy_topic *next; /* hash chain */
    uint32_t hash;
    bool pending; /* under lazy_mu; cleared when its queues enter the table */
    char name[];
} lazy_topic;

/* One index file (§10.15.6) */
typedef struct store_index_file {
    mfile *m;
    int64_t begin_ts, end_ts, begin_phy, end_phy;
    int32_t slot_count, index_count;
    char name[32];
} store_index_file;

typedef struct flush_waiter {
    int64_t end_offset;
    int64_t deadline_ms;
    void (*done)(void *ud, bool ok);
    void *ud;
    bool ok; /* decided when taken off the list */
    struct flush_waiter *next;
} flush_waiter;

struct store_engine {
    store_config cfg;
    char root[PATH_MAX];
    char cl_dir[PATH_MAX];
    char cq_dir[PATH_MAX];
    char index_dir[PATH_MAX];
    char delete_when[128];
    int lock_fd;
    /* guards the retention settings (file_reserved_hours, delete_when,
     * disk_max_used_ratio): store_set_retention changes them at run time */
    pthread_mutex_t retention_mu;
    /* the per-use settings store_set_live_limits changes at run time (read
     * from here, not from cfg) */
    struct {
        _Atomic int32_t xfer_bytes_mem, xfer_count_mem, xfer_bytes_disk, xfer_count_disk;
        _Atomic int32_t msgs_num_batch;
        _Atomic int64_t sync_flush_timeout_ms, flush_interval_ms;
        _Atomic bool clean_file_forcibly;
        _Atomic bool message_index_enable; /* index keys of new records */
    } live;

    pthread_mutex_t append_mu;
    pthread_rwlock_t maps;

    /* commit log */
    mfile_list cl;
    int64_t write_pos;             /* absolute, under append_mu */
    _Atomic int64_t committed;     /* readable end (write_pos after CQ entries) */
    _Atomic int64_t committed_ts;  /* store time of the last committed record */
    _Atomic int64_t cl_min_offset; /* first byte still served */
    mfile *spare;                  /* pre-created next segment (housekeeper) */
    pthread_mutex_t spare_mu;
    _Atomic int64_t last_rec_offset, last_rec_size; /* for the clean-stop state file */
    /* Write-through mode (store_config.commitlog_write): records are encoded
     * into `stage` and written to the segment file with pwrite, never through
     * the mapping. [stage_start, stage_start + stage_len) of stage_seg is
     * encoded but not yet in the file: a put whose caller waits for the flush
     * leaves its bytes there for the flusher (one pwrite per group commit);
     * a reader that needs them writes them first (cl_ptr). Lock order:
     * append_mu, maps, stage_mu. */
    bool write_through;
    pthread_mutex_t stage_mu;
    uint8_t *stage;
    size_t stage_cap, stage_len;
    int64_t stage_start;
    mfile *stage_seg;
    _Atomic int64_t file_written; /* log bytes below this are in the file */

    cq_table cqs;
    /* queues loaded on first use (store_cq_lazy.c). lazy_mu is a leaf lock
     * guarding the set; a topic's queues are read without any lock, then
     * entered into the table with append_mu and `maps` exclusive held.
     * lazy_left counts pending topics: 0 (the common case once the
     * background pass is done) skips every look-up. */
    pthread_mutex_t lazy_mu;
    lazy_topic **lazy_b, **lazy_v; /* hash buckets; every topic in listing order */
    size_t lazy_nb, lazy_n;
    _Atomic size_t lazy_left;
    /* queue entries at or past this commit-log offset were torn off by
     * recovery: a queue loaded later is cut there (INT64_MAX during recovery,
     * which cuts the queues it loaded itself) */
    _Atomic int64_t lazy_cut_end;
    bool lazy_recovering;
    pthread_t lazy_thread;
    bool lazy_started;
    /* the record with the largest queue entry (offset; -1 none) and its size:
     * the state file names it (below the written end) so a start can check
     * the queues' reach by loading one queue instead of all. A negative size
     * (-size) says the record's queue was deleted since (cq_destroy): no
     * queue can confirm it any more, and a clean stop says so in its state */
    _Atomic int64_t cov_off, cov_size;
    _Atomic int64_t state_cov_off, state_cov_size;
    /* cqs.count for the state writer, which holds no table lock: 0 (with
     * no topic pending) says no queue exists at all, so an empty
     * consumequeue/ at the next start is expected, not lost */
    _Atomic size_t cq_count_pub;
    bool cov_forgotten; /* cq_destroy marked it; append_mu */
    /* one state write at a time (periodic, flush, a deletion's): a slower
     * writer never puts an older picture over a newer one; guards
     * durable_safe(_ts) too */
    pthread_mutex_t state_mu;
    /* queues whose next entries' pages the housekeeper should fault in,
     * so the appender does not take a first-touch fault (leaf lock) */
    pthread_mutex_t cq_hot_mu;
    store_cq *cq_hot[64];
    int cq_hot_n;
    /* queue files are mapped on first use (cq_file_map, under cq_map_mu)
     * and the least recently used unmapped by the housekeeper past
     * cfg.max_mapped_cq_files (cq_unmap_cold, `maps` exclusive) */
    pthread_mutex_t cq_map_mu;
    _Atomic int64_t cq_mapped;
    _Atomic uint32_t cq_clock;
    /* the idle sweep over the queue table (housekeeper only): next bucket,
     * when the last pass ended */
    size_t cq_sweep_next;
    int64_t cq_sweep_done_ms;

    /* index */
    store_index_file **idx;
    size_t nidx, idx_cap;
    int64_t idx_last_ts, idx_last_phy; /* newest indexed record */
    _Atomic int64_t idx_full_end_ts;   /* endTimestamp of the last full file */

    /* checkpoint (4096 bytes, mapped) */
    mfile *checkpoint;
    int state_fd;

    /* flusher */
    pthread_t flusher;
    bool flusher_started, housekeeper_started;
    pthread_mutex_t flush_mu;
    pthread_cond_t flush_cv;
    flush_waiter *waiters;
    /* SYNC_FLUSH: waiters a sync covered are answered by the completer
     * thread, so the flusher starts the next sync at once */
    pthread_t completer;
    bool completer_started, completer_stop;
    pthread_mutex_t done_mu;
    pthread_cond_t done_cv;
    flush_waiter *done_head, *done_tail;
    _Atomic int64_t flushed;
    _Atomic int64_t flushed_ts;            /* store time of the last flushed record */
    int64_t durable_safe, durable_safe_ts; /* queues + index durable below this */
    int root_fd;                           /* for syncfs */
    char boot_id[40];
    int64_t last_state_ms, last_logics_ms;

    /* housekeeper (segment pre-creation, pre-faulting, disk checks, retention) */
    pthread_t housekeeper;
    pthread_mutex_t hk_mu;
    pthread_cond_t hk_cv;
    int64_t prefault_pos;
    int64_t drop_pos;  /* commit log below this was dropped from the page cache */
    int64_t unmap_pos; /* and below this unmapped from the process (mapped_keep_bytes) */
    int64_t last_clean_ms, last_disk_check_ms;

    _Atomic bool closing;
    _Atomic bool writeable;
    _Atomic bool disk_full;
    _Atomic int inject_errno;       /* test hook: next segment creation fails */
    _Atomic int inject_write_errno; /* test hook: commit-log pwrites fail */
    _Atomic int inject_back_errno;  /* test hook: reserving blocks fails */
    _Atomic int inject_sync_errno;  /* test hook: commit-log syncs fail */
    /* deleted topics' directories renamed, not yet removed (store_cq_trash.c) */
    uint64_t trash_seq;             /* next trash number (append_mu held) */
    _Atomic uint64_t trash_renamed; /* every number below was renamed (or skipped) */
    uint64_t trash_removed;         /* every number below was removed (housekeeper) */
    _Atomic bool trash_hold;        /* test hook: the housekeeper leaves them */
    /* failed-sync guard (store_flusher.c): a SYNC_FLUSH waiter whose end is
     * at or below sync_fail_end is never answered "flushed" (the failed
     * sync did not confirm its bytes, and a later sync that succeeds does
     * not either: the kernel may have dropped them); sync_failed until a
     * sync succeeds again (the store stays not writeable meanwhile) */
    _Atomic int64_t sync_fail_end;
    _Atomic bool sync_failed;
    _Atomic bool manual_delete;
    _Atomic bool slave;          /* role SLAVE: puts refused, store_ha_append writes */
    int64_t ha_dispatch_pos;     /* slave: log bytes below this are dispatched (append_mu) */
    _Atomic int64_t ha_appended; /* slave: log end appended, dispatched or not */

    /* "in disk" threshold: accessMessageInMemoryMaxRatio of RAM
     * (store_set_live_limits) */
    _Atomic int64_t mem_limit_bytes;
    bool recovery_wrote; /* recovery changed queues, index or the log tail */

    _Atomic uint64_t put_times, put_bytes, get_found, get_miss;
    int64_t start_ms;
};

void store_log(store_engine *e, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int64_t store_now_ms(void);
int32_t store_java_hash(const char *s, size_t len);

/* commit log */
int cl_roll(store_engine *e, char *err, size_t errlen);
mfile *cl_take_spare(store_engine *e, int64_t start);
const uint8_t *cl_ptr(store_engine *e, int64_t off, int64_t len);
/* The segment holding *pos of a walk over [*pos, to), maps held: when
 * retention deleted the segments before it, *pos moves up to the first
 * one left. NULL past the last segment or when that move reaches `to`. */
mfile *cl_segment_in(store_engine *e, int64_t *pos, int64_t to);
/* Write-through mode. cl_stage_begin: room for len bytes at absolute
 * offset pos of seg (the log end) to encode into; takes stage_mu and keeps it
 * until cl_stage_end, which writes everything staged to the file when
 * write_now (else it waits for the flusher or a reader). NULL and *rc on a
 * failed allocation or write (stage_mu released). On a failed write,
 * cl_stage_end forgets the put's own len bytes (the put is refused) and
 * keeps what earlier deferred puts staged for a later attempt.
 * cl_stage_drain: write what is staged (any thread; `maps` held). 0 or
 * -errno (the store is then not writeable). */
uint8_t *cl_stage_begin(store_engine *e, mfile *seg, int64_t pos, size_t len, int *rc);
int cl_stage_end(store_engine *e, size_t len, bool write_now);
int cl_stage_drain(store_engine *e);
/* pwrite all of [src, src + len) at absolute offset off of segment f (a
 * slave's replicated bytes in mmap mode). 0 or -errno. */
int cl_write_at(store_engine *e, mfile *f, int64_t off, const void *src, size_t len);
/* The end of the log bytes that are in the file (page cache): what a crash
 * of the process leaves. */
int64_t cl_file_end(store_engine *e);

/* consume queues */
uint32_t cq_hash(const char *topic, int32_t qid);
store_cq *cq_find(store_engine *e, const char *topic, int32_t qid);
store_cq *cq_create(store_engine *e, const char *topic, int32_t qid, char *err, size_t errlen);
bool cq_has_file_for(const store_cq *q, int64_t index);
/* The mapping of f (a queue file), mapped now if it was not; NULL when the
 * mapping fails. `maps` held (shared is enough). */
uint8_t *cq_file_map(store_engine *e, mfile *f);
/* Appender (maps held): the file holding `index` is mapped (so the entry
 * write cannot fail on a mapping): 0 or -errno. */
int cq_map_for(store_engine *e, store_cq *q, int64_t index);
/* Housekeeper: unmap the least recently used queue files past the cap. */
void cq_unmap_cold(store_engine *e);
/* Part of a pass over the queues (housekeeper): the pages of a mapped queue
 * file not used since the previous pass leave the process (MADV_DONTNEED;
 * they stay in the page cache). */
void cq_release_idle(store_engine *e);
int cq_add_file_for(store_engine *e, store_cq *q, int64_t index, char *err, size_t errlen);
int cq_put_entry(store_engine *e, store_cq *q, int64_t index, int64_t phys, int32_t size,
                 int64_t tags, bool publish);
/* The appender's entry write, without cq_put_entry's block reservation:
 * the caller mapped the entry's file and reserved its blocks (cq_map_for,
 * cq_back_entry) under the append_mu and `maps` hold it still has. */
int cq_write_entry(store_engine *e, store_cq *q, int64_t index, int64_t phys, int32_t size,
                   int64_t tags);
bool cq_get_entry(const store_cq *q, int64_t index, store_cq_entry *out);
/* The same without mapping the file when it is not mapped (a start's check
 * must not map a queue file) */
bool cq_read_entry(const store_cq *q, int64_t index, store_cq_entry *out);
void cq_fill_blank(store_engine *e, store_cq *q, int64_t from, int64_t to);
/* Blocks for entry `index` (and a chunk after it); 0 or -errno. */
int cq_back_entry(store_engine *e, store_cq *q, int64_t index);
/* Allocate a queue (not in the table) / enter it into the table (`maps`
 * exclusive or open/close) / free one that is not in the table. */
store_cq *cq_alloc(store_engine *e, const char *topic, int32_t qid, char *err, size_t errlen);
int cq_insert(store_engine *e, store_cq *q);
void cq_free_unlinked(store_cq *q);
/* Read topic's queues from disk (no lock: nothing else touches a pending
 * topic's files) into a list chained by ->next. 0 or -errno. */
int cq_read_topic(store_engine *e, const char *topic, store_cq **head, char *err, size_t errlen);
/* Retention's per-queue step: drop files (not the last) whose last entry is
 * behind cl_min. append_mu and `maps` exclusive. */
void cq_drop_expired_files(store_engine *e, store_cq *q, int64_t cl_min);

/* store_cq_lazy.c. cq_lazy_scan: list consumequeue/ into the pending set
 * (open). cq_ready: make topic's queues be in the table (locked: the caller
 * holds append_mu and `maps` exclusive); false when they could not be read.
 * cq_load_all: every pending topic now (4 threads; at open or before a
 * walk over every queue). cq_lazy_start/_stop: the background pass. */
int cq_lazy_scan(store_engine *e, char *err, size_t errlen);
bool cq_ensure_topic(store_engine *e, const char *topic, bool locked);
static inline bool cq_ready(store_engine *e, const char *topic)
{
    return atomic_load_explicit(&e->lazy_left, memory_order_acquire) == 0 ||
           cq_ensure_topic(e, topic, false);
}
int cq_load_all(store_engine *e, char *err, size_t errlen);
/* A queue entry now names the record [phys, phys + size) (append_mu). */
static inline void cq_note_covered(store_engine *e, int64_t phys, int64_t size)
{
    if (phys >= atomic_load_explicit(&e->cov_off, memory_order_relaxed)) {
        /* size first: a reader taking the offset (acquire) finds its size */
        atomic_store_explicit(&e->cov_size, size, memory_order_relaxed);
        atomic_store_explicit(&e->cov_off, phys, memory_order_release);
    }
}
int cq_lazy_start(store_engine *e);
void cq_lazy_stop(store_engine *e);
void cq_lazy_free(store_engine *e);
void cq_truncate_past(store_engine *e, store_cq *q, int64_t cl_end);
void cq_correct_min(store_engine *e, store_cq *q, int64_t cl_min);
void cq_destroy(store_engine *e, store_cq *q, bool remove_files);
/* cq_destroy's bookkeeping for a queue whose directory was renamed to the
 * trash: no file is touched (append_mu and `maps` exclusive held). */
void cq_detach(store_engine *e, store_cq *q);
/* After cq_destroy/cq_detach calls (same locks): the state file is written
 * now when the record it names lost its queue. */
void cq_state_after_delete(store_engine *e);

/* store_cq_trash.c. cq_trash_topic_dir: rename consumequeue/TOPIC to a
 * trash name (0 or -errno; locks held by the caller). cq_trash_sweep:
 * remove every trash directory (how many could not be). cq_trash_collect:
 * the housekeeper's step, removes what was renamed since its last run. */
bool cq_trash_name_is(const char *name);
int cq_trash_topic_dir(store_engine *e, const char *topic);
int cq_trash_sweep(store_engine *e);
void cq_trash_collect(store_engine *e);
void cq_table_free(store_engine *e);
/* Appender (append_mu, `maps` shared): ask for q's next pages to be faulted
 * in. Housekeeper: fault them in (takes `maps` shared). */
void cq_want_prefault(store_engine *e, store_cq *q);
void cq_prefault_hot(store_engine *e);

/* index */
int index_load(store_engine *e, char *err, size_t errlen);
bool index_needs_file(store_engine *e, int keys);
int index_add_file(store_engine *e, char *err, size_t errlen);
/* Blocks for `keys` more entries of the current index file; 0 or -errno. */
int index_back_keys(store_engine *e, int keys);
void index_put_record(store_engine *e, const uint8_t *topic, size_t topic_len, const char *props,
                      size_t props_len, int32_t sys_flag, int64_t phys, int64_t store_ts);
void index_free(store_engine *e);
void index_delete_before(store_engine *e, int64_t cl_min);
int64_t index_full_end_ts(store_engine *e);

/* recovery, flushing, housekeeping */
int store_recover(store_engine *e, bool clean, char *err, size_t errlen);
void state_write(store_engine *e, bool clean);
/* Write what is staged and sync the log; the synced end. *failed (may be
 * NULL): a write or sync failed. */
int64_t flush_commitlog(store_engine *e, bool *failed);
void checkpoint_write(store_engine *e, int64_t physic_ts, int64_t logics_ts, int64_t index_ts);
int flusher_start(store_engine *e);
void flusher_stop(store_engine *e);
void flush_all_now(store_engine *e);
int housekeeper_start(store_engine *e);
void housekeeper_stop(store_engine *e);
void disk_check(store_engine *e);
/* store_writeable.c: may a store that turned not writeable take puts
 * again? Only once the current segment's rest and the whole next segment
 * have blocks (the next one is created as the spare), the disk has headroom
 * for queue and index chunks, no sync failure is outstanding and no
 * mapped file was truncated. Housekeeper thread; why gets the reason. */
bool store_can_resume(store_engine *e, char *why, size_t cap);
/* Refuse puts when the current commit-log segment is shorter than its
 * mapping (truncated under the store). Housekeeper, once a second. */
void store_check_truncation(store_engine *e);
/* Create (blocks reserved) the segment after the last one as the spare,
 * unless it exists; 0 or -errno. `maps` must NOT be held. */
int make_spare_now(store_engine *e, char *err, size_t errlen);
/* store_disk_usage.c: Java's UtilAll.getDiskPartitionSpaceUsedPercent of
 * the file system holding dir (-1 when it cannot be measured) and the
 * formula on statvfs figures (unit tests). */
double store_disk_used_ratio(const char *dir);
double store_disk_ratio_of(uint64_t blocks, uint64_t bfree, uint64_t bavail);
void set_not_writeable(store_engine *e, const char *why, int err);

/* dispatch one record just appended or found by recovery */
void store_dispatch(store_engine *e, const uint8_t *rec, int64_t phys, bool recovering);

/* store_lock_owner.c: "lock\npid=N start=T owner=O\n" naming this process
 * and the opener (owner may be NULL); the length. */
int store_lock_owner_tag(char *buf, size_t cap, const char *owner);

#endif
