/* recall_handle.c — see recall_handle.h. Java's Base64 URL alphabet
 * (RFC 4648 §5) with '=' padding, as Base64.getUrlEncoder() writes it. */
#include "recall_handle.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char ALPHA[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int digit(char c)
{
    const char *p = c ? strchr(ALPHA, c) : NULL;
    return p ? (int)(p - ALPHA) : -1;
}

bool recall_handle_build(const char *topic, const char *broker, const char *ts, const char *uniq,
                         char *out, size_t cap)
{
    char raw[600];
    int n = snprintf(raw, sizeof raw, "v1 %s %s %s %s", topic, broker, ts, uniq);
    if (n < 0 || (size_t)n >= sizeof raw || ((size_t)n + 2) / 3 * 4 + 1 > cap)
        return false;
    size_t o = 0;
    for (int i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)raw[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)(unsigned char)raw[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)raw[i + 2];
        out[o++] = ALPHA[(v >> 18) & 63];
        out[o++] = ALPHA[(v >> 12) & 63];
        out[o++] = i + 1 < n ? ALPHA[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? ALPHA[v & 63] : '=';
    }
    out[o] = '\0';
    return true;
}

bool recall_handle_parse(const char *text, recall_handle *out)
{
    size_t len = text ? strlen(text) : 0;
    char raw[600];
    size_t r = 0;
    uint32_t acc = 0;
    int bits = 0;
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '=') {
            /* padding only at the end */
            for (size_t j = i; j < len; j++)
                if (text[j] != '=')
                    return false;
            break;
        }
        int d = digit(text[i]);
        if (d < 0)
            return false;
        acc = (acc << 6) | (uint32_t)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (r + 1 >= sizeof raw)
                return false;
            raw[r++] = (char)((acc >> bits) & 0xFF);
        }
    }
    raw[r] = '\0';
    if (strlen(raw) != r)
        return false;
    char v[8], topic[256], broker[128], ts[32], uniq[128];
    if (sscanf(raw, "%7s %255s %127s %31s %127s", v, topic, broker, ts, uniq) != 5 ||
        strcmp(v, "v1") != 0)
        return false;
    snprintf(out->topic, sizeof out->topic, "%s", topic);
    snprintf(out->broker_name, sizeof out->broker_name, "%s", broker);
    snprintf(out->timestamp, sizeof out->timestamp, "%s", ts);
    snprintf(out->uniq_key, sizeof out->uniq_key, "%s", uniq);
    return true;
}
