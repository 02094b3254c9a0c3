/* proxy_message.h — stored records (the store's MessageDecoder layout, as
 * POP and PULL answers carry them) turned into v2 Messages; shared by
 * ReceiveMessage (proxy_receive.c) and PullMessage (proxy_pull.c). */
#ifndef PROXY_MESSAGE_H
#define PROXY_MESSAGE_H

#include "proxy_internal.h"

/* One stored record (MessageDecoder's layout). */
typedef struct rec {
    int32_t body_crc, queue_id, reconsume, sys_flag;
    int64_t queue_offset, phys_offset, born_ts, store_ts;
    char born_host[64], store_host[64];
    const uint8_t *body;
    int32_t body_len;
    char topic[256];
    const char *props;
    uint16_t props_len;
} rec;

/* Everything one Message needs, freed by msg_free. */
typedef struct built {
    Apache__Rocketmq__V2__Message m;
    Apache__Rocketmq__V2__Resource topic;
    Apache__Rocketmq__V2__SystemProperties sys;
    Apache__Rocketmq__V2__Digest digest;
    Google__Protobuf__Timestamp born, store, deliver;
    Google__Protobuf__Duration invisible;
    Apache__Rocketmq__V2__Message__UserPropertiesEntry *ents;
    Apache__Rocketmq__V2__Message__UserPropertiesEntry **entp;
    char **keys;
    char *props; /* NUL-separated copy the strings point into */
    char digest_text[33], receipt[512], msg_id[40];
} built;

/* MD5 state reused over a batch of messages (proxy_digest.c). */
typedef struct proxy_md5 proxy_md5;
/* NULL when OpenSSL has no MD5 (proxy_md5_hex then digests without it). */
proxy_md5 *proxy_md5_new(void);
void proxy_md5_free(proxy_md5 *m);

/* Decode the record at p (len bytes left): its size, 0 when malformed. */
size_t rec_decode(const uint8_t *p, size_t len, rec *r);
/* r as a Message (pointing into r and b) with receipt handle and invisible
 * duration; now_ms (wall) dates a TIMER_DELAY_SEC message's delivery time
 * as Java's proxy does; md5 (or NULL) digests the body. 0 or RMQ_ENOMEM.
 * msg_free in every case. */
int msg_build(built *b, const rec *r, const char *receipt, int64_t invisible_ms, uint64_t now_ms,
              proxy_md5 *md5);
void msg_free(built *b);
/* The body's MD5 as 32 upper-case hex digits (out: 33 bytes); m may be NULL. */
void proxy_md5_hex(proxy_md5 *m, const uint8_t *body, size_t len, char *out);

#endif
