/* REGISTER_BROKER body a broker sends (protocol.md §4.2, §4.6, §5.16), the
 * topics.json text, and the order-topic result handling (§4.9). The bodies
 * and texts are streamed from the table's structs; the reference here is
 * what the jansson encoding they replaced wrote for the same table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "json_writer.h"
#include "register_body.h"
#include "topic_table.h"

/* ---- the jansson reference (the encoder before streaming) ---------------- */

static json_t *ref_topics(const bcm_topic_table *t, int broker_perm)
{
    json_t *topics = bcm_topic_table_json(t);
    if (!(broker_perm >= 6 && (broker_perm & 6) == 6)) {
        const char *k;
        json_t *v;
        json_object_foreach(topics, k, v) json_object_set_new(v, "perm", json_integer(broker_perm));
    }
    return topics;
}

static char *ref_json_body(const bcm_topic_table *t, const json_t *filters, int broker_perm)
{
    json_t *root =
        json_pack("{so s{so so}}", "filterServerList",
                  filters ? json_incref((json_t *)filters) : json_array(),
                  "topicConfigSerializeWrapper", "dataVersion", bcm_data_version_json(&t->dv),
                  "topicConfigTable", ref_topics(t, broker_perm));
    char *s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(root);
    return s;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The uncompressed bytes of the zlib form (the order of the lines is the
 * sorted one: the streamed encoder's). */
static void ref_compressed_raw(const bcm_topic_table *t, const json_t *filters, int broker_perm,
                               bcm_buf *raw)
{
    json_t *topics = ref_topics(t, broker_perm);
    json_t *dvj = bcm_data_version_json(&t->dv);
    char *dvs = json_dumps(dvj, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(dvj);
    bcm_buf_be32(raw, (uint32_t)strlen(dvs));
    bcm_buf_str(raw, dvs);
    free(dvs);
    size_t n = json_object_size(topics), k = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    const char *key;
    json_t *v;
    json_object_foreach(topics, key, v) keys[k++] = key;
    qsort(keys, n, sizeof *keys, by_key);
    bcm_buf_be32(raw, (uint32_t)n);
    for (k = 0; k < n; k++) {
        v = json_object_get(topics, keys[k]);
        char line[1024];
        snprintf(line, sizeof line, "%s %lld %lld %lld %s", keys[k],
                 (long long)json_integer_value(json_object_get(v, "readQueueNums")),
                 (long long)json_integer_value(json_object_get(v, "writeQueueNums")),
                 (long long)json_integer_value(json_object_get(v, "perm")),
                 json_string_value(json_object_get(v, "topicFilterType")));
        bcm_buf_be32(raw, (uint32_t)strlen(line));
        bcm_buf_str(raw, line);
    }
    char *fs = filters ? json_dumps(filters, JSON_COMPACT) : strdup("[]");
    bcm_buf_be32(raw, (uint32_t)strlen(fs));
    bcm_buf_str(raw, fs);
    free(fs);
    free(keys);
    json_decref(topics);
}

static char *ref_topics_json(const bcm_topic_table *t)
{
    json_t *o = bcm_topic_table_json(t);
    char *s = bcm_versioned_table_encode(&t->dv, "topicConfigTable", o);
    json_decref(o);
    return s;
}

/* ---- helpers -------------------------------------------------------------- */

static int encode(const bcm_topic_table *t, const json_t *filters, int perm, bool compressed,
                  size_t chunk, bcm_body **bodies)
{
    bcm_topic_snapshot s;
    assert_int_equal(bcm_topic_table_snapshot(t, &s), 0);
    int n = bcm_register_bodies(&s, filters, perm, compressed, chunk, bodies);
    bcm_topic_snapshot_free(&s);
    return n;
}

static void assert_json_body_is_reference(const bcm_topic_table *t, const json_t *filters, int perm)
{
    bcm_body *b = NULL;
    assert_int_equal(encode(t, filters, perm, false, 0, &b), 1);
    char *want = ref_json_body(t, filters, perm);
    assert_non_null(want);
    assert_int_equal(b[0].len, strlen(want));
    assert_memory_equal(b[0].data, want, b[0].len);
    free(want);
    bcm_bodies_free(b, 1);
}

static void assert_compressed_body_is_reference(const bcm_topic_table *t, const json_t *filters,
                                                int perm)
{
    bcm_body *b = NULL;
    assert_int_equal(encode(t, filters, perm, true, 0, &b), 1);
    assert_int_equal(b[0].data[0], 0x78);
    assert_int_equal(b[0].data[1], 0xDA); /* level 9, as Java's BEST_COMPRESSION */
    bcm_buf want = {0};
    ref_compressed_raw(t, filters, perm, &want);
    uLongf rawlen = want.n + 1;
    unsigned char *raw = malloc(rawlen);
    assert_int_equal(uncompress(raw, &rawlen, b[0].data, b[0].len), Z_OK);
    assert_int_equal(rawlen, want.n);
    assert_memory_equal(raw, want.p, want.n);
    free(raw);
    bcm_buf_free(&want);
    bcm_bodies_free(b, 1);
}

static void add(bcm_topic_table *t, const char *name, int q, int perm, int sys, bool order,
                const char *filter)
{
    assert_int_equal(
        bcm_topic_table_put(t, bcm_topic_config_new(name, q, q + 1, perm, sys, order, filter), 1),
        0);
}

/* Names a topic table may hold (topics.json is any JSON): quotes,
 * backslashes, controls, '/', DEL, multi-byte characters. */
static const char *const ODD_NAMES[] = {"TopicTest",
                                        "a\"quote",
                                        "back\\slash",
                                        "tab\there",
                                        "nl\nand\rcr",
                                        "ctl\x01\x1f",
                                        "bs\bff\f",
                                        "sl/ash",
                                        "del\x7f",
                                        "%RETRY%grp",
                                        "caf\xc3\xa9",
                                        "\xe6\x97\xa5\xe6\x9c\xac",
                                        "emoji\xf0\x9f\x98\x80",
                                        "",
                                        "z"};

static void fill_odd(bcm_topic_table *t)
{
    for (size_t i = 0; i < sizeof ODD_NAMES / sizeof ODD_NAMES[0]; i++)
        add(t, ODD_NAMES[i], (int)i + 1, i % 3 ? 6 : 7, (int)i, i % 2 == 0,
            i % 4 == 0 ? "MULTI_TAG" : NULL);
}

static void test_crc32_is_masked_java_crc(void **state)
{
    (void)state;
    assert_int_equal(bcm_body_crc32("123456789", 9), 1274296614u);
}

static void test_json_body_has_java_shape(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1700000000061);
    add(&t, "TopicTest", 4, 6, 0, false, NULL);
    t.dv = (bcm_data_version){0, 1700000000061};
    bcm_body *b = NULL;
    assert_int_equal(encode(&t, NULL, 6, false, 0, &b), 1);
    const char *want =
        "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":0,"
        "\"timestamp\":1700000000061},\"topicConfigTable\":{\"TopicTest\":{\"order\":false,"
        "\"perm\":6,"
        "\"readQueueNums\":4,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"TopicTest\","
        "\"topicSysFlag\":0,\"writeQueueNums\":5}}}}";
    assert_int_equal(b[0].len, strlen(want));
    assert_memory_equal(b[0].data, want, b[0].len);
    bcm_bodies_free(b, 1);
    /* a read-only broker registers every topic with its permission (4.9.8) */
    assert_int_equal(encode(&t, NULL, 4, false, 0, &b), 1);
    assert_non_null(strstr((char *)b[0].data, "\"perm\":4"));
    bcm_bodies_free(b, 1);
    bcm_topic_table_free(&t);
}

static uint32_t be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void test_compressed_body_is_zlib_with_java_layout(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 5);
    add(&t, "TopicTest", 4, 6, 0, false, NULL);
    t.dv = (bcm_data_version){2, 5};
    bcm_body *b = NULL;
    assert_int_equal(encode(&t, NULL, 6, true, 0, &b), 1);
    assert_int_equal(b[0].data[0], 0x78);
    assert_int_equal(b[0].data[1], 0xDA); /* level 9, as Java's BEST_COMPRESSION */
    unsigned char raw[1024];
    uLongf rawlen = sizeof raw;
    assert_int_equal(uncompress(raw, &rawlen, b[0].data, b[0].len), Z_OK);
    size_t p = 0;
    uint32_t n = be32(raw + p);
    p += 4;
    assert_memory_equal(raw + p, "{\"counter\":2,\"timestamp\":5}", n);
    p += n;
    assert_int_equal(be32(raw + p), 1);
    p += 4;
    n = be32(raw + p);
    p += 4;
    assert_memory_equal(raw + p, "TopicTest 4 5 6 SINGLE_TAG", n);
    p += n;
    n = be32(raw + p);
    p += 4;
    assert_memory_equal(raw + p, "[]", n);
    assert_int_equal(p + n, rawlen);
    bcm_bodies_free(b, 1);
    bcm_topic_table_free(&t);
}

static void test_streamed_bodies_equal_jansson_on_odd_names(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    fill_odd(&t);
    /* a 5.x file's attributes travel as loaded */
    json_t *cfg = bcm_topic_config_new("with-attrs", 2, 2, 6, 0, false, NULL);
    json_object_set_new(cfg, "attributes", json_pack("{ss ss}", "z.key", "b", "+a.key", "q\"x"));
    assert_int_equal(bcm_topic_table_put(&t, cfg, 9), 0);
    t.dv = (bcm_data_version){-3, 1700000000999};
    json_t *filters = json_pack("[ss]", "10.0.0.1:45000", "h\\\"/x");
    const int perms[] = {6, 7, 4, 2, 0};
    for (size_t i = 0; i < sizeof perms / sizeof perms[0]; i++) {
        assert_json_body_is_reference(&t, NULL, perms[i]);
        assert_json_body_is_reference(&t, filters, perms[i]);
        assert_compressed_body_is_reference(&t, filters, perms[i]);
    }
    char *want = ref_topics_json(&t), *got = bcm_topic_table_encode(&t);
    assert_non_null(want);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(want);
    free(got);
    json_decref(filters);
    bcm_topic_table_free(&t);
}

static void test_streamed_bodies_equal_jansson_on_a_big_table(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    char name[64];
    srand(21);
    for (int i = 0; i < 20000; i++) {
        snprintf(name, sizeof name, "T%d-%x", rand() % 100000, (unsigned)rand());
        add(&t, name, 1 + rand() % 1024, rand() % 8, rand() % 4, rand() % 2, NULL);
    }
    assert_json_body_is_reference(&t, NULL, 6);
    assert_compressed_body_is_reference(&t, NULL, 6);
    char *want = ref_topics_json(&t), *got = bcm_topic_table_encode(&t);
    assert_string_equal(got, want);
    free(want);
    free(got);
    bcm_topic_table_free(&t);
}

static void test_snapshot_of_names_sorts_and_drops_duplicates(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    add(&t, "good", 4, 6, 0, false, NULL);
    add(&t, "another", 4, 6, 0, false, NULL);
    bcm_topic_snapshot s;
    const char *names[] = {"good", "absent", "another", "good"};
    assert_int_equal(bcm_topic_table_snapshot_of(&t, names, 4, &s), 0);
    bcm_topic_snapshot_sort(&s);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.v[0].name, "another");
    assert_string_equal(s.v[1].name, "good");
    bcm_topic_snapshot_free(&s);
    bcm_topic_table_free(&t);
}

/* The writer emits names verbatim: only what jansson accepted may reach it
 * (snapshots leave other names out). */
static void test_utf8_check_matches_jansson(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "plain",    "caf\xc3\xa9",         "\xf0\x9f\x98\x80", "\xef\xbf\xbf", "bad\xff",
        "\xc0\x80", "\xed\xa0\x80",        "\xf4\x90\x80\x80", "\xe6\x97",     "\x80",
        "\xc3",     "\xf8\x88\x80\x80\x80"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *j = json_string(cases[i]);
        assert_int_equal(bcm_utf8_valid(cases[i], strlen(cases[i])), j != NULL);
        json_decref(j);
    }
}

static void test_split_registration_sends_chunks_with_same_version(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    char name[32];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "T%d", i);
        add(&t, name, 1, 6, 0, false, NULL);
    }
    t.dv = (bcm_data_version){7, 9};
    bcm_body *bodies = NULL;
    int n = encode(&t, NULL, 6, false, 2, &bodies);
    assert_int_equal(n, 3);
    json_t *all = json_object();
    for (int i = 0; i < n; i++) {
        json_t *j = json_loadb((char *)bodies[i].data, bodies[i].len, 0, NULL);
        json_t *w = json_object_get(j, "topicConfigSerializeWrapper");
        json_t *tab = json_object_get(w, "topicConfigTable");
        assert_true(json_object_size(tab) == 2 || (i == 2 && json_object_size(tab) == 1));
        json_object_update(all, tab);
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(w, "dataVersion"), "counter")), 7);
        json_decref(j);
    }
    json_t *want = bcm_topic_table_json(&t);
    assert_true(json_equal(all, want)); /* every topic once, as it is */
    json_decref(want);
    json_decref(all);
    bcm_bodies_free(bodies, n);
    /* the zlib form splits the same way */
    n = encode(&t, NULL, 6, true, 2, &bodies);
    assert_int_equal(n, 3);
    bcm_bodies_free(bodies, n);
    bcm_topic_table_free(&t);
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
        cmocka_unit_test(test_streamed_bodies_equal_jansson_on_odd_names),
        cmocka_unit_test(test_streamed_bodies_equal_jansson_on_a_big_table),
        cmocka_unit_test(test_snapshot_of_names_sorts_and_drops_duplicates),
        cmocka_unit_test(test_utf8_check_matches_jansson),
        cmocka_unit_test(test_split_registration_sends_chunks_with_same_version),
        cmocka_unit_test(test_order_conf_from_nameserver_sets_and_clears_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
