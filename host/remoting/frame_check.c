/* frame_check.c — decides whether a receive buffer starts with a complete,
 * acceptable frame (protocol.md §1.1–1.2). Reads only the 8-byte prefix and
 * never past `avail`; does not parse headers or allocate. */
#include <stdarg.h>
#include <stdio.h>

#include "cmd_internal.h"

__attribute__((format(printf, 5, 6))) static rmq_frame_status
invalid(const char **reason, const char *fixed, char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
        if (reason)
            *reason = errbuf;
    } else if (reason) {
        *reason = fixed;
    }
    return RMQ_FRAME_INVALID;
}

rmq_frame_status rmq_frame_check_ex(const uint8_t *buf, size_t avail, size_t max_frame_bytes,
                                    size_t *frame_total, const char **reason, char *errbuf,
                                    size_t errlen)
{
    if (reason)
        *reason = NULL;
    if (avail < 4)
        return RMQ_FRAME_NEED_MORE;
    int32_t length = (int32_t)rmq_be32(buf);
    if (length < 0)
        return invalid(reason, "frame length is negative", errbuf, errlen,
                       "frame length %d is negative", (int)length);
    if (length < 4)
        return invalid(reason, "frame length is below 4 (no room for the header length)", errbuf,
                       errlen, "frame length %d is below 4", (int)length);
    /* Netty compares the whole frame, prefix included, with maxFrameLength */
    if ((uint64_t)length + 4u > (uint64_t)max_frame_bytes)
        return invalid(reason, "frame length exceeds max_frame_bytes", errbuf, errlen,
                       "frame length %d exceeds max_frame_bytes %zu", (int)length, max_frame_bytes);
    if (avail >= 5 && buf[4] != RMQ_SERIALIZE_JSON && buf[4] != RMQ_SERIALIZE_ROCKETMQ)
        return invalid(reason, "serialize type byte is neither JSON (0) nor ROCKETMQ (1)", errbuf,
                       errlen, "serialize type byte %u is neither JSON (0) nor ROCKETMQ (1)",
                       (unsigned)buf[4]);
    if (avail < 8)
        return RMQ_FRAME_NEED_MORE;
    uint32_t header_len = rmq_be32(buf + 4) & 0x00FFFFFFu;
    if (header_len > (uint32_t)length - 4u)
        return invalid(reason, "header length exceeds frame length - 4", errbuf, errlen,
                       "header length %u exceeds frame length %d - 4", (unsigned)header_len,
                       (int)length);
    size_t total = (size_t)length + 4u;
    if (avail < total)
        return RMQ_FRAME_NEED_MORE;
    if (frame_total)
        *frame_total = total;
    return RMQ_FRAME_READY;
}

rmq_frame_status rmq_frame_check(const uint8_t *buf, size_t avail, size_t max_frame_bytes,
                                 size_t *frame_total, const char **reason)
{
    return rmq_frame_check_ex(buf, avail, max_frame_bytes, frame_total, reason, NULL, 0);
}
