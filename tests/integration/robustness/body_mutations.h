/* body_mutations.h — bodies that a processor must refuse cleanly: random
 * bytes, truncations, huge payloads, JSON of the wrong shape or with values
 * of unexpected types, deep nesting, and deflate garbage for compressed=true.
 * Pure functions of the PRNG and the original body; never send anything. */
#ifndef BODY_MUTATIONS_H
#define BODY_MUTATIONS_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz_rng.h"

#define FUZZ_HUGE_BODY_MAX (1024u * 1024u)

/* A mutated body; data is malloc'd (NULL with len 0 = no body). */
typedef struct fuzz_body {
    uint8_t *data;
    size_t len;
    const char *label; /* static text naming the mutation */
} fuzz_body;

fuzz_body fuzz_body_random(fuzz_rng *r);
fuzz_body fuzz_body_truncated(fuzz_rng *r, const uint8_t *orig, size_t len);
fuzz_body fuzz_body_flipped(fuzz_rng *r, const uint8_t *orig, size_t len);
fuzz_body fuzz_body_huge(fuzz_rng *r);
fuzz_body fuzz_body_wrong_shape(fuzz_rng *r);
/* orig parsed as JSON with one value replaced by one of another type; falls
 * back to fuzz_body_wrong_shape when orig is not JSON. */
fuzz_body fuzz_body_retyped_json(fuzz_rng *r, const uint8_t *orig, size_t len);
fuzz_body fuzz_body_deep_nesting(fuzz_rng *r);
/* For compressed=true: random bytes, deflated garbage, a truncated deflate
 * of orig, or a deflate bomb (tens of MB inflated). */
fuzz_body fuzz_body_deflate_garbage(fuzz_rng *r, const uint8_t *orig, size_t len);

#endif
