/* consumer_filter_sync.c — keeps the consumer filter table in step with
 * broker-client-mgr's "broker.consumer_group" events (REGISTER → register,
 * UNREGISTER → unregister, as Java's DefaultConsumerIdsChangeListener), and
 * owns consumerFilter.json: load at start, clean + atomic write on a timer. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "filter_plugin.h"

static void on_consumer_group(const char *event, const void *data, size_t len, void *ud)
{
    (void)event;
    filter_plugin *fp = ud;
    const rmq_consumer_group_event *ev = data;
    /* fields up to sub_count are version 1 of the payload */
    if (!ev || len < offsetof(rmq_consumer_group_event, sub_count) + sizeof(size_t) ||
        ev->size < offsetof(rmq_consumer_group_event, sub_count) + sizeof(size_t) || !ev->group)
        return;
    int64_t now = (int64_t)fp->api->now_wall_ms();
    if (ev->kind == RMQ_CONSUMER_GROUP_REGISTER)
        consumer_filter_table_register(&fp->filters, ev->group, ev->subs,
                                       ev->subs ? ev->sub_count : 0, now);
    else if (ev->kind == RMQ_CONSUMER_GROUP_UNREGISTER)
        consumer_filter_table_unregister(&fp->filters, ev->group, now);
}

static int make_parent_dirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

int filter_consumer_persist(filter_plugin *fp)
{
    consumer_filter_table_clean(&fp->filters, (int64_t)fp->api->now_wall_ms(), fp->clean_span_ms);
    pthread_mutex_lock(&fp->filters.lock);
    bool dirty = fp->filters.dirty;
    pthread_mutex_unlock(&fp->filters.lock);
    if (!dirty)
        return 0;
    char *text = consumer_filter_table_to_json(&fp->filters, true);
    if (!text)
        return RMQ_ENOMEM;
    int rc = make_parent_dirs(fp->filter_path) == 0 ? 0 : RMQ_EIO;
    if (rc == 0)
        rc = fp->api->write_file_atomic(fp->pctx, fp->filter_path, text, strlen(text));
    if (rc != 0) {
        fp->api->log(fp->pctx, RMQ_LOG_ERROR, "persist %s failed: %s", fp->filter_path,
                     rmq_strerror(rc));
        pthread_mutex_lock(&fp->filters.lock);
        fp->filters.dirty = true; /* try again next tick */
        pthread_mutex_unlock(&fp->filters.lock);
    }
    free(text);
    return rc;
}

static void persist_tick(void *ud)
{
    (void)filter_consumer_persist(ud);
}

static bool looks_like_json_object(const char *data, size_t len, void *ud)
{
    (void)ud;
    while (len && (*data == ' ' || *data == '\n' || *data == '\r' || *data == '\t'))
        data++, len--;
    return len > 0 && *data == '{';
}

int filter_consumer_sync_start(filter_plugin *fp)
{
    const rmq_host_api *a = fp->api;
    char *text = NULL;
    size_t len = 0;
    int rc = a->read_file_with_backup(fp->pctx, fp->filter_path, looks_like_json_object, NULL,
                                      &text, &len);
    if (rc == 0) {
        char err[256];
        bool discarded = false;
        if (consumer_filter_table_load(&fp->filters, text, len, true, (int64_t)a->now_wall_ms(),
                                       &discarded, err, sizeof err) != 0)
            a->log(fp->pctx, RMQ_LOG_WARN, "%s ignored: %s", fp->filter_path, err);
        else if (discarded)
            a->log(fp->pctx, RMQ_LOG_WARN, "%s discarded: bloom filter parameters changed",
                   fp->filter_path);
        else
            a->log(fp->pctx, RMQ_LOG_INFO, "loaded %zu consumer filter entries from %s",
                   consumer_filter_table_count(&fp->filters), fp->filter_path);
        free(text);
    } else if (rc != RMQ_ENOENT) {
        a->log(fp->pctx, RMQ_LOG_WARN, "cannot read %s: %s", fp->filter_path, rmq_strerror(rc));
    }

    rc = a->subscribe_event(fp->pctx, RMQ_BROKER_CONSUMER_GROUP_EVENT, on_consumer_group, fp);
    if (rc == 0)
        rc = a->declare_executor(fp->pctx, FILTER_PERSIST_EXECUTOR, 1, 4);
    if (rc == 0)
        rc = a->add_timer(fp->pctx, fp->persist_ms, fp->persist_ms, persist_tick, fp,
                          FILTER_PERSIST_EXECUTOR, NULL);
    return rc;
}
