/* message_properties.h — the message properties string of protocol-messages.md
 * §10.3.3 (name U+0001 value, entries joined by U+0002): Java's parse rules
 * and the stored form a send writes. Pure functions, no SDK types. */
#ifndef STORE_MESSAGE_PROPERTIES_H
#define STORE_MESSAGE_PROPERTIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROP_NAME_VALUE_SEP '\x01'
#define PROP_SEP '\x02'

typedef struct prop_span {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} prop_span;

/* Up to this many entries are kept per message; more is Java-legal but
 * absurd: the rest is still parsed, see props_parse. */
#define PROPS_MAX 128

typedef struct props_view {
    prop_span e[PROPS_MAX];
    size_t n;      /* entries kept (duplicates resolved: last one wins) */
    bool overflow; /* more than PROPS_MAX distinct names */
} props_view;

/* MessageDecoder.string2messageProperties over `s` (len bytes, not
 * necessarily NUL-terminated): segments split on U+0002; a segment is kept
 * when its first U+0001 sits after at least one byte and before its last
 * byte; a repeated name replaces the earlier entry in place. Spans point
 * into s. */
void props_parse(const char *s, size_t len, props_view *out);

/* Value of `name` (NUL-terminated) or NULL; *len gets its length. */
const char *props_get(const props_view *v, const char *name, size_t *len);
/* A name with its length, for props_has_any. */
typedef struct prop_name {
    const char *s;
    size_t len;
} prop_name;
#define PROP_NAME(lit)                                                                             \
    {                                                                                              \
        lit, sizeof lit - 1                                                                        \
    }
/* Some entry is named one of names[0..n): one pass over the entries (every
 * send asks for several names). */
bool props_has_any(const props_view *v, const prop_name *names, size_t n);
/* Value equals `lit` exactly. */
bool props_value_is(const props_view *v, const char *name, const char *lit);

/* The stored properties string of a single message (§10.5.4): every kept
 * entry in the order sent, without the names in `drop` (NULL-terminated
 * list, may be NULL), then CLUSTER=<cluster> (replacing a sent CLUSTER).
 * Writes at most cap bytes into buf; returns the length it needs (like
 * snprintf, no NUL). */
size_t props_encode_stored(const props_view *v, const char *const *drop, const char *cluster,
                           char *buf, size_t cap);

/* Java String.hashCode() of a UTF-8 string over its UTF-16 code units
 * (invalid bytes count as U+FFFD), the consume queue's tagsCode (§10.8.5). */
int32_t java_string_hash(const char *s, size_t len);

#endif
