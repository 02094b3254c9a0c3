/* bloom_filter.h — RocketMQ's consumer bloom filter parameters and bit
 * positions (protocol.md §6.6): k, m from the error rate and consumer count,
 * positions from Guava murmur3_128 of "group#topic". */
#ifndef RMQ_FILTER_BLOOM_FILTER_H
#define RMQ_FILTER_BLOOM_FILTER_H

#include <stddef.h>
#include <stdint.h>

#define BLOOM_MAX_K 32

typedef struct bloom_params {
    int k; /* hash functions */
    int m; /* bits, a multiple of 8 */
} bloom_params;

/* f = maxErrorRateOfBloomFilter (percent, 1..99), n = expectConsumerNumUseFilter.
 * Returns -1 for parameters Java would refuse. Defaults (20, 32) → k 3, m 112. */
int bloom_params_init(bloom_params *p, int f, int n);

/* Guava murmur3_128(seed 0).hashBytes(data).asLong(). */
int64_t murmur3_x64_128_as_long(const void *data, size_t len);

/* Positions of `s` (UTF-8): out[0..k-1]. */
void bloom_positions(const bloom_params *p, const char *s, size_t len, int *out);

#endif
