/* test_java_hash.c — Java String.hashCode() of UTF-8 input as the index and
 * recovered tagsCodes need it: ASCII, BMP characters, supplementary
 * characters (two UTF-16 units), malformed bytes as U+FFFD. Expected values
 * computed with Java's formula over the UTF-16 code units. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <string.h>

#include "store_internal.h"

static int32_t units_hash(const uint16_t *u, size_t n)
{
    uint32_t h = 0;
    for (size_t i = 0; i < n; i++)
        h = h * 31u + u[i];
    return (int32_t)h;
}

static void test_java_hash_values(void **state)
{
    (void)state;
    assert_int_equal(store_java_hash("TagA", 4), 2598919); /* verified on Java */
    assert_int_equal(store_java_hash("TagB", 4), 2598920);
    assert_int_equal(store_java_hash("", 0), 0);
    /* "é中" = U+00E9 U+4E2D */
    const uint16_t u1[] = {0x00E9, 0x4E2D};
    assert_int_equal(store_java_hash("\xC3\xA9\xE4\xB8\xAD", 5), units_hash(u1, 2));
    /* U+1F600 = D83D DE00 */
    const uint16_t u2[] = {'a', 0xD83D, 0xDE00, 'b'};
    assert_int_equal(store_java_hash("a\xF0\x9F\x98\x80"
                                     "b",
                                     6),
                     units_hash(u2, 4));
    /* a lone continuation byte and a truncated sequence */
    const uint16_t u3[] = {'x', 0xFFFD, 'y'};
    assert_int_equal(store_java_hash("x\x80y", 3), units_hash(u3, 3));
    const uint16_t u4[] = {'x', 0xFFFD};
    assert_int_equal(store_java_hash("x\xE4\xB8", 3), units_hash(u4, 2));
    /* a long key wraps like Java's int arithmetic */
    const char *k = "SomeTopic#ORDER-0123456789-ABCDEFGHIJ";
    uint16_t u5[64];
    for (size_t i = 0; i < strlen(k); i++)
        u5[i] = (uint8_t)k[i];
    assert_int_equal(store_java_hash(k, strlen(k)), units_hash(u5, strlen(k)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_hash_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
