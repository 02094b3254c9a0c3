/* filter_server_table.c — owns the filter-server registry's entries and
 * their expiry rule (idle > max → gone). Never touches channels itself: the
 * caller closes what expire() returns. */
#include "filter_server_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void filter_server_table_init(filter_server_table *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
}

void filter_server_table_dispose(filter_server_table *t)
{
    free(t->v);
    pthread_mutex_destroy(&t->lock);
    memset(t, 0, sizeof(*t));
}

static ssize_t find(const filter_server_table *t, uint64_t channel)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].channel == channel)
            return (ssize_t)i;
    return -1;
}

int filter_server_table_register(filter_server_table *t, uint64_t channel, const char *addr,
                                 uint64_t now_ms)
{
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    ssize_t i = find(t, channel);
    if (i >= 0) {
        t->v[i].last_update_ms = now_ms;
        snprintf(t->v[i].addr, sizeof t->v[i].addr, "%s", addr);
    } else {
        if (t->n == t->cap) {
            size_t nc = t->cap ? t->cap * 2 : 8;
            filter_server_entry *nv = realloc(t->v, nc * sizeof(*nv));
            if (!nv) {
                pthread_mutex_unlock(&t->lock);
                return -1;
            }
            t->v = nv;
            t->cap = nc;
        }
        filter_server_entry *e = &t->v[t->n++];
        memset(e, 0, sizeof(*e));
        e->channel = channel;
        snprintf(e->addr, sizeof e->addr, "%s", addr);
        e->last_update_ms = now_ms;
        rc = 1;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

static void remove_at(filter_server_table *t, size_t i)
{
    memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(t->v[0]));
    t->n--;
}

bool filter_server_table_remove(filter_server_table *t, uint64_t channel)
{
    pthread_mutex_lock(&t->lock);
    ssize_t i = find(t, channel);
    if (i >= 0)
        remove_at(t, (size_t)i);
    pthread_mutex_unlock(&t->lock);
    return i >= 0;
}

size_t filter_server_table_expire(filter_server_table *t, uint64_t now_ms, uint64_t max_idle_ms,
                                  uint64_t *out, size_t cap)
{
    size_t expired = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n;) {
        if (expired < cap && now_ms > t->v[i].last_update_ms &&
            now_ms - t->v[i].last_update_ms > max_idle_ms) {
            out[expired++] = t->v[i].channel;
            remove_at(t, i);
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return expired;
}

size_t filter_server_table_for_each(filter_server_table *t, void (*fn)(void *ud, const char *addr),
                                    void *ud)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->n;
    for (size_t i = 0; i < n; i++)
        fn(ud, t->v[i].addr);
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* Addresses come from the wire: escape what JSON needs escaping. */
static size_t put_json_string(char *buf, size_t len, size_t at, const char *s)
{
    if (at < len)
        buf[at] = '"';
    at++;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        const char *p = esc;
        if (c == '"' || c == '\\')
            snprintf(esc, sizeof esc, "\\%c", c);
        else if (c < 0x20)
            snprintf(esc, sizeof esc, "\\u%04x", c);
        else
            esc[0] = (char)c, esc[1] = '\0';
        for (; *p; p++, at++)
            if (at < len)
                buf[at] = *p;
    }
    if (at < len)
        buf[at] = '"';
    return at + 1;
}

size_t filter_server_table_to_json(filter_server_table *t, char *buf, size_t len)
{
    size_t at = 0;
    pthread_mutex_lock(&t->lock);
    if (at < len)
        buf[at] = '[';
    at++;
    for (size_t i = 0; i < t->n; i++) {
        if (i) {
            if (at < len)
                buf[at] = ',';
            at++;
        }
        at = put_json_string(buf, len, at, t->v[i].addr);
    }
    if (at < len)
        buf[at] = ']';
    at++;
    pthread_mutex_unlock(&t->lock);
    if (len)
        buf[at < len ? at : len - 1] = '\0';
    return at;
}

filter_server_entry *filter_server_table_snapshot(filter_server_table *t, size_t *n)
{
    pthread_mutex_lock(&t->lock);
    filter_server_entry *copy = malloc((t->n ? t->n : 1) * sizeof(*copy));
    if (copy) {
        memcpy(copy, t->v, t->n * sizeof(*copy));
        *n = t->n;
    }
    pthread_mutex_unlock(&t->lock);
    return copy;
}
