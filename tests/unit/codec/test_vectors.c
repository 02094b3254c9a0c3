/* test_vectors.c — every frame recorded from the Java 4.9.8 servers in
 * RMQ_VECTORS_DIR: framing, decoded fields against the .txt description
 * (read with jansson, test-only), and encode/decode round trips. */
#include "codec_test_frames.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* "decoded header:" block of the .txt */
static json_t *decoded_header(const char *txt, const char *name)
{
    const char *p = strstr(txt, "decoded header:");
    if (!p)
        fail_msg("%s: no decoded header", name);
    p = strchr(p, '{');
    json_error_t jerr;
    json_t *j = json_loads(p, JSON_DISABLE_EOF_CHECK, &jerr);
    if (!j)
        fail_msg("%s: decoded header unreadable: %s", name, jerr.text);
    return j;
}

static void check_fields(const rmq_cmd *c, json_t *want, const char *name)
{
    assert_int_equal(c->code, json_integer_value(json_object_get(want, "code")));
    assert_int_equal(c->flag, json_integer_value(json_object_get(want, "flag")));
    assert_int_equal(c->opaque, json_integer_value(json_object_get(want, "opaque")));
    assert_int_equal(c->version, json_integer_value(json_object_get(want, "version")));
    assert_string_equal(rmq_language_name(c->language),
                        json_string_value(json_object_get(want, "language")));
    const char *type = json_string_value(json_object_get(want, "serializeTypeCurrentRPC"));
    assert_string_equal(type, c->serialize_type == RMQ_SERIALIZE_JSON ? "JSON" : "ROCKETMQ");
    json_t *remark = json_object_get(want, "remark");
    if (remark)
        assert_string_equal(c->remark, json_string_value(remark));
    else
        assert_null(c->remark);
    json_t *ext = json_object_get(want, "extFields");
    /* the binary form cannot tell an empty map from none; the tool printed {} */
    if (c->serialize_type == RMQ_SERIALIZE_JSON && (ext != NULL) != c->has_ext)
        fail_msg("%s: has_ext %d but .txt extFields %s", name, c->has_ext,
                 ext ? "present" : "absent");
    size_t want_n = ext ? json_object_size(ext) : 0;
    assert_int_equal(codec_non_null_ext(c), want_n);
    const char *key;
    json_t *val;
    json_object_foreach(ext, key, val)
    {
        const char *got = rmq_cmd_ext_get(c, key);
        if (!got || !json_is_string(val) || strcmp(got, json_string_value(val)) != 0)
            fail_msg("%s: ext %s = %s, .txt says %s", name, key, got ? got : "(null)",
                     json_is_string(val) ? json_string_value(val) : "(non-string)");
    }
}

/* Java wrote this header with fastjson: top-level keys sorted and every ext
 * value a string, so our encoder must reproduce it exactly. */
static int java_canonical_json(const uint8_t *hdr, size_t len)
{
    json_t *j = json_loadb((const char *)hdr, len, 0, NULL);
    if (!j)
        return 0;
    int ok = 1;
    const char *prev = "", *key;
    json_t *val;
    json_object_foreach(j, key, val)
    {
        if (strcmp(prev, key) >= 0)
            ok = 0;
        prev = key;
    }
    json_t *ext = json_object_get(j, "extFields");
    json_object_foreach(ext, key, val)
    {
        if (!json_is_string(val))
            ok = 0;
    }
    json_decref(j);
    return ok;
}

static void check_vector(const char *dir, const char *bin_name, int *byte_exact)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, bin_name);
    size_t len, tlen;
    uint8_t *frame = read_file(path, &len);
    snprintf(path + strlen(path) - 4, 5, ".txt");
    char *txt = (char *)read_file(path, &tlen);

    size_t total = 0;
    const char *reason = NULL;
    for (size_t n = 0; n < len; n++)
        assert_int_equal(rmq_frame_check(frame, n, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                         RMQ_FRAME_NEED_MORE);
    if (rmq_frame_check(frame, len, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason) !=
        RMQ_FRAME_READY)
        fail_msg("%s: frame check: %s", bin_name, reason ? reason : "need more");
    assert_int_equal(total, len);

    char err[256] = "";
    rmq_cmd *c = rmq_cmd_decode(frame, len, err, sizeof err);
    if (!c)
        fail_msg("%s: decode failed: %s", bin_name, err);
    json_t *want = decoded_header(txt, bin_name);
    check_fields(c, want, bin_name);
    size_t header_len = ((size_t)frame[5] << 16) | ((size_t)frame[6] << 8) | frame[7];
    assert_int_equal(c->body_len, len - 8 - header_len);

    size_t elen;
    uint8_t *again = codec_encode(c, &elen);
    rmq_cmd *d = rmq_cmd_decode(again, elen, err, sizeof err);
    if (!d)
        fail_msg("%s: re-decode failed: %s", bin_name, err);
    codec_assert_same_cmd(c, d);
    assert_int_equal(d->serialize_type, c->serialize_type);
    if (c->serialize_type == RMQ_SERIALIZE_JSON && java_canonical_json(frame + 8, header_len)) {
        if (elen != len || memcmp(again, frame, len) != 0)
            fail_msg("%s: re-encoded JSON header differs from Java's:\n%.*s", bin_name,
                     (int)rmq_cmd_header_size(c), (const char *)again + 8);
        (*byte_exact)++;
    }
    /* and across forms: the other serialization carries the same command */
    c->serialize_type ^= 1;
    uint8_t *other = codec_encode(c, &elen);
    rmq_cmd *o = rmq_cmd_decode(other, elen, err, sizeof err);
    if (!o)
        fail_msg("%s: cross-form decode failed: %s", bin_name, err);
    codec_assert_same_cmd(c, o);
    rmq_cmd_free(o);
    free(other);

    json_decref(want);
    rmq_cmd_free(d);
    rmq_cmd_free(c);
    free(again);
    free(txt);
    free(frame);
}

static void test_every_recorded_frame_decodes_and_round_trips(void **state)
{
    (void)state;
    DIR *dir = opendir(RMQ_VECTORS_DIR);
    if (!dir)
        fail_msg("cannot open vectors dir %s", RMQ_VECTORS_DIR);
    int count = 0, byte_exact = 0, binary = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".bin") != 0)
            continue;
        check_vector(RMQ_VECTORS_DIR, e->d_name, &byte_exact);
        count++;
        binary += strstr(e->d_name, ".rocketmq.") != NULL;
    }
    closedir(dir);
    print_message("%d vectors (%d binary), %d JSON headers re-encoded byte-identical\n", count,
                  binary, byte_exact);
    assert_true(count >= 60);
    assert_true(binary >= 10);
    assert_true(byte_exact >= count - binary);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_recorded_frame_decodes_and_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
