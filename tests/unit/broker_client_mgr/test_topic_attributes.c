/* test_topic_attributes.c — UPDATE_AND_CREATE_TOPIC's 5.x `attributes`
 * against Java 5.3's TopicAttributes: message.type, queue.type and
 * cleanup.policy (set only at creation), reserve.time (a long range), with
 * AttributeUtil's refusals and the EnumAttribute sets as Java prints them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topic_attributes.h"

static json_t *alter(const json_t *cur, const char *mod, bool create, char *err)
{
    bool failed = false;
    err[0] = '\0';
    json_t *r = bcm_topic_attributes_alter(cur, mod, create, err, 256, &failed);
    assert_true(failed == (err[0] != '\0'));
    return r;
}

static void creation_accepts_every_java_attribute(void **state)
{
    (void)state;
    char err[256];
    json_t *a = alter(NULL,
                      "+message.type=FIFO,+queue.type=BatchCQ,+cleanup.policy=COMPACTION,"
                      "+reserve.time=72",
                      true, err);
    assert_non_null(a);
    assert_string_equal(json_string_value(json_object_get(a, "message.type")), "FIFO");
    assert_string_equal(json_string_value(json_object_get(a, "queue.type")), "BatchCQ");
    assert_string_equal(json_string_value(json_object_get(a, "cleanup.policy")), "COMPACTION");
    assert_string_equal(json_string_value(json_object_get(a, "reserve.time")), "72");
    json_decref(a);
}

static void unchangeable_attributes_refused_on_update(void **state)
{
    (void)state;
    char err[256];
    json_t *cur = alter(NULL, "+queue.type=SimpleCQ", true, err);
    assert_non_null(cur);
    assert_null(alter(cur, "+queue.type=BatchCQ", false, err));
    assert_string_equal(err, "attempt to update an unchangeable attribute. key: queue.type");
    assert_null(alter(cur, "-queue.type", false, err));
    assert_string_equal(err, "attempt to update an unchangeable attribute. key: queue.type");
    assert_null(alter(cur, "+cleanup.policy=DELETE", false, err));
    assert_string_equal(err, "attempt to update an unchangeable attribute. key: cleanup.policy");
    json_t *upd = alter(cur, "+message.type=DELAY,+reserve.time=-1", false, err);
    assert_non_null(upd);
    assert_string_equal(json_string_value(json_object_get(upd, "queue.type")), "SimpleCQ");
    assert_string_equal(json_string_value(json_object_get(upd, "reserve.time")), "-1");
    json_decref(upd);
    json_decref(cur);
}

static void values_checked_with_java_messages(void **state)
{
    (void)state;
    char err[256];
    assert_null(alter(NULL, "+message.type=ODD", true, err));
    assert_string_equal(
        err, "value is not in set: [UNSPECIFIED, MIXED, TRANSACTION, FIFO, DELAY, NORMAL]");
    assert_null(alter(NULL, "+queue.type=Other", true, err));
    assert_string_equal(err, "value is not in set: [SimpleCQ, BatchCQ]");
    assert_null(alter(NULL, "+cleanup.policy=KEEP", true, err));
    assert_string_equal(err, "value is not in set: [DELETE, COMPACTION]");
    assert_null(alter(NULL, "+reserve.time=-2", true, err));
    assert_string_equal(err, "value is not in range(-1, 9223372036854775807)");
    assert_null(alter(NULL, "+reserve.time=soon", true, err));
    assert_string_equal(err, "For input string: \"soon\"");
    assert_null(alter(NULL, "+color=red", true, err));
    assert_string_equal(err, "unsupported key: color");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(creation_accepts_every_java_attribute),
        cmocka_unit_test(unchangeable_attributes_refused_on_update),
        cmocka_unit_test(values_checked_with_java_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
