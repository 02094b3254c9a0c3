/* test_offset_queries.c — the offset-table lookups the store-facing code
 * uses: whichTopicByConsumer (GET_CONSUME_STATS without a topic) and the
 * groups of a topic, with topics and groups that share prefixes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "offset_table.h"

static bool has(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (strcmp(json_string_value(v), s) == 0) return true;
    return false;
}

static void test_topics_of_a_group_are_listed_once(void **state)
{
    (void)state;
    bcm_offset_table t;
    bcm_offset_table_init(&t);
    assert_int_equal(bcm_offset_commit(&t, "T", "g", 0, 5), 0);
    assert_int_equal(bcm_offset_commit(&t, "T", "g", 1, 6), 0);
    assert_int_equal(bcm_offset_commit(&t, "%RETRY%g", "g", 0, 1), 0);
    assert_int_equal(bcm_offset_commit(&t, "T", "g2", 0, 1), 0);
    assert_int_equal(bcm_offset_commit(&t, "Other", "gg", 0, 1), 0);
    json_t *topics = json_array();
    bcm_offset_topics_of_group(&t, "g", topics);
    assert_int_equal(json_array_size(topics), 2);
    assert_true(has(topics, "T"));
    assert_true(has(topics, "%RETRY%g"));
    json_decref(topics);
    topics = json_array();
    bcm_offset_topics_of_group(&t, "nobody", topics);
    assert_int_equal(json_array_size(topics), 0);
    json_decref(topics);
    json_t *groups = json_array();
    bcm_offset_groups_of_topic(&t, "T", groups);
    assert_int_equal(json_array_size(groups), 2);
    assert_true(has(groups, "g") && has(groups, "g2"));
    json_decref(groups);
    bcm_offset_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topics_of_a_group_are_listed_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
