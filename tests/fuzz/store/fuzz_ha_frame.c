/* fuzz_ha_frame.c — libFuzzer harness of the slave's HA frame reader
 * (protocol-ha.md §2.3): the input arrives in pieces whose sizes come from
 * its first byte; every frame handed out lies inside the reader's buffer,
 * has a size within the limit, and the bytes handed out plus what is left
 * never exceed what was fed. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ha_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = (size_t)data[0] % 64 + 1, max_body = 4096;
    data++;
    size--;
    ha_frame_reader r;
    if (ha_frame_reader_init(&r, 8192) != 0)
        return 0;
    size_t fed = 0, taken = 0;
    bool bad = false;
    while (fed < size && !bad) {
        size_t room;
        uint8_t *dst = ha_frame_reader_space(&r, &room);
        size_t n = size - fed < piece ? size - fed : piece;
        if (n > room)
            n = room;
        if (n == 0)
            break; /* a frame bigger than the buffer: the slave closes (BAD first) */
        memcpy(dst, data + fed, n);
        ha_frame_reader_added(&r, n);
        fed += n;
        for (;;) {
            int64_t phys;
            const uint8_t *body;
            int32_t len;
            ha_frame_rc rc = ha_frame_next(&r, max_body, &phys, &body, &len);
            if (rc == HA_FRAME_MORE)
                break;
            if (rc == HA_FRAME_BAD) {
                bad = true;
                break;
            }
            if (len < 0 || (size_t)len > max_body || phys < 0 || body < r.buf ||
                body + len > r.buf + r.len)
                abort();
            taken += HA_HEADER + (size_t)len;
            ha_frame_consume(&r);
        }
    }
    if (taken + ha_frame_reader_pending(&r) != fed)
        abort();
    ha_frame_reader_free(&r);
    return 0;
}
