/* vector_answer.c — compares a live answer with one recorded from Java
 * 4.9.8 (tests/vectors): everything but the body, which each area
 * compares its own way. Reports differences in text; never asserts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_test_support.h"

rmq_cmd *rmq_tc_load_vector_cmd(const char *name, char *why, size_t why_len)
{
    size_t len;
    unsigned char *buf = rmq_tc_load_vector(name, &len);
    if (!buf) {
        snprintf(why, why_len, "vector %s missing", name);
        return NULL;
    }
    char err[256];
    rmq_cmd *c = rmq_cmd_decode(buf, len, err, sizeof(err));
    free(buf);
    if (!c)
        snprintf(why, why_len, "vector %s undecodable: %s", name, err);
    return c;
}

bool rmq_tc_same_answer_head(const rmq_cmd *want, const rmq_cmd *got, char *why, size_t why_len)
{
    if (want->code != got->code) {
        snprintf(why, why_len, "code %d, recorded %d", got->code, want->code);
        return false;
    }
    if (want->flag != got->flag || want->opaque != got->opaque ||
        want->serialize_type != got->serialize_type) {
        snprintf(why, why_len, "flag/opaque/serialization %d/%d/%d, recorded %d/%d/%d", got->flag,
                 got->opaque, (int)got->serialize_type, want->flag, want->opaque,
                 (int)want->serialize_type);
        return false;
    }
    if ((want->remark == NULL) != (got->remark == NULL) ||
        (want->remark && strcmp(want->remark, got->remark) != 0)) {
        snprintf(why, why_len, "remark '%s', recorded '%s'", got->remark ? got->remark : "(none)",
                 want->remark ? want->remark : "(none)");
        return false;
    }
    if (got->ext_count != want->ext_count) {
        snprintf(why, why_len, "%u ext fields, recorded %u", (unsigned)got->ext_count,
                 (unsigned)want->ext_count);
        return false;
    }
    for (uint32_t i = 0; i < want->ext_count; i++) {
        const char *v = rmq_cmd_ext_get(got, want->ext[i].key);
        if (!v || !want->ext[i].value || strcmp(v, want->ext[i].value) != 0) {
            snprintf(why, why_len, "ext %s = %s, recorded %s", want->ext[i].key, v ? v : "(none)",
                     want->ext[i].value ? want->ext[i].value : "(null)");
            return false;
        }
    }
    if ((want->body_len == 0) != (got->body_len == 0)) {
        snprintf(why, why_len, "body length %u, recorded %u", (unsigned)got->body_len,
                 (unsigned)want->body_len);
        return false;
    }
    return true;
}
