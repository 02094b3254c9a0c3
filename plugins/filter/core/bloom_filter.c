/* bloom_filter.c — owns the bit-position arithmetic of RocketMQ's
 * BloomFilter (used for consumerFilter.json's bloomFilterData). Bit maps per
 * message (enableCalcFilterBitMap) are a store feature and not built here. */
#include "bloom_filter.h"

#include <math.h>
#include <string.h>

int bloom_params_init(bloom_params *p, int f, int n)
{
    if (f < 1 || f >= 100 || n < 1)
        return -1;
    double rate = f / 100.0;
    int k = (int)ceil(log(rate) / log(0.5));
    double m = ceil(n * (log(1 / rate) / log(2)) * (log(M_E) / log(2)));
    int m8 = (int)(8 * ceil(m / 8.0));
    if (k < 1 || k > BLOOM_MAX_K || m8 < 8)
        return -1;
    p->k = k;
    p->m = m8;
    return 0;
}

static uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

int64_t murmur3_x64_128_as_long(const void *data, size_t len)
{
    const uint8_t *d = data;
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = 0, h2 = 0;
    size_t nblocks = len / 16;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = load_le64(d + i * 16), k2 = load_le64(d + i * 16 + 8);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *tail = d + nblocks * 16;
    uint64_t k1 = 0, k2 = 0;
    switch (len & 15) {
    case 15: k2 ^= (uint64_t)tail[14] << 48; /* fall through */
    case 14: k2 ^= (uint64_t)tail[13] << 40; /* fall through */
    case 13: k2 ^= (uint64_t)tail[12] << 32; /* fall through */
    case 12: k2 ^= (uint64_t)tail[11] << 24; /* fall through */
    case 11: k2 ^= (uint64_t)tail[10] << 16; /* fall through */
    case 10: k2 ^= (uint64_t)tail[9] << 8;   /* fall through */
    case 9:
        k2 ^= (uint64_t)tail[8];
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        /* fall through */
    case 8: k1 ^= (uint64_t)tail[7] << 56; /* fall through */
    case 7: k1 ^= (uint64_t)tail[6] << 48; /* fall through */
    case 6: k1 ^= (uint64_t)tail[5] << 40; /* fall through */
    case 5: k1 ^= (uint64_t)tail[4] << 32; /* fall through */
    case 4: k1 ^= (uint64_t)tail[3] << 24; /* fall through */
    case 3: k1 ^= (uint64_t)tail[2] << 16; /* fall through */
    case 2: k1 ^= (uint64_t)tail[1] << 8;  /* fall through */
    case 1:
        k1 ^= (uint64_t)tail[0];
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        break;
    default: break;
    }
    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    return (int64_t)h1; /* first 8 bytes of the digest, little-endian */
}

void bloom_positions(const bloom_params *p, const char *s, size_t len, int *out)
{
    uint64_t h = (uint64_t)murmur3_x64_128_as_long(s, len);
    int32_t hash1 = (int32_t)(uint32_t)h;
    int32_t hash2 = (int32_t)(uint32_t)(h >> 32);
    for (int i = 1; i <= p->k; i++) {
        int32_t c = (int32_t)((uint32_t)hash1 + (uint32_t)i * (uint32_t)hash2);
        if (c < 0)
            c = ~c;
        out[i - 1] = c % p->m;
    }
}
