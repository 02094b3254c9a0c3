/* address_pattern.c — owns compiling and matching white-address patterns
 * with the meanings of Java's RemoteAddressStrategyFactory (null/blank,
 * "*", single, comma list, {a,b} set, '*' and 'a-b' ranges, IPv4 and IPv6). */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address_pattern.h"

typedef enum { PAT_NONE, PAT_ALL, PAT_SET, PAT_RANGE } pat_kind;

typedef struct addr {
    int family;       /* 4 or 6 */
    uint16_t part[8]; /* v4: 4 octets; v6: 8 groups */
} addr;

struct acl_pattern {
    pat_kind kind;
    addr *set;
    size_t nset;
    /* PAT_RANGE: parts [0, index) equal prefix, part[index] in [lo, hi] */
    addr prefix;
    int index;
    unsigned lo, hi;
};

static int parse_addr(const char *s, addr *out)
{
    unsigned char b[16];
    memset(out, 0, sizeof(*out));
    if (inet_pton(AF_INET, s, b) == 1) {
        out->family = 4;
        for (int i = 0; i < 4; i++)
            out->part[i] = b[i];
        return 0;
    }
    if (inet_pton(AF_INET6, s, b) == 1) {
        out->family = 6;
        for (int i = 0; i < 8; i++)
            out->part[i] = (uint16_t)(b[2 * i] << 8 | b[2 * i + 1]);
        return 0;
    }
    return -1;
}

static bool addr_eq(const addr *a, const addr *b)
{
    int n = a->family == 4 ? 4 : 8;
    if (a->family != b->family)
        return false;
    for (int i = 0; i < n; i++)
        if (a->part[i] != b->part[i])
            return false;
    return true;
}

static char *trim_copy(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

static int fail(char *err, size_t errlen, const char *fmt, const char *what)
{
    snprintf(err, errlen, fmt, what);
    return -1;
}

static int set_add(acl_pattern *p, const char *text, char *err, size_t errlen)
{
    addr a;
    if (parse_addr(text, &a) != 0)
        return fail(err, errlen, "Netaddress examine Exception netaddress is %s", text);
    addr *n = realloc(p->set, (p->nset + 1) * sizeof(*n));
    if (!n)
        return fail(err, errlen, "%s", "out of memory");
    p->set = n;
    p->set[p->nset++] = a;
    return 0;
}

/* "a,b,c": comma-separated full addresses (empty items skipped, as Java's
 * StringUtils.split). */
static int compile_list(acl_pattern *p, const char *text, char *err, size_t errlen)
{
    p->kind = PAT_SET;
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *item = trim_copy(s, n);
        if (!item)
            return fail(err, errlen, "%s", "out of memory");
        int rc = *item ? set_add(p, item, err, errlen) : 0;
        free(item);
        if (rc)
            return rc;
        s += n + (e ? 1 : 0);
    }
    return 0;
}

/* "192.168.1.{1,2}" / "fe80::{1,2}": the prefix before '{' + each member. */
static int compile_braces(acl_pattern *p, const char *text, char *err, size_t errlen)
{
    const char *open = strchr(text, '{');
    size_t tl = strlen(text);
    if (!open || text[tl - 1] != '}' || strchr(open + 1, '{'))
        return fail(
            err, errlen,
            "MultipleRemoteAddressStrategy netaddress examine scope Exception netaddress %s", text);
    p->kind = PAT_SET;
    size_t plen = (size_t)(open - text);
    const char *s = open + 1;
    const char *end = text + tl - 1;
    while (s < end) {
        const char *e = memchr(s, ',', (size_t)(end - s));
        size_t n = e ? (size_t)(e - s) : (size_t)(end - s);
        char *member = trim_copy(s, n);
        char *full = member ? malloc(plen + strlen(member) + 1) : NULL;
        if (!full) {
            free(member);
            return fail(err, errlen, "%s", "out of memory");
        }
        memcpy(full, text, plen);
        strcpy(full + plen, member);
        int rc = *member ? set_add(p, full, err, errlen) : 0;
        free(member);
        free(full);
        if (rc)
            return rc;
        s += n + (e ? 1 : 0);
    }
    if (p->nset == 0)
        return fail(err, errlen, "empty address set in %s", text);
    return 0;
}

static bool parse_num(const char *s, size_t n, int base, unsigned max, unsigned *out)
{
    if (n == 0 || n > 5)
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        int c = tolower((unsigned char)s[i]);
        int d = isdigit(c) ? c - '0' : (base == 16 && c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        v = v * (unsigned)base + (unsigned)d;
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

/* '*' or 'a-b' at one position (not the first); every later position '*'
 * or absent; earlier positions exact. IPv6 needs all groups written out. */
static int compile_range(acl_pattern *p, const char *text, char *err, size_t errlen)
{
    bool v6 = strchr(text, ':') != NULL;
    char sep = v6 ? ':' : '.';
    int maxparts = v6 ? 8 : 4, base = v6 ? 16 : 10;
    unsigned maxv = v6 ? 0xffff : 255;
    p->kind = PAT_RANGE;
    p->prefix.family = v6 ? 6 : 4;
    p->index = -1;
    const char *s = text;
    int i = 0;
    for (; *s && i < maxparts; i++) {
        const char *e = strchr(s, sep);
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *item = trim_copy(s, n);
        if (!item)
            return fail(err, errlen, "%s", "out of memory");
        bool ok = true;
        if (strcmp(item, "*") == 0) {
            if (p->index < 0) {
                p->index = i;
                p->lo = 0;
                p->hi = maxv;
            }
        } else if (strchr(item, '-')) {
            char *dash = strchr(item, '-');
            unsigned lo, hi;
            ok = p->index < 0 && dash != item &&
                 parse_num(item, (size_t)(dash - item), base, maxv, &lo) &&
                 parse_num(dash + 1, strlen(dash + 1), base, maxv, &hi) && lo <= hi;
            if (ok) {
                p->index = i;
                p->lo = lo;
                p->hi = hi;
            }
        } else {
            unsigned v;
            ok = p->index < 0 && parse_num(item, strlen(item), base, maxv, &v);
            if (ok)
                p->prefix.part[i] = (uint16_t)v;
        }
        free(item);
        if (!ok)
            return fail(
                err, errlen,
                "RangeRemoteAddressStrategy netaddress examine scope Exception netaddress %s",
                text);
        s += n + (e ? 1 : 0);
        if (!e)
            break;
    }
    if (*s || p->index <= 0)
        return fail(err, errlen,
                    "RangeRemoteAddressStrategy netaddress examine scope Exception netaddress %s",
                    text);
    return 0;
}

int acl_pattern_compile(const char *text, acl_pattern **out, char *err, size_t errlen)
{
    *out = NULL;
    acl_pattern *p = calloc(1, sizeof(*p));
    if (!p)
        return fail(err, errlen, "%s", "out of memory");
    char *t = text ? trim_copy(text, strlen(text)) : NULL;
    int rc = 0;
    if (text && !t) {
        rc = fail(err, errlen, "%s", "out of memory");
    } else if (!t || !*t) {
        p->kind = PAT_NONE;
    } else if (strcmp(t, "*") == 0 || strcmp(t, "*.*.*.*") == 0 ||
               strcmp(t, "*:*:*:*:*:*:*:*") == 0) {
        p->kind = PAT_ALL;
    } else if (t[strlen(t) - 1] == '}') {
        rc = compile_braces(p, t, err, errlen);
    } else if (strchr(t, ',')) {
        rc = compile_list(p, t, err, errlen);
    } else if (strchr(t, '*') || strchr(t, '-')) {
        rc = compile_range(p, t, err, errlen);
    } else {
        p->kind = PAT_SET;
        rc = set_add(p, t, err, errlen);
    }
    free(t);
    if (rc) {
        acl_pattern_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

bool acl_pattern_match(const acl_pattern *p, const char *ip)
{
    if (!p || !ip)
        return false;
    addr a;
    switch (p->kind) {
    case PAT_NONE: return false;
    case PAT_ALL: return true;
    case PAT_SET:
        if (parse_addr(ip, &a) != 0)
            return false;
        for (size_t i = 0; i < p->nset; i++)
            if (addr_eq(&p->set[i], &a))
                return true;
        return false;
    case PAT_RANGE:
        if (parse_addr(ip, &a) != 0 || a.family != p->prefix.family)
            return false;
        for (int i = 0; i < p->index; i++)
            if (a.part[i] != p->prefix.part[i])
                return false;
        return a.part[p->index] >= p->lo && a.part[p->index] <= p->hi;
    }
    return false;
}

void acl_pattern_free(acl_pattern *p)
{
    if (!p)
        return;
    free(p->set);
    free(p);
}

void acl_peer_ip(const char *peer, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = 0;
    if (!peer)
        return;
    if (peer[0] == '[') {
        const char *e = strchr(peer, ']');
        size_t n = e ? (size_t)(e - peer - 1) : strlen(peer + 1);
        snprintf(buf, len, "%.*s", (int)n, peer + 1);
        return;
    }
    const char *colon = strrchr(peer, ':');
    /* "a:b:c" with several colons and no brackets: a bare IPv6 address */
    size_t n = (colon && strchr(peer, ':') == colon) ? (size_t)(colon - peer) : strlen(peer);
    if (n >= len)
        n = len - 1;
    memcpy(buf, peer, n); /* on every request: no printf machinery */
    buf[n] = 0;
}
