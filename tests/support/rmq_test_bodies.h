/* rmq_test_bodies.h — RegisterBrokerBody texts and zlib bodies the tests
 * send to (or parse like) a NameServer. Plain C with zlib: unit tests link it
 * without the daemon launcher. Never asserts; NULL on allocation failure. */
#ifndef RMQHOST_TEST_BODIES_H
#define RMQHOST_TEST_BODIES_H

#include <stddef.h>
#include <stdint.h>

/* A RegisterBrokerBody JSON text (filterServerList empty) holding `topics` =
 * "name[:perm[:read[:write[:sysflag]]]],..." (defaults 6:4:4:0), with
 * dataVersion {counter, timestamp}. Caller frees. */
char *rmq_tb_register_body_json(long long counter, long long timestamp, const char *topics);

/* The compressed RegisterBrokerBody of 4.9.8's compress() form: the
 * dataVersion JSON chunk, a topic count, one chunk per "name read write perm
 * filterType" line, then the "[]" filter server list, deflated. Caller
 * frees; *out_len is the zlib stream length. */
uint8_t *rmq_tb_compressed_register_body(long long counter, long long timestamp,
                                         const char *const *lines, size_t nlines, size_t *out_len);

/* bodyCrc32 ext field text for a body (CRC32 masked to 31 bits, decimal). */
void rmq_tb_body_crc32_text(const void *body, size_t len, char out[16]);

#endif
