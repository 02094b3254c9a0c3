/* test_topic_journal.c — topics.journal records: a journal replayed onto the
 * topics.json it followed gives the table that wrote it; a torn or damaged
 * tail is cut at the last intact record; records a compaction already wrote
 * into topics.json are skipped; the compacted topics.json is Java's
 * TopicConfigSerializeWrapper and loads back to the same table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topic_journal.h"

typedef struct journal {
    char *buf;
    size_t len, cap;
} journal;

static void note(bcm_topic_table *t, journal *j, const char *name)
{
    assert_int_equal(bcm_topic_journal_note(t, name, &j->buf, &j->len, &j->cap), 0);
}

/* The writer's table `w` after: put A(4 queues), put B, put A(8 queues),
 * del B, put C; journal j holds those five records. `base` is topics.json
 * before them (malloc'd). */
static void five_changes(bcm_topic_table *w, journal *j, char **base)
{
    assert_int_equal(bcm_topic_table_init(w, 1000), 0);
    assert_int_equal(
        bcm_topic_table_put(w, bcm_topic_config_new("Old", 2, 2, 6, 0, false, NULL), 1001), 0);
    *base = bcm_topic_table_encode(w);
    assert_non_null(*base);
    memset(j, 0, sizeof *j);
    assert_int_equal(
        bcm_topic_table_put(w, bcm_topic_config_new("A", 4, 4, 6, 0, false, NULL), 1002), 0);
    note(w, j, "A");
    assert_int_equal(
        bcm_topic_table_put(w, bcm_topic_config_new("B", 1, 1, 6, 0, false, NULL), 1003), 0);
    note(w, j, "B");
    assert_int_equal(
        bcm_topic_table_put(w, bcm_topic_config_new("A", 8, 8, 2, 1, true, "MULTI_TAG"), 1004), 0);
    note(w, j, "A");
    assert_true(bcm_topic_table_delete(w, "B", 1005));
    note(w, j, "B");
    assert_int_equal(
        bcm_topic_table_put(w, bcm_topic_config_new("C", 3, 3, 6, 0, false, NULL), 1006), 0);
    note(w, j, "C");
}

static void load_base(bcm_topic_table *r, const char *base)
{
    char err[128];
    assert_int_equal(bcm_topic_table_init(r, 5), 0);
    assert_int_equal(bcm_topic_table_load(r, base, strlen(base), err, sizeof err), 0);
}

static void same_tables(bcm_topic_table *a, bcm_topic_table *b)
{
    char *ta = bcm_topic_table_encode(a), *tb = bcm_topic_table_encode(b);
    assert_non_null(ta);
    assert_non_null(tb);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
}

static void replay_rebuilds_the_writers_table(void **state)
{
    (void)state;
    bcm_topic_table w, r;
    journal j;
    char *base;
    five_changes(&w, &j, &base);
    load_base(&r, base);
    assert_false(bcm_topic_table_has(&r, "A"));
    bcm_journal_replay out;
    bcm_topic_journal_replay(&r, j.buf, j.len, &out);
    assert_int_equal(out.records, 5);
    assert_int_equal(out.applied, 5);
    assert_int_equal(out.valid_len, j.len);
    assert_false(out.torn);
    bcm_topic_fields f;
    assert_true(bcm_topic_table_get(&r, "A", &f));
    assert_int_equal(f.write_queue_nums, 8);
    assert_int_equal(f.perm, 2);
    assert_int_equal(f.topic_filter_type, 1);
    assert_true(f.order);
    assert_false(bcm_topic_table_has(&r, "B"));
    assert_true(bcm_topic_table_has(&r, "C"));
    assert_true(bcm_topic_table_has(&r, "Old"));
    assert_int_equal(r.dv.counter, w.dv.counter);
    assert_int_equal(r.dv.timestamp, 1006);
    same_tables(&w, &r);
    bcm_topic_table_free(&w);
    bcm_topic_table_free(&r);
    free(j.buf);
    free(base);
}

/* Every cut inside the last record (a write torn by a crash) and a damaged
 * byte in the third record: replay keeps the intact prefix and says where
 * the file must be cut. */
static void torn_or_damaged_tail_is_cut_at_the_last_intact_record(void **state)
{
    (void)state;
    bcm_topic_table w;
    journal j;
    char *base;
    five_changes(&w, &j, &base);
    size_t four = 0;
    for (int n = 0; n < 4; n++)
        four += (size_t)(strchr(j.buf + four, '\n') - (j.buf + four)) + 1;
    for (size_t cut = four + 1; cut < j.len; cut++) {
        bcm_topic_table r;
        load_base(&r, base);
        bcm_journal_replay out;
        bcm_topic_journal_replay(&r, j.buf, cut, &out);
        assert_int_equal(out.records, 4);
        assert_int_equal(out.valid_len, four);
        assert_true(out.torn);
        assert_false(bcm_topic_table_has(&r, "C"));
        assert_false(bcm_topic_table_has(&r, "B")); /* the del before the cut applied */
        bcm_topic_table_free(&r);
    }
    size_t two = (size_t)(strchr(j.buf, '\n') - j.buf) + 1;
    two += (size_t)(strchr(j.buf + two, '\n') - (j.buf + two)) + 1;
    j.buf[two + 20] ^= 0x01; /* inside the third record's JSON: its CRC fails */
    bcm_topic_table r;
    load_base(&r, base);
    bcm_journal_replay out;
    bcm_topic_journal_replay(&r, j.buf, j.len, &out);
    assert_int_equal(out.records, 2);
    assert_int_equal(out.valid_len, two);
    assert_true(out.torn);
    bcm_topic_fields f;
    assert_true(bcm_topic_table_get(&r, "A", &f));
    assert_int_equal(f.write_queue_nums, 4); /* the second put of A was lost with its record */
    assert_true(bcm_topic_table_has(&r, "B"));
    bcm_topic_table_free(&r);
    bcm_topic_table_free(&w);
    free(j.buf);
    free(base);
}

/* A crash after a compaction wrote topics.json but before the journal was
 * emptied: the journal's records are older than the file and must not undo
 * what came after them (B deleted after its put, A changed after). */
static void records_older_than_topics_json_are_skipped(void **state)
{
    (void)state;
    bcm_topic_table w, r;
    journal j;
    char *base;
    five_changes(&w, &j, &base);
    /* compaction after the first three records, then del B and put C were
     * journalled again: the file holds state 3 */
    bcm_topic_table mid;
    load_base(&mid, base);
    bcm_journal_replay out;
    size_t three = 0;
    for (int n = 0; n < 3; n++)
        three += (size_t)(strchr(j.buf + three, '\n') - (j.buf + three)) + 1;
    bcm_topic_journal_replay(&mid, j.buf, three, &out);
    assert_int_equal(out.applied, 3);
    char *compacted = bcm_topic_table_encode(&mid);
    load_base(&r, compacted);
    bcm_topic_journal_replay(&r, j.buf, j.len, &out);
    assert_int_equal(out.records, 5);
    assert_int_equal(out.applied, 2);
    same_tables(&w, &r);
    /* the whole journal onto the final file: nothing applies, nothing changes */
    char *final_text = bcm_topic_table_encode(&w);
    bcm_topic_table f2;
    load_base(&f2, final_text);
    bcm_topic_journal_replay(&f2, j.buf, j.len, &out);
    assert_int_equal(out.applied, 0);
    same_tables(&w, &f2);
    bcm_topic_table_free(&f2);
    free(final_text);
    free(compacted);
    bcm_topic_table_free(&mid);
    bcm_topic_table_free(&r);
    bcm_topic_table_free(&w);
    free(j.buf);
    free(base);
}

/* What a compaction writes is Java's topics.json: dataVersion and
 * topicConfigTable with TopicConfig's fields (protocol-messages.md). */
static void compacted_file_is_javas_topics_json(void **state)
{
    (void)state;
    bcm_topic_table w;
    journal j;
    char *base;
    five_changes(&w, &j, &base);
    char *text = bcm_topic_table_encode(&w);
    json_error_t err;
    json_t *root = json_loads(text, 0, &err);
    assert_non_null(root);
    json_t *dv = json_object_get(root, "dataVersion");
    assert_int_equal(json_integer_value(json_object_get(dv, "counter")), w.dv.counter);
    assert_int_equal(json_integer_value(json_object_get(dv, "timestamp")), 1006);
    json_t *a = json_object_get(json_object_get(root, "topicConfigTable"), "A");
    assert_string_equal(json_string_value(json_object_get(a, "topicName")), "A");
    assert_int_equal(json_integer_value(json_object_get(a, "readQueueNums")), 8);
    assert_int_equal(json_integer_value(json_object_get(a, "writeQueueNums")), 8);
    assert_int_equal(json_integer_value(json_object_get(a, "perm")), 2);
    assert_string_equal(json_string_value(json_object_get(a, "topicFilterType")), "MULTI_TAG");
    assert_int_equal(json_integer_value(json_object_get(a, "topicSysFlag")), 1);
    assert_true(json_is_true(json_object_get(a, "order")));
    assert_null(json_object_get(json_object_get(root, "topicConfigTable"), "B"));
    json_decref(root);
    free(text);
    bcm_topic_table_free(&w);
    free(j.buf);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replay_rebuilds_the_writers_table),
        cmocka_unit_test(torn_or_damaged_tail_is_cut_at_the_last_intact_record),
        cmocka_unit_test(records_older_than_topics_json_are_skipped),
        cmocka_unit_test(compacted_file_is_javas_topics_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
