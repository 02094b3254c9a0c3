/* proxy_receipt.c — the receipt handle of a received message, read back
 * for AckMessage, ChangeInvisibleDuration and ForwardMessageToDeadLetterQueue.
 * Every acknowledgement parses one: this reads the fields as the
 * "%lld %lld %lld %lld %7s %255s %d %lld %lld" sscanf it replaces did (the
 * same fields, widths, whitespace and stop at the first field that does not
 * convert) without the scanf machinery, which was a visible share of an
 * acknowledgement's CPU. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_receipt.h"

/* One %lld: false (nothing converted) unless *p starts, after white space,
 * with an optionally signed decimal number. */
static bool field_ll(const char **p, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(*p, &end, 10);
    if (end == *p)
        return false;
    *out = v;
    *p = end;
    return true;
}

/* One %Ns: up to cap - 1 characters that are not white space. */
static bool field_str(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && n + 1 < cap) {
        out[n] = s[n];
        n++;
    }
    if (n == 0)
        return false;
    out[n] = '\0';
    *p = s + n;
    return true;
}

bool proxy_receipt_parse(const char *h, pop_receipt *r)
{
    r->phys = -1;
    if (!h)
        return false;
    const char *p = h;
    long long qid = 0;
    long long *lead[] = {&r->start_offset, &r->pop_time, &r->invisible_time, &r->revive_qid};
    for (size_t i = 0; i < 4; i++)
        if (!field_ll(&p, lead[i]))
            return false;
    if (!field_str(&p, r->retry, sizeof r->retry) || !field_str(&p, r->broker, sizeof r->broker) ||
        !field_ll(&p, &qid))
        return false;
    r->queue_id = (int)qid;
    if (!field_ll(&p, &r->offset))
        return false;
    field_ll(&p, &r->phys); /* the ninth field is optional */
    return true;
}

size_t proxy_ll_text(long long v, char *out)
{
    char tmp[24];
    size_t n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t at = 0;
    if (v < 0)
        out[at++] = '-';
    while (n)
        out[at++] = tmp[--n];
    out[at] = '\0';
    return at;
}

/* s appended at *at, cut to what fits with the final NUL (as snprintf) */
static void put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
    if (*at + 1 >= cap)
        return;
    size_t room = cap - 1 - *at;
    if (n > room)
        n = room;
    memcpy(out + *at, s, n);
    *at += n;
    out[*at] = '\0';
}

static void put_s(char *out, size_t cap, size_t *at, const char *s)
{
    put(out, cap, at, s, strlen(s));
}

void proxy_receipt_format(char *out, size_t cap, long long start_offset, const char *pop_time,
                          long long invisible, const char *revive_qid, const char *retry,
                          const char *broker, int queue_id, long long offset, long long phys)
{
    if (cap == 0)
        return;
    out[0] = '\0';
    char so[24], inv[24], qid[24], off[24], ph[24];
    proxy_ll_text(start_offset, so);
    proxy_ll_text(invisible, inv);
    proxy_ll_text(queue_id, qid);
    proxy_ll_text(offset, off);
    proxy_ll_text(phys, ph);
    /* the nine fields, one space between each */
    const char *field[] = {so, pop_time, inv, revive_qid, retry, broker, qid, off, ph};
    size_t at = 0;
    for (size_t i = 0; i < sizeof field / sizeof field[0]; i++) {
        if (i)
            put(out, cap, &at, " ", 1);
        put_s(out, cap, &at, field[i]);
    }
}
