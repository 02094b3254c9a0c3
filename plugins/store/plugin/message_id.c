/* message_id.c — offsetMsgId rendering and address parsing for the
 * BORNHOST / STOREHOST fields of stored records. */
#include "message_id.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Canonical dotted quad ("127.0.0.1": 1-3 digits per part, no leading zero,
 * each <= 255) — a subset of what inet_pton takes, giving the same bytes.
 * Every send parses its peer's address; anything else goes to inet_pton. */
static bool dotted_quad(const char *s, uint8_t out[4])
{
    for (int part = 0; part < 4; part++) {
        if (part && *s++ != '.')
            return false;
        if (*s < '0' || *s > '9')
            return false;
        unsigned v = (unsigned)(*s++ - '0');
        if (v != 0)
            for (int d = 1; d < 3 && *s >= '0' && *s <= '9'; d++)
                v = v * 10 + (unsigned)(*s++ - '0');
        if (v > 255 || (*s >= '0' && *s <= '9'))
            return false;
        out[part] = (uint8_t)v;
    }
    return *s == 0;
}

int addr_from_ip_port(const char *ip, int32_t port, store_addr *out)
{
    memset(out, 0, sizeof *out);
    out->port = port;
    uint8_t q[4];
    if (dotted_quad(ip, q)) {
        memcpy(out->ip, q, 4);
        out->ip_len = 4;
        return 0;
    }
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, ip, &a4) == 1) {
        memcpy(out->ip, &a4, 4);
        out->ip_len = 4;
        return 0;
    }
    if (inet_pton(AF_INET6, ip, &a6) == 1) {
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a6.s6_addr, mapped, 12) == 0) {
            memcpy(out->ip, a6.s6_addr + 12, 4);
            out->ip_len = 4;
        } else {
            memcpy(out->ip, a6.s6_addr, 16);
            out->ip_len = 16;
        }
        return 0;
    }
    return -1;
}

int addr_parse(const char *text, store_addr *out)
{
    if (!text)
        return -1;
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text)
        return -1;
    char ip[64];
    const char *b = text;
    size_t n = (size_t)(colon - text);
    if (*b == '[' && n >= 2 && colon[-1] == ']') {
        b++;
        n -= 2;
    }
    if (n == 0 || n >= sizeof ip)
        return -1;
    memcpy(ip, b, n);
    ip[n] = 0;
    long port = 0;
    const char *d = colon + 1;
    if (*d >= '0' && *d <= '9') { /* the usual decimal port, without strtol */
        for (; *d >= '0' && *d <= '9' && port <= 65535; d++)
            port = port * 10 + (*d - '0');
    } else {
        char *end;
        port = strtol(d, &end, 10);
        d = end;
    }
    if (*d || port < 0 || port > 65535)
        return -1;
    return addr_from_ip_port(ip, (int32_t)port, out);
}

size_t offset_msg_id(const store_addr *h, int64_t off, char *buf)
{
    static const char hex[] = "0123456789ABCDEF";
    uint8_t raw[28];
    size_t n = 0;
    memcpy(raw, h->ip, h->ip_len);
    n = h->ip_len;
    uint32_t p = (uint32_t)h->port;
    for (int i = 3; i >= 0; i--)
        raw[n++] = (uint8_t)(p >> (8 * i));
    uint64_t o = (uint64_t)off;
    for (int i = 7; i >= 0; i--)
        raw[n++] = (uint8_t)(o >> (8 * i));
    for (size_t i = 0; i < n; i++) {
        buf[2 * i] = hex[raw[i] >> 4];
        buf[2 * i + 1] = hex[raw[i] & 15];
    }
    buf[2 * n] = 0;
    return 2 * n;
}
