/* test_register_body_parser.c — the single-pass REGISTER_BROKER body parser:
 * Java's JSON, fastjson leniencies, the compressed form and the CRC32 rule
 * (protocol.md §2.10, §4.2, §4.4.4, §4.6). */
#include <zlib.h>

#include "namesrv_test_util.h"

static const rb_topic *topic_named(const register_body *rb, const char *name)
{
    for (size_t i = 0; i < rb->ntopics; i++)
        if (rb->topics[i].name && strcmp(rb->topics[i].name, name) == 0)
            return &rb->topics[i];
    return NULL;
}

static void test_parses_the_recorded_java_body(void **state)
{
    (void)state;
    /* the body of vectors/103-register-broker.req.bin (4.9.8 broker) */
    const char *json =
        "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":0,"
        "\"timestamp\":1795946114373},\"topicConfigTable\":{\"JavaCluster\":{\"order\":false,"
        "\"perm\":7,\"readQueueNums\":16,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":"
        "\"JavaCluster\",\"topicSysFlag\":0,\"writeQueueNums\":16},\"TBW102\":{\"order\":false,"
        "\"perm\":7,\"readQueueNums\":8,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":"
        "\"TBW102\","
        "\"topicSysFlag\":0,\"writeQueueNums\":8}}}}";
    register_body rb;
    parse_body(&rb, json);
    assert_int_equal(rb.dv.counter, 0);
    assert_int_equal(rb.dv.timestamp, 1795946114373LL);
    assert_int_equal(rb.ntopics, 2);
    assert_true(rb.has_filter_list);
    assert_int_equal(rb.nfilters, 0);
    const rb_topic *t = topic_named(&rb, "TBW102");
    assert_non_null(t);
    assert_int_equal(t->perm, 7);
    assert_int_equal(t->read_queue_nums, 8);
    assert_int_equal(t->write_queue_nums, 8);
    register_body_free(&rb);
}

static void test_accepts_bare_keys_single_quotes_any_order_and_unknown_keys(void **state)
{
    (void)state;
    const char *json =
        "{ topicConfigSerializeWrapper : { 'topicConfigTable' : { T1 : { writeQueueNums:3,"
        " attributes:{\"a\":[1,{\"x\":null}]}, perm:\"6\", readQueueNums:'2', topicName:'T1',"
        " order:true, topicSysFlag:2 } }, mappingDataVersion:{counter:9}, dataVersion : {"
        " timestamp : 77 , stateVersion: 3, counter : \"5\" } }, filterServerList : [ '1.2.3.4:9' "
        "],"
        " extra : [ true, false, null, 1.5e3 ] }";
    register_body rb;
    parse_body(&rb, json);
    assert_int_equal(rb.dv.counter, 5);
    assert_int_equal(rb.dv.timestamp, 77);
    assert_true(rb.dv.has_state_version);
    assert_int_equal(rb.ntopics, 1);
    const rb_topic *t = topic_named(&rb, "T1");
    assert_non_null(t);
    assert_int_equal(t->perm, 6);
    assert_int_equal(t->read_queue_nums, 2);
    assert_int_equal(t->write_queue_nums, 3);
    assert_int_equal(t->topic_sys_flag, 2);
    assert_true(t->order);
    assert_int_equal(rb.nfilters, 1);
    assert_string_equal(rb.filter_servers[0], "1.2.3.4:9");
    register_body_free(&rb);
}

static void test_unescapes_names_and_defaults_missing_fields(void **state)
{
    (void)state;
    const char *json = "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{"
                       "\"a\\\"b\\u00fc\\/\":{\"topicName\":\"a\\\"b\\u00fc\\/\"},"
                       "\"K\":{}}}}";
    register_body rb;
    parse_body(&rb, json);
    assert_int_equal(rb.ntopics, 2);
    const rb_topic *t = topic_named(&rb, "a\"b\xc3\xbc/");
    assert_non_null(t);
    assert_int_equal(t->read_queue_nums, 16);
    assert_int_equal(t->write_queue_nums, 16);
    assert_int_equal(t->perm, 6);
    assert_non_null(topic_named(&rb, "K")); /* no topicName: the map key names it */
    assert_false(rb.has_filter_list);
    register_body_free(&rb);
}

static void test_wrapper_only_body_for_versions_below_37(void **state)
{
    (void)state;
    const char *wrapper = "{\"dataVersion\":{\"counter\":2,\"timestamp\":3},\"topicConfigTable\":"
                          "{\"T\":{\"topicName\":\"T\",\"perm\":6}}}";
    register_body rb;
    char err[128];
    register_body_init(&rb);
    assert_int_equal(
        register_body_parse_json(wrapper, strlen(wrapper), true, &rb, err, sizeof(err)), 0);
    assert_int_equal(rb.ntopics, 1);
    assert_int_equal(rb.dv.counter, 2);
    register_body_free(&rb);
    /* a RegisterBrokerBody read as a wrapper registers nothing (§4.13 item 11) */
    char *full = make_body_json(1, 1, "T");
    register_body_init(&rb);
    assert_int_equal(register_body_parse_json(full, strlen(full), true, &rb, err, sizeof(err)), 0);
    assert_int_equal(rb.ntopics, 0);
    register_body_free(&rb);
    free(full);
}

static void test_rejects_malformed_json(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "junk",
                         "{\"topicConfigSerializeWrapper\":{",
                         "{\"a\":\"unterminated}",
                         "{\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":\"x1\"}}}",
                         "[1,2]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        register_body rb;
        char err[128];
        register_body_init(&rb);
        assert_int_equal(
            register_body_parse_json(bad[i], strlen(bad[i]), false, &rb, err, sizeof(err)), -1);
        register_body_free(&rb);
    }
}

/* The compressed body with dataVersion {3, 44} the tests decode. */
static uint8_t *compressed_body(const char *const *lines, size_t nlines, size_t *out_len)
{
    uint8_t *z = rmq_tb_compressed_register_body(3, 44, lines, nlines, out_len);
    assert_non_null(z);
    return z;
}

static void test_compressed_body_decodes_and_loses_sys_flag(void **state)
{
    (void)state;
    const char *lines[] = {"TopicTest 4 4 6 SINGLE_TAG", "Other 8 2 7 MULTI_TAG"};
    size_t len;
    uint8_t *z = compressed_body(lines, 2, &len);
    assert_true(register_body_looks_compressed(z, len));
    register_body rb;
    register_body_init(&rb);
    char err[128];
    assert_int_equal(register_body_decode_compressed(z, len, 409, &rb, err, sizeof(err)), 0);
    assert_int_equal(rb.dv.counter, 3);
    assert_int_equal(rb.dv.timestamp, 44);
    assert_int_equal(rb.ntopics, 2);
    const rb_topic *t = topic_named(&rb, "Other");
    assert_int_equal(t->read_queue_nums, 8);
    assert_int_equal(t->write_queue_nums, 2);
    assert_int_equal(t->perm, 7);
    assert_int_equal(t->topic_sys_flag, 0);
    assert_true(rb.has_filter_list);
    register_body_free(&rb);
    free(z);
}

static void test_compressed_zip_bomb_is_refused_without_inflating_it_all(void **state)
{
    (void)state;
    /* 96 MiB of zeros deflate to about 95 KiB; the parser stops at 64 MiB. */
    size_t raw_len = (size_t)96 << 20;
    uint8_t *raw = calloc(1, raw_len);
    assert_non_null(raw);
    uLongf zlen = compressBound(raw_len);
    uint8_t *z = malloc(zlen);
    assert_non_null(z);
    assert_int_equal(compress2(z, &zlen, raw, raw_len, 1), Z_OK);
    free(raw);
    register_body rb;
    register_body_init(&rb);
    char err[128];
    assert_int_equal(register_body_decode_compressed(z, zlen, 409, &rb, err, sizeof(err)), -1);
    register_body_free(&rb);
    free(z);
}

static void test_compressed_accepts_5x_attribute_token_and_rejects_short_lines(void **state)
{
    (void)state;
    const char *ok[] = {"T5 1 1 6 SINGLE_TAG {}"};
    size_t len;
    uint8_t *z = compressed_body(ok, 1, &len);
    register_body rb;
    char err[128];
    register_body_init(&rb);
    assert_int_equal(register_body_decode_compressed(z, len, 479, &rb, err, sizeof(err)), 0);
    assert_int_equal(rb.ntopics, 1);
    register_body_free(&rb);
    free(z);
    const char *bad[] = {"T5 1 1 6"};
    z = compressed_body(bad, 1, &len);
    register_body_init(&rb);
    assert_int_equal(register_body_decode_compressed(z, len, 409, &rb, err, sizeof(err)), -1);
    register_body_free(&rb);
    free(z);
    /* JSON sent with compressed=true is not a zlib stream */
    const char *json = "{\"filterServerList\":[]}";
    register_body_init(&rb);
    assert_int_equal(register_body_decode_compressed((const uint8_t *)json, strlen(json), 409, &rb,
                                                     err, sizeof(err)),
                     -1);
    assert_false(register_body_looks_compressed((const uint8_t *)json, strlen(json)));
    register_body_free(&rb);
}

static void test_body_crc32_is_masked_like_java(void **state)
{
    (void)state;
    assert_int_equal(body_crc32_masked("123456789", 9), 1274296614);
}

static void test_parses_ten_thousand_topics(void **state)
{
    (void)state;
    size_t cap = 10000 * 160 + 256;
    char *spec = malloc(cap);
    size_t n = 0;
    for (int i = 0; i < 10000; i++)
        n += (size_t)snprintf(spec + n, cap - n, "%sTopic_%05d", i ? "," : "", i);
    char *json = make_body_json(1, 2, spec);
    register_body rb;
    parse_body(&rb, json);
    assert_int_equal(rb.ntopics, 10000);
    assert_non_null(topic_named(&rb, "Topic_09999"));
    register_body_free(&rb);
    free(json);
    free(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parses_the_recorded_java_body),
        cmocka_unit_test(test_compressed_zip_bomb_is_refused_without_inflating_it_all),
        cmocka_unit_test(test_accepts_bare_keys_single_quotes_any_order_and_unknown_keys),
        cmocka_unit_test(test_unescapes_names_and_defaults_missing_fields),
        cmocka_unit_test(test_wrapper_only_body_for_versions_below_37),
        cmocka_unit_test(test_rejects_malformed_json),
        cmocka_unit_test(test_compressed_body_decodes_and_loses_sys_flag),
        cmocka_unit_test(test_compressed_accepts_5x_attribute_token_and_rejects_short_lines),
        cmocka_unit_test(test_body_crc32_is_masked_like_java),
        cmocka_unit_test(test_parses_ten_thousand_topics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
