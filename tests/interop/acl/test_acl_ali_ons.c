/* test_acl_ali_ons.c — ali-ons signing with accessKey/secretKey against a
 * daemon whose NameServer (acl-namesrv, no anonymous reads) and broker role
 * (acl-broker + broker-client-mgr) are guarded: routes, heartbeats, consumer
 * list and offsets pass with nothing refused; a wrong secret gets Java's
 * refusal; eight unknown keys refused at once each get their own remark
 * (the SDK 1.7 hook's host buffer, on both IO threads); produce/consume once
 * a store plugin exists (skipped otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl_signature.h"
#include "bcm_test_daemon.h"
#include "rmq_test_node.h"

#define GROUP "AclInteropGroup"
/* produce_and_consume's own group: GROUP's committed offsets (40+) are past
 * the store's queues, and 4.9.8 moves such a consumer to the queue's max,
 * past the message it is to receive */
#define STORE_GROUP "AclInteropStoreGroup"
#define TOPIC "AclInteropTopic"

static const char YML[] = "globalWhiteRemoteAddresses:\n"
                          "accounts:\n"
                          "- accessKey: interopuser\n"
                          "  secretKey: interopsecret\n"
                          "  admin: false\n"
                          "  defaultTopicPerm: DENY\n"
                          "  defaultGroupPerm: DENY\n"
                          "  topicPerms:\n"
                          "  - " TOPIC "=PUB|SUB\n"
                          "  groupPerms:\n"
                          "  - " GROUP "=SUB\n"
                          "  - " GROUP "-producer=PUB\n"
                          "  - " STORE_GROUP "=SUB\n"
                          "  - " STORE_GROUP "-producer=PUB\n"
                          "- accessKey: brokeradmin\n"
                          "  secretKey: brokersecret\n"
                          "  admin: true\n";

typedef struct fixture {
    rmq_test_daemon d;
    int ns;
    bool store;
} fixture;

/* Run the node script to completion; its stdout into out. Exit status. */
static int run_node_group(fixture *f, const char *mode, const char *ak, const char *sk,
                          const char *group, char *out, size_t len)
{
    char port[16];
    snprintf(port, sizeof port, "%d", f->ns);
    const char *argv[] = {ACL_JS, mode, port, ak, sk, group, TOPIC, NULL};
    rmq_node_proc *p = calloc(1, sizeof *p);
    if (!p || rmq_node_start(p, ACL_NODE, ACL_NODE_MODULES, argv) != 0) {
        free(p);
        return -1;
    }
    rmq_node_read_all(p, out, len, 120000);
    int st = rmq_node_reap(p, 10000);
    free(p);
    printf("node %s:\n%s", mode, out);
    return st;
}

static int run_node(fixture *f, const char *mode, const char *ak, const char *sk, char *out,
                    size_t len)
{
    return run_node_group(f, mode, ak, sk, GROUP, out, len);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    const char *servers[] = {"namesrv", "broker", NULL};
    f->ns = rmq_tc_free_port();
    if (!f || f->ns <= 0 || rmq_td_init(&f->d, servers, NULL) != 0)
        return -1;
    char yml[400];
    snprintf(yml, sizeof yml, "%s/plain_acl.yml", f->d.dir);
    FILE *fp = fopen(yml, "w");
    if (!fp)
        return -1;
    fputs(YML, fp);
    fclose(fp);
    chmod(yml, 0600);
    /* a store plugin (built on another branch) takes over produce/consume */
    char so[600];
    snprintf(so, sizeof so, "%s/store.so", RMQ_TEST_PLUGIN_DIR);
    f->store = access(so, R_OK) == 0;
    char bs[600], as[600];
    snprintf(bs, sizeof bs,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-acl\"; topics = \"" TOPIC
             ":4\"; pullSuspendMaxMillis = 2000; accessKey = \"brokeradmin\"; "
             "secretKey = \"brokersecret\";%s",
             f->ns, f->store ? " answerStorageCodes = false;" : "");
    if (bcm_configure_namesrv_and_broker(&f->d, f->ns, "info", bs) != 0)
        return -1;
    snprintf(as, sizeof as, "role = \"broker\"; aclFile = \"%s\";", yml);
    if (rmq_td_add_plugin(&f->d, "acl-broker", "acl", "broker", as) != 0)
        return -1;
    snprintf(as, sizeof as, "role = \"namesrv\"; aclFile = \"%s\";", yml);
    if (rmq_td_add_plugin(&f->d, "acl-namesrv", "acl", "namesrv", as) != 0)
        return -1;
    if (f->store && rmq_td_add_plugin(&f->d, "store", "store", "broker", NULL) != 0)
        return -1;
    if (rmq_td_start(&f->d, NULL) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    free(f);
    return rc == 0 ? 0 : -1;
}

static bool route_ready(fixture *f)
{
    char out[4096];
    return run_node(f, "route", "interopuser", "interopsecret", out, sizeof out) == 0 &&
           strstr(out, "ROUTE ok");
}

static void signed_consumer_passes(void **state)
{
    fixture *f = *state;
    uint64_t deadline = rmq_test_now_ms() + 30000;
    while (!route_ready(f) && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(200);
    char out[8192];
    assert_int_equal(run_node(f, "consumer", "interopuser", "interopsecret", out, sizeof out), 0);
    assert_non_null(strstr(out, "READY"));
    assert_non_null(strstr(out, "COMMITTED 0=40"));
    assert_non_null(strstr(out, "CLOSED"));
    /* everything ali-ons sent was admitted: nothing refused on either server */
    int st = -1;
    const char *s = rmq_td_ctl_output(&f->d, &st, "acl-broker-stats", NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(s, "refused: 0 authentication, 0 permission"));
    s = rmq_td_ctl_output(&f->d, &st, "acl-namesrv-stats", NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(s, "refused: 0 authentication, 0 permission"));
    /* the committed offset is what a signed raw QUERY_CONSUMER_OFFSET reads */
    acl_field fl[] = {
        {"consumerGroup", GROUP}, {"topic", TOPIC}, {"queueId", "0"}, {"AccessKey", "interopuser"}};
    char sig[ACL_SIGNATURE_LEN + 1];
    assert_int_equal(acl_sign("interopsecret", fl, 4, NULL, 0, sig), 0);
    const char *kv[] = {"consumerGroup", GROUP,         "topic",     TOPIC, "queueId", "0",
                        "AccessKey",     "interopuser", "Signature", sig,   NULL};
    rmq_cmd *r = bcm_call(rmq_td_port(&f->d, "broker"), 14, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "offset"), "40");
    rmq_cmd_free(r);
    assert_true(rmq_td_log_contains(&f->d, "audit: code 103 admitted for accessKey=brokeradmin"));
}

static void wrong_secret_refused(void **state)
{
    fixture *f = *state;
    char out[4096];
    assert_int_equal(run_node(f, "route", "interopuser", "not-the-secret", out, sizeof out), 0);
    assert_non_null(strstr(out, "ROUTE_ERROR"));
    assert_non_null(strstr(out, "Check signature failed for accessKey=interopuser"));
}

static void concurrent_refusals_keep_their_remark(void **state)
{
    fixture *f = *state;
    char out[16384];
    assert_int_equal(run_node(f, "ghosts", "ghostuser", "ghostsecret", out, sizeof out), 0);
    for (int i = 0; i < 8; i++) {
        char head[32], want[160];
        snprintf(head, sizeof head, "GHOST %d ", i);
        snprintf(want, sizeof want,
                 "org.apache.rocketmq.acl.common.AclException: No acl config for ghostuser%d, "
                 "org.apache.rocketmq.acl.plain.PlainPermissionManager.validate("
                 "PlainPermissionManager.java:668)",
                 i);
        int lines = 0;
        for (const char *p = strstr(out, head); p; p = strstr(p + 1, head)) {
            if (p != out && p[-1] != '\n')
                continue;
            const char *eol = strchr(p, '\n');
            size_t n = eol ? (size_t)(eol - p) : strlen(p);
            char line[400];
            snprintf(line, sizeof line, "%.*s", (int)n, p);
            if (!strstr(line, want))
                fail_msg("client %d got '%s', want the remark '%s'", i, line, want);
            lines++;
        }
        assert_int_equal(lines, 5);
    }
}

static void produce_and_consume(void **state)
{
    fixture *f = *state;
    if (!f->store) {
        print_message("skipped: no store.so in " RMQ_TEST_PLUGIN_DIR
                      " (the store plugin is built on another branch)\n");
        skip();
    }
    char out[8192];
    assert_int_equal(
        run_node_group(f, "produce", "interopuser", "interopsecret", STORE_GROUP, out, sizeof out),
        0);
    assert_non_null(strstr(out, "SENT "));
    assert_int_equal(
        run_node_group(f, "consume", "interopuser", "interopsecret", STORE_GROUP, out, sizeof out),
        0);
    assert_non_null(strstr(out, "RECEIVED hello acl"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(signed_consumer_passes),
        cmocka_unit_test(wrong_secret_refused),
        cmocka_unit_test(concurrent_refusals_keep_their_remark),
        cmocka_unit_test(produce_and_consume),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
