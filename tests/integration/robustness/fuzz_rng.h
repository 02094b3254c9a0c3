/* fuzz_rng.h — the fuzz test's deterministic PRNG (xorshift64*): the same
 * seed gives the same request sequence on every run and machine. State lives
 * in the caller's struct; never reads the clock or /dev/urandom. */
#ifndef FUZZ_RNG_H
#define FUZZ_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct fuzz_rng {
    uint64_t s;
} fuzz_rng;

static inline void fuzz_rng_seed(fuzz_rng *r, uint64_t seed)
{
    r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

static inline uint64_t fuzz_rng_next(fuzz_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n); n 0 gives 0. */
static inline size_t fuzz_rng_below(fuzz_rng *r, size_t n)
{
    return n ? (size_t)(fuzz_rng_next(r) % n) : 0;
}

/* True with probability percent/100. */
static inline int fuzz_rng_chance(fuzz_rng *r, unsigned percent)
{
    return fuzz_rng_below(r, 100) < percent;
}

#endif
