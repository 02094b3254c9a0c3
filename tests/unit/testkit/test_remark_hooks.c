/* test_remark_hooks.c — before hooks through the test kit: a 1.7 hook's
 * remark, written into the host's buffer, reaches the client byte for byte
 * (cut at the buffer's capacity), also with many different refusals in
 * flight on several I/O threads; an empty buffer refuses without a remark;
 * a plugin built for ABI 1.6 with a 1.0 hook works unchanged next to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/testkit.h>

#include "kit_remark_plugins.h"

#define WAIT_MS 5000
#define CHANNELS 8
#define PER_CHANNEL 25

static rmq_testkit *start_kit(int io_threads)
{
    rmq_testkit *kit = rmq_tk_new();
    assert_non_null(kit);
    assert_int_equal(rmq_tk_set_io_threads(kit, io_threads), 0);
    assert_int_equal(
        rmq_tk_add_plugin_descriptor(kit, "newhook", &kit_remark_hook_descriptor, NULL), 0);
    assert_int_equal(rmq_tk_add_plugin_descriptor(kit, "oldhook", &kit_old_hook_descriptor, NULL),
                     0);
    char err[512];
    if (rmq_tk_start(kit, err, sizeof(err)) != 0)
        fail_msg("start: %s", err);
    return kit;
}

static rmq_cmd *call(rmq_testkit *kit, int ch, int code, const char *const *ext)
{
    rmq_cmd *a = rmq_tk_call(kit, ch, rmq_tk_request(code, RMQ_TK_JSON, false, ext), WAIT_MS);
    assert_non_null(a);
    return a;
}

static void expect(rmq_cmd *a, int code, const char *remark)
{
    assert_int_equal(rmq_tk_code(a), code);
    if (remark)
        assert_string_equal(rmq_tk_remark(a), remark);
    else
        assert_null(rmq_tk_remark(a));
    rmq_tk_cmd_free(a);
}

static void test_the_hook_remark_reaches_the_client(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(1);
    assert_true(rmq_tk_api(kit)->abi_minor >= 7);
    int ch = rmq_tk_open_channel(kit);
    expect(call(kit, ch, KR_CODE_NEW, (const char *[]){"who", "alice", NULL}), KR_REFUSED_NEW,
           "no entry for alice");
    expect(call(kit, ch, KR_CODE_NEW, NULL), RMQ_RESPONSE_SUCCESS, NULL);
    /* the remark of one refusal never leaks into the next answer */
    expect(call(kit, ch, KR_CODE_NEW, (const char *[]){"who", "bob", NULL}), KR_REFUSED_NEW,
           "no entry for bob");
    expect(call(kit, ch, KR_CODE_SILENT, NULL), KR_REFUSED_SILENT, NULL);

    /* the buffer holds RMQ_REMARK_BUF_MIN_CAP - 1 characters; more are cut */
    char want[RMQ_REMARK_BUF_MIN_CAP];
    memset(want, 'x', sizeof(want) - 1);
    want[sizeof(want) - 1] = '\0';
    expect(call(kit, ch, KR_CODE_NEW, (const char *[]){"len", "5000", NULL}), KR_REFUSED_NEW, want);
    expect(call(kit, ch, KR_CODE_NEW, (const char *[]){"len", "1023", NULL}), KR_REFUSED_NEW, want);
    rmq_tk_free(kit);
}

static void test_a_hook_of_a_1_6_plugin_works_unchanged(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(1);
    int ch = rmq_tk_open_channel(kit);
    expect(call(kit, ch, KR_CODE_OLD, (const char *[]){"deny", "1", NULL}), KR_REFUSED_OLD,
           "old hook says no");
    expect(call(kit, ch, KR_CODE_OLD, NULL), RMQ_RESPONSE_SUCCESS, NULL);
    /* both kinds side by side on one server, in either order of refusal */
    expect(call(kit, ch, KR_CODE_NEW, (const char *[]){"who", "carol", NULL}), KR_REFUSED_NEW,
           "no entry for carol");
    expect(call(kit, ch, KR_CODE_OLD, (const char *[]){"deny", "1", NULL}), KR_REFUSED_OLD,
           "old hook says no");
    rmq_tk_free(kit);
}

/* Every request carries its own name, so a remark crossing over between
 * refusals handled at the same time on different I/O threads would show. */
static void test_refusals_in_flight_on_several_io_threads_keep_their_remark(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(4);
    int ch[CHANNELS];
    int32_t opaque[CHANNELS][PER_CHANNEL];
    for (int c = 0; c < CHANNELS; c++) {
        ch[c] = rmq_tk_open_channel(kit);
        assert_true(ch[c] > 0);
    }
    char who[64];
    for (int i = 0; i < PER_CHANNEL; i++)
        for (int c = 0; c < CHANNELS; c++) {
            snprintf(who, sizeof(who), "client%d-request%d", c, i);
            const char *ext[] = {"who", who, NULL};
            rmq_cmd *req =
                rmq_tk_request(KR_CODE_NEW, i % 2 ? RMQ_TK_ROCKETMQ : RMQ_TK_JSON, false, ext);
            assert_int_equal(rmq_tk_send(kit, ch[c], req, &opaque[c][i]), 0);
        }
    char want[96];
    for (int c = 0; c < CHANNELS; c++)
        for (int i = 0; i < PER_CHANNEL; i++) {
            rmq_cmd *a = rmq_tk_wait_answer(kit, ch[c], opaque[c][i], WAIT_MS);
            assert_non_null(a);
            snprintf(want, sizeof(want), "no entry for client%d-request%d", c, i);
            expect(a, KR_REFUSED_NEW, want);
        }
    rmq_tk_free(kit);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_hook_remark_reaches_the_client),
        cmocka_unit_test(test_a_hook_of_a_1_6_plugin_works_unchanged),
        cmocka_unit_test(test_refusals_in_flight_on_several_io_threads_keep_their_remark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
