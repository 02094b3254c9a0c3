/* test_topic_journal_writer.c — the streamed topics.journal record writer
 * (topic_journal.c) and the attributes writer (json_value_writer.c) against
 * the jansson code they replaced: for thousands of random topic configs
 * (names using every character Java's topic check allows, and names and
 * attributes needing every kind of JSON escape, which topics.json loaded
 * from disk can hold) the record is byte for byte the one json_dumps made
 * from the jansson tree, the one-pass reader reads it back to the config
 * that was written, jansson parses it to the same tree, and the journal
 * replays to the writer's table; the compacted topics.json is byte for
 * byte jansson's, so Java's reader sees the format it always saw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include "json_value_writer.h"
#include "topic_journal.h"
#include "topics_json_reader.h"

/* ---- the replaced code, kept here as the reference ------------------------ */

/* topic_journal.c's bcm_topic_journal_note before the streamed writer. */
static char *old_note(const bcm_topic_table *t, const char *name)
{
    json_t *cfg = bcm_topic_table_config_json(t, name);
    json_t *rec =
        json_pack("{s[II]}", "dv", (json_int_t)t->dv.counter, (json_int_t)t->dv.timestamp);
    assert_non_null(rec);
    int rc = cfg ? json_object_set_new(rec, "put", cfg)
                 : json_object_set_new(rec, "del", json_string(name));
    assert_int_equal(rc, 0);
    char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(rec);
    assert_non_null(text);
    size_t n = strlen(text);
    char *line = malloc(n + 11);
    assert_non_null(line);
    snprintf(line, n + 11, "%08lx %s\n", (unsigned long)crc32(0L, (const Bytef *)text, (uInt)n),
             text);
    free(text);
    return line;
}

/* topics.json as json_dumps wrote it from the table's jansson objects. */
static char *old_topics_json(const bcm_topic_table *t)
{
    json_t *doc =
        json_pack("{s{sIsI}so}", "dataVersion", "counter", (json_int_t)t->dv.counter, "timestamp",
                  (json_int_t)t->dv.timestamp, "topicConfigTable", bcm_topic_table_json(t));
    assert_non_null(doc);
    char *s = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    assert_non_null(s);
    return s;
}

/* ---- random configs -------------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13; /* xorshift64: reproducible per seed */
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* Java's TopicValidator: ^[%|a-zA-Z0-9_-]+$ */
static const char allowed[] = "%|abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
/* what needs escaping or is multi-byte: quote, backslash, every control
 * byte, slash (not escaped by jansson), DEL, 2-, 3- and 4-byte UTF-8 */
static const char *const odd[] = {
    "\"", "\\", "/", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x80\xa8"};

/* A random name (at most 127 bytes, Java's limit); `odd_chars` mixes in
 * characters that need escapes. `k` walks `allowed` so every allowed
 * character appears. */
static void random_name(char *out, bool odd_chars, unsigned k)
{
    size_t len = 1 + rnd() % 40, n = 0;
    out[n++] = allowed[k % (sizeof allowed - 1)];
    while (n < len) {
        unsigned pick = rnd() % 10;
        if (odd_chars && pick == 0) {
            out[n++] = (char)(1 + rnd() % 31); /* every control byte but NUL */
        } else if (odd_chars && pick == 1) {
            const char *s = odd[rnd() % (sizeof odd / sizeof *odd)];
            memcpy(out + n, s, strlen(s));
            n += strlen(s);
        } else {
            out[n++] = allowed[rnd() % (sizeof allowed - 1)];
        }
    }
    out[n] = '\0';
}

static int32_t random_int(void)
{
    switch (rnd() % 5) {
    case 0: return (int32_t)rnd(); /* anything, negatives too */
    case 1: return (int32_t)(rnd() % 8);
    case 2: return INT32_MIN + (int32_t)(rnd() % 2);
    case 3: return INT32_MAX;
    default: return (int32_t)(rnd() % 1025);
    }
}

static const char *const message_types[] = {"NORMAL",      "FIFO",  "DELAY",
                                            "TRANSACTION", "MIXED", "UNSPECIFIED"};

/* 5.x attributes: message.type and the others as UPDATE_AND_CREATE_TOPIC
 * sets them, and (as a 5.x file may hold anything) other keys and values,
 * keys that prefix one another, nested values and escapes. */
static json_t *random_attributes(bool odd_chars)
{
    unsigned pick = rnd() % 4;
    if (pick == 0)
        return NULL;
    json_t *a = json_object();
    if (pick == 3 && rnd() % 8 == 0)
        return a; /* an empty object */
    json_object_set_new(a, "+message.type", json_string(message_types[rnd() % 6]));
    if (rnd() % 2)
        json_object_set_new(a, "+queue.type", json_string(rnd() % 2 ? "SimpleCQ" : "BatchCQ"));
    if (rnd() % 3 == 0)
        json_object_set_new(a, "+reserve.time", json_string("-1"));
    if (rnd() % 3 == 0) {
        json_object_set_new(a, "+cleanup.policy", json_string("DELETE"));
        json_object_set_new(a, "+cleanup", json_string("x")); /* a prefix of the key above */
    }
    if (pick == 3) {
        char k[256], v[256];
        random_name(k, odd_chars, rnd());
        random_name(v, odd_chars, rnd());
        json_object_set_new(a, k, json_string(v));
        json_object_set_new(a, "n", json_integer((json_int_t)rnd() - INT32_MAX));
        json_object_set_new(a, "r", json_real((double)rnd() / 7.0));
        json_object_set_new(a, "l", json_pack("[bnis{}[]{s{}}]", rnd() % 2, -5, "\t", "z"));
    }
    return a;
}

static void random_cfg(bcm_topic_cfg *c, bool odd_chars)
{
    memset(c, 0, sizeof *c);
    c->read_queue_nums = random_int();
    c->write_queue_nums = random_int();
    c->perm = random_int();
    c->topic_sys_flag = random_int();
    c->topic_filter_type = rnd() % 2;
    c->order = rnd() % 2;
    c->attributes = random_attributes(odd_chars);
}

/* ---- the checks -------------------------------------------------------------- */

typedef struct journal {
    char *buf;
    size_t len, cap;
} journal;

/* The record just appended (at j->buf + from) is the old writer's bytes and
 * reads back, with the one-pass reader and with jansson, to what the table
 * holds for `name`. */
static void check_record(const bcm_topic_table *t, const char *name, const journal *j, size_t from)
{
    char *want = old_note(t, name);
    const char *got = j->buf + from;
    assert_int_equal(j->len - from, strlen(want));
    assert_memory_equal(got, want, j->len - from);
    assert_int_equal(j->buf[j->len], '\0');

    const char *js = got + 9;
    size_t jl = j->len - from - 10;
    bcm_journal_rec rec;
    assert_int_equal(bcm_journal_rec_read(js, jl, &rec), 0);
    assert_int_equal(rec.dv.counter, t->dv.counter);
    assert_int_equal(rec.dv.timestamp, t->dv.timestamp);
    assert_string_equal(rec.name, name);
    bcm_topic_fields f;
    bool present = bcm_topic_table_get((bcm_topic_table *)t, name, &f);
    assert_int_equal(rec.put, present);
    json_error_t e;
    json_t *tree = json_loadb(js, jl, 0, &e);
    assert_non_null(tree);
    json_t *old_tree = json_loadb(want + 9, strlen(want) - 10, 0, &e);
    assert_non_null(old_tree);
    assert_true(json_equal(tree, old_tree));
    if (present) {
        assert_true(rec.put_ok);
        assert_int_equal(rec.cfg.read_queue_nums, f.read_queue_nums);
        assert_int_equal(rec.cfg.write_queue_nums, f.write_queue_nums);
        assert_int_equal(rec.cfg.perm, f.perm);
        assert_int_equal(rec.cfg.topic_sys_flag, f.topic_sys_flag);
        assert_int_equal(rec.cfg.topic_filter_type, f.topic_filter_type);
        assert_int_equal(rec.cfg.order, f.order);
        json_t *attrs = json_object_get(json_object_get(old_tree, "put"), "attributes");
        if (attrs)
            assert_true(rec.cfg.attributes && json_equal(rec.cfg.attributes, attrs));
        else
            assert_null(rec.cfg.attributes);
    } else {
        assert_string_equal(json_string_value(json_object_get(tree, "del")), name);
    }
    json_decref(tree);
    json_decref(old_tree);
    bcm_journal_rec_free(&rec);
    free(want);
}

static void same_text(char *got, char *want)
{
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
    free(want);
}

static void random_records_are_the_jansson_records(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        rng_state = seed * 0x9E3779B97F4A7C15ull;
        bcm_topic_table w;
        assert_int_equal(bcm_topic_table_init(&w, 1000), 0);
        char *base = bcm_topic_table_encode(&w);
        assert_non_null(base);
        journal j = {0};
        bool odd_chars = seed % 2 == 0;
        char names[100][256];
        for (unsigned i = 0; i < 100; i++) {
            random_name(names[i], odd_chars, (unsigned)(seed * 100 + i));
            bcm_topic_cfg c;
            random_cfg(&c, odd_chars);
            assert_int_equal(bcm_topic_table_put_cfg(&w, names[i], &c, 2000 + i), 0);
            json_decref(c.attributes);
            if (rnd() % 4 == 0) { /* any DataVersion, negatives and 64-bit values too */
                w.dv.counter = (int64_t)(((uint64_t)rnd() << 32) | rnd());
                w.dv.timestamp = (int64_t)(((uint64_t)rnd() << 32) | rnd());
            }
            size_t from = j.len;
            assert_int_equal(bcm_topic_journal_note(&w, names[i], &j.buf, &j.len, &j.cap), 0);
            check_record(&w, names[i], &j, from);
            if (rnd() % 5 == 0) { /* a deletion: a del record */
                const char *victim = names[rnd() % (i + 1)];
                bcm_topic_table_delete(&w, victim, 3000 + i);
                from = j.len;
                assert_int_equal(bcm_topic_journal_note(&w, victim, &j.buf, &j.len, &j.cap), 0);
                check_record(&w, victim, &j, from);
            }
        }
        /* the compacted topics.json is jansson's text */
        same_text(bcm_topic_table_encode(&w), old_topics_json(&w));
        /* the journal on the empty table's topics.json rebuilds the table
         * (the DataVersion may have been set lower: replay from below it) */
        bcm_topic_table r;
        char err[128];
        assert_int_equal(bcm_topic_table_init(&r, 5), 0);
        assert_int_equal(bcm_topic_table_load(&r, base, strlen(base), err, sizeof err), 0);
        r.dv.counter = INT64_MIN;
        bcm_journal_replay rep;
        bcm_topic_journal_replay(&r, j.buf, j.len, &rep);
        assert_false(rep.torn);
        assert_int_equal(rep.valid_len, j.len);
        same_text(bcm_topic_table_encode(&r), bcm_topic_table_encode(&w));
        bcm_topic_table_free(&r);
        bcm_topic_table_free(&w);
        free(j.buf);
        free(base);
    }
}

/* Random jansson trees: the walk writes json_dumps' bytes. */
static json_t *random_tree(int depth)
{
    char s[256];
    switch (depth > 4 ? 3 + rnd() % 5 : rnd() % 8) {
    case 0: {
        json_t *o = json_object();
        for (unsigned i = rnd() % 20; i > 0; i--) {
            random_name(s, true, rnd());
            json_object_set_new(o, s, random_tree(depth + 1));
        }
        /* keys that prefix one another, and one holding NUL (jansson
         * 2.14 keeps key lengths: sorted by memcmp, then length) */
        json_object_set_new(o, "k", json_null());
        json_object_set_new(o, "kk", json_true());
        json_object_setn_new_nocheck(o, "k\0a", 3, json_false());
        return o;
    }
    case 1: {
        json_t *a = json_array();
        for (unsigned i = rnd() % 6; i > 0; i--)
            json_array_append_new(a, random_tree(depth + 1));
        return a;
    }
    case 2: return json_stringn("a\0b", 3);
    case 3: random_name(s, true, rnd()); return json_string(s);
    case 4: {
        static const json_int_t edges[] = {INT64_MIN, INT64_MAX, 0, -1, 9, 10, -10};
        if (rnd() % 4 == 0)
            return json_integer(edges[rnd() % 7]);
        return json_integer((json_int_t)(((uint64_t)rnd() << 32) | rnd()));
    }
    case 5: return json_real((double)(int32_t)rnd() / (1 + rnd() % 1000));
    case 6: return rnd() % 2 ? json_true() : json_false();
    default: return json_null();
    }
}

static void value_writer_writes_json_dumps_bytes(void **state)
{
    (void)state;
    rng_state = 77;
    for (int i = 0; i < 2000; i++) {
        json_t *v = random_tree(0);
        char *want = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        assert_non_null(want);
        bcm_buf b = {0};
        bcm_json_value_write(&b, v);
        same_text(bcm_buf_take_string(&b, NULL), want);
        json_decref(v);
    }
}

/* A name jansson refused (not UTF-8) gets no record, as before. */
static void invalid_utf8_name_gets_no_record(void **state)
{
    (void)state;
    bcm_topic_table w;
    assert_int_equal(bcm_topic_table_init(&w, 1000), 0);
    bcm_topic_cfg c = {.read_queue_nums = 4, .write_queue_nums = 4, .perm = 6};
    assert_int_equal(bcm_topic_table_put_cfg(&w, "bad\xff", &c, 2000), 0);
    journal j = {0};
    assert_int_equal(bcm_topic_journal_note(&w, "bad\xff", &j.buf, &j.len, &j.cap), -1);
    assert_int_equal(j.len, 0);
    assert_int_equal(bcm_topic_journal_note(&w, "good", &j.buf, &j.len, &j.cap), 0);
    assert_int_equal(bcm_topic_journal_note(&w, "bad\xfe", &j.buf, &j.len, &j.cap), -1);
    size_t len = j.len;
    assert_int_equal(j.buf[len], '\0');
    assert_non_null(strstr(j.buf, "{\"del\":\"good\","));
    free(j.buf);
    bcm_topic_table_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_records_are_the_jansson_records),
        cmocka_unit_test(value_writer_writes_json_dumps_bytes),
        cmocka_unit_test(invalid_utf8_name_gets_no_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
