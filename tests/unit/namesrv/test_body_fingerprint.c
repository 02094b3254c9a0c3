/* test_body_fingerprint.c — the re-registration shortcut: a body equal to the
 * stored one outside its DataVersion is recognised without parsing, anything
 * else is not, and the route table takes the shortcut only while the
 * broker's QueueData still equal that body (issue #12). */
#include <zlib.h>

#include "body_fingerprint.h"
#include "namesrv_test_util.h"

static int32_t java_crc(const char *s)
{
    return (int32_t)(crc32(0L, (const Bytef *)s, (uInt)strlen(s)) & 0x7FFFFFFFu);
}

static void parsed_fp(const char *json, body_fingerprint *fp, register_body *rb)
{
    parse_body(rb, json);
    int32_t crc = 0;
    body_fingerprint_of_parsed((const uint8_t *)json, strlen(json), false, rb, fp, &crc);
    assert_int_equal(crc, java_crc(json)); /* the CRC by parts is the body's */
}

static void test_only_the_data_version_may_differ(void **state)
{
    (void)state;
    char *a = make_body_json(1, 1000, "T1:6:8:8:0,T2:6:8:8:0");
    body_fingerprint fa;
    register_body rb;
    parsed_fp(a, &fa, &rb);
    assert_int_equal(fa.form, 1);
    assert_true(fa.filters_empty);
    register_body_free(&rb);

    char *b = make_body_json(123456, 99999999, "T1:6:8:8:0,T2:6:8:8:0");
    body_fingerprint fb;
    data_version dv;
    int32_t crc = 0;
    assert_true(body_fingerprint_quick((const uint8_t *)b, strlen(b), false, &fa, &fb, &dv, &crc));
    assert_int_equal(dv.counter, 123456);
    assert_int_equal(dv.timestamp, 99999999);
    assert_int_equal(crc, java_crc(b));
    assert_true(body_fingerprint_equal(&fa, &fb));
    /* the bare-wrapper form is another form */
    assert_false(body_fingerprint_quick((const uint8_t *)b, strlen(b), true, &fa, &fb, &dv, &crc));

    const char *other[] = {"T1:6:8:8:0,T2:6:8:8:1", "T1:6:8:8:0,T3:6:8:8:0", "T1:6:8:8:0",
                           "T1:2:8:8:0,T2:6:8:8:0", "T1:6:8:8:0,T2:6:8:8:0,T3:6:8:8:0"};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        char *c = make_body_json(2, 1000, other[i]);
        assert_false(
            body_fingerprint_quick((const uint8_t *)c, strlen(c), false, &fa, &fb, &dv, &crc));
        free(c);
    }
    free(a);
    free(b);
}

static void test_a_data_version_that_is_not_flat_is_parsed(void **state)
{
    (void)state;
    char *a = make_body_json(1, 1000, "T1");
    body_fingerprint fa, fb;
    register_body rb;
    parsed_fp(a, &fa, &rb);
    register_body_free(&rb);
    const char *tail = strstr(a, ",\"topicConfigTable\"");
    const char *head = "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":";
    const char *dvs[] = {"{\"counter\":\"1}\",\"timestamp\":1}", "{\"counter\":{\"x\":1}}",
                         "{\"counter\":1,\"timestamp\":[1]}", "null"};
    for (size_t i = 0; i < sizeof(dvs) / sizeof(dvs[0]); i++) {
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s%s%s", head, dvs[i], tail);
        data_version dv;
        int32_t crc;
        assert_false(
            body_fingerprint_quick((const uint8_t *)buf, strlen(buf), false, &fa, &fb, &dv, &crc));
    }
    /* two dataVersion keys: no fingerprint at all */
    char two[1024];
    snprintf(two, sizeof(two), "%s{\"counter\":1},\"dataVersion\":{\"counter\":2}%s", head, tail);
    parse_body(&rb, two);
    int32_t crc;
    body_fingerprint_of_parsed((const uint8_t *)two, strlen(two), false, &rb, &fb, &crc);
    assert_int_equal(fb.form, 0);
    assert_int_equal(crc, java_crc(two));
    register_body_free(&rb);
    free(a);
}

/* Register `json` for master "b" through the route table, as the processor
 * does: the shortcut when the stored fingerprint allows it, else a parse.
 * Returns whether the shortcut was taken. */
static bool register_like_processor(route_table *rt, const char *json)
{
    body_fingerprint like, fp;
    data_version dv;
    int32_t crc;
    register_request rr = {
        .cluster = "C", .broker_name = "b", .broker_addr = "a:1", .broker_id = 0, .channel = 1};
    register_result res;
    register_body rb;
    register_body_init(&rb);
    bool frames = route_table_broker_has_frames(rt, "b");
    bool quick = route_table_broker_fingerprint(rt, "b", &like) &&
                 (frames ? body_fingerprint_of_frame((const uint8_t *)json, strlen(json), false,
                                                     &like, &fp, &dv, &crc)
                         : body_fingerprint_quick((const uint8_t *)json, strlen(json), false, &like,
                                                  &fp, &dv, &crc));
    if (quick) {
        rr.fp = &fp;
        rr.topics_unparsed = true;
        rr.dv = &dv;
        register_result res0;
        int rc = route_table_register(rt, &rr, 1, &res0);
        if (rc == 0) {
            register_result_free(&res0);
            return true;
        }
        assert_int_equal(rc, ROUTE_NEED_BODY); /* not a frame it knows: parse */
        quick = false;
        rr.topics_unparsed = false;
        rr.dv = NULL;
    }
    if (quick) {
        rr.fp = &fp;
        rr.topics_unparsed = true;
        rr.dv = &dv;
    } else {
        parse_body(&rb, json);
        body_fingerprint_of_parsed((const uint8_t *)json, strlen(json), false, &rb, &fp, &crc);
        rr.body = &rb;
        rr.fp = &fp;
    }
    assert_int_equal(route_table_register(rt, &rr, 1, &res), 0);
    register_result_free(&res);
    register_body_free(&rb);
    return quick;
}

static void test_route_table_takes_the_shortcut_only_while_queue_data_match(void **state)
{
    route_table *rt = *state;
    char *b1 = make_body_json(1, 1000, "T1:6:8:8:0,T2:6:8:8:0");
    char *b2 = make_body_json(2, 1000, "T1:6:8:8:0,T2:6:8:8:0");
    char *b3 = make_body_json(3, 1000, "T1:6:8:8:0,T2:6:8:8:0");
    assert_false(register_like_processor(rt, b1)); /* first: parsed */
    assert_true(register_like_processor(rt, b2));  /* counter changed, same topics */
    assert_int_equal(route_table_live(rt, "a:1")->dv.counter, 2);
    assert_true(register_like_processor(rt, b2)); /* counter unchanged too */

    /* an admin deleted T1: the next registration must restore it (4.9.8:
     * changed DataVersion re-applies every topic) */
    route_table_delete_topic(rt, "T1", NULL);
    assert_null(route_table_topic(rt, "T1"));
    assert_false(register_like_processor(rt, b3));
    assert_non_null(find_qd(rt, "T1", "b"));
    assert_true(register_like_processor(rt, b2));

    /* WIPE_WRITE_PERM, then the same DataVersion: 4.9.8 keeps the wiped perm
     * (unchanged version, the QueueData exists) — the shortcut must not hide
     * the difference either way, so it is off until a full application */
    assert_int_equal(route_table_set_write_perm(rt, "b", true), 2);
    assert_false(register_like_processor(rt, b2));
    assert_int_equal(find_qd(rt, "T1", "b")->perm, 4);
    assert_false(register_like_processor(rt, b2)); /* still a mix: parsed */
    assert_false(register_like_processor(rt, b3)); /* changed: re-applied */
    assert_int_equal(find_qd(rt, "T1", "b")->perm, 6);
    assert_true(register_like_processor(rt, b2));

    /* a stale fingerprint in the request is refused before anything changes */
    body_fingerprint fp;
    assert_true(route_table_broker_fingerprint(rt, "b", &fp));
    fp.suffix_hash ^= 1;
    data_version dv = {9, 9, 0, false};
    register_request rr = {.cluster = "C",
                           .broker_name = "b",
                           .broker_addr = "a:1",
                           .broker_id = 0,
                           .channel = 1,
                           .fp = &fp,
                           .topics_unparsed = true,
                           .dv = &dv};
    register_result res;
    assert_int_equal(route_table_register(rt, &rr, 1, &res), ROUTE_NEED_BODY);
    assert_int_not_equal(route_table_live(rt, "a:1")->dv.counter, 9);
    free(b1);
    free(b2);
    free(b3);
}

static void test_per_topic_rule_with_split_bodies(void **state)
{
    /* 5.x split registration: same DataVersion, different topics per frame;
     * the second frame's topics are added (per-topic rule), and the stored
     * fingerprint no longer describes the table */
    route_table *rt = *state;
    char *p1 = make_body_json(5, 1000, "A1,A2");
    char *p2 = make_body_json(5, 1000, "B1,B2");
    assert_false(register_like_processor(rt, p1));
    assert_false(register_like_processor(rt, p2));
    assert_non_null(find_qd(rt, "A1", "b"));
    assert_non_null(find_qd(rt, "B2", "b"));
    /* each frame applied whole is known: the next round (a new DataVersion,
     * the same frames) takes the shortcut frame by frame */
    char *q1 = make_body_json(6, 1000, "A1,A2");
    char *q2 = make_body_json(6, 1000, "B1,B2");
    assert_true(register_like_processor(rt, q1));
    assert_true(register_like_processor(rt, q2));
    assert_int_equal(route_table_live(rt, "a:1")->dv.counter, 6);
    /* a frame that changes a topic's QueueData is parsed and applied, and
     * the frames known before no longer count */
    char *r1 = make_body_json(7, 1000, "A1:2:8:8:0,A2");
    assert_false(register_like_processor(rt, r1));
    assert_int_equal(find_qd(rt, "A1", "b")->perm, 2);
    assert_false(register_like_processor(rt, q2));
    char *s1 = make_body_json(8, 1000, "A1,A2"); /* a new round: A1 back to 6 */
    assert_false(register_like_processor(rt, s1));
    assert_int_equal(find_qd(rt, "A1", "b")->perm, 6);
    assert_true(register_like_processor(rt, s1));
    /* an admin change turns every frame off until applied again */
    route_table_delete_topic(rt, "B1", NULL);
    assert_false(register_like_processor(rt, q2));
    assert_non_null(find_qd(rt, "B1", "b"));
    free(p1);
    free(p2);
    free(q1);
    free(q2);
    free(r1);
    free(s1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_the_data_version_may_differ),
        cmocka_unit_test(test_a_data_version_that_is_not_flat_is_parsed),
        cmocka_unit_test_setup_teardown(
            test_route_table_takes_the_shortcut_only_while_queue_data_match, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_per_topic_rule_with_split_bodies, rt_setup,
                                        rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
