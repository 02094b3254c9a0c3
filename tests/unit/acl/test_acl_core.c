/* test_acl_core.c — the acl core without a daemon: white-address patterns as
 * Java's RemoteAddressStrategyFactory, plain_acl.yml loading and refusals,
 * ACL 1.0 signatures against independently computed values, and the verdicts
 * (Java 4.9.8's exception texts) for a broker and the NameServer policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "acl_check.h"
#include "acl_perm.h"

static bool match(const char *pattern, const char *ip)
{
    acl_pattern *p = NULL;
    char err[200];
    assert_int_equal(acl_pattern_compile(pattern, &p, err, sizeof(err)), 0);
    bool m = acl_pattern_match(p, ip);
    acl_pattern_free(p);
    return m;
}

static bool compiles(const char *pattern)
{
    acl_pattern *p = NULL;
    char err[200];
    int rc = acl_pattern_compile(pattern, &p, err, sizeof(err));
    acl_pattern_free(p);
    return rc == 0;
}

static void patterns(void **state)
{
    (void)state;
    assert_false(match(NULL, "127.0.0.1"));
    assert_false(match("  ", "127.0.0.1"));
    assert_true(match("*", "10.1.2.3"));
    assert_true(match("*.*.*.*", "10.1.2.3"));
    assert_true(match("192.168.0.1", "192.168.0.1"));
    assert_false(match("192.168.0.1", "192.168.0.2"));
    assert_true(match("192.168.0.*", "192.168.0.77"));
    assert_false(match("192.168.0.*", "192.168.1.77"));
    assert_true(match("192.168.*", "192.168.9.9"));
    assert_true(match("192.168.1.1-10", "192.168.1.10"));
    assert_false(match("192.168.1.1-10", "192.168.1.11"));
    assert_true(match("192.168.1-3.*", "192.168.2.200"));
    assert_false(match("192.168.1-3.*", "192.168.4.1"));
    assert_true(match("192.168.1.{1,2}", "192.168.1.2"));
    assert_false(match("192.168.1.{1,2}", "192.168.1.3"));
    assert_true(match("10.0.0.1,10.0.0.2", "10.0.0.2"));
    assert_true(match("::1", "0:0:0:0:0:0:0:1"));
    assert_true(match("fe80:0:0:0:0:0:0:*", "fe80::abcd"));
    assert_false(match("fe80:0:0:0:0:0:0:*", "fe81::abcd"));
    assert_true(match("2001:db8:0:0:0:0:0:1-ff", "2001:db8::fe"));
    assert_false(match("192.168.0.*", "::1"));
    assert_false(compiles("192.168.0.300"));
    assert_false(compiles("192.168.10-5.*"));
    assert_false(compiles("192.168.*.1"));
    assert_false(compiles("1.2.3.{a,b}"));
    assert_false(compiles("hello"));
    char ip[64];
    acl_peer_ip("10.0.0.1:1234", ip, sizeof(ip));
    assert_string_equal(ip, "10.0.0.1");
    acl_peer_ip("[::1]:99", ip, sizeof(ip));
    assert_string_equal(ip, "::1");
}

static void perms(void **state)
{
    (void)state;
    assert_int_equal(acl_perm_parse("PUB"), ACL_PERM_PUB);
    assert_int_equal(acl_perm_parse(" SUB|PUB "), ACL_PERM_PUB | ACL_PERM_SUB);
    assert_int_equal(acl_perm_parse("pub"), ACL_PERM_DENY);
    assert_int_equal(acl_perm_parse(NULL), ACL_PERM_DENY);
    assert_true(acl_perm_allows(ACL_PERM_PUB, ACL_PERM_PUB | ACL_PERM_SUB));
    assert_false(acl_perm_allows(ACL_PERM_PUB, ACL_PERM_SUB));
    assert_true(acl_perm_allows(ACL_PERM_ANY, ACL_PERM_SUB));
    assert_false(acl_perm_allows(ACL_PERM_SUB, ACL_PERM_DENY | ACL_PERM_SUB));
    assert_true(acl_broker_code_needs_admin(17));
    assert_true(acl_broker_code_needs_admin(52));
    assert_false(acl_broker_code_needs_admin(310));
    assert_true(acl_namesrv_code_is_read(105));
    assert_false(acl_namesrv_code_is_read(318));
    assert_false(acl_namesrv_code_is_read(216));
    assert_false(acl_namesrv_code_is_read(9999));
}

static const char YML[] = "globalWhiteRemoteAddresses:\n"
                          "- 10.10.103.*\n"
                          "- 192.168.0.*\n"
                          "accounts:\n"
                          "- accessKey: RocketMQ\n"
                          "  secretKey: 12345678\n"
                          "  whiteRemoteAddress:\n"
                          "  admin: false\n"
                          "  defaultTopicPerm: DENY\n"
                          "  defaultGroupPerm: SUB\n"
                          "  topicPerms:\n"
                          "  - topicA=DENY\n"
                          "  - topicB=PUB|SUB\n"
                          "  - topicC=SUB\n"
                          "  groupPerms:\n"
                          "  - groupA=DENY\n"
                          "  - groupB=PUB|SUB\n"
                          "  - groupC=SUB\n"
                          "- accessKey: rocketmq2\n"
                          "  secretKey: 12345678\n"
                          "  whiteRemoteAddress: 192.168.1.*\n"
                          "  admin: true\n"
                          "dataVersion:\n"
                          "- counter: 3\n"
                          "  timestamp: 1700000000000\n";

static acl_config *load_text(const char *text)
{
    acl_file *f = calloc(1, sizeof(*f));
    char err[600];
    assert_non_null(f);
    if (acl_file_parse("mem.yml", text, strlen(text), f, err, sizeof(err)) != 0) {
        free(f);
        print_message("%s\n", err);
        return NULL;
    }
    acl_config *c = NULL;
    assert_int_equal(acl_config_build(f, 1, &c, err, sizeof(err)), 0);
    return c;
}

static void yaml_loads_java_file(void **state)
{
    (void)state;
    acl_config *c = load_text(YML);
    assert_non_null(c);
    assert_int_equal(c->nkeys, 2);
    const acl_account *a = acl_config_find(c, "RocketMQ");
    assert_non_null(a);
    assert_string_equal(a->secret_key, "12345678");
    assert_false(a->admin);
    assert_int_equal(a->default_group_bits, ACL_PERM_SUB);
    assert_int_equal(acl_account_find_res(a, "topicB")->perm, ACL_PERM_PUB | ACL_PERM_SUB);
    assert_int_equal(acl_account_find_res(a, "%RETRY%groupA")->perm, ACL_PERM_DENY);
    assert_true(acl_config_find(c, "rocketmq2")->admin);
    assert_int_equal(c->files[0].version_counter, 3);
    assert_int_equal(c->files[0].nglobal_white, 2);
    acl_config_free(c);
}

static bool refused(const char *text, const char *needle)
{
    acl_file f;
    char err[600];
    int rc = acl_file_parse("bad.yml", text, strlen(text), &f, err, sizeof(err));
    if (rc == 0) {
        acl_file_clear(&f);
        return false;
    }
    if (!strstr(err, needle))
        print_message("error was: %s\n", err);
    return strstr(err, needle) != NULL;
}

static void yaml_refusals(void **state)
{
    (void)state;
    assert_true(refused("accounts:\n- accessKey: short\n  secretKey: 12345678\n",
                        "The accessKey=short and secretKey cannot be null"));
    assert_true(refused("accounts:\n- accessKey: longenough\n  secretKey: 12345678\n"
                        "  topicPerms:\n  - topicA\n",
                        "Parse resource permission failed for topic:topicA"));
    assert_true(refused("globalWhiteRemoteAddresses:\n- 1.2.3.999\n", "Netaddress examine"));
    assert_true(refused("accounts: [\n", "bad.yml:"));
    assert_true(refused("- a\n- b\n", "top level must be a mapping"));
    assert_true(
        refused("accounts:\n- accessKey: longenough\n  secretKey: 12345678\n  admin: maybe\n",
                "admin must be true or false"));
    /* an empty file is no data, not an error */
    acl_config *c = load_text("");
    assert_non_null(c);
    assert_int_equal(c->nkeys, 0);
    acl_config_free(c);
}

static void hex(const uint8_t *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void sha1_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *msg, *want;
    } V[] = {
        {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
        {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
    };
    for (size_t i = 0; i < sizeof(V) / sizeof(V[0]); i++) {
        sha1_ctx c;
        uint8_t d[SHA1_DIGEST_BYTES];
        char h[41];
        sha1_init(&c);
        /* fed in uneven pieces: the streaming path, not one block */
        size_t n = strlen(V[i].msg), half = n / 3;
        sha1_update(&c, V[i].msg, half);
        sha1_update(&c, V[i].msg + half, n - half);
        sha1_final(&c, d);
        hex(d, sizeof(d), h);
        assert_string_equal(h, V[i].want);
    }
    /* one million 'a' */
    sha1_ctx c;
    uint8_t d[SHA1_DIGEST_BYTES];
    char h[41], block[1000];
    memset(block, 'a', sizeof(block));
    sha1_init(&c);
    for (int i = 0; i < 1000; i++)
        sha1_update(&c, block, sizeof(block));
    sha1_final(&c, d);
    hex(d, sizeof(d), h);
    assert_string_equal(h, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

static void signature_vectors(void **state)
{
    (void)state;
    /* RFC 2202 test case 2: key "Jefe", "what do ya want for nothing?" */
    acl_field q[] = {{"x", "what do ya want for nothing?"}};
    char s2[ACL_SIGNATURE_LEN + 1];
    assert_int_equal(acl_sign("Jefe", q, 1, NULL, 0, s2), 0);
    assert_string_equal(
        s2, "7/zfauXrL6LSdBbV8YTfnCWafHk="); /* effcdf6ae5eb2fa2d27416d5f184df9c259a7c79 */
    /* python3: base64(hmac.new(b'12345678', b'RocketMQALIYUNthi', sha1)) */
    acl_field f[] = {{"topic", "t"},
                     {"OnsChannel", "ALIYUN"},
                     {"Signature", "x"},
                     {"AccessKey", "RocketMQ"},
                     {"_UNIQUE_KEY_QUERY", "false"}};
    char sig[ACL_SIGNATURE_LEN + 1];
    assert_int_equal(acl_sign("12345678", f, 5, "hi", 2, sig), 0);
    assert_string_equal(sig, "fdePRNs9P+FnamVGvH3OKteDNzs=");
    /* a key longer than the SHA-1 block is hashed first (RFC 2104) */
    char longkey[101];
    memset(longkey, 'k', 100);
    longkey[100] = 0;
    assert_int_equal(acl_sign(longkey, NULL, 0, "abc", 3, sig), 0);
    assert_string_equal(sig, "JgMPaGodVl4CR2fmLJYKZDSFVEI=");
    assert_true(acl_signature_equal("abc", "abc"));
    assert_false(acl_signature_equal("abc", "abd"));
    assert_false(acl_signature_equal("abc", NULL));
}

#define FRAME "org.apache.rocketmq.acl.plain.PlainPermissionManager."

/* Sign f[0..n) into the thread's buffer below and append the Signature (the
 * signing and the check reorder the array, so the fields are rebuilt each
 * time by the caller). */
static char g_sig[ACL_SIGNATURE_LEN + 1];
static void signed_request(acl_request *r, acl_field *f, size_t *n, const char *secret)
{
    assert_int_equal(acl_sign(secret, f, *n, r->body, r->body_len, g_sig), 0);
    f[*n].key = "Signature";
    f[*n].value = g_sig;
    (*n)++;
    r->fields = f;
    r->nfields = *n;
}

static void broker_verdicts(void **state)
{
    (void)state;
    acl_config *c = load_text(YML);
    acl_verdict v;
    acl_field f[8];
    size_t n;

    /* no AccessKey, not white-listed */
    acl_request r = {.code = 310, .peer_ip = "127.0.0.1"};
    acl_check_broker(c, &r, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_AUTH);
    assert_string_equal(v.remark, "org.apache.rocketmq.acl.common.AclException: No accessKey is "
                                  "configured, " FRAME "validate(PlainPermissionManager.java:664)");
    /* global white address */
    r.peer_ip = "10.10.103.5";
    acl_check_broker(c, &r, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);
    assert_true(v.white_listed);
    r.peer_ip = "127.0.0.1";

    /* unknown key */
    f[0] = (acl_field){"AccessKey", "nobody123"};
    r.fields = f;
    r.nfields = 1;
    acl_check_broker(c, &r, &v);
    assert_string_equal(v.remark, "org.apache.rocketmq.acl.common.AclException: No acl config for "
                                  "nobody123, " FRAME "validate(PlainPermissionManager.java:668)");

    /* wrong secret */
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"b", "topicB"};
    f[n++] = (acl_field){"a", "pg"};
    signed_request(&r, f, &n, "wrongsecret");
    acl_check_broker(c, &r, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_AUTH);
    assert_string_equal(v.remark, "org.apache.rocketmq.acl.common.AclException: Check signature "
                                  "failed for accessKey=RocketMQ, " FRAME
                                  "validate(PlainPermissionManager.java:684)");

    /* right secret, PUB on topicB allowed */
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"b", "topicB"};
    f[n++] = (acl_field){"a", "pg"};
    signed_request(&r, f, &n, "12345678");
    acl_check_broker(c, &r, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);

    /* no PUB on topicC (SUB only): explicit permission */
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"b", "topicC"};
    signed_request(&r, f, &n, "12345678");
    acl_check_broker(c, &r, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_PERM);
    assert_string_equal(v.remark, "org.apache.rocketmq.acl.common.AclException: No default "
                                  "permission for topic:topicC, " FRAME
                                  "checkPerm(PlainPermissionManager.java:611)");

    /* default topic perm DENY */
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"b", "other"};
    signed_request(&r, f, &n, "12345678");
    acl_check_broker(c, &r, &v);
    assert_string_equal(v.remark, "org.apache.rocketmq.acl.common.AclException: No default "
                                  "permission for topic:other, " FRAME
                                  "checkPerm(PlainPermissionManager.java:606)");

    /* PULL: topicB SUB ok, group A DENY → reported as group */
    r.code = 11;
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"topic", "topicB"};
    f[n++] = (acl_field){"consumerGroup", "groupA"};
    signed_request(&r, f, &n, "12345678");
    acl_check_broker(c, &r, &v);
    assert_string_equal(v.remark, "org.apache.rocketmq.acl.common.AclException: No default "
                                  "permission for group:groupA, " FRAME
                                  "checkPerm(PlainPermissionManager.java:611)");

    /* admin code by a non-admin */
    r.code = 17;
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"topic", "topicB"};
    signed_request(&r, f, &n, "12345678");
    acl_check_broker(c, &r, &v);
    assert_string_equal(v.remark,
                        "org.apache.rocketmq.acl.common.AclException: Need admin "
                        "permission for request code=17, but accessKey=RocketMQ is not, " FRAME
                        "checkPerm(PlainPermissionManager.java:581)");

    /* the admin account from its white address needs no signature */
    r.peer_ip = "192.168.1.20";
    n = 0;
    f[n++] = (acl_field){"AccessKey", "rocketmq2"};
    r.fields = f;
    r.nfields = n;
    acl_check_broker(c, &r, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);

    /* HEART_BEAT body: group and topic needs */
    r.peer_ip = "127.0.0.1";
    r.code = 34;
    const char *hb = "{\"clientID\":\"c\",\"consumerDataSet\":[{\"groupName\":\"groupC\","
                     "\"subscriptionDataSet\":[{\"topic\":\"topicA\"}]}],\"producerDataSet\":[]}";
    r.body = hb;
    r.body_len = strlen(hb);
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    signed_request(&r, f, &n, "12345678");
    acl_check_broker(c, &r, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_PERM);
    assert_non_null(strstr(v.remark, "No default permission for topic:topicA"));
    acl_config_free(c);
}

/* One signed request by RocketMQ from 127.0.0.1: the verdict's remark, or
 * "" when allowed. */
static const char *verdict(const acl_config *c, int code, const char *const *kv, acl_verdict *v)
{
    acl_field f[16];
    size_t n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    for (size_t i = 0; kv[i]; i += 2)
        f[n++] = (acl_field){kv[i], kv[i + 1]};
    acl_request r = {.code = code, .peer_ip = "127.0.0.1"};
    signed_request(&r, f, &n, "12345678");
    acl_check_broker(c, &r, v);
    return v->outcome == ACL_ALLOWED ? "" : v->remark;
}

static void broker_code_rules(void **state)
{
    (void)state;
    acl_config *c = load_text(YML);
    acl_verdict v;
    /* two refused resources: Java reports the one its HashMap iterates
     * first — %RETRY%groupA (bucket 8) before topicX (bucket 11) */
    const char *pull[] = {"topic", "topicX", "consumerGroup", "groupA", NULL};
    assert_non_null(strstr(verdict(c, 11, pull, &v), "No default permission for group:groupA, "));
    /* a send to a retry topic needs SUB on the group, not PUB on the topic */
    const char *retry_a[] = {"b", "%RETRY%groupA", "a", "groupA", NULL};
    assert_non_null(
        strstr(verdict(c, 310, retry_a, &v), "No default permission for group:groupA, "));
    const char *retry_c[] = {"b", "%RETRY%groupC", "a", "groupC", NULL};
    assert_string_equal(verdict(c, 310, retry_c, &v), "");
    /* SEND_MESSAGE (v1) names the topic "topic" */
    const char *v1[] = {"topic", "topicB", "producerGroup", "pg", NULL};
    assert_string_equal(verdict(c, 10, v1, &v), "");
    const char *v1_denied[] = {"topic", "topicA", "producerGroup", "pg", NULL};
    assert_non_null(
        strstr(verdict(c, 10, v1_denied, &v), "No default permission for topic:topicA"));
    /* message traces pass without a permission check in 4.9.8 */
    const char *trace[] = {"b", "RMQ_SYS_TRACE_TOPIC", "a", "pg", NULL};
    assert_string_equal(verdict(c, 310, trace, &v), "");
    /* CONSUMER_SEND_MSG_BACK needs the group only */
    const char *back[] = {"group", "groupC", "originTopic", "topicA", NULL};
    assert_string_equal(verdict(c, 36, back, &v), "");
    /* UPDATE_CONSUMER_OFFSET: group and topic */
    const char *commit[] = {"consumerGroup", "groupC", "topic", "topicA", NULL};
    assert_non_null(strstr(verdict(c, 15, commit, &v), "No default permission for topic:topicA"));
    /* codes without resources need only the signature (SEND_BATCH_MESSAGE
     * included, as in 4.9.8) */
    const char *batch[] = {"b", "topicA", NULL};
    assert_string_equal(verdict(c, 320, batch, &v), "");
    acl_config_free(c);
}

static void namesrv_policy(void **state)
{
    (void)state;
    acl_config *c = load_text(YML);
    acl_verdict v;
    acl_field f[8];
    size_t n = 0;
    acl_request r = {.code = 318, .peer_ip = "127.0.0.1"};
    acl_check_namesrv(c, &r, true, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_AUTH);
    assert_non_null(strstr(v.remark, "No accessKey is configured"));
    /* anonymous read admitted only when allowed */
    r.code = 105;
    acl_check_namesrv(c, &r, true, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);
    acl_check_namesrv(c, &r, false, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_AUTH);
    /* a bad signature is refused even with anonymous reads */
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"topic", "t"};
    signed_request(&r, f, &n, "nope-nope");
    acl_check_namesrv(c, &r, true, &v);
    assert_non_null(strstr(v.remark, "Check signature failed for accessKey=RocketMQ"));
    /* signed read by a non-admin: fine; signed write by a non-admin: refused */
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"topic", "t"};
    signed_request(&r, f, &n, "12345678");
    acl_check_namesrv(c, &r, false, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);
    r.code = 216;
    n = 0;
    f[n++] = (acl_field){"AccessKey", "RocketMQ"};
    f[n++] = (acl_field){"topic", "t"};
    signed_request(&r, f, &n, "12345678");
    acl_check_namesrv(c, &r, false, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_PERM);
    assert_non_null(strstr(v.remark, "Need admin permission for request code=216"));
    /* a white-listed broker registers unsigned */
    r.code = 103;
    r.nfields = 0;
    r.peer_ip = "192.168.0.9";
    acl_check_namesrv(c, &r, false, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);
    assert_true(v.white_listed);
    acl_config_free(c);
}

/* A 5.x client's gRPC call (Java 5.1's AuthorizationHeader and
 * PlainPermissionManager.validate): the signature is the hex HMAC-SHA1 of
 * x-mq-date-time (vector from Python's hmac module). */
#define GRPC_DATE "20261206T051200Z"
#define GRPC_SIG "88a0b337bc8e1c8a04f1f9724c3c3c212b3a7275"
#define GRPC_AUTH(ak, sig)                                                                         \
    "MQv2-HMAC-SHA1 Credential=" ak ", SignedHeaders=x-mq-date-time, Signature=" sig

static void grpc_verdicts(void **state)
{
    (void)state;
    acl_config *c = load_text(YML);
    acl_verdict v;
    acl_grpc_need pub_b[] = {{"topicB", ACL_PERM_PUB, false}};
    acl_grpc_request r = {.peer_ip = "127.0.0.1",
                          .authorization = GRPC_AUTH("RocketMQ", GRPC_SIG),
                          .date_time = GRPC_DATE,
                          .needs = pub_b,
                          .nneeds = 1};
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);
    /* upper-case hex decodes the same (commons-codec) */
    r.authorization = GRPC_AUTH("RocketMQ", "88A0B337BC8E1C8A04F1F9724C3C3C212B3A7275");
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);
    /* another date signed with the same text: the signature fails */
    r.date_time = "20261206T051201Z";
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_AUTH);
    assert_string_equal(v.message, "Check signature failed for accessKey=RocketMQ");
    r.date_time = NULL;
    acl_check_grpc(c, &r, &v);
    assert_string_equal(v.message, "Check signature failed for accessKey=RocketMQ");
    r.date_time = GRPC_DATE;
    r.authorization = GRPC_AUTH("nobody", GRPC_SIG);
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_AUTH);
    assert_string_equal(v.message, "No acl config for nobody");
    assert_string_equal(v.access_key, "nobody");
    r.authorization = NULL;
    acl_check_grpc(c, &r, &v);
    assert_string_equal(v.message, "No accessKey is configured");
    r.authorization = "MQv2-HMAC-SHA1";
    acl_check_grpc(c, &r, &v);
    assert_string_equal(v.message, "authorization header is incorrect");
    r.authorization = "MQv2-HMAC-SHA1 Credential";
    acl_check_grpc(c, &r, &v);
    assert_string_equal(v.message, "authorization keyValues length is incorrect, actual length=1");
    r.authorization = GRPC_AUTH("RocketMQ", "abc");
    acl_check_grpc(c, &r, &v);
    assert_string_equal(v.message, "Odd number of characters.");
    r.authorization = GRPC_AUTH("RocketMQ", "zz");
    acl_check_grpc(c, &r, &v);
    assert_string_equal(v.message, "Illegal hexadecimal character z at index 0");
    /* Credential=AK/anything: the key is what precedes the first '/' */
    r.authorization = GRPC_AUTH("RocketMQ/cn-hangzhou", GRPC_SIG);
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);

    /* permissions: PUB on a SUB-only topic, a DENY group, ANY for routes */
    r.authorization = GRPC_AUTH("RocketMQ", GRPC_SIG);
    acl_grpc_need pub_c[] = {{"topicC", ACL_PERM_PUB, false}};
    r.needs = pub_c;
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_PERM);
    assert_string_equal(v.message, "No default permission for topic:topicC");
    acl_grpc_need any_c[] = {{"topicC", ACL_PERM_ANY, false}};
    r.needs = any_c;
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);
    acl_grpc_need sub_group_a[] = {{"topicB", ACL_PERM_SUB, false}, {"groupA", ACL_PERM_SUB, true}};
    r.needs = sub_group_a;
    r.nneeds = 2;
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_REFUSED_PERM);
    assert_string_equal(v.message, "No default permission for group:groupA");
    /* a global white address needs no key at all */
    r.peer_ip = "10.10.103.7";
    r.authorization = NULL;
    acl_check_grpc(c, &r, &v);
    assert_int_equal(v.outcome, ACL_ALLOWED);
    assert_true(v.white_listed);
    acl_config_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(patterns),
        cmocka_unit_test(perms),
        cmocka_unit_test(yaml_loads_java_file),
        cmocka_unit_test(yaml_refusals),
        cmocka_unit_test(sha1_vectors),
        cmocka_unit_test(signature_vectors),
        cmocka_unit_test(broker_verdicts),
        cmocka_unit_test(broker_code_rules),
        cmocka_unit_test(namesrv_policy),
        cmocka_unit_test(grpc_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
