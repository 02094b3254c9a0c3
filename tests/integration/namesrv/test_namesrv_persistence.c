/* test_namesrv_persistence.c — KV survives a restart in Java's file format,
 * a corrupt kvConfig.json falls back to its .bak, and run-time config
 * changes persist to configStorePath (protocol.md §4.8, issue item 4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "namesrv_frames.h"

static char *read_text(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Each test owns one daemon; teardown always stops it, even after a failure. */
static int setup(void **state)
{
    return ns_setup(state, NULL);
}

static void test_kv_survives_restart_in_java_format(void **state)
{
    ns_fixture *f = *state;
    const char *put[] = {"namespace", "ORDER_TOPIC_CONFIG",    "key", "TopicA",
                         "value",     "broker-a:8;broker-b:8", NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(100, put, NULL, 0, -1));
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    char path[512];
    snprintf(path, sizeof(path), "%s/namesrv/kvConfig.json", f->d.state_dir);
    char *text = read_text(path);
    assert_non_null(text);
    assert_string_equal(
        text, "{\"configTable\":{\"ORDER_TOPIC_CONFIG\":{\"TopicA\":\"broker-a:8;broker-b:8\"}}}");
    free(text);
    ns_restart(f);
    const char *get[] = {"namespace", "ORDER_TOPIC_CONFIG", "key", "TopicA", NULL};
    r = ns_call(f->fd, ns_request(101, get, NULL, 0, -1));
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "value"), "broker-a:8;broker-b:8");
    rmq_cmd_free(r);
}

static void test_corrupt_kv_file_falls_back_to_bak(void **state)
{
    ns_fixture *f = *state;
    const char *put[] = {"namespace", "NS", "key", "k", "value", "from-bak", NULL};
    rmq_cmd_free(ns_call(f->fd, ns_request(100, put, NULL, 0, -1)));
    assert_int_equal(rmq_td_stop(&f->d), 0);
    char path[512], bak[520];
    snprintf(path, sizeof(path), "%s/namesrv/kvConfig.json", f->d.state_dir);
    snprintf(bak, sizeof(bak), "%s.bak", path);
    char *good = read_text(path);
    write_text(bak, good);
    free(good);
    write_text(path, "{\"configTable\":{\"NS\":{\"k\":");
    ns_restart(f);
    const char *get[] = {"namespace", "NS", "key", "k", NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(101, get, NULL, 0, -1));
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "value"), "from-bak");
    rmq_cmd_free(r);
}

static void test_runtime_config_change_survives_restart(void **state)
{
    ns_fixture *f = *state;
    const char *on = "orderMessageEnable=true\n";
    rmq_cmd *r = ns_call(f->fd, ns_request(318, NULL, on, strlen(on), -1));
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    char path[512];
    snprintf(path, sizeof(path), "%s/namesrv/namesrv.properties", f->d.state_dir);
    char *text = read_text(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "orderMessageEnable=true\n"));
    free(text);
    ns_restart(f);
    r = ns_call(f->fd, ns_request(319, NULL, NULL, 0, -1));
    char *body = ns_body_text(r);
    assert_non_null(strstr(body, "orderMessageEnable=true\n"));
    free(body);
    rmq_cmd_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kv_survives_restart_in_java_format, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_kv_file_falls_back_to_bak, setup, ns_teardown),
        cmocka_unit_test_setup_teardown(test_runtime_config_change_survives_restart, setup,
                                        ns_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
