/* acl_yaml_write.c — owns rendering one plain_acl.yml (after an admin code
 * changed it) in Java's layout, every string double-quoted and escaped. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_config.h"

typedef struct out {
    char *buf;
    size_t len, cap;
    bool oom;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...)
{
    if (o->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || o->len + (size_t)n + 1 > o->cap) {
        size_t cap = (o->cap + (size_t)(n < 0 ? 0 : n) + 1) * 2;
        char *b = realloc(o->buf, cap);
        if (!b || n < 0) {
            o->oom = true;
            if (b)
                o->buf = b;
            return;
        }
        o->buf = b;
        o->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    o->len += (size_t)n;
}

static void quoted(out *o, const char *s)
{
    put(o, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            put(o, "\\%c", *p);
        else if (*p < 0x20)
            put(o, "\\x%02x", *p);
        else
            put(o, "%c", *p);
    }
    put(o, "\"");
}

static void list(out *o, const char *indent, const char *key, char **items, size_t n)
{
    put(o, "%s%s:\n", indent, key);
    for (size_t i = 0; i < n; i++) {
        put(o, "%s- ", indent);
        quoted(o, items[i]);
        put(o, "\n");
    }
}

char *acl_yaml_render(const acl_file *f, size_t *len)
{
    out o = {0};
    put(&o,
        "# Written by rmqhost's acl plugin (an ACL admin request); Java's plain_acl.yml format.\n");
    list(&o, "", "globalWhiteRemoteAddresses", f->global_white, f->nglobal_white);
    put(&o, "accounts:\n");
    for (size_t i = 0; i < f->naccounts; i++) {
        const acl_account *a = &f->accounts[i];
        put(&o, "- accessKey: ");
        quoted(&o, a->access_key);
        put(&o, "\n  secretKey: ");
        quoted(&o, a->secret_key);
        put(&o, "\n");
        if (a->white_remote_address) {
            put(&o, "  whiteRemoteAddress: ");
            quoted(&o, a->white_remote_address);
            put(&o, "\n");
        }
        put(&o, "  admin: %s\n", a->admin ? "true" : "false");
        if (a->default_topic_perm) {
            put(&o, "  defaultTopicPerm: ");
            quoted(&o, a->default_topic_perm);
            put(&o, "\n");
        }
        if (a->default_group_perm) {
            put(&o, "  defaultGroupPerm: ");
            quoted(&o, a->default_group_perm);
            put(&o, "\n");
        }
        if (a->ntopic_perms)
            list(&o, "  ", "topicPerms", a->topic_perms, a->ntopic_perms);
        if (a->ngroup_perms)
            list(&o, "  ", "groupPerms", a->group_perms, a->ngroup_perms);
    }
    if (f->has_version)
        put(&o, "dataVersion:\n- counter: %lld\n  timestamp: %lld\n", (long long)f->version_counter,
            (long long)f->version_timestamp);
    if (o.oom) {
        free(o.buf);
        return NULL;
    }
    *len = o.len;
    return o.buf;
}
