/* test_store_codecs.c — the store plugin's codecs against Java's rules:
 * properties parse/encode (§10.3.3, §10.5.4), the batch body (§10.3.6, the
 * verified example), FastCodesHeader numbers, String.hashCode tag codes and
 * offsetMsgId (§10.4.1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "batch_body.h"
#include "header_numbers.h"
#include "message_id.h"
#include "message_properties.h"

static void expect_prop(const props_view *v, const char *name, const char *value)
{
    size_t l = 0;
    const char *got = props_get(v, name, &l);
    assert_non_null(got);
    assert_int_equal(l, strlen(value));
    assert_memory_equal(got, value, l);
}

static void props_java_example(void **state)
{
    (void)state;
    const char *s = "KEYS\001k1 k2\002WAIT\001true\002TAGS\001TagA";
    props_view v;
    props_parse(s, strlen(s), &v);
    assert_int_equal(v.n, 3);
    expect_prop(&v, "KEYS", "k1 k2");
    expect_prop(&v, "WAIT", "true");
    expect_prop(&v, "TAGS", "TagA");
    assert_true(props_value_is(&v, "WAIT", "true"));
    assert_null(props_get(&v, "DELAY", NULL));
}

/* One pass for several names (the send's DELAY / TIMER_* check): a name
 * found at any position, names of the same length told apart, long names
 * compared whole. */
static void props_has_any_of_names(void **state)
{
    (void)state;
    static const prop_name special[] = {PROP_NAME("DELAY"), PROP_NAME("TIMER_DELIVER_MS"),
                                        PROP_NAME("TIMER_DELAY_SEC"), PROP_NAME("TIMER_DELAY_MS")};
    const size_t n = sizeof special / sizeof special[0];
    props_view v;
    const char *none = "KEYS\001k\002WAIT\001true\002DELAX\0013\002TIMER_DELAY_MX\0011";
    props_parse(none, strlen(none), &v);
    assert_false(props_has_any(&v, special, n));
    const char *last = "WAIT\001true\002TAGS\001a\002TIMER_DELAY_SEC\00110";
    props_parse(last, strlen(last), &v);
    assert_true(props_has_any(&v, special, n));
    const char *first = "DELAY\0013\002WAIT\001true";
    props_parse(first, strlen(first), &v);
    assert_true(props_has_any(&v, special, n));
    char longname[200];
    memset(longname, 'N', 70);
    snprintf(longname + 70, sizeof longname - 70, "\001v\002WAIT\001true");
    static const prop_name long_names[] = {
        PROP_NAME("NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN")};
    props_parse(longname, strlen(longname), &v);
    assert_true(props_has_any(&v, long_names, 1));
    assert_false(props_has_any(&v, special, n));
    props_parse("", 0, &v);
    assert_false(props_has_any(&v, special, n));
}

static void props_drop_rules(void **state)
{
    (void)state;
    /* empty name, empty value, no separator, too short, duplicate (last wins),
     * value holding a second U+0001 */
    const char *s = "\001x\002a\001\002noval\002ab\002K\0011\002K\0012\002V\001a\001b\002\002";
    props_view v;
    props_parse(s, strlen(s), &v);
    assert_int_equal(v.n, 2);
    expect_prop(&v, "K", "2");
    expect_prop(&v, "V", "a\001b");
    assert_null(props_get(&v, "a", NULL));
    assert_null(props_get(&v, "", NULL));
    props_parse("", 0, &v);
    assert_int_equal(v.n, 0);
    props_parse(NULL, 0, &v);
    assert_int_equal(v.n, 0);
}

static void props_stored_form(void **state)
{
    (void)state;
    const char *s = "KEYS\001k1\002WAIT\001true\002CLUSTER\001old\002UNIQ_KEY\001AB";
    props_view v;
    props_parse(s, strlen(s), &v);
    static const char *const drop[] = {"WAIT", NULL};
    char buf[256];
    size_t n = props_encode_stored(&v, drop, "DefaultCluster", buf, sizeof buf);
    const char *want = "KEYS\001k1\002UNIQ_KEY\001AB\002CLUSTER\001DefaultCluster";
    assert_int_equal(n, strlen(want));
    assert_memory_equal(buf, want, n);
    /* a short buffer reports the length it needs and never overruns */
    char small[8];
    assert_int_equal(props_encode_stored(&v, drop, "DefaultCluster", small, sizeof small),
                     strlen(want));
    props_view empty = {.n = 0};
    n = props_encode_stored(&empty, NULL, "C", buf, sizeof buf);
    assert_int_equal(n, strlen("CLUSTER\001C"));
}

static void tag_hash_is_java_string_hash(void **state)
{
    (void)state;
    assert_int_equal(java_string_hash("TagA", 4), 2598919);
    assert_int_equal(java_string_hash("", 0), 0);
    /* U+6807 U+7B7E */
    assert_int_equal(java_string_hash("\xe6\xa0\x87\xe7\xad\xbe", 6), 26631 * 31 + 31614);
    /* U+1F600 counts as the surrogate pair D83D DE00 */
    assert_int_equal(java_string_hash("\xf0\x9f\x98\x80", 4), 0xD83D * 31 + 0xDE00);
    /* an invalid byte is U+FFFD */
    assert_int_equal(java_string_hash("\xff", 1), 0xFFFD);
    /* int32 wrap-around as Java's */
    assert_int_equal(java_string_hash("TagATagATagA", 12), -1266899563);
}

static void batch_verified_example(void **state)
{
    (void)state;
    static const uint8_t body[] = {0x00, 0x00, 0x00, 0x36, 0,   0,   0,   0,   0,   0,    0,
                                   0,    0,    0,    0,    0,   0,   0,   0,   2,   0x68, 0x69,
                                   0x00, 0x1E, 'K',  'E',  'Y', 'S', 1,   'k', '1', ' ',  'k',
                                   '2',  2,    'W',  'A',  'I', 'T', 1,   't', 'r', 'u',  'e',
                                   2,    'T',  'A',  'G',  'S', 1,   'T', 'a', 'g', 'A'};
    assert_int_equal(sizeof body, 0x36);
    batch_item it[4];
    size_t n = 0;
    assert_int_equal(batch_body_decode(body, sizeof body, it, 4, &n), BATCH_OK);
    assert_int_equal(n, 1);
    assert_int_equal(it[0].flag, 0);
    assert_int_equal(it[0].body_len, 2);
    assert_memory_equal(it[0].body, "hi", 2);
    assert_int_equal(it[0].props_len, 0x1E);
    assert_int_equal(batch_body_count(body, sizeof body), 1);

    uint8_t two[2 * sizeof body];
    memcpy(two, body, sizeof body);
    memcpy(two + sizeof body, body, sizeof body);
    two[sizeof body + 15] = 7; /* second record's flag */
    assert_int_equal(batch_body_decode(two, sizeof two, it, 4, &n), BATCH_OK);
    assert_int_equal(n, 2);
    assert_int_equal(it[1].flag, 7);
    assert_int_equal(batch_body_decode(two, sizeof two, it, 1, &n), BATCH_TOO_MANY);
}

static void batch_malformed(void **state)
{
    (void)state;
    uint8_t rec[26] = {0, 0, 0, 26, 0, 0, 0, 0,   0,   0,   0,   0, 0,
                       0, 0, 1, 0,  0, 0, 4, 'b', 'o', 'd', 'y', 0, 0};
    batch_item it[2];
    size_t n;
    assert_int_equal(batch_body_decode(rec, sizeof rec, it, 2, &n), BATCH_OK);
    for (size_t cut = 1; cut < sizeof rec; cut++)
        assert_int_equal(batch_body_decode(rec, cut, it, 2, &n), BATCH_TRUNCATED);
    assert_int_equal(batch_body_decode(rec, 0, it, 2, &n), BATCH_EMPTY);
    uint8_t neg[26];
    memcpy(neg, rec, sizeof neg);
    neg[16] = 0xFF; /* BODYLENGTH < 0 */
    assert_int_equal(batch_body_decode(neg, sizeof neg, it, 2, &n), BATCH_BAD_LENGTH);
    memcpy(neg, rec, sizeof neg);
    neg[24] = 0x80; /* PROPERTIESLENGTH < 0 */
    assert_int_equal(batch_body_decode(neg, sizeof neg, it, 2, &n), BATCH_BAD_LENGTH);
    memcpy(neg, rec, sizeof neg);
    neg[19] = 200; /* body past the end */
    assert_int_equal(batch_body_decode(neg, sizeof neg, it, 2, &n), BATCH_TRUNCATED);
    assert_int_equal(batch_body_count(neg, sizeof neg), -1);
    assert_non_null(strstr(batch_status_remark(BATCH_TRUNCATED), "BufferUnderflowException"));
}

static void java_numbers(void **state)
{
    (void)state;
    int32_t i;
    int64_t l;
    assert_int_equal(java_parse_int("2147483647", &i), 0);
    assert_int_equal(i, INT32_MAX);
    assert_int_equal(java_parse_int("-2147483648", &i), 0);
    assert_int_equal(i, INT32_MIN);
    assert_int_equal(java_parse_int("+5", &i), 0);
    assert_int_equal(i, 5);
    assert_int_equal(java_parse_int("2147483648", &i), -1);
    assert_int_equal(java_parse_int("-2147483649", &i), -1);
    assert_int_equal(java_parse_int("", &i), -1);
    assert_int_equal(java_parse_int("-", &i), -1);
    assert_int_equal(java_parse_int("1a", &i), -1);
    assert_int_equal(java_parse_int(" 1", &i), -1);
    assert_int_equal(java_parse_int(NULL, &i), -1);
    assert_int_equal(java_parse_long("-9223372036854775808", &l), 0);
    assert_true(l == INT64_MIN);
    assert_int_equal(java_parse_long("9223372036854775807", &l), 0);
    assert_true(l == INT64_MAX);
    assert_int_equal(java_parse_long("9223372036854775808", &l), -1);
    /* a required FastCodesHeader number: NPE when absent, NFE when bad */
    char why[200];
    assert_int_equal(header_required_int("12", &i, why, sizeof why), 0);
    assert_int_equal(i, 12);
    assert_int_equal(header_required_int(NULL, &i, why, sizeof why), -1);
    assert_string_equal(why, "java.lang.NullPointerException");
    assert_int_equal(header_required_long("1x", &l, why, sizeof why), -1);
    assert_non_null(strstr(why, "NumberFormatException: For input string: \"1x\""));
    /* Long.parseLong: a sign, no blanks */
    assert_int_equal(java_parse_long("+7", &l), 0);
    assert_true(l == 7);
    assert_int_equal(java_parse_long(" 7", &l), -1);
    assert_true(java_parse_bool("TRUE"));
    assert_false(java_parse_bool("yes"));
    assert_false(java_parse_bool(NULL));
    char r[200];
    number_format_remark("x1", r, sizeof r);
    assert_non_null(strstr(r, "java.lang.NumberFormatException: For input string: \"x1\""));
}

static void offset_message_ids(void **state)
{
    (void)state;
    store_addr a;
    assert_int_equal(addr_from_ip_port("192.168.0.1", 10911, &a), 0);
    char id[64];
    assert_int_equal(offset_msg_id(&a, 1234, id), 32);
    assert_string_equal(id, "C0A8000100002A9F00000000000004D2");
    assert_int_equal(addr_parse("127.0.0.2:19402", &a), 0);
    offset_msg_id(&a, 0, id);
    assert_string_equal(id, "7F00000200004BCA0000000000000000");
    assert_int_equal(addr_parse("[::1]:80", &a), 0);
    assert_int_equal(a.ip_len, 16);
    assert_int_equal(offset_msg_id(&a, 1, id), 56);
    assert_int_equal(addr_parse("::ffff:10.0.0.1:5", &a), 0);
    assert_int_equal(a.ip_len, 4);
    assert_int_equal(a.port, 5);
    assert_int_equal(addr_parse("nonsense", &a), -1);
    assert_int_equal(addr_parse("1.2.3.4:99999", &a), -1);
    /* the hand-rolled dotted quad agrees with inet_pton at its edges */
    assert_int_equal(addr_parse("255.0.10.199:65535", &a), 0);
    offset_msg_id(&a, 0, id);
    assert_string_equal(id, "FF000AC70000FFFF0000000000000000");
    assert_int_equal(addr_parse("0.0.0.0:0", &a), 0);
    assert_int_equal(a.ip_len, 4);
    static const char *const bad[] = {"256.1.1.1:1", "1.2.3:1",    "1.2.3.4.5:1",
                                      "01.2.3.4:1",  "1..3.4:1",   "1.2.3.4x:1",
                                      "1.2.3.4:-1",  "1.2.3.4:1x", "1000.1.1.1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (addr_parse(bad[i], &a) != -1)
            fail_msg("took %s", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(props_java_example),
        cmocka_unit_test(props_has_any_of_names),
        cmocka_unit_test(props_drop_rules),
        cmocka_unit_test(props_stored_form),
        cmocka_unit_test(tag_hash_is_java_string_hash),
        cmocka_unit_test(batch_verified_example),
        cmocka_unit_test(batch_malformed),
        cmocka_unit_test(java_numbers),
        cmocka_unit_test(offset_message_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
