/* test_filter_ali_ons.c — ali-ons 3.12.0 consumers against a daemon running
 * namesrv, broker-client-mgr and filter: a SQL92 subscription becomes the
 * filter plugin's consumer filter data and dies when the client closes; TAG
 * codes the client computes equal Java String.hashCode as computed here and
 * by the plugin's engine, and reach the broker unchanged. Each test starts
 * its own daemon and one node process, and stops both in teardown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "filter_engine.h"
#include "bcm_test_daemon.h"
#include "rmq_test_node.h"
#include "rmq_test_support.h"

#define WAIT_MS 30000 /* route registration, heartbeat and flush all fit well inside */
#define TOPIC "FltTopic"
#define SQL_GROUP "FltSqlGroup"
#define TAG_GROUP "FltTagGroup"
#define SQL_EXPR "a > 5 AND b = 'x'"

typedef struct fixture {
    rmq_test_daemon d;
    int ns_port, broker_port;
    int opaque;
    rmq_node_proc node;
} fixture;

/* Clocks, pauses and free ports come from rmq_test_support.h. */

/* ---- the node process ---- */

/* argv: kind then its arguments (NULL-terminated, at most 24). */
static void node_start(fixture *f, const char *group, const char *instance, const char *const *args)
{
    char port[16];
    snprintf(port, sizeof port, "%d", f->ns_port);
    const char *argv[32] = {FI_CONSUMER_SCRIPT, port, group, TOPIC, instance};
    size_t n = 5;
    for (; args[n - 5] && n < 30; n++)
        argv[n] = args[n - 5];
    argv[n] = NULL;
    assert_int_equal(rmq_node_start(&f->node, FI_NODE, FI_NODE_MODULES, argv), 0);
}

/* The JSON after "PREFIX " on the node's next PREFIX line (caller decrefs). */
static json_t *node_json_line(fixture *f, const char *prefix)
{
    const size_t cap = 65536;
    char *line = malloc(cap);
    assert_non_null(line);
    json_t *j = NULL;
    if (rmq_node_line(&f->node, prefix, line, cap, WAIT_MS))
        j = json_loads(line + strlen(prefix), 0, NULL);
    free(line);
    if (!j)
        fail_msg("no parsable '%s' line from ali-ons", prefix);
    return j;
}

/* ---- the daemon ---- */

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    return f ? 0 : -1;
}

/* True once broker-client-mgr holds no request (`rmqhostctl --json list`
 * inflight 0). Needed before SIGTERM: the host waits for a plugin's in-flight
 * requests before calling its fini, and held PULLs are answered only by the
 * plugin's timer (already cancelled then) or its fini, so a stop with a held
 * PULL hangs until SIGKILL. pullSuspendMaxMillis bounds how long this takes
 * once the client is gone. */
static bool wait_broker_idle(fixture *f)
{
    const size_t cap = 65536;
    char *out = calloc(1, cap);
    if (!out)
        return false;
    const char *args[] = {"--json", "list", NULL};
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    bool idle = false;
    while (!idle && rmq_test_now_ms() < deadline) {
        out[0] = '\0';
        json_t *root = rmq_td_ctl(&f->d, out, cap, args) == 0 ? json_loads(out, 0, NULL) : NULL;
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(root, "plugins"), i, p)
        {
            const char *name = json_string_value(json_object_get(p, "name"));
            if (name && strcmp(name, "broker-client-mgr") == 0)
                idle = json_integer_value(json_object_get(p, "inflight")) == 0;
        }
        json_decref(root);
        if (!idle)
            rmq_test_pause_ms(100);
    }
    if (!idle)
        fprintf(stderr, "broker-client-mgr still holds requests: %s\n", out);
    free(out);
    return idle;
}

/* The node process is killed if still there; the daemon must stop cleanly
 * (under ASan this includes no leaks). */
static int teardown(void **state)
{
    fixture *f = *state;
    rmq_node_reap(&f->node, 0);
    if (f->d.pid > 0)
        wait_broker_idle(f);
    int status = f->d.pid > 0 ? rmq_td_stop(&f->d) : 0;
    if (status != 0) {
        char cmd[400];
        fprintf(stderr, "rmqhostd exited with %d; its log:\n", status);
        snprintf(cmd, sizeof cmd, "tail -n 60 '%s' >&2", f->d.log_path);
        if (system(cmd) != 0)
            fprintf(stderr, "(log unavailable)\n");
    }
    rmq_td_cleanup(&f->d);
    free(f);
    return status == 0 ? 0 : -1;
}

static rmq_cmd *call(fixture *f, int port, int code, const char *const *kv)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return NULL;
    int op = ++f->opaque;
    rmq_cmd *req = rmq_tc_request(code, op, kv);
    int rc = rmq_tc_send(fd, req);
    rmq_cmd_free(req);
    rmq_cmd *resp = NULL;
    uint64_t deadline = rmq_test_now_ms() + 5000;
    while (rc == 0 && !resp && rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        if (c && (c->flag & 1) && c->opaque == op)
            resp = c;
        else
            rmq_cmd_free(c);
    }
    close(fd);
    return resp;
}

/* namesrv on a port fixed before start (the broker needs it), broker on an
 * ephemeral one, filter bound to the broker server; returns once the
 * NameServer has the topic's route, so ali-ons finds the broker at once. */
static void start_daemon(fixture *f)
{
    if (access(FI_NODE_MODULES "/ali-ons/package.json", R_OK) != 0)
        fail_msg("ali-ons is not installed in %s (interop_install_ali_ons)", FI_NODE_MODULES);
    int ns = rmq_tc_free_port();
    assert_true(ns > 0);
    const char *servers[] = {"namesrv", "broker", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "brokerName = \"broker-flt\"; brokerClusterName = \"FltCluster\"; brokerId = 0;\n"
             "brokerIP1 = \"127.0.0.1\"; namesrvAddr = \"127.0.0.1:%d\";\n"
             "registerNameServerPeriod = 10000; topics = \"" TOPIC ":4\";\n"
             "pullSuspendMaxMillis = 1000;\n",
             ns);
    assert_int_equal(bcm_configure_namesrv_and_broker(&f->d, ns, "debug", bcm), 0);
    assert_int_equal(rmq_td_add_plugin(&f->d, "filter", "filter", "broker",
                                       "consumerFilterPersistIntervalMillis = 200;"),
                     0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    f->ns_port = rmq_td_port(&f->d, "namesrv");
    f->broker_port = rmq_td_port(&f->d, "broker");
    assert_int_equal(f->ns_port, ns);
    assert_true(f->broker_port > 0);

    const char *kv[] = {"topic", TOPIC, NULL};
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    int code = -1;
    while (code != 0 && rmq_test_now_ms() < deadline) {
        rmq_cmd *r = call(f, f->ns_port, 105, kv);
        code = r ? r->code : -1;
        rmq_cmd_free(r);
        if (code != 0)
            rmq_test_pause_ms(100);
    }
    assert_int_equal(code, 0);
}

/* The live consumer filter data of (topic, group) via `rmqhostctl
 * consumer-filter`, or NULL when the plugin has none (caller decrefs). */
static json_t *live_filter_data(fixture *f, const char *group)
{
    const size_t cap = 65536;
    char *out = calloc(1, cap);
    assert_non_null(out);
    const char *args[] = {"consumer-filter", NULL};
    int rc = rmq_td_ctl(&f->d, out, cap, args);
    json_t *root = rc == 0 ? json_loads(out, 0, NULL) : NULL;
    if (rc != 0 || !root)
        fail_msg("rmqhostctl consumer-filter: exit %d, output: %s", rc, out);
    free(out);
    json_t *e = json_object_get(
        json_object_get(json_object_get(json_object_get(root, "filterDataByTopic"), TOPIC),
                        "groupFilterData"),
        group);
    json_incref(e);
    json_decref(root);
    return e;
}

/* Same, from consumerFilter.json on disk (NULL while absent or unparsable). */
static json_t *file_filter_data(fixture *f, const char *group)
{
    char path[512];
    snprintf(path, sizeof path, "%s/filter/consumerFilter.json", f->d.state_dir);
    json_t *root = json_load_file(path, 0, NULL);
    json_t *e = json_object_get(
        json_object_get(json_object_get(json_object_get(root, "filterDataByTopic"), TOPIC),
                        "groupFilterData"),
        group);
    json_incref(e);
    json_decref(root);
    return e;
}

static bool is_dead(json_t *e)
{
    return e && json_is_true(json_object_get(e, "dead"));
}

/* Poll `get` until its entry exists with dead == want_dead. */
static json_t *wait_filter_data(fixture *f, json_t *(*get)(fixture *, const char *),
                                const char *group, bool want_dead)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    json_t *e = NULL;
    while (rmq_test_now_ms() < deadline) {
        e = get(f, group);
        if (e && is_dead(e) == want_dead)
            return e;
        json_decref(e);
        e = NULL;
        rmq_test_pause_ms(100);
    }
    fail_msg("no %s consumer filter data for %s/%s", want_dead ? "dead" : "live", TOPIC, group);
    return NULL;
}

/* The group's subscription of TOPIC in GET_CONSUMER_CONNECTION_LIST (203),
 * polled until the client's heartbeat has arrived (caller decrefs). */
static json_t *wait_broker_subscription(fixture *f, const char *group)
{
    const char *kv[] = {"consumerGroup", group, NULL};
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *r = call(f, f->broker_port, 203, kv);
        json_t *root = r && r->code == 0 && r->body
                           ? json_loadb((const char *)r->body, r->body_len, 0, NULL)
                           : NULL;
        rmq_cmd_free(r);
        json_t *sub = json_object_get(json_object_get(root, "subscriptionTable"), TOPIC);
        json_incref(sub);
        json_decref(root);
        if (sub)
            return sub;
        rmq_test_pause_ms(100);
    }
    fail_msg("group %s never showed a subscription of %s (203)", group, TOPIC);
    return NULL;
}

static void close_client(fixture *f)
{
    char line[256];
    rmq_node_send(&f->node, "close\n");
    assert_true(rmq_node_line(&f->node, "CLOSED", line, sizeof line, WAIT_MS));
    assert_int_equal(rmq_node_reap(&f->node, WAIT_MS), 0);
}

static void assert_json_string(json_t *o, const char *key, const char *want)
{
    const char *got = json_string_value(json_object_get(o, key));
    if (!got)
        fail_msg("\"%s\" missing", key);
    assert_string_equal(got, want);
}

/* ---- 1. SQL92 subscription → consumer filter data ---- */

static void test_ali_ons_sql92_subscription_is_filter_data_until_the_client_closes(void **state)
{
    fixture *f = *state;
    start_daemon(f);
    node_start(f, SQL_GROUP, "sql-1", (const char *const[]){"sql92", SQL_EXPR, NULL});
    json_t *sub = node_json_line(f, "SUB ");
    assert_json_string(sub, "expressionType", "SQL92");
    assert_json_string(sub, "subString", SQL_EXPR);
    json_int_t sub_version = json_integer_value(json_object_get(sub, "subVersion"));
    assert_true(sub_version > 0);
    json_decref(sub);

    /* the broker keeps the subscription as ali-ons sent it */
    json_t *bsub = wait_broker_subscription(f, SQL_GROUP);
    assert_json_string(bsub, "expressionType", "SQL92");
    assert_json_string(bsub, "subString", SQL_EXPR);
    json_decref(bsub);

    /* and the filter plugin compiled it into live consumer filter data */
    json_t *e = wait_filter_data(f, live_filter_data, SQL_GROUP, false);
    assert_json_string(e, "expression", SQL_EXPR);
    assert_json_string(e, "expressionType", "SQL92");
    assert_json_string(e, "consumerGroup", SQL_GROUP);
    assert_json_string(e, "topic", TOPIC);
    assert_true(json_integer_value(json_object_get(e, "clientVersion")) == sub_version);
    assert_int_equal(json_integer_value(json_object_get(e, "deadTime")), 0);
    json_int_t born = json_integer_value(json_object_get(e, "bornTime"));
    assert_true(born > 0);
    json_t *bloom = json_object_get(e, "bloomFilterData");
    assert_int_equal(json_integer_value(json_object_get(bloom, "bitNum")), 112);
    assert_int_equal(json_array_size(json_object_get(bloom, "bitPos")), 3);
    json_decref(e);
    /* flushed to disk alive as well */
    json_decref(wait_filter_data(f, file_filter_data, SQL_GROUP, false));

    /* close() unregisters the client: the group is gone, its data dead */
    close_client(f);
    e = wait_filter_data(f, live_filter_data, SQL_GROUP, true);
    assert_json_string(e, "expression", SQL_EXPR);
    assert_true(json_integer_value(json_object_get(e, "deadTime")) >= born);
    assert_true(json_integer_value(json_object_get(e, "clientVersion")) == sub_version);
    json_decref(e);
    e = wait_filter_data(f, file_filter_data, SQL_GROUP, true);
    assert_json_string(e, "expression", SQL_EXPR);
    json_decref(e);
}

/* ---- 2. TAG codes ---- */

/* Java String.hashCode over the UTF-16 units of valid UTF-8 text, written
 * here independently of both the client and the plugin. */
static int32_t java_hash_code(const char *utf8)
{
    const unsigned char *s = (const unsigned char *)utf8;
    uint32_t h = 0;
    while (*s) {
        uint32_t cp;
        int extra;
        if (*s < 0x80)
            cp = *s, extra = 0;
        else if ((*s & 0xE0) == 0xC0)
            cp = *s & 0x1F, extra = 1;
        else if ((*s & 0xF0) == 0xE0)
            cp = *s & 0x0F, extra = 2;
        else
            cp = *s & 0x07, extra = 3;
        s++;
        for (int i = 0; i < extra; i++, s++) {
            assert_true((*s & 0xC0) == 0x80); /* test data is valid UTF-8 */
            cp = (cp << 6) | (*s & 0x3F);
        }
        if (cp >= 0x10000) {
            h = 31u * h + (0xD800u + ((cp - 0x10000u) >> 10));
            h = 31u * h + (0xDC00u + ((cp - 0x10000u) & 0x3FFu));
        } else {
            h = 31u * h + cp;
        }
    }
    return (int32_t)h;
}

static bool json_array_has_int(json_t *a, json_int_t v)
{
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        if (json_is_integer(x) && json_integer_value(x) == v)
            return true;
    }
    return false;
}

static bool json_array_has_string(json_t *a, const char *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        if (json_is_string(x) && strcmp(json_string_value(x), v) == 0)
            return true;
    }
    return false;
}

static void test_ali_ons_tag_codes_equal_java_hash_code_of_the_filter_engine(void **state)
{
    fixture *f = *state;
    start_daemon(f);
    /* ASCII, BMP scripts, astral characters (surrogate pairs in Java), a tag
     * whose hash is Integer.MIN_VALUE, and a long one that wraps many times */
    char long_tag[1024] = "";
    for (int i = 0; i < 40; i++)
        strcat(long_tag, "长标签Long-タグ-");
    const char *tags[] = {"TagA", "订单已创建", "Größe-Ä",
                          "Ключ", "emoji-😀-🚀",  "polygenelubricants",
                          "𝄞𠀀",  long_tag,     NULL};
    size_t ntags = 0;
    while (tags[ntags])
        ntags++;
    assert_int_equal(java_hash_code("polygenelubricants"), INT32_MIN);

    const char *args[16] = {"tags"};
    for (size_t i = 0; i < ntags; i++)
        args[i + 1] = tags[i];
    args[ntags + 1] = NULL;
    node_start(f, TAG_GROUP, "tag-1", args);
    json_t *sub = node_json_line(f, "SUB ");
    json_t *hash = node_json_line(f, "HASH ");
    json_t *codes = json_object_get(sub, "codeSet"), *tagset = json_object_get(sub, "tagsSet");
    assert_int_equal(json_array_size(tagset), ntags);
    assert_int_equal(json_array_size(codes), ntags);
    assert_int_equal(json_array_size(hash), ntags);

    json_t *bsub = wait_broker_subscription(f, TAG_GROUP);
    json_t *bcodes = json_object_get(bsub, "codeSet"), *btags = json_object_get(bsub, "tagsSet");
    assert_int_equal(json_array_size(bcodes), ntags);
    assert_int_equal(json_array_size(btags), ntags);

    for (size_t i = 0; i < ntags; i++) {
        int32_t mine = java_hash_code(tags[i]);
        int32_t engine = rmq_java_string_hash(tags[i], strlen(tags[i]));
        json_int_t client = json_integer_value(json_array_get(codes, i));
        if (mine != engine || client != mine ||
            json_integer_value(json_array_get(hash, i)) != mine ||
            !json_array_has_int(bcodes, mine))
            fail_msg("tag %zu '%.40s': Java %d, filter engine %d, ali-ons %lld, broker codeSet %s",
                     i, tags[i], (int)mine, (int)engine, (long long)client,
                     json_array_has_int(bcodes, mine) ? "has it" : "lacks it");
        assert_string_equal(json_string_value(json_array_get(tagset, i)), tags[i]);
        assert_true(json_array_has_string(btags, tags[i]));
    }
    json_decref(sub);
    json_decref(hash);
    json_decref(bsub);

    /* TAG subscriptions are never consumer filter data */
    json_t *e = live_filter_data(f, TAG_GROUP);
    assert_null(e);
    close_client(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_ali_ons_sql92_subscription_is_filter_data_until_the_client_closes, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_ali_ons_tag_codes_equal_java_hash_code_of_the_filter_engine, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
