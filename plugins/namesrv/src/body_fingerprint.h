/* body_fingerprint.h — what identifies a REGISTER_BROKER JSON body apart from
 * its DataVersion: the bytes before the DataVersion object, and the length,
 * CRC32 and a 64-bit hash of everything after it. Two bodies with equal
 * fingerprints register the same topics, so a re-registration that only
 * bumped the DataVersion counter need not be parsed. */
#ifndef NAMESRV_BODY_FINGERPRINT_H
#define NAMESRV_BODY_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "register_body.h"

#define BODY_FP_PREFIX_MAX 160

typedef struct body_fingerprint {
    uint8_t form;         /* 0 = none; 1 = RegisterBrokerBody; 2 = bare wrapper;
                             3 = inflated compressed body */
    bool filters_empty;   /* the body's filterServerList was empty or absent */
    bool has_filter_list; /* ... and present */
    uint16_t prefix_len;  /* bytes before the DataVersion value */
    char prefix[BODY_FP_PREFIX_MAX];
    uint64_t suffix_len; /* bytes after it */
    uint32_t suffix_crc;
    uint64_t suffix_hash;
} body_fingerprint;

bool body_fingerprint_equal(const body_fingerprint *a, const body_fingerprint *b);

/* After `rb` was parsed from this JSON body: its fingerprint (form 0 when the
 * body has no single DataVersion or too long a prefix) and the body's masked
 * CRC32 as Java's broker computes it, both from one pass over the bytes. */
void body_fingerprint_of_parsed(const uint8_t *body, size_t len, bool wrapper_only,
                                const register_body *rb, body_fingerprint *fp, int32_t *crc_masked);

/* The shortcut: true when `body` has the bytes of `like` before its
 * DataVersion and a flat DataVersion object there; then *fp, *dv and
 * *crc_masked are this body's. False: parse it (nothing is filled). */
bool body_fingerprint_quick(const uint8_t *body, size_t len, bool wrapper_only,
                            const body_fingerprint *like, body_fingerprint *fp, data_version *dv,
                            int32_t *crc_masked);

/* The same without comparing what follows the DataVersion: the fingerprint
 * of one of a broker's split frames (which share the bytes before it), for
 * the route table to look up among the frames it knows. */
bool body_fingerprint_of_frame(const uint8_t *body, size_t len, bool wrapper_only,
                               const body_fingerprint *like, body_fingerprint *fp, data_version *dv,
                               int32_t *crc_masked);

/* An inflated compressed body (4.9.8 compress(): DataVersion chunk, topic
 * count and lines, filter servers): form 3, empty prefix, the bytes after
 * the DataVersion chunk hashed (no CRC: the broker's CRC covers the
 * compressed bytes). Its DataVersion in *dv. The filter flags are unknown
 * (false) until the body is decoded, or taken from an equal stored one.
 * False when the DataVersion chunk cannot be read. */
bool body_fingerprint_of_inflated(const uint8_t *raw, size_t raw_len, body_fingerprint *fp,
                                  data_version *dv);

/* 64-bit hash of a byte range (4 lanes of multiply-xor; not cryptographic). */
uint64_t body_hash64(const uint8_t *p, size_t n);

#endif
