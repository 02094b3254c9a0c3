/* test_proxy_receipt.c — proxy_receipt_parse reads a receipt handle as the
 * sscanf format it replaced did (fields, widths, white space, where it
 * stops), on real handles, malformed ones and random token mixes;
 * proxy_ll_text writes what "%lld" writes and proxy_receipt_format what
 * the snprintf it replaced wrote, cut at the same place. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy_receipt.h"

/* the reference: the code before proxy_receipt.c */
static bool old_parse(const char *h, pop_receipt *r)
{
    r->phys = -1;
    return h && sscanf(h, "%lld %lld %lld %lld %7s %255s %d %lld %lld", &r->start_offset,
                       &r->pop_time, &r->invisible_time, &r->revive_qid, r->retry, r->broker,
                       &r->queue_id, &r->offset, &r->phys) >= 8;
}

static void same(const char *h)
{
    pop_receipt a, b;
    memset(&a, 0x5a, sizeof a);
    memset(&b, 0x5a, sizeof b);
    bool oa = old_parse(h, &a), ob = proxy_receipt_parse(h, &b);
    if (oa != ob)
        fail_msg("'%s': sscanf %d, proxy_receipt_parse %d", h, oa, ob);
    if (!oa)
        return;
    assert_int_equal(a.start_offset, b.start_offset);
    assert_int_equal(a.pop_time, b.pop_time);
    assert_int_equal(a.invisible_time, b.invisible_time);
    assert_int_equal(a.revive_qid, b.revive_qid);
    assert_string_equal(a.retry, b.retry);
    assert_string_equal(a.broker, b.broker);
    assert_int_equal(a.queue_id, b.queue_id);
    assert_int_equal(a.offset, b.offset);
    assert_int_equal(a.phys, b.phys);
}

static void test_real_and_malformed_handles(void **state)
{
    (void)state;
    const char *cases[] = {
        "12 1733472000123 30000 3 0 broker-a 5 17 123456789",
        "12 1733472000123 30000 3 0 broker-a 5 17",
        "0 0 60000 0 1 broker 0 0 0",
        "  7\t8\n9 10 0 b -1 -2 -3  ",
        "12 1733472000123 30000 3 0 broker-a 5",
        "12 1733472000123 30000 3 0",
        "",
        "x",
        "12abc 1 2 3 0 b 1 2 3",
        "1 2 3 4 retryflagtoolong broker 5 6 7",
        "1 2 3 4 0 broker x 6 7",
        "1 2 3 4 0 broker 5 6 x",
        "1 2 3 4 0 broker 5 6 7 extra",
        "+1 -2 3 4 0 b 99999999999 9223372036854775807 -9223372036854775808",
        "1 2 3 4 0 b 5 6 99999999999999999999",
        "1 2 3 4 0 b 5 6 7x",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        same(cases[i]);
    same(NULL);
}

static void test_random_token_mixes(void **state)
{
    (void)state;
    const char *tokens[] = {"0",  "1",  "-5", "123456789012", "broker-a", "a b", "0x10",
                            "+",  "-",  "  ", "\t",           "7z",       "z7",  "999999999999",
                            "00", "1e3"};
    srand(19);
    for (int n = 0; n < 20000; n++) {
        char h[256] = "";
        int k = rand() % 12;
        for (int i = 0; i < k; i++) {
            strcat(h, tokens[rand() % (int)(sizeof tokens / sizeof tokens[0])]);
            if (rand() % 4)
                strcat(h, " ");
        }
        same(h);
    }
}

static void test_ll_text(void **state)
{
    (void)state;
    long long vs[] = {0, 1, -1, 9, 10, -10, 1733472000123LL, LLONG_MAX, LLONG_MIN, INT_MIN};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        char want[32], got[32];
        snprintf(want, sizeof want, "%lld", vs[i]);
        size_t n = proxy_ll_text(vs[i], got);
        assert_string_equal(got, want);
        assert_int_equal(n, strlen(want));
    }
}

static void format_same(size_t cap, long long start, const char *pt, long long inv, const char *rq,
                        const char *retry, const char *broker, int qid, long long off,
                        long long phys)
{
    char want[600], got[600];
    memset(want, 'x', sizeof want);
    memset(got, 'x', sizeof got);
    snprintf(want, cap, "%lld %s %lld %s %s %s %d %lld %lld", start, pt, inv, rq, retry, broker,
             qid, off, phys);
    proxy_receipt_format(got, cap, start, pt, inv, rq, retry, broker, qid, off, phys);
    assert_memory_equal(got, want, sizeof want);
}

static void test_format_as_snprintf(void **state)
{
    (void)state;
    char longb[400];
    memset(longb, 'b', sizeof longb - 1);
    longb[sizeof longb - 1] = '\0';
    format_same(512, 12, "1733472000123", 30000, "3", "0", "broker-a", 5, 17, 123456789);
    format_same(512, -1, "0", 0, "999", "1", "broker", -7, LLONG_MAX, LLONG_MIN);
    format_same(512, 1, "2", 3, "4", "2", longb, 6, 7, 8); /* cut at 511 characters */
    for (size_t cap = 1; cap < 40; cap++)
        format_same(cap, 12, "1733472000123", 30000, "3", "0", "broker-a", 5, 17, 123456789);
    /* and proxy_receipt_parse reads back what it wrote */
    char h[512];
    pop_receipt r;
    proxy_receipt_format(h, sizeof h, 12, "1733472000123", 30000, "3", "1", "broker-a", 5, 17, 99);
    assert_true(proxy_receipt_parse(h, &r));
    assert_int_equal(r.start_offset, 12);
    assert_int_equal(r.pop_time, 1733472000123LL);
    assert_string_equal(r.retry, "1");
    assert_string_equal(r.broker, "broker-a");
    assert_int_equal(r.queue_id, 5);
    assert_int_equal(r.offset, 17);
    assert_int_equal(r.phys, 99);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_and_malformed_handles),
        cmocka_unit_test(test_random_token_mixes),
        cmocka_unit_test(test_ll_text),
        cmocka_unit_test(test_format_as_snprintf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
