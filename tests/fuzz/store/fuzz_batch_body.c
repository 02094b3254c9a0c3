/* fuzz_batch_body.c — libFuzzer harness of the SEND_BATCH_MESSAGE body
 * decoder (store plugin, §10.3.6): any input decodes without reading out of
 * bounds; every item lies inside the input; a body that decodes is covered
 * exactly by its records and counts the same twice. */
#include <stdint.h>
#include <stdlib.h>

#include "batch_body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    batch_item items[64];
    size_t n = 0;
    batch_status st = batch_body_decode(data, size, items, 64, &n);
    long count = batch_body_count(data, size);
    if (st == BATCH_OK) {
        size_t covered = 0;
        for (size_t i = 0; i < n; i++) {
            const batch_item *it = &items[i];
            if (it->body < data || it->body + it->body_len > data + size ||
                (const uint8_t *)it->props < data ||
                (const uint8_t *)it->props + it->props_len > data + size)
                abort();
            covered += 22 + it->body_len + it->props_len;
        }
        if (covered != size || count != (long)n)
            abort();
    } else if (st != BATCH_TOO_MANY && count != -1) {
        abort();
    }
    (void)batch_status_remark(st);
    return 0;
}
