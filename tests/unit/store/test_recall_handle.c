/* test_recall_handle.c — 5.x recall handles (recall_handle.c): the text is
 * Java's Base64.getUrlEncoder() of "v1 topic broker timestamp uniqKey" (the
 * expected string below was made with Python's urlsafe_b64encode, the same
 * alphabet and padding), it parses back, and what Java's decodeHandle
 * refuses is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "recall_handle.h"

static void encodes_as_java(void **state)
{
    (void)state;
    char out[256];
    assert_true(recall_handle_build("TopicA", "broker-a", "1700000000001", "7F0000010001?", out,
                                    sizeof out));
    assert_string_equal(out, "djEgVG9waWNBIGJyb2tlci1hIDE3MDAwMDAwMDAwMDEgN0YwMDAwMDEwMDAxPw==");
    recall_handle h;
    assert_true(recall_handle_parse(out, &h));
    assert_string_equal(h.topic, "TopicA");
    assert_string_equal(h.broker_name, "broker-a");
    assert_string_equal(h.timestamp, "1700000000001");
    assert_string_equal(h.uniq_key, "7F0000010001?");
    /* too small a buffer: refused, not truncated */
    assert_false(recall_handle_build("TopicA", "broker-a", "1", "k", out, 8));
}

static void refuses_what_java_refuses(void **state)
{
    (void)state;
    recall_handle h;
    assert_false(recall_handle_parse("", &h));
    assert_false(recall_handle_parse(NULL, &h));
    assert_false(recall_handle_parse("bm90IGEgaGFuZGxl", &h)); /* "not a handle" */
    assert_false(recall_handle_parse("djEgYSBi", &h));         /* "v1 a b": too few fields */
    assert_false(recall_handle_parse("djEg+/==", &h));         /* not the URL alphabet */
    assert_false(recall_handle_parse("dj=Eg", &h));            /* padding inside */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encodes_as_java),
        cmocka_unit_test(refuses_what_java_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
