/* test_kv_and_config.c — KV namespaces and kvConfig.json (protocol.md §4.4.1-
 * §4.4.3, §4.8, §4.13 item 5) and the NameServer configuration keys,
 * properties text and allow-listed updates (§4.4.16, §4.4.17). */
#include "kv_store.h"
#include "namesrv_config.h"
#include "namesrv_test_util.h"

static char *take(text_buf *b)
{
    return tb_take(b, NULL);
}

static void test_kv_put_get_delete_keeps_empty_namespace(void **state)
{
    (void)state;
    kv_store kv;
    kv_store_init(&kv);
    assert_int_equal(kv_store_put(&kv, "NS", "k", "v1"), 0);
    assert_int_equal(kv_store_put(&kv, "NS", "k", "v2"), 0);
    assert_string_equal(kv_store_get(&kv, "NS", "k"), "v2");
    assert_null(kv_store_get(&kv, "NS", "other"));
    assert_null(kv_store_get(&kv, "NONE", "k"));
    assert_true(kv_store_delete(&kv, "NS", "k"));
    assert_false(kv_store_delete(&kv, "NS", "k"));
    assert_true(kv_store_has_namespace(&kv, "NS"));
    text_buf b;
    tb_init(&b);
    assert_true(kv_store_encode_table(&kv, "NS", &b));
    char *s = take(&b);
    assert_string_equal(s, "{\"table\":{}}");
    free(s);
    tb_init(&b);
    assert_false(kv_store_encode_table(&kv, "NONE", &b));
    tb_free(&b);
    kv_store_destroy(&kv);
}

static void test_kv_put_without_value_reads_back_absent(void **state)
{
    (void)state;
    kv_store kv;
    kv_store_init(&kv);
    kv_store_put(&kv, "NS", "k", "v");
    kv_store_put(&kv, "NS", "k", NULL);
    assert_null(kv_store_get(&kv, "NS", "k"));
    kv_store_put(&kv, "NEW", "k", NULL);
    assert_true(kv_store_has_namespace(&kv, "NEW"));
    kv_store_destroy(&kv);
}

static void test_kv_file_round_trip_in_java_format(void **state)
{
    (void)state;
    kv_store kv;
    kv_store_init(&kv);
    kv_store_put(&kv, "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:8;broker-b:8");
    kv_store_put(&kv, "X", "q\"uote", "\xc3\xbc/");
    text_buf b;
    tb_init(&b);
    kv_store_encode_file(&kv, &b);
    char *s = take(&b);
    assert_string_equal(
        s, "{\"configTable\":{\"ORDER_TOPIC_CONFIG\":{\"TopicA\":\"broker-a:8;broker-b:8\"},"
           "\"X\":{\"q\\\"uote\":\"\xc3\xbc/\"}}}");
    kv_store back;
    kv_store_init(&back);
    char err[128];
    assert_int_equal(kv_store_load(&back, s, strlen(s), err, sizeof(err)), 0);
    assert_string_equal(kv_store_get(&back, "X", "q\"uote"), "\xc3\xbc/");
    assert_string_equal(kv_store_get(&back, "ORDER_TOPIC_CONFIG", "TopicA"),
                        "broker-a:8;broker-b:8");
    free(s);
    kv_store_destroy(&back);
    kv_store_destroy(&kv);
}

static void test_kv_load_reports_corrupt_text(void **state)
{
    (void)state;
    kv_store kv;
    kv_store_init(&kv);
    char err[128] = "";
    assert_int_equal(kv_store_load(&kv, "{\"configTable\":{", 16, err, sizeof(err)), -1);
    assert_true(err[0] != '\0');
    assert_int_equal(kv_store_load(&kv, "{\"configTable\":[]}", 18, err, sizeof(err)), -1);
    kv_store_destroy(&kv);
}

typedef struct seen {
    char keys[8][64];
    char values[8][64];
    int n;
} seen;

static void collect(const char *k, const char *v, void *ud)
{
    seen *s = ud;
    snprintf(s->keys[s->n], 64, "%s", k);
    snprintf(s->values[s->n], 64, "%s", v);
    s->n++;
}

static void test_properties_parse_java_syntax(void **state)
{
    (void)state;
    const char *text = "# comment\n! also\n  a=1\nb : two words \\\n   continued\nc\\=d=e\\u0041\n"
                       "flag true\n\nempty=\n";
    seen s = {0};
    assert_int_equal(properties_parse(text, strlen(text), collect, &s), 0);
    assert_int_equal(s.n, 5);
    assert_string_equal(s.keys[0], "a");
    assert_string_equal(s.values[0], "1");
    assert_string_equal(s.keys[1], "b");
    assert_string_equal(s.values[1], "two words continued");
    assert_string_equal(s.keys[2], "c=d");
    assert_string_equal(s.values[2], "eA");
    assert_string_equal(s.keys[3], "flag");
    assert_string_equal(s.values[3], "true");
    assert_string_equal(s.keys[4], "empty");
    assert_string_equal(s.values[4], "");
    seen t = {0};
    assert_int_equal(properties_parse("k=\\uZZ", 6, collect, &t), -1);
}

static void test_config_properties_carry_java_keys_and_real_values(void **state)
{
    (void)state;
    namesrv_config cfg;
    namesrv_config_defaults(&cfg);
    namesrv_config_set_str(&cfg.kv_config_path, "/s/namesrv/kvConfig.json");
    namesrv_config_set_str(&cfg.config_store_path, "/s/namesrv/namesrv.properties");
    cfg.listen_port = 40123;
    text_buf b;
    tb_init(&b);
    namesrv_config_properties(&cfg, &b);
    char *s = take(&b);
    assert_non_null(strstr(s, "listenPort=40123\n"));
    assert_non_null(strstr(s, "kvConfigPath=/s/namesrv/kvConfig.json\n"));
    assert_non_null(strstr(s, "configStorePath=/s/namesrv/namesrv.properties\n"));
    assert_non_null(strstr(s, "orderMessageEnable=false\n"));
    assert_non_null(strstr(s, "clusterTest=false\n"));
    assert_non_null(strstr(s, "productEnvName=center\n"));
    assert_non_null(strstr(s, "configBlackList=configBlackList;configStorePath;kvConfigPath\n"));
    assert_non_null(strstr(s, "serverWorkerThreads=8\n"));
    assert_null(strstr(s, "rocketmqHome=")); /* null values are skipped */
    free(s);
    namesrv_config_free(&cfg);
}

static void test_update_applies_allow_listed_and_refuses_the_rest(void **state)
{
    (void)state;
    namesrv_config cfg;
    namesrv_config_defaults(&cfg);
    config_update_result r;

    namesrv_config_update(&cfg, "orderMessageEnable=TRUE\nnoSuchKey=1\n", 36, &r);
    assert_int_equal(r.code, 0);
    assert_true(r.applied);
    assert_true(r.order_message_enable_changed);
    assert_true(cfg.order_message_enable);

    const char *black = "kvConfigPath=/etc/passwd\norderMessageEnable=false\n";
    namesrv_config_update(&cfg, black, strlen(black), &r);
    assert_int_equal(r.code, 16);
    assert_string_equal(r.remark, "Can not update config in black list.");
    assert_true(cfg.order_message_enable);

    namesrv_config_update(&cfg, "rocketmqHome=/tmp", 17, &r);
    assert_int_equal(r.code, 16);
    assert_string_equal(r.remark, "Can not update config in black list.");

    namesrv_config_set_str(&cfg.config_black_list, "configBlackList; productEnvName ");
    namesrv_config_update(&cfg, "productEnvName=x", 16, &r);
    assert_int_equal(r.code, 16);
    assert_string_equal(r.remark, "Can not update config in black list.");

    namesrv_config_update(&cfg, "listenPort=1", 12, &r);
    assert_int_equal(r.code, 16);
    assert_non_null(strstr(r.remark, "listenPort"));

    namesrv_config_update(&cfg, "k=\\uXYZW", 8, &r);
    assert_int_equal(r.code, 1);
    assert_string_equal(r.remark, "string2Properties error");

    namesrv_config_update(&cfg, NULL, 0, &r);
    assert_int_equal(r.code, 0);
    assert_false(r.applied);
    namesrv_config_free(&cfg);
}

static void test_stored_config_reapplies_allow_listed_keys_only(void **state)
{
    (void)state;
    namesrv_config cfg;
    namesrv_config_defaults(&cfg);
    const char *text = "orderMessageEnable=true\nlistenPort=1\nkvConfigPath=/x\n";
    namesrv_config_apply_stored(&cfg, text, strlen(text));
    assert_true(cfg.order_message_enable);
    assert_int_equal(cfg.listen_port, 9876);
    assert_null(cfg.kv_config_path);
    namesrv_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_put_get_delete_keeps_empty_namespace),
        cmocka_unit_test(test_kv_put_without_value_reads_back_absent),
        cmocka_unit_test(test_kv_file_round_trip_in_java_format),
        cmocka_unit_test(test_kv_load_reports_corrupt_text),
        cmocka_unit_test(test_properties_parse_java_syntax),
        cmocka_unit_test(test_config_properties_carry_java_keys_and_real_values),
        cmocka_unit_test(test_update_applies_allow_listed_and_refuses_the_rest),
        cmocka_unit_test(test_stored_config_reapplies_allow_listed_keys_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
