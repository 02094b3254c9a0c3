/* test_topics_json_reader.c — the one-pass topics.json reader loads what the
 * jansson load it replaced loaded (same topics, fields, defaults, attributes
 * and DataVersion) and refuses what it refused: Java's pretty-printed file,
 * rmqhost's compact one, odd whitespace, escapes, unknown members, bare
 * integer keys, and thousands of byte-level mutations of them compared with
 * the jansson reference; a failed load leaves the table as it was; errors
 * name the line and column. topics.journal records likewise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fastjson_text.h"
#include "topic_table.h"
#include "topics_json_reader.h"

/* The load as it was before the reader: jansson tree, then the same field
 * rules (bcm_topic_table_put reads a TopicConfig as the load did). -1 when
 * jansson refuses the text. */
static int reference_load(bcm_topic_table *t, const char *text, size_t len)
{
    char err[256];
    json_t *root = fastjson_load_object(text, len, err, sizeof err);
    if (!root)
        return -1;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(root, "topicConfigTable"), k, v)
    {
        if (!json_is_object(v))
            continue;
        json_t *cfg = json_deep_copy(v);
        if (!json_is_string(json_object_get(cfg, "topicName")))
            json_object_set_new(cfg, "topicName", json_string(k));
        assert_int_equal(bcm_topic_table_put(t, cfg, 0), 0);
    }
    t->dv = (bcm_data_version){0, 0};
    bcm_data_version_from_json(&t->dv, json_object_get(root, "dataVersion"));
    json_decref(root);
    return 0;
}

typedef struct keys_seen {
    char **v;
    size_t n;
    bool dup;
} keys_seen;

static int note_key(void *ud, const char *key, const char *name, const bcm_topic_cfg *c)
{
    (void)name;
    (void)c;
    keys_seen *k = ud;
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->v[i], key) == 0)
            k->dup = true;
    k->v = realloc(k->v, (k->n + 1) * sizeof *k->v);
    k->v[k->n++] = strdup(key);
    return 0;
}

static void reset_keys(void *ud)
{
    keys_seen *k = ud;
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    k->n = 0;
    k->dup = false;
}

/* Loads text both ways into empty tables; true when both accepted. Fails
 * the test when one accepts and the other refuses, or the tables differ
 * (the compared text is topics.json as rmqhost writes it: every field). */
static bool same_as_reference(const char *text, size_t len)
{
    bcm_topic_table a, b;
    bcm_topic_table_init(&a, 0);
    bcm_topic_table_init(&b, 0);
    char err[256] = "";
    int ra = bcm_topic_table_load(&a, text, len, err, sizeof err);
    int rb = reference_load(&b, text, len);
    if (ra != rb) {
        fprintf(stderr, "reader %d (%s), jansson %d on: %.*s\n", ra, err, rb, (int)len, text);
        fail();
    }
    if (ra != 0) {
        assert_true(err[0] != '\0');
        assert_int_equal(bcm_topic_table_size(&a), 0);
    }
    /* duplicate keys in topicConfigTable: jansson kept the last entry only
     * (documented in topics_json_reader.h); compared when there are none */
    keys_seen k = {0};
    bcm_data_version dv = {0, 0};
    bool dup =
        ra == 0 &&
        bcm_topics_json_read(text, len, note_key, reset_keys, &k, &dv, err, sizeof err) == 0 &&
        k.dup;
    reset_keys(&k);
    free(k.v);
    if (ra == 0 && !dup) {
        char *ea = bcm_topic_table_encode(&a);
        char *eb = bcm_topic_table_encode(&b);
        if (strcmp(ea, eb) != 0) {
            fprintf(stderr, "on: %.*s\nreader: %s\njansson: %s\n", (int)len, text, ea, eb);
            fail();
        }
        free(ea);
        free(eb);
    }
    bcm_topic_table_free(&a);
    bcm_topic_table_free(&b);
    return ra == 0;
}

/* What Java 4.9.8's TopicConfigManager.encode(true) writes (fastjson's
 * pretty format: tabs, no blank after ':'). */
static const char JAVA_FILE[] = "{\n"
                                "\t\"dataVersion\":{\n"
                                "\t\t\"counter\":42,\n"
                                "\t\t\"timestamp\":1733400000123\n"
                                "\t},\n"
                                "\t\"topicConfigTable\":{\n"
                                "\t\t\"SELF_TEST_TOPIC\":{\n"
                                "\t\t\t\"order\":false,\n"
                                "\t\t\t\"perm\":6,\n"
                                "\t\t\t\"readQueueNums\":1,\n"
                                "\t\t\t\"topicFilterType\":\"SINGLE_TAG\",\n"
                                "\t\t\t\"topicName\":\"SELF_TEST_TOPIC\",\n"
                                "\t\t\t\"topicSysFlag\":0,\n"
                                "\t\t\t\"writeQueueNums\":1\n"
                                "\t\t},\n"
                                "\t\t\"Orders\":{\n"
                                "\t\t\t\"order\":true,\n"
                                "\t\t\t\"perm\":2,\n"
                                "\t\t\t\"readQueueNums\":8,\n"
                                "\t\t\t\"topicFilterType\":\"MULTI_TAG\",\n"
                                "\t\t\t\"topicName\":\"Orders\",\n"
                                "\t\t\t\"topicSysFlag\":1,\n"
                                "\t\t\t\"writeQueueNums\":4\n"
                                "\t\t}\n"
                                "\t}\n"
                                "}";

static const char ODD_FILE[] =
    " \r\n{\"topicConfigTable\" : { \"caf\\u00e9\" : {\"topicName\":\"caf\\u00e9\","
    "\"readQueueNums\":-3,\"writeQueueNums\":2147483648,\"perm\":1.5,\"order\":null,"
    "\"topicFilterType\":7,\"extra\":[1,{\"a\":[true,false,null,\"x\\\"y\"]},-0.5e-3],"
    "\"attributes\":{\"+message.type\":\"FIFO\"}},"
    "\"\\ud83d\\ude00\\/\\t\":{\"topicName\":\"\xf0\x9f\x98\x80/\\t\"},"
    "\"NoName\":{\"perm\":7,\"topicName\":5},\"notAConfig\":[1,2],\"alsoNot\":\"x\","
    "\"Empty\":{}},\"unknown\":{\"deep\":{\"deeper\":[[[]]]}},"
    "\"dataVersion\":{\"timestamp\":-1,\"counter\":1e2}}\t\n";

static void test_java_and_rmqhost_files(void **state)
{
    (void)state;
    assert_true(same_as_reference(JAVA_FILE, strlen(JAVA_FILE)));
    bcm_topic_table t;
    bcm_topic_table_init(&t, 0);
    char err[256];
    assert_int_equal(bcm_topic_table_load(&t, JAVA_FILE, strlen(JAVA_FILE), err, sizeof err), 0);
    assert_int_equal(t.dv.counter, 42);
    assert_int_equal(t.dv.timestamp, 1733400000123LL);
    bcm_topic_fields f;
    assert_true(bcm_topic_table_get(&t, "Orders", &f));
    assert_int_equal(f.read_queue_nums, 8);
    assert_int_equal(f.write_queue_nums, 4);
    assert_int_equal(f.perm, 2);
    assert_int_equal(f.topic_sys_flag, 1);
    assert_int_equal(f.topic_filter_type, 1);
    assert_true(f.order);
    /* rmqhost's own compact text reads back to the same table */
    char *text = bcm_topic_table_encode(&t);
    assert_true(same_as_reference(text, strlen(text)));
    bcm_topic_table u;
    bcm_topic_table_init(&u, 0);
    assert_int_equal(bcm_topic_table_load(&u, text, strlen(text), err, sizeof err), 0);
    char *again = bcm_topic_table_encode(&u);
    assert_string_equal(text, again);
    free(text);
    free(again);
    bcm_topic_table_free(&u);
    bcm_topic_table_free(&t);
}

static void test_odd_but_valid(void **state)
{
    (void)state;
    assert_true(same_as_reference(ODD_FILE, strlen(ODD_FILE)));
    bcm_topic_table t;
    bcm_topic_table_init(&t, 0);
    char err[256];
    assert_int_equal(bcm_topic_table_load(&t, ODD_FILE, strlen(ODD_FILE), err, sizeof err), 0);
    bcm_topic_fields f;
    assert_true(bcm_topic_table_get(&t, "caf\xc3\xa9", &f));
    assert_int_equal(f.read_queue_nums, -3);
    assert_int_equal(f.write_queue_nums, INT32_MIN); /* 2^31 cut to 32 bits, as before */
    assert_int_equal(f.perm, 0);                     /* a real: json_integer_value 0 */
    assert_false(f.order);
    assert_int_equal(f.topic_filter_type, 0);
    assert_true(bcm_topic_table_get(&t, "\xf0\x9f\x98\x80/\t", &f));
    assert_int_equal(f.read_queue_nums, 16); /* Java's defaults */
    assert_int_equal(f.perm, 6);
    assert_true(bcm_topic_table_get(&t, "NoName", &f)); /* topicName not a string: the key */
    assert_int_equal(f.perm, 7);
    assert_true(bcm_topic_table_get(&t, "Empty", &f));
    assert_false(bcm_topic_table_has(&t, "notAConfig"));
    assert_int_equal(bcm_topic_table_size(&t), 4);
    assert_int_equal(t.dv.timestamp, -1);
    assert_int_equal(t.dv.counter, 0); /* a real counter is not taken */
    json_t *j = bcm_topic_table_config_json(&t, "caf\xc3\xa9");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(j, "attributes"), "+message.type")),
        "FIFO");
    json_decref(j);
    bcm_topic_table_free(&t);
    /* fastjson's bare integer keys (as in its maps of numbers) */
    const char *bare = "{\"topicConfigTable\":{12:{\"perm\":4},-7 :{}},\"x\":{0:1}}";
    assert_true(same_as_reference(bare, strlen(bare)));
    /* a repeated topicConfigTable: the last one counts, as with jansson */
    const char *twice = "{\"topicConfigTable\":{\"A\":{}},\"topicConfigTable\":{\"B\":{}}}";
    assert_true(same_as_reference(twice, strlen(twice)));
    const char *twice2 = "{\"topicConfigTable\":{\"A\":{}},\"topicConfigTable\":3}";
    assert_true(same_as_reference(twice2, strlen(twice2)));
    const char *dv2 = "{\"dataVersion\":{\"counter\":5},\"dataVersion\":{\"timestamp\":6}}";
    assert_true(same_as_reference(dv2, strlen(dv2)));
}

static void expect_refused(const char *text, size_t len, const char *what)
{
    if (!memchr(text, 0, len)) /* jansson would read a C string */
        assert_false(same_as_reference(text, len));
    char err[256] = "";
    bcm_topic_table t;
    bcm_topic_table_init(&t, 0);
    assert_int_equal(bcm_topic_table_load(&t, text, len, err, sizeof err), -1);
    if (!strstr(err, what)) {
        fprintf(stderr, "error '%s' lacks '%s'\n", err, what);
        fail();
    }
    bcm_topic_table_free(&t);
}

/* a literal's bytes, NULs included */
#define REFUSED(lit, what) expect_refused(lit, sizeof lit - 1, what)

static void test_bad_input_refused_with_position(void **state)
{
    (void)state;
    REFUSED("", "line 1 column 1");
    REFUSED("[]", "'{' expected");
    REFUSED("{\"topicConfigTable\":{\"A\":{\"perm\":6}", "end of text");
    REFUSED("{\n\"topicConfigTable\":{\n  \"A\":{\"perm\":06}}}", "line 3 column 15");
    REFUSED("{\"a\":1}x", "end of text expected");
    REFUSED("{\"a\":1}\0", "end of text expected");
    REFUSED("{\"a\":\"\\u0000\"}", "\\u0000");
    REFUSED("{\"a\":\"\\ud800\"}", "invalid Unicode");
    REFUSED("{\"a\":\"\\udc00\\ud800\"}", "invalid Unicode");
    REFUSED("{\"a\":\"\xc3\x28\"}", "UTF-8");
    REFUSED("{\"a\":\"\xed\xa0\x80\"}", "UTF-8"); /* an encoded surrogate */
    REFUSED("{\"a\":\"\xc0\xaf\"}", "UTF-8");     /* overlong */
    REFUSED("{\"a\":\"x\ny\"}", "control character");
    REFUSED("{\"a\":\"\\x\"}", "invalid escape");
    REFUSED("{\"a\":9223372036854775808}", "too big integer");
    REFUSED("{\"a\":-9223372036854775809}", "too big negative integer");
    REFUSED("{\"a\":1e999}", "overflow");
    REFUSED("{\"a\":tru}", "invalid token");
    REFUSED("{\"a\":1,}", "expected");
    REFUSED("{\"a\" 1}", "':' expected");
    REFUSED("{\"a\":[1 2]}", "']' or ',' expected");
    REFUSED("{\"topicConfigTable\":{\"A\":{\"attributes\":{\"k\":\"\xff\"}}}}", "UTF-8");
    /* nesting past jansson's 2048 */
    size_t n = 5000;
    char *deep = malloc(2 * n + 16);
    size_t o = 0;
    o += (size_t)sprintf(deep, "{\"a\":");
    for (size_t i = 0; i < n; i++)
        deep[o++] = '[';
    for (size_t i = 0; i < n; i++)
        deep[o++] = ']';
    deep[o++] = '}';
    expect_refused(deep, o, "depth");
    free(deep);
}

static void test_failed_load_keeps_table(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 0);
    char err[256];
    assert_int_equal(bcm_topic_table_load(&t, JAVA_FILE, strlen(JAVA_FILE), err, sizeof err), 0);
    char *before = bcm_topic_table_encode(&t);
    /* valid up to the last topic, then cut: nothing of it is taken */
    const char *bad = "{\"dataVersion\":{\"counter\":99},\"topicConfigTable\":{\"New\":{},"
                      "\"Orders\":{\"perm\":0}, \"Broken\":{\"perm\":}}}";
    assert_int_equal(bcm_topic_table_load(&t, bad, strlen(bad), err, sizeof err), -1);
    char *after = bcm_topic_table_encode(&t);
    assert_string_equal(before, after);
    free(after);
    /* a good one over a filled table replaces by name and keeps the rest */
    const char *good = "{\"dataVersion\":{\"counter\":99},\"topicConfigTable\":{\"New\":{},"
                       "\"Orders\":{\"perm\":0}}}";
    assert_int_equal(bcm_topic_table_load(&t, good, strlen(good), err, sizeof err), 0);
    bcm_topic_fields f;
    assert_true(bcm_topic_table_get(&t, "Orders", &f));
    assert_int_equal(f.perm, 0);
    assert_int_equal(f.read_queue_nums, 16);
    assert_true(bcm_topic_table_has(&t, "New"));
    assert_true(bcm_topic_table_has(&t, "SELF_TEST_TOPIC"));
    assert_int_equal(t.dv.counter, 99);
    free(before);
    bcm_topic_table_free(&t);
}

/* Byte-level mutations (replace, insert, delete, from an alphabet of JSON's
 * structural bytes and a few others) of the files above: the reader and
 * jansson accept and refuse the same texts and load the same tables. */
static void test_mutations_match_jansson(void **state)
{
    (void)state;
    const char *seeds[] = {JAVA_FILE, ODD_FILE,
                           "{\"topicConfigTable\":{\"A\":{\"perm\":6,\"order\":true},"
                           "\"B\":{\"readQueueNums\":4}},\"dataVersion\":{\"counter\":1}}"};
    static const char alphabet[] = "{}[]:,\"\\ \n\t0123456789-+.eEtrufalsn\x80\xc3\xa9u/xbAT";
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    size_t accepted = 0, refused = 0;
    char buf[2048];
    for (int iter = 0; iter < 30000; iter++) {
        const char *s = seeds[iter % 3];
        size_t len = strlen(s);
        memcpy(buf, s, len);
        int edits = 1 + (int)(rng % 3);
        for (int e = 0; e < edits; e++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            size_t at = (size_t)(rng % (len + 1));
            char ch = alphabet[(rng >> 20) % (sizeof alphabet - 1)];
            switch ((rng >> 40) % 3) {
            case 0:
                if (at < len)
                    buf[at] = ch;
                break;
            case 1:
                if (len + 1 < sizeof buf) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = ch;
                    len++;
                }
                break;
            default:
                if (at < len) {
                    memmove(buf + at, buf + at + 1, len - at - 1);
                    len--;
                }
            }
        }
        /* jansson reads a C string: a NUL byte would end its text early */
        if (memchr(buf, 0, len))
            continue;
        if (same_as_reference(buf, len))
            accepted++;
        else
            refused++;
    }
    /* the mutations exercised both outcomes */
    assert_true(accepted > 1000);
    assert_true(refused > 1000);
}

/* The journal record as the jansson replay read and applied it. -1 when it
 * refused the record. */
static int reference_record(bcm_topic_table *t, const char *js, size_t jl)
{
    json_t *rec = json_loadb(js, jl, 0, NULL);
    json_t *dv = json_object_get(rec, "dv");
    if (!json_is_object(rec) || !json_is_array(dv) || json_array_size(dv) != 2 ||
        (!json_is_object(json_object_get(rec, "put")) &&
         !json_is_string(json_object_get(rec, "del")))) {
        json_decref(rec);
        return -1;
    }
    bcm_data_version v = {(int64_t)json_integer_value(json_array_get(dv, 0)),
                          (int64_t)json_integer_value(json_array_get(dv, 1))};
    json_t *put = json_object_get(rec, "put");
    if (put)
        bcm_topic_table_put(t, json_incref(put), 0);
    else
        bcm_topic_table_delete(t, json_string_value(json_object_get(rec, "del")), 0);
    t->dv = v;
    json_decref(rec);
    return 0;
}

/* A record read by bcm_journal_rec_read and applied as topic_journal.c does. */
static int reader_record(bcm_topic_table *t, const char *js, size_t jl)
{
    bcm_journal_rec rec;
    if (bcm_journal_rec_read(js, jl, &rec) != 0)
        return -1;
    if (rec.put) {
        if (rec.put_ok)
            bcm_topic_table_put_cfg(t, rec.name, &rec.cfg, 0);
    } else {
        bcm_topic_table_delete(t, rec.name, 0);
    }
    t->dv = rec.dv;
    bcm_journal_rec_free(&rec);
    return 0;
}

static void same_record(const char *js, size_t jl)
{
    bcm_topic_table a, b;
    bcm_topic_table_init(&a, 0);
    bcm_topic_table_init(&b, 0);
    const char *base = "{\"topicConfigTable\":{\"A\":{\"perm\":6},\"B\":{}}}";
    char err[256];
    assert_int_equal(bcm_topic_table_load(&a, base, strlen(base), err, sizeof err), 0);
    assert_int_equal(bcm_topic_table_load(&b, base, strlen(base), err, sizeof err), 0);
    int ra = reader_record(&a, js, jl), rb = reference_record(&b, js, jl);
    char *ea = bcm_topic_table_encode(&a), *eb = bcm_topic_table_encode(&b);
    if (ra != rb || strcmp(ea, eb) != 0) {
        fprintf(stderr, "record %.*s: reader %d %s, jansson %d %s\n", (int)jl, js, ra, ea, rb, eb);
        fail();
    }
    free(ea);
    free(eb);
    bcm_topic_table_free(&a);
    bcm_topic_table_free(&b);
}

static void test_journal_records_match_jansson(void **state)
{
    (void)state;
    const char *seeds[] = {
        "{\"dv\":[7,1733400000123],\"put\":{\"order\":false,\"perm\":6,\"readQueueNums\":4,"
        "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"C\",\"topicSysFlag\":0,"
        "\"writeQueueNums\":4}}",
        "{\"del\":\"A\",\"dv\":[8,1733400000124]}",
        "{\"del\":\"B\",\"dv\":[9,1],\"put\":{\"topicName\":\"A\",\"attributes\":{\"k\":\"v\"}}}",
    };
    for (size_t i = 0; i < 3; i++)
        same_record(seeds[i], strlen(seeds[i]));
    static const char alphabet[] = "{}[]:,\"\\ 0123456789-.etrufalsnABCdvpu";
    uint64_t rng = 0x2545f4914f6cdd1dull;
    char buf[512];
    for (int iter = 0; iter < 20000; iter++) {
        const char *s = seeds[iter % 3];
        size_t len = strlen(s);
        memcpy(buf, s, len);
        for (int e = 0; e < 1 + (int)(rng % 2); e++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            size_t at = (size_t)(rng % (len + 1));
            char ch = alphabet[(rng >> 20) % (sizeof alphabet - 1)];
            if ((rng >> 40) % 2 == 0 && at < len) {
                buf[at] = ch;
            } else if (len + 1 < sizeof buf) {
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = ch;
                len++;
            }
        }
        same_record(buf, len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_and_rmqhost_files),
        cmocka_unit_test(test_odd_but_valid),
        cmocka_unit_test(test_bad_input_refused_with_position),
        cmocka_unit_test(test_failed_load_keeps_table),
        cmocka_unit_test(test_mutations_match_jansson),
        cmocka_unit_test(test_journal_records_match_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
