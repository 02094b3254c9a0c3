/* stored_record.h — the stored-message record of protocol-messages.md §10.3.1
 * as field views (decode), its validation and its encoder. Shared by the
 * engine (append, recovery) and the plugin layer (VIEW, send-back,
 * transactions, SQL92 filtering). No I/O, no allocation. */
#ifndef STORED_RECORD_H
#define STORED_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define STORED_RECORD_MAGIC 0xDAA320A7u       /* CommitLog.MESSAGE_MAGIC_CODE */
#define STORED_RECORD_BLANK_MAGIC 0xCBD43194u /* CommitLog.BLANK_MAGIC_CODE */
#define STORED_RECORD_MIN_SIZE 91             /* IPv4 hosts, empty body/topic/props */
#define STORED_RECORD_MAX_TOPIC 127
#define STORED_RECORD_MAX_PROPS 32767

/* sysFlag bits (MessageSysFlag, §10.3.2) */
#define STORED_SYSFLAG_COMPRESSED 0x1
#define STORED_SYSFLAG_MULTI_TAGS 0x2
#define STORED_SYSFLAG_TX_MASK 0xC
#define STORED_SYSFLAG_TX_PREPARED 0x4
#define STORED_SYSFLAG_TX_COMMIT 0x8
#define STORED_SYSFLAG_TX_ROLLBACK 0xC
#define STORED_SYSFLAG_BORNHOST_V6 0x10
#define STORED_SYSFLAG_STOREHOST_V6 0x20

/* A decoded record: scalar fields copied, variable parts pointing into the
 * decoded buffer (valid as long as that buffer is). */
typedef struct stored_record {
    int32_t total_size;
    uint32_t magic;
    int32_t body_crc;
    int32_t queue_id;
    int32_t flag;
    int64_t queue_offset;
    int64_t phys_offset;
    int32_t sys_flag;
    int64_t born_ts;
    const uint8_t *born_ip; /* 4 or 16 bytes (born_ip_len) */
    uint8_t born_ip_len;
    int32_t born_port;
    int64_t store_ts;
    const uint8_t *store_ip;
    uint8_t store_ip_len;
    int32_t store_port;
    int32_t reconsume_times;
    int64_t prepared_tx_offset;
    const uint8_t *body;
    int32_t body_len;
    const char *topic; /* not NUL-terminated */
    uint8_t topic_len;
    const char *props; /* not NUL-terminated */
    uint16_t props_len;
} stored_record;

typedef enum stored_record_rc {
    STORED_RECORD_OK = 0,
    STORED_RECORD_TRUNCATED = -1,   /* buffer shorter than the header or TOTALSIZE */
    STORED_RECORD_BAD_MAGIC = -2,   /* neither message nor blank magic */
    STORED_RECORD_BLANK = -3,       /* a blank (end-of-file) record */
    STORED_RECORD_BAD_SIZE = -4,    /* TOTALSIZE disagrees with the field lengths */
    STORED_RECORD_BAD_LENGTHS = -5, /* a negative or overflowing field length */
    STORED_RECORD_BAD_CRC = -6      /* BODYCRC differs (only when asked to check) */
} stored_record_rc;

const char *stored_record_rc_name(stored_record_rc rc);

/* Big-endian helpers, exported because every user of records needs them.
 * One load or store and a byte swap: gcc did not merge the byte-wise form
 * (a queue entry's write took ~100 instructions). */
static inline uint32_t stored_be32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}
static inline uint64_t stored_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}
static inline void stored_put_be32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    memcpy(p, &v, sizeof v);
}
static inline void stored_put_be64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, sizeof v);
}

/* Size of a record with these parts (CommitLog.calMsgLength). */
size_t stored_record_size(int32_t sys_flag, size_t body_len, size_t topic_len, size_t props_len);

/* BODYCRC: zlib CRC-32 of the body & 0x7FFFFFFF (UtilAll.crc32; 0 when empty). */
int32_t stored_record_body_crc(const void *body, size_t len);

/* Decode the record at buf[0..len): checks that TOTALSIZE fits in len, the
 * magic, every length, and TOTALSIZE == the recomputed size; the BODYCRC too
 * when check_crc. Returns STORED_RECORD_OK and fills *r, or why not (on
 * STORED_RECORD_BLANK, r->total_size holds the blank's size when readable). */
stored_record_rc stored_record_decode(const uint8_t *buf, size_t len, bool check_crc,
                                      stored_record *r);

/* Encode r into out (cap bytes): TOTALSIZE, MAGICCODE and the host-size bits
 * 0x10/0x20 of SYSFLAG are derived (r->total_size, r->magic ignored); BODYCRC
 * is computed unless r->body_crc is already right (pass compute_crc=false to
 * keep r->body_crc as given). Returns the record size, or 0 when a length is
 * out of range (topic > 127, props > 32767, ip len not 4/16) or cap is short. */
size_t stored_record_encode(const stored_record *r, bool compute_crc, uint8_t *out, size_t cap);

/* Properties string (§10.3.3): the value of the last non-empty `name` entry
 * (U+0001 / U+0002 separated; empty names and values dropped). Returns true
 * and the value view, or false. */
bool stored_props_get(const char *props, size_t len, const char *name, const char **val,
                      size_t *val_len);

/* Offsets of the variable fields inside a record with this sysFlag (for
 * in-place patches): the STORETIMESTAMP field and the QUEUEOFFSET field. */
size_t stored_record_store_ts_pos(int32_t sys_flag);
#define STORED_RECORD_QUEUE_OFFSET_POS 20
#define STORED_RECORD_PHYS_OFFSET_POS 28

#endif
