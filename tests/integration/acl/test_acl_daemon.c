/* test_acl_daemon.c — acl-broker and acl-namesrv in one real daemon with
 * namesrv and broker-client-mgr: Java 4.9.8's refusals for a wrong secret, an
 * unknown key, a missing PUB, a non-admin admin code and an address outside
 * the white list; the NameServer refusing unsigned state changes yet
 * admitting a white-listed broker; broker-client-mgr registering with
 * credentials; file edits applied without restart; codes 50-54 round-trip;
 * per-peer stats; secrets masked in rmqhostctl config; refusals handled at
 * once on both IO threads each keeping their own remark (SDK 1.7 hook). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>

#include "acl_signature.h"
#include "bcm_test_daemon.h"

#define TIMEOUT_MS 5000
#define FRAME "org.apache.rocketmq.acl.plain.PlainPermissionManager."
#define EXC "org.apache.rocketmq.acl.common.AclException: "

typedef struct env {
    rmq_test_daemon d;
    int broker, ns;
    char broker_yml[400], ns_yml[400];
} env;

static const char BROKER_YML[] = "globalWhiteRemoteAddresses:\n"
                                 "- 10.10.103.*\n"
                                 "accounts:\n"
                                 "- accessKey: RocketMQ\n"
                                 "  secretKey: 12345678\n"
                                 "  admin: false\n"
                                 "  defaultTopicPerm: DENY\n"
                                 "  defaultGroupPerm: SUB\n"
                                 "  topicPerms:\n"
                                 "  - topicB=PUB|SUB\n"
                                 "  - topicC=SUB\n"
                                 "- accessKey: rocketmq2\n"
                                 "  secretKey: 87654321\n"
                                 "  admin: true\n";

/* acl-namesrv reads a directory (aclDir): this file and a second one with
 * the reader account (ns_acl/20-readers.yaml, in a subdirectory). */
static const char NS_YML[] = "globalWhiteRemoteAddresses:\n"
                             "accounts:\n"
                             "- accessKey: brokeradmin\n"
                             "  secretKey: brokersecret\n"
                             "  admin: true\n";
static const char NS_READERS_YML[] = "accounts:\n"
                                     "- accessKey: reader1\n"
                                     "  secretKey: readersecret\n"
                                     "  admin: false\n";

static void write_0600(const char *path, const char *text)
{
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(tmp, 0600), 0);
    assert_int_equal(rename(tmp, path), 0);
}

/* A request with kv fields (+ AccessKey and Signature when ak is given). */
static rmq_cmd *call(int port, int code, const char *const *kv, const char *body, const char *ak,
                     const char *sk)
{
    rmq_cmd *req = rmq_tc_request(code, 7, kv);
    assert_non_null(req);
    if (body)
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    if (ak) {
        rmq_cmd_ext_set(req, "AccessKey", ak);
        req->has_ext = true;
        acl_field f[32];
        size_t n = 0;
        for (size_t i = 0; kv && kv[i] && n < 30; i += 2)
            f[n++] = (acl_field){kv[i], kv[i + 1]};
        f[n++] = (acl_field){"AccessKey", ak};
        char sig[ACL_SIGNATURE_LEN + 1];
        assert_int_equal(acl_sign(sk, f, n, body, body ? strlen(body) : 0, sig), 0);
        rmq_cmd_ext_set(req, "Signature", sig);
    }
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    rmq_cmd *resp = rmq_tc_call_response(fd, req, TIMEOUT_MS);
    close(fd);
    rmq_cmd_free(req);
    assert_non_null(resp);
    return resp;
}

static void expect(rmq_cmd *resp, int code, const char *remark)
{
    if (resp->code != code || (remark && (!resp->remark || strcmp(resp->remark, remark) != 0)))
        print_message("got code %d remark '%s'\n", resp->code, resp->remark ? resp->remark : "");
    assert_int_equal(resp->code, code);
    if (remark)
        assert_string_equal(resp->remark, remark);
    rmq_cmd_free(resp);
}

static int setup(void **state)
{
    env *e = calloc(1, sizeof(*e));
    const char *servers[] = {"namesrv", "broker", NULL};
    int ns = rmq_tc_free_port();
    if (!e || ns <= 0 || rmq_td_init(&e->d, servers, NULL) != 0)
        return -1;
    snprintf(e->broker_yml, sizeof(e->broker_yml), "%s/broker_acl.yml", e->d.dir);
    char bs[512], as[600];
    char ns_dir[400], readers[450];
    snprintf(ns_dir, sizeof(ns_dir), "%s/ns_acl", e->d.dir);
    snprintf(readers, sizeof(readers), "%s/more/20-readers.yaml", ns_dir);
    snprintf(e->ns_yml, sizeof(e->ns_yml), "%s/10-namesrv.yml", ns_dir);
    if (mkdir(ns_dir, 0700) != 0)
        return -1;
    snprintf(as, sizeof(as), "%s/more", ns_dir);
    if (mkdir(as, 0700) != 0)
        return -1;
    write_0600(readers, NS_READERS_YML);
    write_0600(e->broker_yml, BROKER_YML);
    write_0600(e->ns_yml, NS_YML);
    snprintf(bs, sizeof(bs),
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"aclbroker\"; "
             "registerNameServerPeriod = 10000; accessKey = \"brokeradmin\"; "
             "secretKey = \"brokersecret\";",
             ns);
    if (bcm_configure_namesrv_and_broker(&e->d, ns, "info", bs) != 0)
        return -1;
    snprintf(as, sizeof(as), "role = \"broker\"; aclFile = \"%s\"; watchIntervalMs = 100;",
             e->broker_yml);
    if (rmq_td_add_plugin(&e->d, "acl-broker", "acl", "broker", as) != 0)
        return -1;
    snprintf(as, sizeof(as), "role = \"namesrv\"; aclDir = \"%s\"; watchIntervalMs = 100;", ns_dir);
    if (rmq_td_add_plugin(&e->d, "acl-namesrv", "acl", "namesrv", as) != 0 ||
        rmq_td_start(&e->d, NULL) != 0)
        return -1;
    e->broker = rmq_td_port(&e->d, "broker");
    e->ns = ns;
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    int rc = rmq_td_stop_reporting(&e->d);
    rmq_td_cleanup(&e->d);
    free(e);
    return rc == 0 ? 0 : -1;
}

static void broker_refusals_as_java(void **state)
{
    env *e = *state;
    const char *send_b[] = {"a", "pg", "b", "topicB", "c", "TBW102", NULL};
    const char *send_c[] = {"a", "pg", "b", "topicC", "c", "TBW102", NULL};
    /* outside the white list (10.10.103.*), unsigned */
    expect(call(e->broker, 310, send_b, "x", NULL, NULL), 1,
           EXC "No accessKey is configured, " FRAME "validate(PlainPermissionManager.java:664)");
    expect(call(e->broker, 310, send_b, "x", "nobody123", "whatever1"), 1,
           EXC "No acl config for nobody123, " FRAME "validate(PlainPermissionManager.java:668)");
    expect(call(e->broker, 310, send_b, "x", "RocketMQ", "wrongsecret"), 1,
           EXC "Check signature failed for accessKey=RocketMQ, " FRAME
               "validate(PlainPermissionManager.java:684)");
    expect(call(e->broker, 310, send_c, "x", "RocketMQ", "12345678"), 1,
           EXC "No default permission for topic:topicC, " FRAME
               "checkPerm(PlainPermissionManager.java:611)");
    const char *create[] = {"topic", "topicB", "readQueueNums", "4", NULL};
    expect(call(e->broker, 17, create, NULL, "RocketMQ", "12345678"), 1,
           EXC "Need admin permission for request code=17, but accessKey=RocketMQ is not, " FRAME
               "checkPerm(PlainPermissionManager.java:581)");
    /* a permitted, signed request reaches broker-client-mgr */
    char hb[512];
    bcm_consumer_heartbeat(hb, sizeof(hb), "c1@1", "groupX", "topicB", false);
    expect(call(e->broker, 34, NULL, hb, "RocketMQ", "12345678"), 0, NULL);
    /* stats count the failures of this peer */
    int st = -1;
    const char *out = rmq_td_ctl_output(&e->d, &st, "acl-broker-stats", NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "peer 127.0.0.1: 3 failed authentications, 2 refused permissions"));
    assert_true(rmq_td_log_contains(&e->d, "refused code 310 from 127.0.0.1"));
}

/* One client connection of refusals_in_flight: pipelines REFUSERS_PER
 * requests, each refused with a remark naming something only it carries
 * (its own unknown accessKey, or its own topic the account may not use),
 * then matches every answer to its request by opaque. No cmocka here (not
 * thread-safe): the first mismatch is kept for the main thread. */
#define REFUSER_CLIENTS 6
#define REFUSER_REQUESTS 40

typedef struct refuser {
    int port, idx;
    char failure[600];
} refuser;

static void refusal_for(const refuser *r, int i, char *ak, size_t aklen, char *topic,
                        size_t topiclen, char *remark, size_t remarklen)
{
    if (i % 2 == 0) {
        snprintf(ak, aklen, "nobody%d_%d", r->idx, i);
        snprintf(topic, topiclen, "topicB");
        snprintf(remark, remarklen,
                 EXC "No acl config for %s, " FRAME "validate(PlainPermissionManager.java:668)",
                 ak);
    } else {
        snprintf(ak, aklen, "RocketMQ");
        snprintf(topic, topiclen, "topicD%d_%d", r->idx, i);
        snprintf(remark, remarklen,
                 EXC "No default permission for topic:%s, " FRAME
                     "checkPerm(PlainPermissionManager.java:606)",
                 topic);
    }
}

static void *refuse_many(void *arg)
{
    refuser *r = arg;
    int fd = rmq_tc_connect(r->port);
    if (fd < 0) {
        snprintf(r->failure, sizeof(r->failure), "client %d cannot connect", r->idx);
        return NULL;
    }
    char ak[64], topic[64], remark[400];
    for (int i = 0; i < REFUSER_REQUESTS; i++) {
        refusal_for(r, i, ak, sizeof(ak), topic, sizeof(topic), remark, sizeof(remark));
        const char *kv[] = {"a", "pg", "b", topic, "c", "TBW102", "AccessKey", ak, NULL};
        rmq_cmd *req = rmq_tc_request(310, 1000 + i, kv);
        acl_field all[4] = {{"a", "pg"}, {"b", topic}, {"c", "TBW102"}, {"AccessKey", ak}};
        char sig[ACL_SIGNATURE_LEN + 1];
        rmq_cmd_set_body(req, "x", 1, NULL, NULL);
        acl_sign(i % 2 ? "12345678" : "whatever1", all, 4, "x", 1, sig);
        rmq_cmd_ext_set(req, "Signature", sig);
        int rc = rmq_tc_send(fd, req);
        rmq_cmd_free(req);
        if (rc != 0) {
            snprintf(r->failure, sizeof(r->failure), "client %d cannot send %d", r->idx, i);
            close(fd);
            return NULL;
        }
    }
    for (int n = 0; n < REFUSER_REQUESTS && !r->failure[0]; n++) {
        rmq_cmd *resp = rmq_tc_recv(fd, TIMEOUT_MS);
        if (!resp) {
            snprintf(r->failure, sizeof(r->failure), "client %d: answer %d missing", r->idx, n);
            break;
        }
        int i = resp->opaque - 1000;
        if (i < 0 || i >= REFUSER_REQUESTS) {
            snprintf(r->failure, sizeof(r->failure), "client %d: opaque %d", r->idx, resp->opaque);
        } else {
            refusal_for(r, i, ak, sizeof(ak), topic, sizeof(topic), remark, sizeof(remark));
            if (resp->code != 1 || !resp->remark || strcmp(resp->remark, remark) != 0)
                snprintf(r->failure, sizeof(r->failure),
                         "client %d request %d: code %d remark '%s', want '%s'", r->idx, i,
                         resp->code, resp->remark ? resp->remark : "(none)", remark);
        }
        rmq_cmd_free(resp);
    }
    close(fd);
    return NULL;
}

/* The daemon runs io_threads = 2: the clients' connections are spread over
 * both loops, whose hooks refuse at the same time into buffers of their own. */
static void refusals_in_flight(void **state)
{
    env *e = *state;
    refuser r[REFUSER_CLIENTS];
    pthread_t t[REFUSER_CLIENTS];
    for (int i = 0; i < REFUSER_CLIENTS; i++) {
        r[i] = (refuser){.port = e->broker, .idx = i};
        assert_int_equal(pthread_create(&t[i], NULL, refuse_many, &r[i]), 0);
    }
    for (int i = 0; i < REFUSER_CLIENTS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < REFUSER_CLIENTS; i++)
        if (r[i].failure[0])
            fail_msg("%s", r[i].failure);
}

static void secrets_not_shown(void **state)
{
    env *e = *state;
    int st = -1;
    const char *out = rmq_td_ctl_output(&e->d, &st, "config", NULL);
    assert_int_equal(st, 0);
    assert_null(strstr(out, "brokersecret"));
    assert_non_null(strstr(out, "******"));
    assert_false(rmq_td_log_contains(&e->d, "brokersecret"));
    assert_false(rmq_td_log_contains(&e->d, "12345678"));
}

static bool cluster_has(int port, const char *name)
{
    rmq_cmd *r = call(port, 106, NULL, NULL, "reader1", "readersecret");
    bool has = r->code == 0 && r->body && memmem(r->body, r->body_len, name, strlen(name));
    rmq_cmd_free(r);
    return has;
}

static void namesrv_policy(void **state)
{
    env *e = *state;
    /* the rmqhost broker signs its registration with an admin account */
    uint64_t deadline = rmq_test_now_ms() + 15000;
    while (!cluster_has(e->ns, "aclbroker") && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(50);
    assert_true(cluster_has(e->ns, "aclbroker"));
    assert_true(rmq_td_log_contains(&e->d, "audit: code 103 admitted for accessKey=brokeradmin"));
    /* unsigned state changes are refused */
    expect(call(e->ns, 318, NULL, "deleteTopicEnable=true", NULL, NULL), 1,
           EXC "No accessKey is configured, " FRAME "validate(PlainPermissionManager.java:664)");
    const char *del[] = {"topic", "TBW102", NULL};
    expect(call(e->ns, 216, del, NULL, NULL, NULL), 1, NULL);
    /* a non-admin account may read but not change */
    expect(call(e->ns, 216, del, NULL, "reader1", "readersecret"), 1,
           EXC "Need admin permission for request code=216, but accessKey=reader1 is not, " FRAME
               "checkPerm(PlainPermissionManager.java:581)");
    /* an unsigned registration from an address not (yet) white-listed */
    rmq_tc_broker b = {"C1", "javabroker", "127.0.0.1:30911", NULL, 0};
    rmq_cmd *reg = rmq_tc_register_broker_request(9, &b, NULL, 0);
    int fd = rmq_tc_connect(e->ns);
    rmq_cmd *resp = rmq_tc_call_response(fd, reg, TIMEOUT_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 1);
    rmq_cmd_free(resp);
    /* white-list 127.0.0.1 by editing the file: applies without restart */
    char yml[1024];
    snprintf(yml, sizeof(yml), "%s", NS_YML);
    char *p = strstr(yml, "globalWhiteRemoteAddresses:\n");
    assert_non_null(p);
    char edited[1200];
    snprintf(edited, sizeof(edited), "globalWhiteRemoteAddresses:\n- 127.0.0.{1,2}\n%s",
             p + strlen("globalWhiteRemoteAddresses:\n"));
    write_0600(e->ns_yml, edited);
    deadline = rmq_test_now_ms() + 10000;
    int code = 1;
    while (code != 0 && rmq_test_now_ms() < deadline) {
        reg->opaque++;
        resp = rmq_tc_call_response(fd, reg, TIMEOUT_MS);
        assert_non_null(resp);
        code = resp->code;
        rmq_cmd_free(resp);
        if (code)
            rmq_test_pause_ms(50);
    }
    assert_int_equal(code, 0);
    close(fd);
    rmq_cmd_free(reg);
    /* a file that no longer parses leaves the last rules in force */
    write_0600(e->ns_yml, "accounts: [\n");
    deadline = rmq_test_now_ms() + 10000;
    while (!rmq_td_log_contains(&e->d, "ACL files changed but are refused") &&
           rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(50);
    assert_true(rmq_td_log_contains(&e->d, "ACL files changed but are refused"));
    const char *route[] = {"topic", "noSuchTopic", NULL};
    /* still white-listed: the answer is the NameServer's TOPIC_NOT_EXIST */
    expect(call(e->ns, 105, route, NULL, NULL, NULL), 17, NULL);
    /* a file group/other can read is refused too */
    write_0600(e->ns_yml, NS_YML);
    chmod(e->ns_yml, 0644);
    deadline = rmq_test_now_ms() + 10000;
    while (!rmq_td_log_contains(&e->d, "group/other may access it") && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(50);
    assert_true(rmq_td_log_contains(&e->d, "group/other may access it (mode 0644)"));
    chmod(e->ns_yml, 0600);
}

static void admin_codes_round_trip(void **state)
{
    env *e = *state;
    const char *create[] = {
        "accessKey",        "newuser1", "secretKey",  "newsecret1",  "admin", "false",
        "defaultTopicPerm", "PUB",      "topicPerms", "topicZ=DENY", NULL};
    /* 4.9.8 lets any account do this; rmqhost wants an admin */
    expect(call(e->broker, 50, create, NULL, "RocketMQ", "12345678"), 1,
           EXC "Need admin permission for request code=50, but accessKey=RocketMQ is not, " FRAME
               "checkPerm(PlainPermissionManager.java:581)");
    expect(call(e->broker, 50, create, NULL, "rocketmq2", "87654321"), 0, NULL);
    assert_true(rmq_td_log_contains(&e->d, "audit: code 50 admitted for accessKey=rocketmq2"));
    /* an update without the secret fails as Java's (the secret is not echoed) */
    const char *nosecret[] = {"accessKey", "newuser1", "admin", "true", NULL};
    expect(call(e->broker, 50, nosecret, NULL, "rocketmq2", "87654321"), 209,
           "The accessKey=newuser1 and secretKey cannot be null and length should longer than 6");
    struct stat st;
    assert_int_equal(stat(e->broker_yml, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* the new account works at once */
    const char *send[] = {"a", "pg", "b", "anyTopic", "c", "TBW102", NULL};
    rmq_cmd *r = call(e->broker, 310, send, "x", "newuser1", "newsecret1");
    assert_null(r->remark ? strstr(r->remark, "AclException") : NULL);
    rmq_cmd_free(r);
    const char *send_z[] = {"a", "pg", "b", "topicZ", "c", "TBW102", NULL};
    expect(call(e->broker, 310, send_z, "x", "newuser1", "newsecret1"), 1,
           EXC "No default permission for topic:topicZ, " FRAME
               "checkPerm(PlainPermissionManager.java:611)");
    /* 54 lists it, 52 shows the file's new version */
    r = call(e->broker, 54, NULL, NULL, "rocketmq2", "87654321");
    assert_int_equal(r->code, 0);
    assert_non_null(memmem(r->body, r->body_len, "\"accessKey\":\"newuser1\"", 22));
    rmq_cmd_free(r);
    r = call(e->broker, 52, NULL, NULL, "rocketmq2", "87654321");
    assert_int_equal(r->code, 0);
    assert_non_null(rmq_cmd_ext_get(r, "version"));
    assert_non_null(strstr(rmq_cmd_ext_get(r, "version"), "\"counter\":1"));
    rmq_cmd_free(r);
    /* 53 replaces the global white list */
    const char *white[] = {"globalWhiteAddrs", "10.1.1.1,10.1.1.2", NULL};
    expect(call(e->broker, 53, white, NULL, "rocketmq2", "87654321"), 0, NULL);
    /* 51 deletes; the key is then unknown */
    const char *del[] = {"accessKey", "newuser1", NULL};
    expect(call(e->broker, 51, del, NULL, "rocketmq2", "87654321"), 0, NULL);
    expect(call(e->broker, 310, send, "x", "newuser1", "newsecret1"), 1,
           EXC "No acl config for newuser1, " FRAME "validate(PlainPermissionManager.java:668)");
    expect(call(e->broker, 51, del, NULL, "rocketmq2", "87654321"), 210,
           "The accessKey[newuser1] corresponding to accessConfig has been deleted failed.");
    /* the file still loads as Java's format after the rewrites */
    FILE *f = fopen(e->broker_yml, "r");
    char text[4096];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    assert_non_null(strstr(text, "- \"10.1.1.2\""));
    assert_null(strstr(text, "newuser1"));
    assert_non_null(strstr(text, "dataVersion:"));
}

static void editing_broker_file_applies(void **state)
{
    env *e = *state;
    const char *send_c[] = {"a", "pg", "b", "topicC", "c", "TBW102", NULL};
    char yml[2048];
    snprintf(yml, sizeof(yml), "%s", BROKER_YML);
    char *p = strstr(yml, "topicC=SUB");
    assert_non_null(p);
    memcpy(p, "topicC=PUB", 10);
    write_0600(e->broker_yml, yml);
    uint64_t deadline = rmq_test_now_ms() + 10000;
    bool ok = false;
    while (!ok && rmq_test_now_ms() < deadline) {
        rmq_cmd *r = call(e->broker, 310, send_c, "x", "RocketMQ", "12345678");
        ok = !(r->remark && strstr(r->remark, "AclException"));
        rmq_cmd_free(r);
        if (!ok)
            rmq_test_pause_ms(50);
    }
    assert_true(ok);
    /* rmqhostctl reload with a file that does not parse: refused, the
     * running generation keeps its rules */
    write_0600(e->broker_yml, "accounts:\n- accessKey: short\n  secretKey: x\n");
    int st = -1;
    rmq_td_ctl_output(&e->d, &st, "reload", "acl-broker", NULL);
    assert_int_equal(st, 1);
    rmq_cmd *r = call(e->broker, 310, send_c, "x", "RocketMQ", "12345678");
    assert_null(r->remark ? strstr(r->remark, "AclException") : NULL);
    rmq_cmd_free(r);
    /* and with the file fixed, the reload goes through */
    write_0600(e->broker_yml, yml);
    rmq_td_ctl_output(&e->d, &st, "reload", "acl-broker", NULL);
    assert_int_equal(st, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(broker_refusals_as_java), cmocka_unit_test(refusals_in_flight),
        cmocka_unit_test(secrets_not_shown),       cmocka_unit_test(namesrv_policy),
        cmocka_unit_test(admin_codes_round_trip),  cmocka_unit_test(editing_broker_file_applies),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, setup, teardown);
}
