/* test_send_header.c — decode of the send request headers through the host
 * API (a fake one over key/value pairs): V2 single letters and V1 names, the
 * FastCodesHeader rule (a bad number fails with Java's NumberFormatException
 * text) against the reflection rule of code 10 (a bad optional number is
 * ignored, a bad required one is a NullPointerException), booleans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "send_put.h"

typedef struct fake_cmd {
    int32_t code;
    const char *const *kv;
} fake_cmd;

static const char *fake_ext_get(const rmq_cmd *cmd, const char *key)
{
    const fake_cmd *c = (const fake_cmd *)(const void *)cmd;
    for (const char *const *p = c->kv; p && p[0]; p += 2)
        if (strcmp(p[0], key) == 0)
            return p[1];
    return NULL;
}

static size_t fake_ext_count(const rmq_cmd *cmd)
{
    const fake_cmd *c = (const fake_cmd *)(const void *)cmd;
    size_t n = 0;
    for (const char *const *p = c->kv; p && p[0]; p += 2)
        n++;
    return n;
}

static int fake_ext_at(const rmq_cmd *cmd, size_t i, const char **key, const char **value)
{
    const fake_cmd *c = (const fake_cmd *)(const void *)cmd;
    if (i >= fake_ext_count(cmd))
        return -1;
    *key = c->kv[2 * i];
    *value = c->kv[2 * i + 1];
    return 0;
}

static int32_t fake_code(const rmq_cmd *cmd)
{
    return ((const fake_cmd *)(const void *)cmd)->code;
}

static int32_t fake_version(const rmq_cmd *cmd)
{
    (void)cmd;
    return 409;
}

static int decode(int32_t code, const char *const *kv, send_header *h, char *remark, size_t cap)
{
    rmq_host_api api;
    memset(&api, 0, sizeof api);
    api.cmd_ext_get = fake_ext_get;
    api.cmd_ext_count = fake_ext_count;
    api.cmd_ext_at = fake_ext_at;
    api.cmd_code = fake_code;
    api.cmd_version = fake_version;
    store_plugin sp;
    memset(&sp, 0, sizeof sp);
    sp.api = &api;
    fake_cmd c = {code, kv};
    return send_header_decode(&sp, (const rmq_cmd *)(const void *)&c, h, remark, cap);
}

static void v2_letters(void **state)
{
    (void)state;
    const char *kv[] = {"a", "PG",           "b", "T",   "c", "TBW102",        "d", "4",
                        "e", "-1",           "f", "769", "g", "1700000000000", "h", "7",
                        "i", "WAIT\001true", "j", "2",   "k", "TRUE",          "l", "16",
                        "m", "true",         NULL};
    send_header h;
    char r[256];
    assert_int_equal(decode(310, kv, &h, r, sizeof r), 0);
    assert_string_equal(h.producer_group, "PG");
    assert_string_equal(h.topic, "T");
    assert_string_equal(h.default_topic, "TBW102");
    assert_int_equal(h.default_topic_queue_nums, 4);
    assert_int_equal(h.queue_id, -1);
    assert_int_equal(h.sys_flag, 769);
    assert_true(h.born_ts == 1700000000000LL);
    assert_int_equal(h.flag, 7);
    assert_string_equal(h.properties, "WAIT\001true");
    assert_int_equal(h.reconsume_times, 2);
    assert_true(h.unit_mode);
    assert_true(h.has_max_reconsume_times);
    assert_int_equal(h.max_reconsume_times, 16);
    assert_true(h.batch);
}

static void v2_bad_numbers_fail(void **state)
{
    (void)state;
    send_header h;
    char r[256];
    const char *bad_q[] = {"b", "T", "d", "4", "e", "1x", "f", "0", "g", "1", "h", "0", NULL};
    assert_int_equal(decode(310, bad_q, &h, r, sizeof r), -1);
    assert_non_null(strstr(r, "java.lang.NumberFormatException: For input string: \"1x\""));
    const char *bad_opt[] = {"b", "T", "d", "4", "e", "1", "f", "0",
                             "g", "1", "h", "0", "j", "z", NULL};
    assert_int_equal(decode(310, bad_opt, &h, r, sizeof r), -1);
    assert_non_null(strstr(r, "\"z\""));
    const char *overflow[] = {"b", "T", "d", "4", "e", "2147483648", "f",
                              "0", "g", "1", "h", "0", NULL};
    assert_int_equal(decode(310, overflow, &h, r, sizeof r), -1);
    /* a missing number decodes (Java only logs it); its first use throws */
    const char *missing[] = {"b", "T", "f", "0", "g", "1", "h", "0", NULL};
    assert_int_equal(decode(310, missing, &h, r, sizeof r), 0);
    assert_false(h.present & SEND_HAS_QUEUE_ID);
    assert_false(h.present & SEND_HAS_DEFQ);
    assert_true(
        send_header_need(&h, SEND_HAS_SYS_FLAG | SEND_HAS_BORN_TS | SEND_HAS_FLAG, r, sizeof r));
    assert_false(send_header_need(&h, SEND_HAS_QUEUE_ID, r, sizeof r));
    assert_string_equal(r, "java.lang.NullPointerException");
}

static void v1_names_and_reflection_rules(void **state)
{
    (void)state;
    send_header h;
    char r[256];
    const char *kv[] = {"producerGroup",
                        "PG",
                        "topic",
                        "T",
                        "defaultTopic",
                        "TBW102",
                        "defaultTopicQueueNums",
                        "4",
                        "queueId",
                        "3",
                        "sysFlag",
                        "0",
                        "bornTimestamp",
                        "5",
                        "flag",
                        "0",
                        "reconsumeTimes",
                        "oops",
                        "batch",
                        "false",
                        NULL};
    assert_int_equal(decode(10, kv, &h, r, sizeof r), 0);
    assert_int_equal(h.queue_id, 3);
    assert_int_equal(h.reconsume_times, 0); /* unparsable optional: left null */
    assert_false(h.batch);
    assert_null(h.properties);
    const char *bad_required[] = {"topic",   "T", "defaultTopicQueueNums", "4", "queueId", "x",
                                  "sysFlag", "0", "bornTimestamp",         "5", "flag",    "0",
                                  NULL};
    /* the reflection decode leaves the unparsable queueId null */
    assert_int_equal(decode(10, bad_required, &h, r, sizeof r), 0);
    assert_true(h.present & SEND_HAS_DEFQ);
    assert_false(send_header_need(&h, SEND_HAS_QUEUE_ID, r, sizeof r));
    assert_string_equal(r, "java.lang.NullPointerException");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(v2_letters),
        cmocka_unit_test(v2_bad_numbers_fail),
        cmocka_unit_test(v1_names_and_reflection_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
