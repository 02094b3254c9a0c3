/* test_request_template.c — proves rmqbench's two shortcuts agree with the
 * real codec: a patched request template decodes with the patched opaque,
 * and the fast header peek reads recorded Java responses correctly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "remoting_command.h"
#include "request_template.h"
#include "response_peek.h"

static void build(rmq_request_template *t, uint8_t serialize_type)
{
    const char *keys[] = {"topic", "acceptStandardJsonOnly"};
    const char *values[] = {"TopicTest", "true"};
    rmq_request_spec spec = {.code = 105,
                             .serialize_type = serialize_type,
                             .ext_keys = keys,
                             .ext_values = values,
                             .ext_count = 2};
    char err[128];
    assert_int_equal(rmq_template_build(t, &spec, err, sizeof(err)), 0);
}

static void assert_patch_round_trips(uint8_t serialize_type)
{
    rmq_request_template t;
    build(&t, serialize_type);
    uint8_t *copy = malloc(t.frame_len);
    assert_non_null(copy);
    const int32_t opaques[] = {RMQ_TEMPLATE_OPAQUE_BASE, 1234567890, INT32_MAX};
    for (size_t i = 0; i < sizeof(opaques) / sizeof(opaques[0]); i++) {
        memcpy(copy, t.frame, t.frame_len);
        rmq_template_patch_opaque(&t, copy, opaques[i]);
        char err[128];
        rmq_cmd *cmd = rmq_cmd_decode(copy, t.frame_len, err, sizeof(err));
        assert_non_null(cmd);
        assert_int_equal(cmd->opaque, opaques[i]);
        assert_int_equal(cmd->code, 105);
        assert_int_equal(cmd->flag, 0);
        assert_string_equal(rmq_cmd_ext_get(cmd, "topic"), "TopicTest");
        rmq_cmd_free(cmd);

        rmq_frame_peek pk;
        assert_int_equal(rmq_peek_frame(copy, t.frame_len, &pk), 0);
        assert_int_equal(pk.opaque, opaques[i]);
        assert_int_equal(pk.code, 105);
        assert_int_equal(pk.serialize_type, serialize_type);
    }
    free(copy);
    rmq_template_free(&t);
}

static void test_patched_json_template_decodes_with_patched_opaque(void **state)
{
    (void)state;
    assert_patch_round_trips(RMQ_SERIALIZE_JSON);
}

static void test_patched_binary_template_decodes_with_patched_opaque(void **state)
{
    (void)state;
    assert_patch_round_trips(RMQ_SERIALIZE_ROCKETMQ);
}

static uint8_t *load_vector(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", RMQ_BENCH_VECTORS_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[65536];
    *len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    return buf;
}

static void assert_peek(const char *vector, int32_t code, int32_t opaque, uint8_t type)
{
    size_t len;
    uint8_t *frame = load_vector(vector, &len);
    size_t total = 0;
    assert_int_equal(rmq_peek_frame_size(frame, len, RMQ_DEFAULT_MAX_FRAME_BYTES, &total), 1);
    assert_int_equal(total, len);
    /* One byte short is "need more", never a frame. */
    assert_int_equal(rmq_peek_frame_size(frame, len - 1, RMQ_DEFAULT_MAX_FRAME_BYTES, &total), 0);
    rmq_frame_peek pk;
    assert_int_equal(rmq_peek_frame(frame, total, &pk), 0);
    assert_int_equal(pk.code, code);
    assert_int_equal(pk.opaque, opaque);
    assert_int_equal(pk.flag, RMQ_FLAG_RESPONSE);
    assert_int_equal(pk.serialize_type, type);
}

static void test_peek_reads_recorded_java_responses(void **state)
{
    (void)state;
    assert_peek("105-get-routeinfo.resp.bin", 0, 0, RMQ_SERIALIZE_JSON);
    assert_peek("105-get-routeinfo.rocketmq.resp.bin", 0, 1, RMQ_SERIALIZE_ROCKETMQ);
    assert_peek("105-get-routeinfo.topic-not-exist.resp.bin", 17, 0, RMQ_SERIALIZE_JSON);
}

static void test_frame_size_rejects_impossible_prefixes(void **state)
{
    (void)state;
    size_t total;
    const uint8_t short_len[8] = {0, 0, 0, 3, 0, 0, 0, 0};
    assert_int_equal(rmq_peek_frame_size(short_len, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total), -1);
    const uint8_t header_too_long[8] = {0, 0, 0, 10, 0, 0, 0, 7};
    assert_int_equal(rmq_peek_frame_size(header_too_long, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total),
                     -1);
    const uint8_t over_limit[8] = {0x00, 0xFF, 0xFF, 0xFD, 0, 0, 0, 0};
    assert_int_equal(rmq_peek_frame_size(over_limit, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total), -1);
    const uint8_t at_limit[8] = {0x00, 0xFF, 0xFF, 0xFC, 0, 0, 0, 0};
    assert_int_equal(rmq_peek_frame_size(at_limit, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patched_json_template_decodes_with_patched_opaque),
        cmocka_unit_test(test_patched_binary_template_decodes_with_patched_opaque),
        cmocka_unit_test(test_peek_reads_recorded_java_responses),
        cmocka_unit_test(test_frame_size_rejects_impossible_prefixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
