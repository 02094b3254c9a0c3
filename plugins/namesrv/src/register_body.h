/* register_body.h — the decoded body of REGISTER_BROKER (RegisterBrokerBody
 * or a bare TopicConfigSerializeWrapper, JSON or the compressed binary form,
 * protocol.md §4.2, §4.6) and the DataVersion it carries. */
#ifndef NAMESRV_REGISTER_BODY_H
#define NAMESRV_REGISTER_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct data_version {
    int64_t counter;
    int64_t timestamp;
    int64_t state_version; /* 5.x only; kept, not compared (4.9.8 equality) */
    bool has_state_version;
} data_version;

/* 4.9.8 equality: timestamp and counter. */
bool data_version_equal(const data_version *a, const data_version *b);

typedef struct rb_topic {
    const char *name; /* in the body's arena */
    int32_t read_queue_nums;
    int32_t write_queue_nums;
    int32_t perm;
    int32_t topic_sys_flag;
    bool order;
} rb_topic;

typedef struct register_body {
    data_version dv;
    rb_topic *topics;
    size_t ntopics;
    size_t topics_cap;
    bool has_filter_list; /* the body carried filterServerList */
    const char **filter_servers;
    size_t nfilters;
    size_t filters_cap;
    char *arena; /* every string above points in here */
    size_t arena_len;
    size_t arena_cap;
    /* JSON form: where the DataVersion object's value sits in the input
     * (byte offsets) and how often the key occurred — what
     * body_fingerprint.c needs to compare a later body without parsing it */
    size_t dv_begin, dv_end;
    unsigned dv_count;
} register_body;

void register_body_init(register_body *rb);
void register_body_free(register_body *rb);

/* JSON form. wrapper_only: the body is a bare TopicConfigSerializeWrapper
 * (request version < 37). Single pass; accepts bare or single-quoted keys,
 * any key order, unknown keys, numbers given as strings and vice versa.
 * Returns 0 or -1 with a reason in err. */
int register_body_parse_json(const char *data, size_t len, bool wrapper_only, register_body *out,
                             char *err, size_t errlen);

/* Compressed form (zlib stream). request_version decides whether the 5.x
 * static-topic section is read (>= 413). 0 or -1 with a reason. */
int register_body_decode_compressed(const uint8_t *data, size_t len, int32_t request_version,
                                    register_body *out, char *err, size_t errlen);

/* The two steps of the above: the zlib stream inflated (*raw malloc'd; 0 or
 * -1), and the inflated bytes decoded (0 or -1 with a reason). */
int register_body_inflate(const uint8_t *data, size_t len, uint8_t **raw, size_t *raw_len);
int register_body_decode_inflated(const uint8_t *raw, size_t raw_len, register_body *out, char *err,
                                  size_t errlen);

/* True when the bytes start like a zlib stream (CMF/FLG check). */
bool register_body_looks_compressed(const uint8_t *data, size_t len);

/* DataVersion JSON alone (QUERY_DATA_VERSION body). 0 or -1. */
int data_version_parse_json(const char *data, size_t len, data_version *out);

/* Masked CRC32 as Java's broker computes it (crc32 & 0x7FFFFFFF). */
int32_t body_crc32_masked(const void *data, size_t len);

#endif
