/* fuzz_stored_record.c — libFuzzer harness of the stored-record codec: any
 * input decodes without reading out of bounds; what decodes re-encodes to
 * the same bytes and decodes again to the same fields; property lookups on
 * decoded properties stay in bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stored_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pos = 0;
    while (pos < size) {
        stored_record r;
        stored_record_rc rc = stored_record_decode(data + pos, size - pos, pos & 1, &r);
        if (rc != STORED_RECORD_OK)
            break;
        uint8_t *out = malloc((size_t)r.total_size);
        if (!out)
            abort();
        size_t n = stored_record_encode(&r, false, out, (size_t)r.total_size);
        /* TOTALSIZE and the host bits are re-derived: equal for valid input */
        if (n != (size_t)r.total_size || memcmp(out, data + pos, n) != 0)
            abort();
        stored_record d;
        if (stored_record_decode(out, n, false, &d) != STORED_RECORD_OK ||
            d.queue_offset != r.queue_offset || d.body_len != r.body_len)
            abort();
        const char *v;
        size_t vl;
        if (stored_props_get(d.props, d.props_len, "KEYS", &v, &vl) &&
            (v < d.props || v + vl > d.props + d.props_len))
            abort();
        free(out);
        pos += (size_t)r.total_size;
    }
    return 0;
}
