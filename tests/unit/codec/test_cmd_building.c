/* test_cmd_building.c — building commands in code: defaults, responses, ext
 * set/replace/remove keeping order, body ownership, arena growth. */
#include "codec_test_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_new_command_has_host_defaults(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    assert_non_null(c);
    assert_int_equal(c->code, 0);
    assert_int_equal(c->language, RMQ_LANG_JAVA);
    assert_int_equal(c->version, RMQ_HOST_CMD_VERSION);
    assert_int_equal(c->serialize_type, RMQ_SERIALIZE_JSON);
    assert_int_equal(c->flag, 0);
    assert_null(c->remark);
    assert_false(c->has_ext);
    assert_null(c->body);
    rmq_cmd_free(c);
    rmq_cmd_free(NULL);
}

static void test_response_copies_opaque_and_serialize_type_not_oneway_bit(void **state)
{
    (void)state;
    rmq_cmd *req = rmq_cmd_new();
    req->opaque = 4242;
    req->flag = RMQ_FLAG_ONEWAY;
    req->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    req->language = 1;
    req->version = 333;
    char remark[] = "boom";
    rmq_cmd *r = rmq_cmd_new_response(req, 17, remark);
    remark[0] = 'X';
    assert_non_null(r);
    assert_int_equal(r->code, 17);
    assert_int_equal(r->flag, RMQ_FLAG_RESPONSE);
    assert_int_equal(r->opaque, 4242);
    assert_int_equal(r->serialize_type, RMQ_SERIALIZE_ROCKETMQ);
    assert_int_equal(r->language, RMQ_LANG_JAVA);
    assert_int_equal(r->version, RMQ_HOST_CMD_VERSION);
    assert_string_equal(r->remark, "boom");
    rmq_cmd_free(r);
    assert_null(rmq_cmd_new_response(NULL, 0, NULL));
    rmq_cmd_free(req);
}

static void test_ext_set_replaces_in_place_and_null_removes_keeping_order(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    assert_int_equal(rmq_cmd_ext_set(c, "a", "1"), 0);
    assert_true(c->has_ext);
    assert_int_equal(rmq_cmd_ext_set(c, "b", "2"), 0);
    assert_int_equal(rmq_cmd_ext_set(c, "c", "3"), 0);
    assert_int_equal(rmq_cmd_ext_set(c, "a", "10"), 0);
    assert_int_equal(c->ext_count, 3);
    assert_string_equal(c->ext[0].key, "a");
    assert_string_equal(c->ext[0].value, "10");
    assert_int_equal(rmq_cmd_ext_set(c, "b", NULL), 0);
    assert_int_equal(c->ext_count, 2);
    assert_string_equal(c->ext[1].key, "c");
    assert_null(rmq_cmd_ext_get(c, "b"));
    assert_int_equal(rmq_cmd_ext_set(c, "zz", NULL), 0);
    assert_int_equal(c->ext_count, 2);
    assert_null(rmq_cmd_ext_get(c, "missing"));
    for (int i = 0; i < 500; i++) {
        char k[16];
        snprintf(k, sizeof k, "key%d", i);
        assert_int_equal(rmq_cmd_ext_set(c, k, k), 0);
    }
    assert_int_equal(c->ext_count, 502);
    assert_string_equal(rmq_cmd_ext_get(c, "key499"), "key499");
    assert_string_equal(rmq_cmd_ext_get(c, "a"), "10");
    rmq_cmd_free(c);
}

static void test_strdup_and_remark_are_copies_in_the_arena(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    char src[] = "hello";
    char *d = rmq_cmd_strdup(c, src);
    char *n = rmq_cmd_strndup(c, "abcdef", 3);
    src[0] = 'j';
    assert_string_equal(d, "hello");
    assert_string_equal(n, "abc");
    assert_null(rmq_cmd_strdup(c, NULL));
    char *big = malloc(300000);
    memset(big, 'r', 299999);
    big[299999] = '\0';
    assert_int_equal(rmq_cmd_set_remark(c, big), 0);
    assert_int_equal(strlen(c->remark), 299999);
    assert_string_equal(d, "hello"); /* earlier strings survive arena growth */
    assert_int_equal(rmq_cmd_set_remark(c, NULL), 0);
    assert_null(c->remark);
    free(big);
    rmq_cmd_free(c);
}

typedef struct free_log {
    int calls;
    const void *last;
} free_log;

static void log_free(void *ud, const void *data)
{
    free_log *l = ud;
    l->calls++;
    l->last = data;
}

static void test_borrowed_body_is_released_once_on_replace_and_free(void **state)
{
    (void)state;
    static const char b1[] = "first", b2[] = "second";
    free_log log = {0, NULL};
    rmq_cmd *c = rmq_cmd_new();
    assert_int_equal(rmq_cmd_set_body(c, b1, 5, log_free, &log), 0);
    assert_ptr_equal(c->body, b1);
    assert_int_equal(log.calls, 0);
    assert_int_equal(rmq_cmd_set_body(c, b2, 6, log_free, &log), 0);
    assert_int_equal(log.calls, 1);
    assert_ptr_equal(log.last, b1);
    assert_int_equal(rmq_cmd_set_body(c, "copy", 4, NULL, NULL), 0);
    assert_int_equal(log.calls, 2);
    assert_ptr_equal(log.last, b2);
    assert_memory_equal(c->body, "copy", 4);
    assert_int_equal(rmq_cmd_set_body(c, b1, 5, log_free, &log), 0);
    rmq_cmd_free(c);
    assert_int_equal(log.calls, 3);
    assert_ptr_equal(log.last, b1);
}

static void test_empty_body_means_no_body(void **state)
{
    (void)state;
    free_log log = {0, NULL};
    rmq_cmd *c = rmq_cmd_new();
    assert_int_equal(rmq_cmd_set_body(c, "x", 1, NULL, NULL), 0);
    assert_int_equal(rmq_cmd_set_body(c, "x", 0, log_free, &log), 0);
    assert_null(c->body);
    assert_int_equal(c->body_len, 0);
    assert_int_equal(log.calls, 1); /* handed over and released at once */
    size_t len;
    uint8_t *f = codec_encode(c, &len);
    assert_int_equal(len, 8 + rmq_cmd_header_size(c));
    free(f);
    rmq_cmd_free(c);
    assert_int_equal(log.calls, 1);
}

static void test_decoded_command_owns_copies_of_the_frame(void **state)
{
    (void)state;
    const char *hdr = "{\"code\":11,\"extFields\":{\"topic\":\"T\"},\"remark\":\"r\"}";
    size_t len;
    uint8_t *f = codec_make_frame(0, hdr, strlen(hdr), "BODY", 4, &len);
    rmq_cmd *c = rmq_cmd_decode(f, len, NULL, 0);
    assert_non_null(c);
    memset(f, 0xAA, len);
    free(f);
    assert_string_equal(rmq_cmd_ext_get(c, "topic"), "T");
    assert_string_equal(c->remark, "r");
    assert_memory_equal(c->body, "BODY", 4);
    assert_null(c->body_free);
    rmq_cmd_free(c);
}

static int kept_releases;
static void count_release(void *ud, const void *data)
{
    kept_releases++;
    free(ud);
    (void)data;
}

/* In place: header strings are the command's, the body stays in the frame
 * until it is copied (own_body) or the frame is handed over (body_keep). */
static void test_in_place_decode_leaves_the_body_in_the_frame(void **state)
{
    (void)state;
    const char *hdr = "{\"code\":11,\"extFields\":{\"topic\":\"T\"},\"remark\":\"r\"}";
    size_t len;
    uint8_t *f = codec_make_frame(0, hdr, strlen(hdr), "BODY", 4, &len);
    rmq_cmd *c = rmq_cmd_decode_in_place(f, len, NULL, 0);
    assert_non_null(c);
    assert_true(c->body_in_frame);
    assert_ptr_equal(c->body, f + len - 4);
    assert_int_equal(c->body_len, 4);
    assert_int_equal(rmq_cmd_own_body(c), 0);
    assert_false(c->body_in_frame);
    assert_int_equal(rmq_cmd_own_body(c), 0); /* once is enough */
    memset(f, 0xAA, len);
    assert_string_equal(rmq_cmd_ext_get(c, "topic"), "T");
    assert_string_equal(c->remark, "r");
    assert_memory_equal(c->body, "BODY", 4);
    assert_false(rmq_cmd_body_keep(c, count_release, NULL)); /* not in-frame any more */
    rmq_cmd_free(c);

    /* kept: the frame now lives as long as the command */
    free(f);
    f = codec_make_frame(0, hdr, strlen(hdr), "KEPT", 4, &len);
    c = rmq_cmd_decode_in_place(f, len, NULL, 0);
    assert_non_null(c);
    kept_releases = 0;
    assert_true(rmq_cmd_body_keep(c, count_release, f));
    assert_false(c->body_in_frame);
    assert_ptr_equal(c->body, f + len - 4);
    assert_memory_equal(c->body, "KEPT", 4);
    rmq_cmd_free(c);
    assert_int_equal(kept_releases, 1);

    /* no body: nothing in the frame */
    f = codec_make_frame(0, hdr, strlen(hdr), NULL, 0, &len);
    c = rmq_cmd_decode_in_place(f, len, NULL, 0);
    assert_non_null(c);
    assert_false(c->body_in_frame);
    assert_null(c->body);
    rmq_cmd_free(c);
    free(f);
}

static void test_language_names_cover_the_table_and_unknowns(void **state)
{
    (void)state;
    assert_string_equal(rmq_language_name(0), "JAVA");
    assert_string_equal(rmq_language_name(1), "CPP");
    assert_string_equal(rmq_language_name(12), "RUST");
    assert_string_equal(rmq_language_name(13), "NODE_JS");
    assert_string_equal(rmq_language_name(14), "OTHER");
    assert_string_equal(rmq_language_name(-1), "OTHER");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_command_has_host_defaults),
        cmocka_unit_test(test_response_copies_opaque_and_serialize_type_not_oneway_bit),
        cmocka_unit_test(test_ext_set_replaces_in_place_and_null_removes_keeping_order),
        cmocka_unit_test(test_strdup_and_remark_are_copies_in_the_arena),
        cmocka_unit_test(test_borrowed_body_is_released_once_on_replace_and_free),
        cmocka_unit_test(test_empty_body_means_no_body),
        cmocka_unit_test(test_decoded_command_owns_copies_of_the_frame),
        cmocka_unit_test(test_in_place_decode_leaves_the_body_in_the_frame),
        cmocka_unit_test(test_language_names_cover_the_table_and_unknowns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
