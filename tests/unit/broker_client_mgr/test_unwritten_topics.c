/* test_unwritten_topics.c — the set of topics whose topics.json write is
 * pending (senders of those topics wait): a write releases exactly the
 * topics its encoding held, so the persist of an older snapshot that
 * finishes after a newer creation never releases the newer topic early. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "unwritten_topics.h"

static void created_topic_is_unwritten_until_its_write(void **state)
{
    (void)state;
    bcm_unwritten_topics u;
    bcm_unwritten_topics_init(&u);
    assert_false(bcm_unwritten_topics_has(&u, "T"));
    /* a write that holds nothing new releases nothing */
    bcm_unwritten_topics_written(&u, bcm_unwritten_topics_snapshot(&u));
    assert_int_equal(bcm_unwritten_topics_add(&u, "T"), 0);
    assert_true(bcm_unwritten_topics_has(&u, "T"));
    assert_false(bcm_unwritten_topics_has(&u, "Other"));
    uint64_t snap = bcm_unwritten_topics_snapshot(&u);
    assert_true(bcm_unwritten_topics_has(&u, "T")); /* encoded, not yet written */
    bcm_unwritten_topics_written(&u, snap);
    assert_false(bcm_unwritten_topics_has(&u, "T"));
    bcm_unwritten_topics_free(&u);
}

/* Thread A creates T1 and encodes; thread B creates T2 meanwhile; A's write
 * lands first: T1 is released, T2 (not in A's text) stays until B's. */
static void older_snapshot_write_keeps_newer_topic_pending(void **state)
{
    (void)state;
    bcm_unwritten_topics u;
    bcm_unwritten_topics_init(&u);
    assert_int_equal(bcm_unwritten_topics_add(&u, "T1"), 0);
    uint64_t a = bcm_unwritten_topics_snapshot(&u);
    assert_int_equal(bcm_unwritten_topics_add(&u, "T2"), 0);
    bcm_unwritten_topics_written(&u, a);
    assert_false(bcm_unwritten_topics_has(&u, "T1"));
    assert_true(bcm_unwritten_topics_has(&u, "T2"));
    uint64_t b = bcm_unwritten_topics_snapshot(&u);
    bcm_unwritten_topics_written(&u, b);
    assert_false(bcm_unwritten_topics_has(&u, "T2"));
    bcm_unwritten_topics_free(&u);
}

/* Deleted and created again before the first write: the name waits for the
 * write that holds the second creation. */
static void recreated_topic_waits_for_the_later_write(void **state)
{
    (void)state;
    bcm_unwritten_topics u;
    bcm_unwritten_topics_init(&u);
    assert_int_equal(bcm_unwritten_topics_add(&u, "T"), 0);
    uint64_t first = bcm_unwritten_topics_snapshot(&u);
    assert_int_equal(bcm_unwritten_topics_add(&u, "T"), 0);
    bcm_unwritten_topics_written(&u, first);
    assert_true(bcm_unwritten_topics_has(&u, "T"));
    bcm_unwritten_topics_written(&u, bcm_unwritten_topics_snapshot(&u));
    assert_false(bcm_unwritten_topics_has(&u, "T"));
    bcm_unwritten_topics_free(&u);
}

/* Many pending topics (a burst of creations): one write releases them all,
 * and freeing with entries left leaks nothing (ASan). */
static void one_write_releases_every_topic_it_holds(void **state)
{
    (void)state;
    bcm_unwritten_topics u;
    bcm_unwritten_topics_init(&u);
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "T%d", i);
        assert_int_equal(bcm_unwritten_topics_add(&u, name), 0);
    }
    uint64_t snap = bcm_unwritten_topics_snapshot(&u);
    assert_int_equal(bcm_unwritten_topics_add(&u, "Late"), 0);
    bcm_unwritten_topics_written(&u, snap);
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "T%d", i);
        assert_false(bcm_unwritten_topics_has(&u, name));
    }
    assert_true(bcm_unwritten_topics_has(&u, "Late"));
    bcm_unwritten_topics_free(&u);
}

/* A hot reload hands the pending names to the next generation's set: they
 * are listed exactly (the written ones not), and in the new set they wait
 * for a write of the new generation, whose change numbers start afresh. */
static void pending_names_hand_over_to_a_new_set(void **state)
{
    (void)state;
    bcm_unwritten_topics old, next;
    bcm_unwritten_topics_init(&old);
    json_t *none = bcm_unwritten_topics_names(&old);
    assert_non_null(none);
    assert_int_equal(json_array_size(none), 0);
    json_decref(none);
    assert_int_equal(bcm_unwritten_topics_add(&old, "Done"), 0);
    bcm_unwritten_topics_written(&old, bcm_unwritten_topics_snapshot(&old));
    assert_int_equal(bcm_unwritten_topics_add(&old, "A"), 0);
    assert_int_equal(bcm_unwritten_topics_add(&old, "B"), 0);
    json_t *names = bcm_unwritten_topics_names(&old);
    bcm_unwritten_topics_free(&old);
    assert_non_null(names);
    assert_int_equal(json_array_size(names), 2);
    bcm_unwritten_topics_init(&next);
    uint64_t before = bcm_unwritten_topics_snapshot(&next);
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v)
    {
        assert_string_not_equal(json_string_value(v), "Done");
        assert_int_equal(bcm_unwritten_topics_add(&next, json_string_value(v)), 0);
    }
    json_decref(names);
    /* a write encoded before the hand-over releases none of them */
    bcm_unwritten_topics_written(&next, before);
    assert_true(bcm_unwritten_topics_has(&next, "A"));
    assert_true(bcm_unwritten_topics_has(&next, "B"));
    bcm_unwritten_topics_written(&next, bcm_unwritten_topics_snapshot(&next));
    assert_false(bcm_unwritten_topics_has(&next, "A"));
    assert_false(bcm_unwritten_topics_has(&next, "B"));
    bcm_unwritten_topics_free(&next);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(created_topic_is_unwritten_until_its_write),
        cmocka_unit_test(older_snapshot_write_keeps_newer_topic_pending),
        cmocka_unit_test(recreated_topic_waits_for_the_later_write),
        cmocka_unit_test(one_write_releases_every_topic_it_holds),
        cmocka_unit_test(pending_names_hand_over_to_a_new_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
