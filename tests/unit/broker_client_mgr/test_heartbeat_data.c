/* HEART_BEAT bodies in the Java, ali-ons and C++ dialects (protocol.md §5.3,
 * Appendix B) and SubscriptionData as Java re-serialises it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "heartbeat_data.h"

static const char java_body[] =
    "{\"clientID\":\"192.168.0.5@12345#88172634512345\","
    "\"consumerDataSet\":[{\"consumeFromWhere\":\"CONSUME_FROM_LAST_OFFSET\",\"consumeType\":"
    "\"CONSUME_PASSIVELY\","
    "\"groupName\":\"CG\",\"messageModel\":\"CLUSTERING\","
    "\"subscriptionDataSet\":[{\"classFilterMode\":false,\"codeSet\":[2598919,2598920],"
    "\"expressionType\":\"TAG\","
    "\"subString\":\"TagA || "
    "TagB\",\"subVersion\":1700000000000,\"tagsSet\":[\"TagA\",\"TagB\"],\"topic\":\"TopicTest\"},"
    "{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\",\"subString\":\"*\","
    "\"subVersion\":1700000000001,"
    "\"tagsSet\":[],\"topic\":\"%RETRY%CG\"}],\"unitMode\":false}],"
    "\"producerDataSet\":[{\"groupName\":\"PG\"},{\"groupName\":\"CLIENT_INNER_PRODUCER\"}]}";

static void test_java_heartbeat_parses(void **state)
{
    (void)state;
    bcm_heartbeat hb;
    char err[128];
    assert_int_equal(bcm_heartbeat_parse(java_body, strlen(java_body), &hb, err, sizeof err), 0);
    assert_string_equal(hb.client_id, "192.168.0.5@12345#88172634512345");
    assert_int_equal(hb.nproducers, 2);
    assert_string_equal(hb.producer_groups[1], "CLIENT_INNER_PRODUCER");
    assert_int_equal(hb.nconsumers, 1);
    bcm_consumer_data *cd = &hb.consumers[0];
    assert_string_equal(cd->group, "CG");
    assert_string_equal(cd->consume_type, "CONSUME_PASSIVELY");
    assert_int_equal(cd->nsubs, 2);
    assert_string_equal(cd->subs[0].sub_string, "TagA || TagB");
    assert_int_equal(cd->subs[0].sub_version, 1700000000000LL);
    char *s = json_dumps(cd->subs[0].json, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(
        s, "{\"classFilterMode\":false,\"codeSet\":[2598919,2598920],\"expressionType\":"
           "\"TAG\",\"subString\":\"TagA || TagB\",\"subVersion\":1700000000000,"
           "\"tagsSet\":[\"TagA\",\"TagB\"],\"topic\":\"TopicTest\"}");
    free(s);
    bcm_heartbeat_free(&hb);
}

static void test_cpp_dialect_ordinals_and_string_subversion(void **state)
{
    (void)state;
    const char *body =
        "{\"clientID\":\"127.0.0.1@1\",\"consumerDataSet\":[{\"consumeFromWhere\":0,"
        "\"consumeType\":1,"
        "\"groupName\":\"CG\",\"messageModel\":1,\"subscriptionDataSet\":[{\"subString\":\"*\","
        "\"subVersion\":\"1700000000005\",\"topic\":\"T\"}]}],\"producerDataSet\":[]}\n";
    bcm_heartbeat hb;
    char err[128];
    assert_int_equal(bcm_heartbeat_parse(body, strlen(body), &hb, err, sizeof err), 0);
    bcm_consumer_data *cd = &hb.consumers[0];
    assert_string_equal(cd->consume_type, "CONSUME_PASSIVELY");
    assert_string_equal(cd->message_model, "CLUSTERING");
    assert_string_equal(cd->consume_from_where, "CONSUME_FROM_LAST_OFFSET");
    assert_int_equal(cd->subs[0].sub_version, 1700000000005LL);
    assert_string_equal(cd->subs[0].expression_type, "TAG");
    char *s = json_dumps(cd->subs[0].json, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(
        s, "{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\","
           "\"subString\":\"*\",\"subVersion\":1700000000005,\"tagsSet\":[],\"topic\":\"T\"}");
    free(s);
    bcm_heartbeat_free(&hb);
}

static void test_garbage_heartbeat_is_refused(void **state)
{
    (void)state;
    bcm_heartbeat hb;
    char err[128];
    assert_int_equal(bcm_heartbeat_parse("not json", 8, &hb, err, sizeof err), -1);
    assert_int_equal(bcm_heartbeat_parse(NULL, 0, &hb, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_heartbeat_parses),
        cmocka_unit_test(test_cpp_dialect_ordinals_and_string_subversion),
        cmocka_unit_test(test_garbage_heartbeat_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
