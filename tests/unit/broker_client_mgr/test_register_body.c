/* REGISTER_BROKER body a broker sends (protocol.md §4.2, §4.6, §5.16) and
 * the order-topic result handling (§4.9). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "register_body.h"
#include "topic_table.h"

static void test_crc32_is_masked_java_crc(void **state)
{
    (void)state;
    assert_int_equal(bcm_body_crc32("123456789", 9), 1274296614u);
}

static void test_json_body_has_java_shape(void **state)
{
    (void)state;
    json_t *topics = json_object();
    json_object_set_new(topics, "TopicTest",
                        bcm_topic_config_new("TopicTest", 4, 4, 6, 0, false, NULL));
    bcm_data_version dv = {0, 1700000000061};
    bcm_body b;
    assert_int_equal(bcm_register_body_encode(topics, &dv, NULL, 6, false, &b), 0);
    const char *want =
        "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":0,"
        "\"timestamp\":1700000000061},\"topicConfigTable\":{\"TopicTest\":{\"order\":false,"
        "\"perm\":6,"
        "\"readQueueNums\":4,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"TopicTest\","
        "\"topicSysFlag\":0,\"writeQueueNums\":4}}}}";
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.data, want, b.len);
    free(b.data);
    /* a read-only broker registers every topic with its permission (4.9.8) */
    assert_int_equal(bcm_register_body_encode(topics, &dv, NULL, 4, false, &b), 0);
    assert_non_null(strstr((char *)b.data, "\"perm\":4"));
    free(b.data);
    json_decref(topics);
}

static uint32_t be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void test_compressed_body_is_zlib_with_java_layout(void **state)
{
    (void)state;
    json_t *topics = json_object();
    json_object_set_new(topics, "TopicTest",
                        bcm_topic_config_new("TopicTest", 4, 4, 6, 0, false, NULL));
    bcm_data_version dv = {2, 5};
    bcm_body b;
    assert_int_equal(bcm_register_body_encode(topics, &dv, NULL, 6, true, &b), 0);
    assert_int_equal(b.data[0], 0x78);
    assert_int_equal(b.data[1], 0xDA); /* level 9, as Java's BEST_COMPRESSION */
    unsigned char raw[1024];
    uLongf rawlen = sizeof raw;
    assert_int_equal(uncompress(raw, &rawlen, b.data, b.len), Z_OK);
    size_t p = 0;
    uint32_t n = be32(raw + p);
    p += 4;
    assert_memory_equal(raw + p, "{\"counter\":2,\"timestamp\":5}", n);
    p += n;
    assert_int_equal(be32(raw + p), 1);
    p += 4;
    n = be32(raw + p);
    p += 4;
    assert_memory_equal(raw + p, "TopicTest 4 4 6 SINGLE_TAG", n);
    p += n;
    n = be32(raw + p);
    p += 4;
    assert_memory_equal(raw + p, "[]", n);
    assert_int_equal(p + n, rawlen);
    free(b.data);
    json_decref(topics);
}

static void test_split_registration_sends_chunks_with_same_version(void **state)
{
    (void)state;
    json_t *topics = json_object();
    char name[32];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "T%d", i);
        json_object_set_new(topics, name, bcm_topic_config_new(name, 1, 1, 6, 0, false, NULL));
    }
    bcm_data_version dv = {7, 9};
    bcm_body *bodies = NULL;
    int n = bcm_register_bodies(topics, &dv, NULL, 6, false, 2, &bodies);
    assert_int_equal(n, 3);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        json_t *j = json_loadb((char *)bodies[i].data, bodies[i].len, 0, NULL);
        json_t *w = json_object_get(j, "topicConfigSerializeWrapper");
        total += json_object_size(json_object_get(w, "topicConfigTable"));
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(w, "dataVersion"), "counter")), 7);
        json_decref(j);
    }
    assert_int_equal(total, 5);
    bcm_bodies_free(bodies, n);
    json_decref(topics);
}

static void test_order_conf_from_nameserver_sets_and_clears_flags(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    bcm_topic_table_put(&t, bcm_topic_config_new("A", 4, 4, 6, 0, false, NULL), 2);
    bcm_topic_table_put(&t, bcm_topic_config_new("B", 4, 4, 6, 0, true, NULL), 3);
    int64_t before = t.dv.counter;
    json_t *kv = json_loads("{\"table\":{\"A\":\"broker-a:4\"}}", 0, NULL);
    assert_true(bcm_topic_table_apply_order_conf(&t, kv, 10));
    json_t *topics = bcm_topic_table_json(&t);
    assert_true(json_is_true(json_object_get(json_object_get(topics, "A"), "order")));
    assert_true(json_is_false(json_object_get(json_object_get(topics, "B"), "order")));
    json_decref(topics);
    assert_int_equal(t.dv.counter, before + 1);
    assert_false(bcm_topic_table_apply_order_conf(&t, kv, 11));
    json_decref(kv);
    bcm_topic_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_is_masked_java_crc),
        cmocka_unit_test(test_json_body_has_java_shape),
        cmocka_unit_test(test_compressed_body_is_zlib_with_java_layout),
        cmocka_unit_test(test_split_registration_sends_chunks_with_same_version),
        cmocka_unit_test(test_order_conf_from_nameserver_sets_and_clears_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
