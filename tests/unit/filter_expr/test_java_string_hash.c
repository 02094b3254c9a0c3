/* test_java_string_hash.c — tag codes are Java's String.hashCode over UTF-16
 * units, bit-exact (protocol.md §6.4 verified vectors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "filter_engine.h"

static int32_t h(const char *s)
{
    return rmq_java_string_hash(s, strlen(s));
}

static void test_tag_hash_codes_match_java_vectors(void **state)
{
    (void)state;
    assert_int_equal(h("TagA"), 2598919);
    assert_int_equal(h("TagB"), 2598920);
    assert_int_equal(h("tagA"), 3552231);
    assert_int_equal(h("*"), 42);
    assert_int_equal(h("Hello World"), -862545276);
    assert_int_equal(h("\xe8\xae\xa2\xe5\x8d\x95"), 1129459); /* 订单 */
    assert_int_equal(h("\xf0\x9f\x98\x80"), 1772899);         /* U+1F600: two surrogates */
    assert_int_equal(h(""), 0);
}

static void test_malformed_utf8_hashes_as_replacement_char(void **state)
{
    (void)state;
    assert_int_equal(h("\xff"), 0xFFFD);
    assert_int_equal(h("a\xc3"), 31 * 'a' + 0xFFFD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_hash_codes_match_java_vectors),
        cmocka_unit_test(test_malformed_utf8_hashes_as_replacement_char),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
