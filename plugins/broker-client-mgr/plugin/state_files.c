/* state_files.c — owns topics.json, subscriptionGroup.json and
 * consumerOffset.json under the config dir: loading at start (Java files
 * load as they are) and atomic rewrites (topics.json's: topics_journal_file.c). Serialises under
 * the tables lock, writes outside it; never runs on IO threads. */
#include "broker_context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int mkdir_p(const char *path)
{
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    return (mkdir(tmp, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

static bool json_valid(const char *data, size_t len, void *ud)
{
    (void)ud;
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r'))
        i++;
    return i < len && data[i] == '{';
}

typedef int (*load_fn)(bcm_ctx *c, const char *text, size_t len, char *err, size_t errlen);

static int load_topics(bcm_ctx *c, const char *t, size_t n, char *e, size_t el)
{
    return bcm_topic_table_load(&c->topics, t, n, e, el);
}
static int load_groups(bcm_ctx *c, const char *t, size_t n, char *e, size_t el)
{
    return bcm_subscription_groups_load(&c->groups, t, n, e, el);
}
static int load_offsets(bcm_ctx *c, const char *t, size_t n, char *e, size_t el)
{
    return bcm_offset_table_load(&c->offsets, t, n, e, el);
}

static int load_one(bcm_ctx *c, const char *name, load_fn fn)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", c->config_dir, name);
    char *data = NULL;
    size_t len = 0;
    int rc = c->api->read_file_with_backup(c->pctx, path, json_valid, NULL, &data, &len);
    if (rc == RMQ_ENOENT)
        return 0;
    if (rc != 0) {
        c->api->log(c->pctx, RMQ_LOG_ERROR, "%s: %s", path, rmq_strerror(rc));
        return rc;
    }
    char err[256] = "";
    rc = fn(c, data, len, err, sizeof err);
    free(data);
    /* the text and its parse are gone: at 100,000 topics ~100 MB the
     * tables do not keep */
    bcm_heap_return_after(c, len);
    if (rc != 0) {
        /* a broken file must not be silently replaced by an empty table */
        c->api->log(c->pctx, RMQ_LOG_ERROR, "%s: cannot load: %s", path, err);
        return RMQ_EINVAL;
    }
    c->api->log(c->pctx, RMQ_LOG_INFO, "loaded %s", path);
    return 0;
}

int bcm_state_load(bcm_ctx *c)
{
    if (mkdir_p(c->config_dir) != 0) {
        c->api->log(c->pctx, RMQ_LOG_ERROR, "cannot create %s: %s", c->config_dir, strerror(errno));
        return RMQ_EIO;
    }
    int rc = load_one(c, "topics.json", load_topics);
    if (rc == 0)
        rc = load_one(c, "subscriptionGroup.json", load_groups);
    if (rc == 0)
        rc = load_one(c, "consumerOffset.json", load_offsets);
    return rc;
}

static void write_text(bcm_ctx *c, const char *name, char *text)
{
    if (!text) {
        c->api->log(c->pctx, RMQ_LOG_ERROR, "%s: out of memory while encoding", name);
        return;
    }
    char path[800];
    snprintf(path, sizeof path, "%s/%s", c->config_dir, name);
    int rc = c->api->write_file_atomic(c->pctx, path, text, strlen(text));
    if (rc != 0)
        c->api->log(c->pctx, RMQ_LOG_ERROR, "writing %s: %s", path, rmq_strerror(rc));
    free(text);
}

void bcm_persist_groups(bcm_ctx *c)
{
    pthread_mutex_lock(&c->persist_lock);
    pthread_mutex_lock(&c->lock);
    char *text = bcm_subscription_groups_encode(&c->groups);
    pthread_mutex_unlock(&c->lock);
    write_text(c, "subscriptionGroup.json", text);
    pthread_mutex_unlock(&c->persist_lock);
}

void bcm_persist_offsets(bcm_ctx *c, bool force)
{
    pthread_mutex_lock(&c->persist_lock);
    pthread_mutex_lock(&c->lock);
    uint64_t changes = c->offsets_changes;
    char *text = NULL;
    if (force || changes != c->offsets_flushed)
        text = bcm_offset_table_encode(&c->offsets, true);
    pthread_mutex_unlock(&c->lock);
    if (force || changes != c->offsets_flushed) {
        write_text(c, "consumerOffset.json", text);
        c->offsets_flushed = changes;
    }
    pthread_mutex_unlock(&c->persist_lock);
}

void bcm_flush_timer(void *ud)
{
    bcm_persist_offsets(ud, false);
}
