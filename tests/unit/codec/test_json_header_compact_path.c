/* test_json_header_compact_path.c — the compact JSON header path takes the
 * layouts real clients send, and never decides differently from the general
 * scanner: every mutation of real headers decodes to the same fields or fails
 * with the same reason whichever way it goes. */
#include "codec_test_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_internal.h"

#define JAVA_HEADER                                                                                \
    "{\"code\":105,\"extFields\":{\"topic\":\"ProofTopic\"},\"flag\":0,\"language\":\"JAVA\","     \
    "\"opaque\":0,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":409}"
#define ALI_ONS_HEADER                                                                             \
    "{\"code\":105,\"language\":\"JAVA\",\"opaque\":3,\"flag\":0,\"version\":121,"                 \
    "\"extFields\":{\"topic\":\"T\",\"queueId\":0,\"flag\":true,\"off\":-12,\"n\":null,"           \
    "\"f\":false}}"
/* a SEND_MESSAGE_V2 as fastjson writes it: the properties escape \001, \002 */
#define JAVA_SEND_HEADER                                                                           \
    "{\"code\":310,\"extFields\":{\"a\":\"G\",\"b\":\"T\",\"e\":\"-1\",\"i\":"                     \
    "\"WAIT\\u0001true\\u0002TAGS\\u0001A\\\"\\\\/\\n\\t\\u007F\\u001b\"},\"flag\":0,"             \
    "\"language\":\"JAVA\",\"opaque\":9,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":409}"
#define CPP_HEADER                                                                                 \
    "{\"code\":34,\"extFields\":{\"AccessKey\":\"\",\"OnsChannel\":\"ALIYUN\","                    \
    "\"Signature\":\"\"},\"flag\":0,\"language\":\"CPP\",\"opaque\":0,\"remark\":\"\","            \
    "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":333}\n"

static rmq_cmd *fresh(size_t len)
{
    rmq_cmd *c = rmq_cmd_alloc_with_arena(len + len / 3 + 64 + 64 * sizeof(rmq_ext_field));
    assert_non_null(c);
    c->serialize_type = RMQ_SERIALIZE_JSON;
    return c;
}

static int decode_compact(const char *hdr, rmq_cmd **out)
{
    size_t len = strlen(hdr);
    *out = fresh(len);
    return rmq_header_json_decode_compact(*out, (const uint8_t *)hdr, len);
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* everything a decoder sets, ext order and capacity included */
static bool same_decode(const rmq_cmd *a, const rmq_cmd *b)
{
    if (a->code != b->code || a->language != b->language || a->version != b->version ||
        a->opaque != b->opaque || a->flag != b->flag || !same_str(a->remark, b->remark) ||
        a->has_ext != b->has_ext || a->ext_count != b->ext_count || a->ext_cap != b->ext_cap)
        return false;
    for (uint32_t i = 0; i < a->ext_count; i++)
        if (!same_str(a->ext[i].key, b->ext[i].key) || !same_str(a->ext[i].value, b->ext[i].value))
            return false;
    return true;
}

static void test_compact_path_takes_the_java_fastjson_layout(void **state)
{
    (void)state;
    rmq_cmd *c;
    assert_int_equal(decode_compact(JAVA_HEADER, &c), 0);
    assert_int_equal(c->code, 105);
    assert_int_equal(c->version, 409);
    assert_int_equal(c->language, RMQ_LANG_JAVA);
    assert_null(c->remark);
    assert_true(c->has_ext);
    assert_int_equal(c->ext_count, 1);
    assert_string_equal(rmq_cmd_ext_get(c, "topic"), "ProofTopic");
    rmq_cmd_free(c);
}

static void test_compact_path_takes_ali_ons_typed_ext_values_as_text(void **state)
{
    (void)state;
    rmq_cmd *c;
    assert_int_equal(decode_compact(ALI_ONS_HEADER, &c), 0);
    assert_int_equal(c->opaque, 3);
    assert_int_equal(c->version, 121);
    assert_string_equal(rmq_cmd_ext_get(c, "queueId"), "0");
    assert_string_equal(rmq_cmd_ext_get(c, "flag"), "true");
    assert_string_equal(rmq_cmd_ext_get(c, "off"), "-12");
    assert_string_equal(rmq_cmd_ext_get(c, "f"), "false");
    assert_int_equal(c->ext_count, 6);
    assert_null(rmq_cmd_ext_get(c, "n"));
    rmq_cmd_free(c);
}

static void test_compact_path_takes_the_escapes_of_send_properties(void **state)
{
    (void)state;
    rmq_cmd *c;
    assert_int_equal(decode_compact(JAVA_SEND_HEADER, &c), 0);
    assert_int_equal(c->code, 310);
    assert_string_equal(rmq_cmd_ext_get(c, "i"), "WAIT\001true\002TAGS\001A\"\\/\n\t\177\033");
    assert_string_equal(rmq_cmd_ext_get(c, "e"), "-1");
    rmq_cmd_free(c);
}

static void test_compact_path_takes_the_cpp_layout_with_its_trailing_newline(void **state)
{
    (void)state;
    rmq_cmd *c;
    assert_int_equal(decode_compact(CPP_HEADER, &c), 0);
    assert_int_equal(c->language, 1); /* CPP */
    assert_string_equal(c->remark, "");
    assert_string_equal(rmq_cmd_ext_get(c, "OnsChannel"), "ALIYUN");
    rmq_cmd_free(c);
}

static void test_compact_path_declines_surprises_and_leaves_the_command_as_it_was(void **state)
{
    (void)state;
    static const char *const surprises[] = {
        "{}",
        " {\"code\":1}",
        "{\"code\": 1}",
        "{\"code\":1,\"code\":2}",
        "{\"code\":1,\"extFields\":{\"a\":\"1\"},\"extFields\":{\"b\":\"2\"}}",
        "{\"code\":1,\"junk\":2}",
        "{\"code\":1,}",
        "{\"code\":1.5}",
        "{\"code\":12345678901}",
        "{\"code\":2147483648}",
        "{\"code\":\"105\"}",
        "{\"language\":5}",
        "{\"remark\":null}",
        "{\"remark\":\"a\\vb\"}",
        "{\"remark\":\"a\\u00e9\"}",
        "{\"remark\":\"a\\u0000\"}",
        "{\"remark\":\"a\\'\"}",
        "{\"extFields\":{\"k\":\"v\",}}",
        "{\"extFields\":{\"k\":1.5}}",
        "{\"extFields\":{\"k\":[1]}}",
        "{\"extFields\":{\"k\":\"v\\ud83d\\ude00\"}}",
        "{\"extFields\":{\"k\":\"v\\u00\"}}",
        "{\"extFields\":{\"k\":\"v\\x\"}}",
        "{\"extFields\":null}",
        "{\"extFields\":{\"a\":\"1\",\"b\":\"2\"},\"version\":1} x",
        "{'code':1}",
    };
    for (size_t i = 0; i < sizeof surprises / sizeof surprises[0]; i++) {
        rmq_cmd *c, *untouched = fresh(strlen(surprises[i]));
        if (decode_compact(surprises[i], &c) != 1)
            fail_msg("compact path took %s", surprises[i]);
        if (!same_decode(c, untouched) || c->ext != untouched->ext)
            fail_msg("declining %s changed the command", surprises[i]);
        rmq_cmd_free(untouched);
        rmq_cmd_free(c);
    }
}

/* Decodes hdr through the host's entry point (compact first) and through the
 * general scanner alone, on fresh commands; returns whether the compact path
 * took it. */
static bool assert_both_ways_agree(const uint8_t *hdr, size_t len)
{
    rmq_cmd *a = fresh(len), *b = fresh(len), *k = fresh(len);
    char ea[200] = "", eb[200] = "";
    int ra = rmq_header_json_decode(a, hdr, len, ea, sizeof ea);
    int rb = rmq_header_json_decode_general(b, hdr, len, eb, sizeof eb);
    bool took = rmq_header_json_decode_compact(k, hdr, len) == 0;
    if (ra != rb || strcmp(ea, eb) != 0 || (ra == 0 && !same_decode(a, b)) ||
        (took && (rb != 0 || !same_decode(k, b))))
        fail_msg("decoders disagree on %.*s: '%s' vs '%s'", (int)len, (const char *)hdr, ea, eb);
    rmq_cmd_free(a);
    rmq_cmd_free(b);
    rmq_cmd_free(k);
    return took;
}

static void test_compact_and_general_agree_on_every_mutation_of_real_headers(void **state)
{
    (void)state;
    static const char *const headers[] = {JAVA_HEADER, ALI_ONS_HEADER, CPP_HEADER,
                                          JAVA_SEND_HEADER};
    static const char subs[] = " \n\"'\\,:{}[]0-9.entfx\001";
    size_t taken = 0;
    for (size_t h = 0; h < sizeof headers / sizeof headers[0]; h++) {
        const uint8_t *src = (const uint8_t *)headers[h];
        size_t len = strlen(headers[h]);
        uint8_t *m = malloc(len + 1);
        assert_non_null(m);
        assert_true(assert_both_ways_agree(src, len));
        for (size_t i = 0; i < len; i++) {
            taken += assert_both_ways_agree(src, i); /* truncated */
            memcpy(m, src, i);
            memcpy(m + i, src + i + 1, len - i - 1);
            taken += assert_both_ways_agree(m, len - 1); /* one byte dropped */
            for (size_t k = 0; k < sizeof subs - 1; k++) {
                memcpy(m, src, len);
                m[i] = (uint8_t)subs[k];
                taken += assert_both_ways_agree(m, len); /* one byte replaced */
                memcpy(m, src, i);
                m[i] = (uint8_t)subs[k];
                memcpy(m + i + 1, src + i, len - i);
                taken += assert_both_ways_agree(m, len + 1); /* one byte inserted */
            }
        }
        free(m);
    }
    /* the comparison means something only if the compact path ran often */
    assert_true(taken > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_path_takes_the_java_fastjson_layout),
        cmocka_unit_test(test_compact_path_takes_ali_ons_typed_ext_values_as_text),
        cmocka_unit_test(test_compact_path_takes_the_escapes_of_send_properties),
        cmocka_unit_test(test_compact_path_takes_the_cpp_layout_with_its_trailing_newline),
        cmocka_unit_test(test_compact_path_declines_surprises_and_leaves_the_command_as_it_was),
        cmocka_unit_test(test_compact_and_general_agree_on_every_mutation_of_real_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
