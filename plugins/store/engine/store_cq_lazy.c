/* store_cq_lazy.c — consume queues loaded on first use. At open only the
 * consumequeue/ directory is listed (one entry per topic); a topic's queues
 * are read (a listing, a stat, one read per queue: store_consume_queue.c)
 * when something first names the topic — a put, a read, recovery or
 * replication dispatching a record — or when the background pass reaches
 * it. Reading runs without any engine lock (no one else touches a pending
 * topic's files: everything that would goes through cq_ensure_topic first);
 * entering the queues into the table takes append_mu and `maps`
 * exclusively for a few microseconds, and applies what start-up recovery
 * and retention did to the queues that were loaded then: entries past the
 * recovered log end are cut, expired files dropped, the min offset
 * corrected. Two threads reading the same topic at once is harmless: the
 * first to enter it wins, the other frees its copy. */
#include "store_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static int lazy_add(store_engine *e, const char *name)
{
    if (e->lazy_n == e->lazy_nb) { /* the vector and the buckets grow together */
        size_t nb = e->lazy_nb ? e->lazy_nb * 2 : 1024;
        lazy_topic **v = realloc(e->lazy_v, nb * sizeof *v);
        if (!v)
            return -ENOMEM;
        e->lazy_v = v;
        lazy_topic **b = calloc(nb, sizeof *b);
        if (!b)
            return -ENOMEM;
        for (size_t i = 0; i < e->lazy_n; i++) {
            lazy_topic *t = e->lazy_v[i];
            t->next = b[t->hash & (nb - 1)];
            b[t->hash & (nb - 1)] = t;
        }
        free(e->lazy_b);
        e->lazy_b = b;
        e->lazy_nb = nb;
    }
    size_t len = strlen(name);
    lazy_topic *t = malloc(sizeof *t + len + 1);
    if (!t)
        return -ENOMEM;
    memcpy(t->name, name, len + 1);
    t->hash = name_hash(name);
    t->pending = true;
    t->next = e->lazy_b[t->hash & (e->lazy_nb - 1)];
    e->lazy_b[t->hash & (e->lazy_nb - 1)] = t;
    e->lazy_v[e->lazy_n++] = t;
    return 0;
}

int cq_lazy_scan(store_engine *e, char *err, size_t errlen)
{
    DIR *d = opendir(e->cq_dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        int rc = -errno;
        snprintf(err, errlen, "open %s: %s", e->cq_dir, strerror(errno));
        return rc;
    }
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL)
        if (de->d_name[0] != '.' && strlen(de->d_name) <= STORED_RECORD_MAX_TOPIC)
            rc = lazy_add(e, de->d_name);
    closedir(d);
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    atomic_store(&e->lazy_left, e->lazy_n);
    return rc;
}

static lazy_topic *lazy_find(store_engine *e, const char *topic)
{
    if (!e->lazy_nb)
        return NULL;
    uint32_t h = name_hash(topic);
    for (lazy_topic *t = e->lazy_b[h & (e->lazy_nb - 1)]; t; t = t->next)
        if (t->hash == h && strcmp(t->name, topic) == 0)
            return t;
    return NULL;
}

/* append_mu and `maps` exclusive held */
static void adopt(store_engine *e, store_cq *q)
{
    if (cq_find(e, q->topic, q->queue_id) || cq_insert(e, q) != 0) {
        /* cannot happen (nothing creates a pending topic's queues); keep
         * the table's queue rather than two of them */
        store_log(e, 0, "consume queue %s/%d: not loaded (%s)", q->topic, q->queue_id,
                  cq_find(e, q->topic, q->queue_id) ? "already in the table" : "out of memory");
        cq_free_unlinked(q);
        return;
    }
    if (e->lazy_recovering)
        return; /* store_recover cuts and corrects every queue in the table */
    int64_t cut = atomic_load(&e->lazy_cut_end);
    if (q->max_phys_end > cut)
        cq_truncate_past(e, q, cut);
    int64_t cl_min = atomic_load(&e->cl_min_offset);
    cq_drop_expired_files(e, q, cl_min);
    cq_correct_min(e, q, cl_min);
}

bool cq_ensure_topic(store_engine *e, const char *topic, bool locked)
{
    if (atomic_load_explicit(&e->lazy_left, memory_order_acquire) == 0)
        return true;
    pthread_mutex_lock(&e->lazy_mu);
    lazy_topic *t = lazy_find(e, topic);
    bool pending = t && t->pending;
    pthread_mutex_unlock(&e->lazy_mu);
    if (!pending)
        return true;
    store_cq *head = NULL;
    char err[256] = "";
    int rc = cq_read_topic(e, topic, &head, err, sizeof err);
    if (rc != 0) {
        /* stays pending: creating one of its queues afresh would write over
         * the entries on disk */
        store_log(e, 0, "consume queues of %s not loaded: %s", topic, err);
        return false;
    }
    if (!locked) {
        pthread_mutex_lock(&e->append_mu);
        pthread_rwlock_wrlock(&e->maps);
    }
    pthread_mutex_lock(&e->lazy_mu);
    t = lazy_find(e, topic); /* again: the set is freed once every topic is in */
    bool mine = t && t->pending;
    if (t)
        t->pending = false;
    pthread_mutex_unlock(&e->lazy_mu);
    while (head) {
        store_cq *nx = head->next;
        head->next = NULL;
        if (mine)
            adopt(e, head);
        else
            cq_free_unlinked(head); /* another thread entered it first */
        head = nx;
    }
    if (mine)
        atomic_fetch_sub_explicit(&e->lazy_left, 1, memory_order_release);
    if (!locked) {
        pthread_rwlock_unlock(&e->maps);
        pthread_mutex_unlock(&e->append_mu);
    }
    return true;
}

size_t store_queues_pending_topics(store_engine *e)
{
    return atomic_load(&e->lazy_left);
}

/* Every pending topic, LOAD_THREADS threads taking topics in turn: on a
 * cold page cache each read waits for the disk, and the waits overlap. */
#define LOAD_THREADS 4

typedef struct load_job {
    store_engine *e;
    _Atomic size_t next;
    _Atomic int failed;
} load_job;

static void *load_worker(void *arg)
{
    load_job *j = arg;
    store_engine *e = j->e;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        char name[STORED_RECORD_MAX_TOPIC + 1];
        /* copied under the lock: the background pass frees the set once
         * every topic is in */
        pthread_mutex_lock(&e->lazy_mu);
        bool have = e->lazy_v && i < e->lazy_n && atomic_load(&e->lazy_left) > 0;
        if (have)
            snprintf(name, sizeof name, "%s", e->lazy_v[i]->name);
        pthread_mutex_unlock(&e->lazy_mu);
        if (!have)
            break;
        if (!cq_ensure_topic(e, name, false))
            atomic_store(&j->failed, 1);
    }
    return NULL;
}

int cq_load_all(store_engine *e, char *err, size_t errlen)
{
    if (atomic_load(&e->lazy_left) == 0)
        return 0;
    load_job j = {.e = e};
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    pthread_t th[LOAD_THREADS - 1];
    size_t started = 0;
    for (; atomic_load(&e->lazy_left) > 64 && started < LOAD_THREADS - 1; started++)
        if (pthread_create(&th[started], NULL, load_worker, &j) != 0)
            break;
    load_worker(&j); /* this thread too (alone when there are few topics) */
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (atomic_load(&j.failed)) {
        snprintf(err, errlen, "consume queues could not be loaded (see the log)");
        return -EIO;
    }
    return 0;
}

/* The background pass: one topic at a time, so an I/O thread that needs a
 * topic waits at most for one topic's entry into the table. */
static void *lazy_main(void *arg)
{
    store_engine *e = arg;
    /* behind the I/O threads for the CPU (on 2 cores it ran beside them
     * for 5-19 s at 400,000 queues); a lower priority still progresses */
    pthread_setname_np(pthread_self(), "store-cq-load");
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) != 0)
        store_log(e, 3, "background queue loading keeps its priority");
    int64_t t0 = store_now_ms();
    size_t failed = 0;
    for (size_t i = 0; i < e->lazy_n && !atomic_load(&e->closing); i++) {
        if (atomic_load(&e->lazy_left) == 0)
            break;
        if (!cq_ensure_topic(e, e->lazy_v[i]->name, false))
            failed++;
    }
    if (atomic_load(&e->closing))
        return NULL;
    store_log(e, 2, "consume queues of %zu topics loaded in the background in %lld ms%s", e->lazy_n,
              (long long)(store_now_ms() - t0),
              failed ? " (some could not be read: see above)" : "");
    /* the set is no longer needed (100,000 topics: ~6 MB); a thread that
     * read a topic meanwhile looks it up again under these locks */
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_wrlock(&e->maps);
    pthread_mutex_lock(&e->lazy_mu);
    if (atomic_load(&e->lazy_left) == 0)
        cq_lazy_free(e);
    pthread_mutex_unlock(&e->lazy_mu);
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);
    return NULL;
}

int cq_lazy_start(store_engine *e)
{
    if (atomic_load(&e->lazy_left) == 0 || e->cfg.cq_load == STORE_CQ_LOAD_ON_USE)
        return 0;
    int rc = pthread_create(&e->lazy_thread, NULL, lazy_main, e);
    if (rc != 0)
        return -rc;
    e->lazy_started = true;
    return 0;
}

void cq_lazy_stop(store_engine *e)
{
    if (e->lazy_started) {
        pthread_join(e->lazy_thread, NULL); /* it stops at the next topic once `closing` */
        e->lazy_started = false;
    }
}

void cq_lazy_free(store_engine *e)
{
    for (size_t i = 0; i < e->lazy_n; i++)
        free(e->lazy_v[i]);
    free(e->lazy_v);
    free(e->lazy_b);
    e->lazy_v = e->lazy_b = NULL;
    e->lazy_n = e->lazy_nb = 0;
    atomic_store(&e->lazy_left, 0);
}
