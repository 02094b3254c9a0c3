/* test_store_ha.c — master/slave replication between two real rmqhostd
 * (each with its own NameServer; the slave finds the master through
 * haMasterAddress), over raw frames (protocol-ha.md §7 T1, T5, T9, T12,
 * T13): a SYNC_MASTER without a slave answers SLAVE_NOT_AVAILABLE (the
 * message is stored anyway), a fresh slave receives the master's last
 * commit-log file only, sends are then SEND_OK, the slave refuses sends
 * with Java's 14, serves pulls of replicated messages, catches up after
 * being down, and its commit-log files are byte-identical to the master's;
 * `rmqhostctl promote` turns it into a master that accepts sends, and
 * stays one (brokerId 0) across a hot reload of the store and a restart.
 * GET_BROKER_RUNTIME_INFO (28) of master and slave as a 4.9.8 pair's.
 * A demoted master's rejoin: after a restart, killed while comparing (a
 * fake master), and the resend of its set-aside delayed messages and
 * transaction halves.
 * Ephemeral ports; every daemon stops even when an assertion fails. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <limits.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "store_test_client.h"

#define FILE_SIZE 1048576
#define BODY 4000

typedef struct pair {
    rmq_test_daemon m, s;
    int mport, sport, ha_port, s_ha_port, metrics_port;
    const char *slave_extra; /* more slave store settings, or NULL */
    bool s_started, m_stopped, s_stopped;
} pair;

/* Stop one daemon for good; the teardown then skips it. */
static int stop(pair *p, bool slave)
{
    if (slave)
        p->s_stopped = true;
    else
        p->m_stopped = true;
    return rmq_td_stop_reporting(slave ? &p->s : &p->m);
}

/* Both brokers keep every commit-log file however full the shared test
 * machine's disk is: above diskMaxUsedSpaceRatio (75 %) retention deletes
 * expired files, above 85 % any file (cleanFileForciblyEnable). At 87 % the
 * kill-master pulls from the slave answered 20 and test_identical_logs saw
 * a deleted file (an earlier session's failure). */
#define KEEP_FILES "diskMaxUsedSpaceRatio = 95; cleanFileForciblyEnable = false;"

static int setup(void **state)
{
    pair *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    *state = p;
    p->ha_port = rmq_tc_free_port();
    p->slave_extra = KEEP_FILES;
    char set[256];
    snprintf(set, sizeof set,
             "brokerRole = \"SYNC_MASTER\"; haListenPort = %d; slaveTimeout = 1000; " KEEP_FILES,
             p->ha_port);
    p->mport = st_start(&p->m, set);
    return p->mport > 0 ? 0 : -1;
}

static int teardown(void **state)
{
    pair *p = *state;
    int a = p->m_stopped ? 0 : rmq_td_stop_reporting(&p->m);
    int b = p->s_started && !p->s_stopped ? rmq_td_stop_reporting(&p->s) : 0;
    rmq_td_cleanup(&p->m);
    rmq_td_cleanup(&p->s);
    free(p);
    return a == 0 && b == 0 ? 0 : -1;
}

/* The slave registers with the master's NameServer (so the registration
 * answer names its master for the config sync) and finds the HA port
 * through haMasterAddress. */
static int configure_slave(pair *p)
{
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[512], set[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\"; brokerId = 1;",
             rmq_td_port(&p->m, "namesrv"));
    p->s_ha_port = rmq_tc_free_port();
    snprintf(set, sizeof set,
             "mappedFileSizeCommitLog = 1048576; brokerRole = \"SLAVE\"; "
             "haMasterAddress = \"127.0.0.1:%d\"; haListenPort = %d; %s",
             p->ha_port, p->s_ha_port, p->slave_extra ? p->slave_extra : "");
    if (ns <= 0 || rmq_td_init(&p->s, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&p->s, ns, "info", bcm) != 0 ||
        rmq_td_add_plugin(&p->s, "filter", "filter", "broker", NULL) != 0 ||
        rmq_td_add_plugin(&p->s, "store", "store", "broker", set) != 0)
        return -1;
    return 0;
}

static int start_slave(pair *p, bool configure)
{
    if (configure && configure_slave(p) != 0)
        return -1;
    if (rmq_td_start(&p->s, NULL) != 0)
        return -1;
    p->s_started = true;
    p->s_stopped = false;
    p->sport = rmq_td_port(&p->s, "broker");
    return p->sport;
}

static char body_of(int i)
{
    return (char)('a' + i % 26);
}

/* SEND i to queue 0 of TopicHA; the answer's code (-1 no answer). */
static int send_one(int port, int i)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return -1;
    char *body = malloc(BODY + 1);
    memset(body, body_of(i), BODY);
    body[BODY] = 0;
    rmq_cmd *r = st_send(fd, i + 1, "TopicHA", 0, NULL, body, NULL);
    free(body);
    close(fd);
    int code = r ? r->code : -1;
    if (r && r->code != 0 && r->code != 11)
        fprintf(stderr, "send %d answered %d: %s\n", i, r->code, r->remark ? r->remark : "");
    /* the stored-message header comes with 0, 11 and 12 alike */
    if (r && (r->code == 0 || r->code == 11))
        assert_non_null(rmq_cmd_ext_get(r, "msgId"));
    rmq_cmd_free(r);
    return code;
}

static long long log_end(rmq_test_daemon *d)
{
    int st = 0;
    const char *out = rmq_td_ctl_output(d, &st, "ha", NULL);
    const char *k = st == 0 ? strstr(out, "commitLogMaxOffset ") : NULL;
    return k ? atoll(k + strlen("commitLogMaxOffset ")) : -1;
}

/* Wait (generously: the bound only ends a hung test) for the slave's log
 * end to equal the master's. */
static void wait_caught_up(pair *p)
{
    uint64_t until = rmq_test_now_ms() + 60000;
    long long m = -1, s = -2;
    while (rmq_test_now_ms() < until) {
        m = log_end(&p->m);
        s = log_end(&p->s);
        if (m > 0 && m == s)
            return;
        rmq_test_pause_ms(100);
    }
    fprintf(stderr, "slave never caught up: master %lld, slave %lld\n", m, s);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "grep -h 'HA' %s %s | tail -30 >&2", p->m.log_path, p->s.log_path);
    if (system(cmd) != 0)
        fprintf(stderr, "(no logs)\n");
    fail();
}

static size_t list_files(const char *dir, char names[][32], size_t max)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (strlen(de->d_name) == 20 && n < max)
            snprintf(names[n++], 32, "%s", de->d_name);
    if (d)
        closedir(d);
    /* sort: names are zero-padded offsets */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char t[32];
                memcpy(t, names[i], 32);
                memcpy(names[i], names[j], 32);
                memcpy(names[j], t, 32);
            }
    return n;
}

/* Every slave file equals the master's of the same name; the slave's first
 * file is `first`. */
static void expect_identical_logs(pair *p, const char *first)
{
    char md[512], sd[512];
    snprintf(md, sizeof md, "%s/store/commitlog", p->m.state_dir);
    snprintf(sd, sizeof sd, "%s/store/commitlog", p->s.state_dir);
    char mn[16][32], sn[16][32];
    size_t nm = list_files(md, mn, 16), ns = list_files(sd, sn, 16);
    /* a segment starting at or past the log end is the housekeeper's
     * pre-created spare (store_commitlog.c), made on each broker at its own
     * pace: not part of the log (a stopped broker, end -1: as listed) */
    long long m_end = log_end(&p->m), s_end = log_end(&p->s);
    while (m_end >= 0 && nm > 0 && atoll(mn[nm - 1]) >= m_end)
        nm--;
    while (s_end >= 0 && ns > 0 && atoll(sn[ns - 1]) >= s_end)
        ns--;
    assert_true(nm > 0);
    assert_true(ns > 0);
    assert_string_equal(sn[0], first);
    assert_string_equal(sn[ns - 1], mn[nm - 1]);
    for (size_t i = 0; i < ns; i++) {
        char a[600], b[600];
        snprintf(a, sizeof a, "%s/%s", md, sn[i]);
        snprintf(b, sizeof b, "%s/%s", sd, sn[i]);
        if (!st_same_file(a, b))
            fprintf(stderr, "%s differs\n", sn[i]);
        assert_true(st_same_file(a, b));
    }
}

static rmq_cmd *call(int port, int code, const char *const *kv);

/* The promoted broker is still a master with brokerId 0 (its role kept in
 * store.properties, brokerId in broker.properties): a send is SEND_OK at
 * queue offset `qoff`. */
static void expect_still_master(pair *p, long long qoff)
{
    int st = 0;
    const char *out = rmq_td_ctl_output(&p->s, &st, "ha", NULL);
    if (!strstr(out, "role ASYNC_MASTER"))
        fprintf(stderr, "promoted broker: %s\n", out);
    assert_non_null(strstr(out, "role ASYNC_MASTER"));
    int fd = rmq_tc_connect(p->sport);
    assert_true(fd >= 0);
    rmq_cmd *r = st_send(fd, 4, "TopicHA", 0, NULL, "still master", NULL);
    close(fd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_ext_ll(r, "queueOffset"), qoff);
    rmq_cmd_free(r);
    r = call(p->sport, 26, NULL); /* GET_BROKER_CONFIG */
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    char *body = strndup((const char *)r->body, r->body_len);
    assert_non_null(body);
    bool id0 = strncmp(body, "brokerId=0\n", 11) == 0 || strstr(body, "\nbrokerId=0\n");
    if (!id0)
        fprintf(stderr, "GET_BROKER_CONFIG: %s\n", body);
    free(body);
    rmq_cmd_free(r);
    assert_true(id0);
}

/* GET_BROKER_RUNTIME_INFO (28) of `port` as text (malloc'd; NULL when no
 * answer). The KVTable's values are strings without quotes inside. */
static char *runtime_info(int port)
{
    rmq_cmd *r = call(port, 28, NULL);
    char *body = r && r->code == 0 ? strndup((const char *)r->body, r->body_len) : NULL;
    rmq_cmd_free(r);
    return body;
}

static long long runtime_ll(const char *info, const char *key)
{
    char needle[128];
    snprintf(needle, sizeof needle, "\"%s\":\"", key);
    const char *at = info ? strstr(info, needle) : NULL;
    return at ? atoll(at + strlen(needle)) : -1;
}

/* The keys of a 28 table, sorted, one per line, without the per-path
 * commitLogDiskRatio_<dir> (the two brokers' directories differ). */
static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void runtime_keys(const char *info, char *out, size_t cap)
{
    char *keys[128];
    size_t n = 0;
    for (const char *at = info; at && n < 128 && (at = strstr(at, "\":\""));) {
        const char *start = at;
        while (start > info && start[-1] != '"')
            start--;
        if (strncmp(start, "commitLogDiskRatio_", 19) != 0)
            keys[n++] = strndup(start, (size_t)(at - start));
        at += 3;
        at = strchr(at, '"'); /* the value's end */
        if (at)
            at++;
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (used < cap)
            used += (size_t)snprintf(out + used, cap - used, "%s\n", keys[i]);
        free(keys[i]);
    }
}

/* 28 on a master and its slave, as a 4.9.8 pair answers (protocol-ha.md
 * §4.6): no dedicated HA entry, the same keys on both roles; the slave's
 * commitLogMaxOffset equals the master's, its commitLogMinOffset is the
 * start of the master's last file it was sent (a fresh slave), and its put
 * counters count the replicated records. */
static void expect_runtime_info_of_pair(pair *p)
{
    char *m = runtime_info(p->mport), *s = runtime_info(p->sport);
    assert_non_null(m);
    assert_non_null(s);
    long long m_max = runtime_ll(m, "commitLogMaxOffset");
    long long s_min = runtime_ll(s, "commitLogMinOffset");
    long long s_puts = runtime_ll(s, "putMessageTimesTotal");
    long long m_puts = runtime_ll(m, "putMessageTimesTotal");
    fprintf(stderr, "28: master max %lld puts %lld; slave min %lld max %lld puts %lld\n", m_max,
            m_puts, s_min, runtime_ll(s, "commitLogMaxOffset"), s_puts);
    assert_true(m_max > FILE_SIZE);
    assert_int_equal(runtime_ll(s, "commitLogMaxOffset"), m_max);
    assert_true(s_min > 0 && s_min % FILE_SIZE == 0 && s_min < m_max);
    assert_int_equal(runtime_ll(m, "commitLogMinOffset"), 0);
    /* every record of the slave's log was counted as a put, as Java's reput does */
    assert_true(s_puts > 0 && s_puts < m_puts);
    assert_int_equal(runtime_ll(s, "msgPutTotalTodayNow"), s_puts);
    /* each record is a BODY-byte body plus < 400 bytes of header and topic */
    assert_true(s_puts <= (m_max - s_min) / BODY && s_puts >= (m_max - s_min) / (BODY + 400));
    char mk[8192], sk[8192];
    runtime_keys(m, mk, sizeof mk);
    runtime_keys(s, sk, sizeof sk);
    assert_true(strlen(mk) > 100);
    assert_string_equal(sk, mk);
    free(m);
    free(s);
}

static void expect_rejoined(pair *p, long long common, long long diverged_end, int first,
                            int count_want, const char *first_file, char *file_out);

static void test_replication(void **state)
{
    pair *p = *state;
    /* no slave: SLAVE_NOT_AVAILABLE, stored anyway; > 1 file of log */
    int n = 0;
    for (; n < 300; n++)
        assert_int_equal(send_one(p->mport, n), 11);
    assert_true(log_end(&p->m) > FILE_SIZE);

    assert_true(start_slave(p, true) > 0);
    wait_caught_up(p);
    /* now every SYNC_MASTER send waits for the slave's ack */
    for (int k = 0; k < 50; k++, n++)
        assert_int_equal(send_one(p->mport, n), 0);
    wait_caught_up(p);
    expect_runtime_info_of_pair(p);

    /* a send to the slave: Java's 14 */
    int fd = rmq_tc_connect(p->sport);
    assert_true(fd >= 0);
    rmq_cmd *r = st_send(fd, 1, "TopicHA", 0, NULL, "x", NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 14);
    assert_non_null(r->remark);
    assert_non_null(strstr(r->remark, "messages are put to the slave"));
    rmq_cmd_free(r);
    /* admin changes on a slave: Java's validateSlave answer */
    const char *topic_kv[] = {
        "topic", "TopicOnSlave", "readQueueNums", "1", "writeQueueNums", "1", "perm", "6", NULL};
    rmq_cmd *req = rmq_tc_request(17, 5, topic_kv);
    r = rmq_tc_call(fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "Can't modify topic or subscription group from slave broker, "
                                   "please execute it from master broker.");
    rmq_cmd_free(r);

    /* a pull from the slave returns the replicated message (offset 340) */
    st_pull_args pa = {.group = "GHA", .topic = "TopicHA", .queue = 0, .offset = 340, .max = 1};
    r = st_pull(fd, 2, &pa);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_ext_ll(r, "suggestWhichBrokerId"), 0);
    stored_record rec[2];
    assert_int_equal(st_records(r, rec, 2), 1);
    assert_int_equal(rec[0].queue_offset, 340);
    assert_int_equal(rec[0].body_len, BODY);
    assert_int_equal(((const char *)rec[0].body)[0], body_of(340));
    /* the fresh slave's queue starts where its log starts (not at 0) */
    assert_true(st_ext_ll(r, "minOffset") > 0);
    rmq_cmd_free(r);
    close(fd);

    /* slave down: the master goes on (11), the slave catches up after */
    assert_int_equal(stop(p, true), 0);
    for (int k = 0; k < 100; k++, n++)
        assert_int_equal(send_one(p->mport, n), 11);
    assert_true(start_slave(p, false) > 0);
    wait_caught_up(p);
    assert_int_equal(send_one(p->mport, n++), 0);
    wait_caught_up(p);

    /* promotion: the slave stops replicating and accepts sends */
    int st = 0;
    const char *out = rmq_td_ctl_output(&p->s, &st, "promote", NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "promoted"));
    fd = rmq_tc_connect(p->sport);
    r = st_send(fd, 3, "TopicHA", 0, NULL, "after promotion", NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_ext_ll(r, "queueOffset"), n);
    rmq_cmd_free(r);
    close(fd);
    out = rmq_td_ctl_output(&p->s, &st, "ha", NULL);
    assert_non_null(strstr(out, "role ASYNC_MASTER"));
    /* the promotion outlives a hot reload of the store and a restart */
    out = rmq_td_ctl_output(&p->s, &st, "reload", "store", NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "reloaded"));
    expect_still_master(p, n + 1);
    assert_int_equal(stop(p, true), 0);
    assert_true(start_slave(p, false) > 0);
    expect_still_master(p, n + 2);

    /* the old master went on alone (11, stored): it holds messages the new
     * master never received. Demoted, it compares its log with the new
     * master's, sets those messages aside, cuts its log where the two part
     * and replicates: both logs end up identical */
    long long before = log_end(&p->m);
    for (int k = 0; k < 3; k++)
        assert_int_equal(send_one(p->mport, n + 10 + k), 11);
    long long diverged_end = log_end(&p->m);
    assert_true(diverged_end > before);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", p->s_ha_port);
    out = rmq_td_ctl_output(&p->m, &st, "demote", addr, NULL);
    if (st != 0)
        fprintf(stderr, "demote: %s\n", out);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "demoted"));
    assert_int_equal(send_one(p->mport, n + 20), 14); /* a slave now */
    char set_aside[256];
    expect_rejoined(p, before, diverged_end, n + 10, 3, "00000000000001048576", set_aside);
    /* and it goes on replicating what the new master receives */
    fd = rmq_tc_connect(p->sport);
    r = st_send(fd, 5, "TopicHA", 0, NULL, "after the rejoin", NULL);
    close(fd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    long long qoff = st_ext_ll(r, "queueOffset");
    rmq_cmd_free(r);
    wait_caught_up(p);
    expect_identical_logs(p, "00000000000001048576");
    /* the demoted broker serves the new master's message at that offset */
    fd = rmq_tc_connect(p->mport);
    st_pull_args pa2 = {.group = "GHA2", .topic = "TopicHA", .queue = 0, .offset = qoff, .max = 1};
    r = st_pull(fd, 6, &pa2);
    close(fd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, rec, 2), 1);
    assert_int_equal(rec[0].queue_offset, qoff);
    assert_int_equal(rec[0].body_len, strlen("after the rejoin"));
    rmq_cmd_free(r);

    /* the operator resends the set-aside messages to the new master: they
     * follow at the next queue offsets, intact, and replicate back */
    char to[64];
    snprintf(to, sizeof to, "127.0.0.1:%d", p->sport);
    out = rmq_td_ctl_output(&p->m, &st, "ha-setaside", "resend", set_aside, to, NULL);
    if (st != 0 || !strstr(out, "resent 3 messages"))
        fprintf(stderr, "resend: %s\n", out);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "resent 3 messages"));
    fd = rmq_tc_connect(p->sport);
    st_pull_args pa3 = {
        .group = "GHA3", .topic = "TopicHA", .queue = 0, .offset = qoff + 1, .max = 8};
    r = st_pull(fd, 7, &pa3);
    close(fd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    stored_record all[8];
    assert_int_equal(st_records(r, all, 8), 3);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(all[k].queue_offset, qoff + 1 + k);
        assert_int_equal(all[k].body_len, BODY);
        assert_int_equal(((const char *)all[k].body)[0], body_of(n + 10 + k));
    }
    rmq_cmd_free(r);
    wait_caught_up(p);
    expect_identical_logs(p, "00000000000001048576");
}

/* The demoted broker (p->m) replicates again from the new master (p->s):
 * its log equals the new master's (whose first file is first_file), and
 * the one set-aside file holds exactly its count_want records in [common,
 * diverged_end) — bodies of messages first.., whole 4000-byte bodies —
 * with a manifest saying so. */
static void expect_rejoined(pair *p, long long common, long long diverged_end, int first,
                            int count_want, const char *first_file, char *file_out)
{
    uint64_t until = rmq_test_now_ms() + 60000;
    int st = 0;
    const char *out = "";
    bool rejoined = false;
    char said[64];
    snprintf(said, sizeof said, ": %d messages", count_want);
    while (!rejoined && rmq_test_now_ms() < until) {
        out = rmq_td_ctl_output(&p->m, &st, "ha-setaside", NULL);
        rejoined = st == 0 && strstr(out, said) != NULL;
        if (!rejoined)
            rmq_test_pause_ms(100);
    }
    if (!rejoined)
        fprintf(stderr, "ha-setaside: %s\nha: %s\n", out,
                rmq_td_ctl_output(&p->m, &st, "ha", NULL));
    assert_true(rejoined);
    char range[128];
    snprintf(range, sizeof range, "log [%lld, %lld)", common, diverged_end);
    if (!strstr(out, range))
        fprintf(stderr, "ha-setaside: %s (want %s)\n", out, range);
    assert_non_null(strstr(out, range));
    assert_non_null(strstr(p->m.ctl_out, "new master 127.0.0.1:"));
    wait_caught_up(p);
    out = rmq_td_ctl_output(&p->m, &st, "ha", NULL);
    assert_non_null(strstr(out, "role SLAVE"));
    assert_null(strstr(out, "STOPPED"));
    expect_identical_logs(p, first_file);
    assert_true(rmq_td_log_contains(&p->m, "SET ASIDE"));

    /* the set-aside file: Java's stored-record layout, exactly those */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/store/ha-setaside", p->m.state_dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    char log_path[1024] = "", man_path[1024] = "";
    int logs = 0, mans = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 10 && strcmp(de->d_name + l - 10, ".commitlog") == 0) {
            snprintf(log_path, sizeof log_path, "%s/%s", dir, de->d_name);
            snprintf(file_out, 256, "%s", de->d_name);
            logs++;
        } else if (l > 5 && strcmp(de->d_name + l - 5, ".json") == 0) {
            snprintf(man_path, sizeof man_path, "%s/%s", dir, de->d_name);
            mans++;
        }
    }
    closedir(d);
    assert_int_equal(logs, 1);
    assert_int_equal(mans, 1);
    FILE *f = fopen(log_path, "rb");
    assert_non_null(f);
    uint8_t *buf = malloc(8 << 20);
    size_t len = fread(buf, 1, 8 << 20, f);
    fclose(f);
    size_t pos = 0;
    int count = 0;
    long long phys = common;
    while (pos < len) {
        stored_record r;
        assert_int_equal(stored_record_decode(buf + pos, len - pos, true, &r), STORED_RECORD_OK);
        /* the blank padding at a file's end is not set aside */
        if (r.phys_offset != phys)
            assert_int_equal(r.phys_offset, (phys / FILE_SIZE + 1) * FILE_SIZE);
        phys = r.phys_offset;
        assert_int_equal(r.body_len, BODY);
        assert_int_equal(((const char *)r.body)[0], body_of(first + count));
        assert_int_equal(r.topic_len, strlen("TopicHA"));
        pos += r.total_size;
        phys += r.total_size;
        count++;
    }
    free(buf);
    assert_int_equal(count, count_want);
    assert_int_equal(phys, diverged_end);
    f = fopen(man_path, "r");
    assert_non_null(f);
    char *man = calloc(1, 1 << 20);
    size_t ml = fread(man, 1, (1 << 20) - 1, f);
    fclose(f);
    man[ml] = 0;
    char want[96];
    snprintf(want, sizeof want, "\"count\": %d,", count_want);
    assert_non_null(strstr(man, want));
    snprintf(want, sizeof want, "\"fromOffset\": %lld", common);
    assert_non_null(strstr(man, want));
    snprintf(want, sizeof want, "\"newMaster\": \"127.0.0.1:%d\"", p->s_ha_port);
    bool master_named = strstr(man, want) != NULL;
    free(man);
    assert_true(master_named);
}

/* A demoted master that restarted after the promotion (so it no longer
 * knows what its slave acknowledged) with a divergent tail across a file
 * end, and a new master that received more than that tail: the comparison
 * starts at the old master's last file, finds the first record there
 * differing, goes back a file and finds the common point; the 300 records
 * are set aside, the logs end up identical. */
static void test_rejoin_after_restart(void **state)
{
    pair *p = *state;
    assert_true(start_slave(p, true) > 0);
    int n = 0;
    for (int first = send_one(p->mport, n++); first != 0; first = send_one(p->mport, n++))
        assert_int_equal(first, 11); /* until the slave reported */
    for (int k = 0; k < 50; k++, n++)
        assert_int_equal(send_one(p->mport, n), 0);
    wait_caught_up(p);
    int st = 0;
    const char *out = rmq_td_ctl_output(&p->s, &st, "promote", NULL);
    assert_int_equal(st, 0);
    long long common = log_end(&p->m);
    assert_int_equal(stop(p, false), 0);
    assert_int_equal(rmq_td_start(&p->m, NULL), 0);
    p->m_stopped = false;
    p->mport = rmq_td_port(&p->m, "broker");
    int first = n;
    for (int k = 0; k < 300; k++, n++)
        assert_int_equal(send_one(p->mport, n), 11);
    long long diverged_end = log_end(&p->m);
    assert_true(diverged_end > FILE_SIZE); /* the tail crosses a file end */
    for (int k = 0; k < 400; k++)
        assert_int_equal(send_one(p->sport, 5000 + k), 0);
    assert_true(log_end(&p->s) > diverged_end);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", p->s_ha_port);
    out = rmq_td_ctl_output(&p->m, &st, "demote", addr, NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "demoted"));
    char set_aside[256];
    expect_rejoined(p, common, diverged_end, first, 300, "00000000000000000000", set_aside);
    assert_true(rmq_td_log_contains(&p->m, "comparing from 0"));
}

/* A raw request with ext pairs (NULL-terminated) to port; the answer. */
static rmq_cmd *call(int port, int code, const char *const *kv)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return NULL;
    rmq_cmd *req = rmq_tc_request(code, 77, kv);
    rmq_cmd *r = req ? rmq_tc_call(fd, req, 5000) : NULL;
    rmq_cmd_free(req);
    close(fd);
    return r;
}

/* Config sync (§4.3): a topic created and an offset committed on the
 * master show up on the slave (within a sync period; the bound only ends a
 * hung test). */
static void expect_config_synced(pair *p)
{
    const char *topic_kv[] = {"topic",
                              "TopicSynced",
                              "defaultTopic",
                              "TBW102",
                              "readQueueNums",
                              "3",
                              "writeQueueNums",
                              "3",
                              "perm",
                              "6",
                              "topicFilterType",
                              "SINGLE_TAG",
                              "topicSysFlag",
                              "0",
                              "order",
                              "false",
                              NULL};
    rmq_cmd *r = call(p->mport, 17, topic_kv);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *off_kv[] = {"consumerGroup", "GSync", "topic", "TopicHA", "queueId", "0",
                            "commitOffset",  "123",   NULL};
    r = call(p->mport, 15, off_kv);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *q_kv[] = {"consumerGroup", "GSync", "topic", "TopicHA", "queueId", "0", NULL};
    r = call(p->mport, 45, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    char delay_body[4096] = "";
    snprintf(delay_body, sizeof delay_body, "%.*s", (int)r->body_len, (const char *)r->body);
    rmq_cmd_free(r);
    assert_non_null(strstr(delay_body, "\"offsetTable\":{"));
    char delay_path[512];
    snprintf(delay_path, sizeof delay_path, "%s/store/config/delayOffset.json", p->s.state_dir);
    uint64_t until = rmq_test_now_ms() + 60000;
    bool topic = false, offset = false, delay = false;
    while (rmq_test_now_ms() < until && !(topic && offset && delay)) {
        char file[4096] = "";
        FILE *df = fopen(delay_path, "r");
        if (df) {
            size_t got = fread(file, 1, sizeof file - 1, df);
            file[got] = 0;
            fclose(df);
        }
        delay = strcmp(file, delay_body) == 0;
        r = call(p->sport, 21, NULL);
        topic = r && r->code == 0 && r->body && memmem(r->body, r->body_len, "TopicSynced", 11);
        rmq_cmd_free(r);
        r = call(p->sport, 14, q_kv);
        offset = r && r->code == 0 && st_ext_ll(r, "offset") == 123;
        rmq_cmd_free(r);
        if (!(topic && offset && delay))
            rmq_test_pause_ms(200);
    }
    if (!topic || !offset || !delay)
        fprintf(stderr, "slave sync: topic %d offset %d delay %d\n", topic, offset, delay);
    assert_true(topic);
    assert_true(offset);
    assert_true(delay);
}

/* Logs byte-identical while both run as master and slave. */
static void test_identical_logs(void **state)
{
    pair *p = *state;
    for (int n = 0; n < 400; n++)
        assert_int_equal(send_one(p->mport, n), 11);
    assert_true(start_slave(p, true) > 0);
    wait_caught_up(p);
    for (int n = 400; n < 500; n++)
        assert_int_equal(send_one(p->mport, n), 0);
    /* hot reloads of the store on either side: the slave reconnects and
     * resumes where it stopped (the byte comparison below shows nothing
     * lost or doubled); sends meanwhile are stored (11) */
    int st = 0;
    const char *out = rmq_td_ctl_output(&p->m, &st, "reload", "store", NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "reloaded"));
    int n = 500;
    for (int code = 11; code == 11; n++) {
        code = send_one(p->mport, n);
        assert_true(code == 0 || code == 11);
        if (code == 11)
            rmq_test_pause_ms(200);
    }
    out = rmq_td_ctl_output(&p->s, &st, "reload", "store", NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "reloaded"));
    for (int k = 0; k < 200; k++, n++) {
        int code = send_one(p->mport, n);
        assert_true(code == 0 || code == 11);
    }
    wait_caught_up(p);
    assert_int_equal(send_one(p->mport, n), 0);
    wait_caught_up(p);
    expect_config_synced(p);
    assert_int_equal(stop(p, true), 0);
    assert_int_equal(stop(p, false), 0);
    expect_identical_logs(p, "00000000000001048576");
}

/* SIGSTOP a daemon this test forked and return once every thread of it is
 * stopped. kill() only queues the signal: one thread is woken to start the
 * group stop and the others stop when they next pass the signal path, so
 * under load the slave's HA thread can go on receiving, appending and
 * acknowledging for a while after kill() returned. The parent is told
 * (waitpid WUNTRACED) only when the last thread has stopped. */
static void stop_process(pid_t pid)
{
    assert_int_equal(kill(pid, SIGSTOP), 0);
    int st = 0;
    pid_t got;
    do
        got = waitpid(pid, &st, WUNTRACED);
    while (got < 0 && errno == EINTR);
    assert_int_equal(got, pid);
    assert_true(WIFSTOPPED(st));
}

/* A slave that stops acknowledging (SIGSTOP) but stays connected: the
 * SYNC_MASTER send waits slaveTimeout and answers FLUSH_SLAVE_TIMEOUT (12)
 * with the stored-message header; once it runs again sends are SEND_OK. */
static void test_slave_timeout(void **state)
{
    pair *p = *state;
    assert_true(start_slave(p, true) > 0);
    int first = send_one(p->mport, 0); /* 11 or 0: the slave may have reported already */
    assert_true(first == 0 || first == 11);
    wait_caught_up(p);
    assert_int_equal(send_one(p->mport, 1), 0);
    stop_process(p->s.pid); /* only then can no ack of send 2 come */
    int code = send_one(p->mport, 2);
    assert_int_equal(kill(p->s.pid, SIGCONT), 0);
    assert_int_equal(code, 12);
    wait_caught_up(p);
    assert_int_equal(send_one(p->mport, 3), 0);
}

/* An ASYNC_MASTER with a 1.5 s housekeeping interval, for fake slaves. */
static int setup_raw(void **state)
{
    pair *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    *state = p;
    p->ha_port = rmq_tc_free_port();
    char set[256];
    snprintf(set, sizeof set, "haListenPort = %d; haHousekeepingInterval = 1500;", p->ha_port);
    p->mport = st_start(&p->m, set);
    return p->mport > 0 ? 0 : -1;
}

static void put_be64(uint8_t *b, long long v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        b[i] = (uint8_t)v;
}

static long long get_be(const uint8_t *b, int n)
{
    long long v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | b[i];
    return v;
}

static bool read_full(int fd, uint8_t *b, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

/* An ASYNC_MASTER serving the metrics endpoint, for the per-slave figures. */
static int setup_metrics(void **state)
{
    pair *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    *state = p;
    p->ha_port = rmq_tc_free_port();
    char set[256];
    snprintf(set, sizeof set, "haListenPort = %d;", p->ha_port);
    p->metrics_port = rmq_tc_free_port();
    char host[128];
    snprintf(host, sizeof host, "metrics_listen = \"127.0.0.1:%d\";", p->metrics_port);
    if (st_configure_host(&p->m, set, host) != 0 || rmq_td_start(&p->m, NULL) != 0)
        return -1;
    p->mport = rmq_td_port(&p->m, "broker");
    return p->mport > 0 ? 0 : -1;
}

/* The value of gauge `name` of slave `peer` in `rmqhostctl stats --json`
 * (NAN when absent). */
static double stats_gauge(pair *p, const char *name, const char *peer)
{
    int st = 0;
    const char *out = rmq_td_ctl_output(&p->m, &st, "stats", "--json", NULL);
    json_t *j = st == 0 ? json_loads(out, 0, NULL) : NULL;
    if (!j)
        fprintf(stderr, "stats: %s\n", out);
    json_t *g = json_object_get(json_object_get(j, "data"), "gauges");
    if (!g)
        g = json_object_get(j, "gauges");
    double v = NAN;
    size_t i;
    json_t *e;
    json_array_foreach(g, i, e)
    {
        const char *lab = json_string_value(json_object_get(json_object_get(e, "labels"), "slave"));
        if (strcmp(json_string_value(json_object_get(e, "plugin")), "store") == 0 &&
            strcmp(json_string_value(json_object_get(e, "name")), name) == 0 &&
            (!peer || (lab && strcmp(lab, peer) == 0)))
            v = json_number_value(json_object_get(e, "value"));
    }
    json_decref(j);
    return v;
}

static char *metrics_text(pair *p)
{
    int port = p->metrics_port;
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        fprintf(stderr, "metrics port %d: cannot connect\n", port);
    if (fd < 0)
        return NULL;
    const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
    if (write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
        close(fd);
        return NULL;
    }
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    ssize_t n;
    while (buf && (n = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    if (buf)
        buf[len] = 0;
    return buf;
}

/* Per-slave figures in `rmqhostctl stats` and on the metrics endpoint: a
 * fake slave reports the start of the master's last file, so its
 * acknowledged offset and the bytes it is behind are known exactly; after
 * it reports the master's end a second later it is 0 behind with a
 * positive transfer rate. */
static void test_slave_figures(void **state)
{
    pair *p = *state;
    for (int n = 0; n < 300; n++)
        assert_int_equal(send_one(p->mport, n), 0); /* ASYNC_MASTER: SEND_OK */
    long long end = log_end(&p->m);
    assert_true(end > FILE_SIZE);
    assert_int_equal(stats_gauge(p, "ha_slaves", NULL), 0);

    int fd = rmq_tc_connect(p->ha_port);
    assert_true(fd >= 0);
    struct sockaddr_in me;
    socklen_t ml = sizeof me;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &ml), 0);
    char peer[64];
    snprintf(peer, sizeof peer, "127.0.0.1:%d", ntohs(me.sin_port));
    uint8_t rep[8];
    put_be64(rep, FILE_SIZE);
    assert_int_equal(write(fd, rep, 8), 8);
    uint64_t until = rmq_test_now_ms() + 60000;
    while (stats_gauge(p, "ha_slave_ack_offset", peer) != FILE_SIZE && rmq_test_now_ms() < until)
        rmq_test_pause_ms(100);
    assert_int_equal(stats_gauge(p, "ha_slaves", NULL), 1);
    assert_int_equal(stats_gauge(p, "ha_slave_ack_offset", peer), FILE_SIZE);
    assert_int_equal(stats_gauge(p, "ha_slave_behind_bytes", peer), end - FILE_SIZE);
    assert_true(stats_gauge(p, "ha_slave_last_ack_age_seconds", peer) >= 0);
    assert_true(stats_gauge(p, "ha_slave_behind_seconds", peer) >= 0);
    char *text = metrics_text(p);
    assert_non_null(text);
    char want[256];
    snprintf(want, sizeof want, "rmqhost_ha_slave_ack_offset{plugin=\"store\",slave=\"%s\"} %d\n",
             peer, FILE_SIZE);
    if (!strstr(text, want))
        fprintf(stderr, "metrics lack %s:\n%s\n", want, text);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want,
             "rmqhost_ha_slave_behind_bytes{plugin=\"store\",slave=\"%s\"} %lld\n", peer,
             end - FILE_SIZE);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "# TYPE rmqhost_ha_slave_transfer_bytes_per_second gauge"));
    free(text);

    /* a second later it holds everything: 0 behind, bytes moved per second */
    rmq_test_pause_ms(1100);
    put_be64(rep, end);
    assert_int_equal(write(fd, rep, 8), 8);
    until = rmq_test_now_ms() + 60000;
    while (stats_gauge(p, "ha_slave_ack_offset", peer) != end && rmq_test_now_ms() < until)
        rmq_test_pause_ms(50);
    assert_int_equal(stats_gauge(p, "ha_slave_behind_bytes", peer), 0);
    double rate = stats_gauge(p, "ha_slave_transfer_bytes_per_second", peer);
    /* (end - FILE_SIZE) bytes over a window of at least 1.1 s */
    assert_true(rate > 0 && rate < (double)(end - FILE_SIZE));
    close(fd);
    until = rmq_test_now_ms() + 60000;
    while (stats_gauge(p, "ha_slaves", NULL) != 0 && rmq_test_now_ms() < until)
        rmq_test_pause_ms(100);
    assert_int_equal(stats_gauge(p, "ha_slaves", NULL), 0);
}

/* Raw HA protocol against our master (§2.2–§2.4, §7 T11): a fake slave
 * reporting 0 gets the last file from its start in frames of at most 32 KiB
 * that never cross a file end, whose bytes are the master's file; garbage
 * and a silent peer are closed while the master carries on; a report beyond
 * the master's end is refused with an error. */
static void test_raw_frames(void **state)
{
    pair *p = *state;
    for (int n = 0; n < 300; n++)
        assert_int_equal(send_one(p->mport, n), 0);
    long long end = log_end(&p->m);
    assert_true(end > FILE_SIZE);

    /* garbage (not a multiple of 8) then close: nothing breaks */
    int g = rmq_tc_connect(p->ha_port);
    assert_true(g >= 0);
    assert_int_equal(rmq_tc_send_raw(g, "\xde\xad\xbe", 3), 0);
    close(g);
    /* a silent peer is closed after haHousekeepingInterval */
    int silent = rmq_tc_connect(p->ha_port);
    assert_true(silent >= 0);
    assert_true(rmq_tc_wait_closed(silent, 20000));
    close(silent);

    int fd = rmq_tc_connect(p->ha_port);
    assert_true(fd >= 0);
    uint8_t rep[8];
    put_be64(rep, 0);
    assert_int_equal(rmq_tc_send_raw(fd, rep, 8), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/store/commitlog/00000000000001048576", p->m.state_dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *want = malloc(FILE_SIZE), *body = malloc(32768);
    assert_int_equal(fread(want, 1, FILE_SIZE, f), FILE_SIZE);
    fclose(f);
    long long next = FILE_SIZE; /* the start of the master's last file */
    while (next < end) {
        uint8_t h[12];
        assert_true(read_full(fd, h, 12));
        long long off = get_be(h, 8), len = get_be(h + 8, 4);
        assert_int_equal(off, next);
        assert_true(len >= 0 && len <= 32768);
        assert_true(off / FILE_SIZE == (off + len - 1) / FILE_SIZE || len == 0);
        assert_true(read_full(fd, body, (size_t)len));
        assert_memory_equal(body, want + (off - FILE_SIZE), (size_t)len);
        next += len;
    }
    assert_int_equal(next, end);
    free(want);
    free(body);
    close(fd);

    /* a slave whose log is longer than ours: refused, loudly; one empty
     * frame tells it where our log ends, then nothing */
    fd = rmq_tc_connect(p->ha_port);
    put_be64(rep, end + 1000);
    assert_int_equal(rmq_tc_send_raw(fd, rep, 8), 0);
    uint8_t hb[12];
    assert_true(read_full(fd, hb, 12));
    assert_int_equal(get_be(hb, 8), end);
    assert_int_equal(get_be(hb + 8, 4), 0);
    uint64_t until = rmq_test_now_ms() + 20000;
    while (!rmq_td_log_contains(&p->m, "beyond this master's log end") && rmq_test_now_ms() < until)
        rmq_test_pause_ms(50);
    assert_true(rmq_td_log_contains(&p->m, "beyond this master's log end"));
    close(fd);
    /* the master still serves */
    assert_int_equal(send_one(p->mport, 300), 0);
}

/* Child: pipelined sends (32 in flight on one connection) of bodies
 * "m-<index>-..." to queue 0; writes every index answered SEND_OK to out_fd
 * until the connection dies (the parent kills the master). A live master
 * answers each send within slaveTimeout; the 60 s bound only ends a child
 * whose master hangs (10 s could pass between two answers of an ASan
 * master at load 8+, and the child then gave up before the kill). */
static void pipelined_sender(int port, int base, int out_fd)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        _exit(1);
    char body[1001];
    int next = 0;
    for (int k = 0; k < 32; k++, next++) {
        snprintf(body, sizeof body, "m-%d-%0900d", base + next, 0);
        const char *kv[] = {"a", "PG",    "b", "TopicKill",     "c", "TBW102", "d", "4", "e", "0",
                            "f", "0",     "g", "1700000000000", "h", "0",      "i", "",  "j", "0",
                            "k", "false", "m", "false",         NULL};
        rmq_cmd *req = rmq_tc_request(310, base + next + 1, kv);
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
        if (rmq_tc_send(fd, req) != 0)
            _exit(0);
        rmq_cmd_free(req);
    }
    for (;;) {
        rmq_cmd *r = rmq_tc_recv(fd, 60000);
        if (!r)
            _exit(0);
        int32_t idx = r->opaque - 1;
        if (!(r->flag & 1)) { /* not a response */
            rmq_cmd_free(r);
            continue;
        }
        if (r->code == 0 && write(out_fd, &idx, sizeof idx) != sizeof idx)
            _exit(1);
        rmq_cmd_free(r);
        snprintf(body, sizeof body, "m-%d-%0900d", base + next, 0);
        const char *kv[] = {"a", "PG",    "b", "TopicKill",     "c", "TBW102", "d", "4", "e", "0",
                            "f", "0",     "g", "1700000000000", "h", "0",      "i", "",  "j", "0",
                            "k", "false", "m", "false",         NULL};
        if (next >= 99999)
            continue; /* the bound of this round's indexes: drain the answers */
        rmq_cmd *req = rmq_tc_request(310, base + next + 1, kv);
        next++;
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
        if (rmq_tc_send(fd, req) != 0)
            _exit(0);
        rmq_cmd_free(req);
    }
}

/* kill -9 of a SYNC_MASTER under pipelined load, 3 rounds (the master
 * restarts with its store in between): every message answered SEND_OK is
 * on the slave exactly once (pulled from the slave alone). */
static void test_kill_master_under_load(void **state)
{
    pair *p = *state;
    assert_true(start_slave(p, true) > 0);
    int code = 11;
    for (int i = 0; code != 0 && i < 200; i++) {
        code = send_one(p->mport, 0); /* TopicHA: makes the slave connected */
        if (code != 0)
            rmq_test_pause_ms(100);
    }
    assert_int_equal(code, 0);
    static unsigned char acked[3 * 100000];
    memset(acked, 0, sizeof acked);
    int total_acked = 0;
    for (int round = 0; round < 3; round++) {
        int pfd[2];
        assert_int_equal(pipe(pfd), 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            close(pfd[0]);
            pipelined_sender(p->mport, round * 100000, pfd[1]);
            _exit(0);
        }
        close(pfd[1]);
        int32_t idx;
        int got = 0;
        while (read(pfd[0], &idx, sizeof idx) == sizeof idx) {
            if (idx < round * 100000 || idx >= (round + 1) * 100000)
                fail_msg("round %d: acknowledged index %d", round, idx);
            acked[idx] = 1;
            got++;
            if (got == 2000 && kill(p->m.pid, SIGKILL) != 0)
                fail_msg("cannot kill the master");
        }
        close(pfd[0]);
        waitpid(child, NULL, 0);
        if (got < 2000) {
            /* the sender stopped before the kill: the master still runs and
             * the teardown stops it (waiting for it here would hang) */
            fail_msg("round %d: the sender stopped after %d SEND_OK, before the kill", round, got);
        }
        waitpid(p->m.pid, NULL, 0);
        p->m.pid = 0;
        total_acked += got;
        /* the master comes back with its store; the slave resumes */
        char addrs[400];
        snprintf(addrs, sizeof addrs, "%s/listen.addrs", p->m.state_dir);
        unlink(addrs); /* kill -9 left the old one */
        assert_int_equal(rmq_td_start(&p->m, NULL), 0);
        p->mport = rmq_td_port(&p->m, "broker");
        wait_caught_up(p);
        /* and the slave reconnected: it reports (5 s back-off after the close) */
        uint64_t until = rmq_test_now_ms() + 60000;
        int st = 0;
        while (!strstr(rmq_td_ctl_output(&p->m, &st, "ha", NULL), "\nslave ") &&
               rmq_test_now_ms() < until)
            rmq_test_pause_ms(100);
        assert_non_null(strstr(p->m.ctl_out, "\nslave "));
    }
    /* everything from the slave alone */
    static unsigned char seen[3 * 100000];
    memset(seen, 0, sizeof seen);
    long long max = st_max_offset(p->sport, "TopicKill", 0);
    assert_true(max >= total_acked);
    int fd = rmq_tc_connect(p->sport);
    assert_true(fd >= 0);
    /* the slave serves TopicKill once its config sync copied it (10 s) */
    uint64_t until = rmq_test_now_ms() + 60000;
    for (bool known = false; !known && rmq_test_now_ms() < until;) {
        st_pull_args pa = {.group = "GKill", .topic = "TopicKill", .queue = 0, .max = 1};
        rmq_cmd *r = st_pull(fd, 1, &pa);
        known = r && r->code != 17;
        rmq_cmd_free(r);
        if (!known)
            rmq_test_pause_ms(200);
    }
    for (long long off = 0; off < max;) {
        st_pull_args pa = {
            .group = "GKill", .topic = "TopicKill", .queue = 0, .offset = off, .max = 32};
        rmq_cmd *r = st_pull(fd, 1, &pa);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        stored_record rec[32];
        size_t n = st_records(r, rec, 32);
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
            int v = atoi((const char *)rec[i].body + 2);
            assert_true(v >= 0 && v < 3 * 100000);
            assert_int_equal(seen[v], 0); /* exactly once */
            seen[v] = 1;
        }
        off = st_ext_ll(r, "nextBeginOffset");
        rmq_cmd_free(r);
    }
    close(fd);
    int missing = 0;
    for (int i = 0; i < 3 * 100000; i++)
        missing += acked[i] && !seen[i];
    if (missing)
        fprintf(stderr, "%d acknowledged messages missing on the slave\n", missing);
    assert_int_equal(missing, 0);
    fprintf(stderr, "%d acknowledged messages, all on the slave once (%lld stored)\n", total_acked,
            max);
}

/* A free port whose + 1 is free too (a broker and its derived HA port). */
static int free_port_pair(void)
{
    for (int i = 0; i < 100; i++) {
        int c = rmq_tc_free_port();
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(c + 1))};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bool ok = c > 0 && c < 65535 && fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
        if (fd >= 0)
            close(fd);
        if (ok)
            return c;
    }
    return -1;
}

/* The master of test_learns_master_from_nameserver on broker port bport
 * (its HA port derived: bport + 1), its own NameServer beside it. true when
 * it runs with both ports and its HA port; false (stopped) when a port was
 * taken before it could bind it. */
static bool start_learning_master(pair *p, int bport)
{
    const char *servers[] = {"namesrv", "broker", NULL};
    int mns = rmq_tc_free_port();
    char host_conf[1024], mbcm[512];
    assert_int_equal(rmq_td_init(&p->m, servers, NULL), 0);
    snprintf(host_conf, sizeof host_conf,
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"info\";\n"
             "io_threads = 2;\nservers = {\n  namesrv = { listen = \"127.0.0.1:%d\"; };\n"
             "  broker = { listen = \"127.0.0.1:%d\"; };\n};\n",
             p->m.state_dir, p->m.admin_socket, mns, bport);
    snprintf(mbcm, sizeof mbcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\";",
             mns);
    assert_int_equal(rmq_td_write_conf(&p->m, "host.conf", host_conf), 0);
    assert_int_equal(rmq_td_add_plugin(&p->m, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(
        rmq_td_add_plugin(&p->m, "broker-client-mgr", "broker-client-mgr", "broker", mbcm), 0);
    assert_int_equal(rmq_td_add_plugin(&p->m, "filter", "filter", "broker", NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&p->m, "store", "store", "broker",
                                       "mappedFileSizeCommitLog = 1048576; "
                                       "brokerRole = \"SYNC_MASTER\";"),
                     0);
    if (rmq_td_start(&p->m, NULL) != 0) {
        rmq_td_cleanup(&p->m);
        return false;
    }
    p->mport = rmq_td_port(&p->m, "broker");
    assert_int_equal(p->mport, bport);
    if (rmq_td_log_contains(&p->m, "slaves cannot replicate from this broker")) {
        fprintf(stderr, "the derived HA port %d was taken meanwhile: other ports\n", bport + 1);
        rmq_td_cleanup(&p->m);
        return false;
    }
    return true;
}

/* A master on the default HA port (broker port + 1, as Java) and a slave
 * without haMasterAddress and with brokerId 0 in its settings: the store
 * moves it to brokerId 1, the NameServer's REGISTER_BROKER answer names the
 * master's haServerAddr, the slave replicates, and the route lists both. */
static void test_learns_master_from_nameserver(void **state)
{
    pair *p = calloc(1, sizeof *p);
    assert_non_null(p);
    *state = p;
    /* a fixed broker port whose + 1 is free (an ephemeral one may have an
     * outgoing connection of the same daemon on + 1); any process's
     * outgoing connection can still take + 1 (or the NameServer's port)
     * before the daemon binds it: then again with other ports */
    bool up = false;
    for (int attempt = 0; attempt < 5 && !up; attempt++) {
        int bport = free_port_pair();
        assert_true(bport > 0);
        up = start_learning_master(p, bport);
    }
    assert_true(up);
    const char *servers[] = {"namesrv", "broker", NULL};
    int ns = rmq_tc_free_port();
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\";",
             rmq_td_port(&p->m, "namesrv"));
    assert_int_equal(rmq_td_init(&p->s, servers, NULL), 0);
    assert_int_equal(bcm_configure_namesrv_and_broker(&p->s, ns, "info", bcm), 0);
    assert_int_equal(rmq_td_add_plugin(&p->s, "filter", "filter", "broker", NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&p->s, "store", "store", "broker",
                                       "mappedFileSizeCommitLog = 1048576; "
                                       "brokerRole = \"SLAVE\";"),
                     0);
    assert_true(start_slave(p, false) > 0);
    /* registration every 30 s at most: the first answer names the master */
    uint64_t until = rmq_test_now_ms() + 90000;
    int code = 11;
    while (code != 0 && rmq_test_now_ms() < until) {
        code = send_one(p->mport, 0);
        if (code != 0)
            rmq_test_pause_ms(300);
    }
    assert_int_equal(code, 0);
    wait_caught_up(p);
    const char *kv[] = {"topic", "TopicHA", NULL};
    char want0[64], want1[64];
    /* brokerAddrs id -> address (our NameServer quotes the id in JSON) */
    snprintf(want0, sizeof want0, "0\":\"127.0.0.1:%d\"", p->mport);
    snprintf(want1, sizeof want1, "1\":\"127.0.0.1:%d\"", p->sport);
    bool both = false;
    until = rmq_test_now_ms() + 60000;
    while (!both && rmq_test_now_ms() < until) {
        rmq_cmd *r = call(rmq_td_port(&p->m, "namesrv"), 105, kv);
        both = r && r->code == 0 && r->body && memmem(r->body, r->body_len, want0, strlen(want0)) &&
               memmem(r->body, r->body_len, want1, strlen(want1));
        if (!both && r && rmq_test_now_ms() >= until - 400)
            fprintf(stderr, "route: %.*s\n", (int)r->body_len, (const char *)r->body);
        rmq_cmd_free(r);
        if (!both)
            rmq_test_pause_ms(300);
    }
    assert_true(both);
}

/* Two slaves of one master at once (brokerIds 1 and 2): both stream, both
 * hold byte-identical logs; with one of them stopped the SYNC_MASTER still
 * answers SEND_OK on the other's acks. */
static void test_two_slaves(void **state)
{
    pair *p = *state;
    assert_true(start_slave(p, true) > 0);
    static rmq_test_daemon s2;
    memset(&s2, 0, sizeof s2);
    char set[256], bcm[512];
    snprintf(set, sizeof set,
             "mappedFileSizeCommitLog = 1048576; brokerRole = \"SLAVE\"; "
             "haMasterAddress = \"127.0.0.1:%d\"; haListenPort = %d;",
             p->ha_port, rmq_tc_free_port());
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\"; brokerId = 2;",
             rmq_td_port(&p->m, "namesrv"));
    const char *servers[] = {"namesrv", "broker", NULL};
    int ok = rmq_td_init(&s2, servers, NULL) == 0 &&
             bcm_configure_namesrv_and_broker(&s2, rmq_tc_free_port(), "info", bcm) == 0 &&
             rmq_td_add_plugin(&s2, "filter", "filter", "broker", NULL) == 0 &&
             rmq_td_add_plugin(&s2, "store", "store", "broker", set) == 0 &&
             rmq_td_start(&s2, NULL) == 0;
    if (!ok) {
        rmq_td_cleanup(&s2);
        fail_msg("cannot start the second slave");
    }
    /* both connected: the master lists two slaves */
    uint64_t until = rmq_test_now_ms() + 60000;
    int st = 0;
    while (!strstr(rmq_td_ctl_output(&p->m, &st, "ha", NULL), "slaves 2") &&
           rmq_test_now_ms() < until)
        rmq_test_pause_ms(100);
    bool two = strstr(p->m.ctl_out, "slaves 2") != NULL;
    int codes_ok = 0;
    for (int n = 0; two && n < 300; n++)
        codes_ok += send_one(p->mport, n) == 0;
    long long m_end = log_end(&p->m), s2_end = -1;
    until = rmq_test_now_ms() + 60000;
    while (two && rmq_test_now_ms() < until && (s2_end = log_end(&s2)) != m_end)
        rmq_test_pause_ms(100);
    /* the first slave down: the second still acknowledges */
    int after = two ? (rmq_td_stop(&p->s) == 0 ? send_one(p->mport, 300) : -1) : -1;
    p->s_stopped = true;
    int s2_stop = rmq_td_stop_reporting(&s2);
    char md[512], sd[512];
    snprintf(md, sizeof md, "%s/store/commitlog/00000000000000000000", p->m.state_dir);
    snprintf(sd, sizeof sd, "%s/store/commitlog/00000000000000000000", s2.state_dir);
    bool same = false;
    if (two && s2_end == m_end) {
        /* compare the bytes both hold: the master went on by one message */
        FILE *a = fopen(md, "rb"), *b = fopen(sd, "rb");
        same = a && b;
        for (long long i = 0; same && i < s2_end; i++)
            same = fgetc(a) == fgetc(b);
        if (a)
            fclose(a);
        if (b)
            fclose(b);
    }
    rmq_td_cleanup(&s2);
    assert_true(two);
    assert_int_equal(codes_ok, 300);
    assert_int_equal(s2_end, m_end);
    assert_int_equal(after, 0);
    assert_int_equal(s2_stop, 0);
    assert_true(same);
}

/* A fake master in this process: listen on the pair's HA port. */
static int fake_master_listen(pair *p)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->ha_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Accept our slave and read its first report (sent at once). */
static int accept_slave(int lfd, long long *report)
{
    int fd = accept(lfd, NULL, NULL);
    uint8_t b[8];
    if (fd < 0 || !read_full(fd, b, 8))
        return -1;
    *report = get_be(b, 8);
    return fd;
}

static bool send_frame(int fd, long long off, const uint8_t *body, size_t len)
{
    uint8_t h[12];
    put_be64(h, off);
    h[8] = (uint8_t)(len >> 24);
    h[9] = (uint8_t)(len >> 16);
    h[10] = (uint8_t)(len >> 8);
    h[11] = (uint8_t)len;
    return rmq_tc_send_raw(fd, h, 12) == 0 && (len == 0 || rmq_tc_send_raw(fd, body, len) == 0);
}

static const char *wait_ha_text(rmq_test_daemon *d, const char *needle)
{
    uint64_t until = rmq_test_now_ms() + 30000;
    int st = 0;
    const char *out = "";
    while (rmq_test_now_ms() < until) {
        out = rmq_td_ctl_output(d, &st, "ha", NULL);
        if (strstr(out, needle))
            return out;
        rmq_test_pause_ms(50);
    }
    fprintf(stderr, "no \"%s\" in: %s\n", needle, out);
    return NULL;
}

/* Our slave against a fake master (§7 T11) fed with a real master's log
 * bytes: a frame ending inside a record, then promotion (the partial record
 * is cut, the next send starts at a record boundary); a frame at our end +
 * 1 (the logs diverge: halt); in a fresh slave a frame crossing our file
 * end (mappedFileSizeCommitLog differs: halt). */
static void test_slave_against_fake_master(void **state)
{
    pair *p = *state; /* its master only makes the log bytes */
    for (int n = 0; n < 3; n++)
        assert_int_equal(send_one(p->mport, n), 11);
    long long end = log_end(&p->m);
    assert_true(end > 8000);
    char path[600];
    snprintf(path, sizeof path, "%s/store/commitlog/00000000000000000000", p->m.state_dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *log = malloc((size_t)end);
    assert_int_equal(fread(log, 1, (size_t)end, f), (size_t)end);
    fclose(f);
    assert_int_equal(stop(p, false), 0); /* frees the HA port for the fake */

    int lfd = fake_master_listen(p);
    assert_true(lfd >= 0);
    assert_true(start_slave(p, true) > 0);
    long long rep = -1;
    int fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    assert_int_equal(rep, 0);
    /* everything but the last 10 bytes: the third record stays partial */
    assert_true(send_frame(fd, 0, log, (size_t)end - 10));
    uint8_t ack[8];
    assert_true(read_full(fd, ack, 8));
    assert_int_equal(get_be(ack, 8), end - 10);
    int st = 0;
    const char *out = rmq_td_ctl_output(&p->s, &st, "promote", NULL);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "promoted"));
    close(fd);
    /* queue offset 2: the partial third record was cut, the new one took
     * its place at a record boundary and is read back whole */
    int c = rmq_tc_connect(p->sport);
    rmq_cmd *r = st_send(c, 1, "TopicHA", 0, NULL, "after the cut", NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_ext_ll(r, "queueOffset"), 2);
    rmq_cmd_free(r);
    st_pull_args pa = {.group = "GF", .topic = "TopicHA", .queue = 0, .offset = 0, .max = 8};
    r = st_pull(c, 2, &pa);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    stored_record rec[8];
    assert_int_equal(st_records(r, rec, 8), 3);
    assert_int_equal(rec[2].body_len, strlen("after the cut"));
    assert_memory_equal(rec[2].body, "after the cut", strlen("after the cut"));
    assert_int_equal(rec[0].body_len, BODY);
    assert_int_equal(((const char *)rec[1].body)[0], body_of(1));
    /* right behind the second record: nothing of the partial one is left */
    assert_int_equal(rec[2].phys_offset, rec[1].phys_offset + rec[1].total_size);
    rmq_cmd_free(r);
    close(c);
    assert_int_equal(stop(p, true), 0);

    /* a fresh slave: a frame at its end + 1 (after one good frame) halts it */
    rmq_td_cleanup(&p->s);
    assert_true(start_slave(p, true) > 0);
    fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    assert_true(send_frame(fd, 0, log, 4096));
    assert_true(read_full(fd, ack, 8));
    assert_true(send_frame(fd, 4097, log + 4096, 100));
    assert_non_null(wait_ha_text(&p->s, "diverge"));
    close(fd);
    assert_int_equal(stop(p, true), 0);

    /* a fresh slave: a frame that crosses its 1 MiB file end halts it */
    rmq_td_cleanup(&p->s);
    assert_true(start_slave(p, true) > 0);
    fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    assert_true(send_frame(fd, 0, log, 4096));
    assert_true(read_full(fd, ack, 8));
    uint8_t *zeros = calloc(1, FILE_SIZE);
    assert_true(send_frame(fd, 4096, zeros, FILE_SIZE));
    free(zeros);
    assert_non_null(wait_ha_text(&p->s, "mappedFileSizeCommitLog"));
    close(fd);
    close(lfd);
    free(log);
}

/* A fake master on a port of its own (the pair's master is the one demoted). */
static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* The demoted broker killed (kill -9) while its rejoin compares (issue 18
 * §5): `rmqhostctl ha` shows the comparison in progress (phase, offsets);
 * after the restart the comparison starts again from the same point (the
 * marker), the fake master's log differs at the third record: exactly the
 * records from there on are set aside (one set, byte for byte ours), and
 * the log then holds the master's history from that point — never ours
 * and its mixed. */
static void test_rejoin_killed_while_comparing(void **state)
{
    pair *p = *state; /* p->m is demoted to the fake master */
    for (int n = 0; n < 5; n++)
        assert_int_equal(send_one(p->mport, n), 11);
    long long end = log_end(&p->m);
    assert_true(end > 5 * BODY);
    char path[600];
    snprintf(path, sizeof path, "%s/store/commitlog/00000000000000000000", p->m.state_dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *log = malloc((size_t)end), *theirs = malloc((size_t)end);
    assert_int_equal(fread(log, 1, (size_t)end, f), (size_t)end);
    fclose(f);
    /* the master's history: ours but for the third record's body */
    memcpy(theirs, log, (size_t)end);
    long long rec2 = 0;
    for (int k = 0; k < 2; k++)
        rec2 += get_be(log + rec2, 4);
    stored_record r;
    assert_int_equal(stored_record_decode(theirs + rec2, (size_t)(end - rec2), true, &r),
                     STORED_RECORD_OK);
    uint8_t *b = theirs + rec2 + ((const uint8_t *)r.body - (theirs + rec2));
    memset(b, 'Z', (size_t)r.body_len);
    int32_t crc = stored_record_body_crc(b, (size_t)r.body_len);
    stored_put_be32(theirs + rec2 + 8, (uint32_t)crc);
    assert_int_equal(stored_record_decode(theirs + rec2, (size_t)(end - rec2), true, &r),
                     STORED_RECORD_OK);

    int fport = rmq_tc_free_port();
    int lfd = listen_on(fport);
    assert_true(lfd >= 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", fport);
    int st = 0;
    const char *out = rmq_td_ctl_output(&p->m, &st, "demote", addr, NULL);
    assert_int_equal(st, 0);
    long long rep = -1;
    int fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    assert_int_equal(rep, 1); /* from 0: asks for 1 (0 means "a fresh slave") */
    assert_true(send_frame(fd, 1, theirs + 1, 4095));
    uint8_t ack[8];
    assert_true(read_full(fd, ack, 8));
    assert_int_equal(get_be(ack, 8), 4096);
    char want[160];
    snprintf(want, sizeof want, "rejoin comparing from 0 compared to 4096 of log end %lld", end);
    assert_non_null(wait_ha_text(&p->m, want));

    /* kill -9 in the middle of the comparison; the restart compares again */
    assert_int_equal(kill(p->m.pid, SIGKILL), 0);
    waitpid(p->m.pid, NULL, 0);
    p->m.pid = 0;
    close(fd);
    char addrs[600];
    snprintf(addrs, sizeof addrs, "%s/listen.addrs", p->m.state_dir);
    unlink(addrs);
    assert_int_equal(rmq_td_start(&p->m, NULL), 0);
    p->mport = rmq_td_port(&p->m, "broker");
    fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    assert_int_equal(rep, 1);
    assert_true(send_frame(fd, 1, theirs + 1, (size_t)end - 1));
    /* settled: the rest of ours set aside, then it reports its cut end */
    close(fd);
    fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    assert_int_equal(rep, rec2);
    assert_true(send_frame(fd, rec2, theirs + rec2, (size_t)(end - rec2)));
    assert_true(read_full(fd, ack, 8));
    assert_int_equal(get_be(ack, 8), end);
    out = wait_ha_text(&p->m, "rejoin set aside ");
    assert_non_null(out);
    assert_null(strstr(out, "rejoin comparing"));
    out = rmq_td_ctl_output(&p->m, &st, "ha-setaside", NULL);
    snprintf(want, sizeof want, ": 3 messages, log [%lld, %lld)", rec2, end);
    if (!strstr(out, want))
        fprintf(stderr, "ha-setaside: %s (want %s)\n", out, want);
    assert_non_null(strstr(out, want));
    /* one set, holding our records 2..4 byte for byte */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/store/ha-setaside", p->m.state_dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int sets = 0, others = 0;
    char set_path[1200] = "";
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 10 && strcmp(de->d_name + l - 10, ".commitlog") == 0) {
            sets++;
            snprintf(set_path, sizeof set_path, "%s/%s", dir, de->d_name);
        } else if (de->d_name[0] != '.' && !(l > 5 && strcmp(de->d_name + l - 5, ".json") == 0)) {
            others++;
        }
    }
    closedir(d);
    assert_int_equal(sets, 1);
    assert_int_equal(others, 0);
    f = fopen(set_path, "rb");
    assert_non_null(f);
    uint8_t *aside = malloc((size_t)end);
    size_t n = fread(aside, 1, (size_t)end, f);
    fclose(f);
    assert_int_equal(n, (size_t)(end - rec2));
    assert_memory_equal(aside, log + rec2, n);
    free(aside);
    /* the log: the master's history only */
    long long pend = end;
    for (int k = 0; k < 100 && log_end(&p->m) != end; k++)
        rmq_test_pause_ms(100);
    assert_int_equal(log_end(&p->m), pend);
    f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *now = malloc((size_t)end);
    assert_int_equal(fread(now, 1, (size_t)end, f), (size_t)end);
    fclose(f);
    assert_memory_equal(now, theirs, (size_t)end);
    free(now);
    int c = rmq_tc_connect(p->mport);
    st_pull_args pa = {.group = "GK", .topic = "TopicHA", .queue = 0, .offset = 2, .max = 1};
    rmq_cmd *resp = st_pull(c, 2, &pa);
    close(c);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    stored_record got[2];
    assert_int_equal(st_records(resp, got, 2), 1);
    assert_int_equal(((const char *)got[0].body)[0], 'Z');
    rmq_cmd_free(resp);
    close(fd);
    close(lfd);
    free(log);
    free(theirs);
}

/* The new master's log ends below where the comparison starts (issue 18
 * §5: it acknowledged less than another slave did), told the way a Java
 * master tells it: only heartbeats at the offset we asked for. The demoted
 * broker compares a file lower instead of cutting its log above the
 * master's end, finds that end inside the lower file and sets aside
 * exactly what lies past it; then it reports that end. */
static void test_rejoin_master_shorter(void **state)
{
    pair *p = *state;
    int n = 0;
    for (; log_end(&p->m) <= FILE_SIZE; n++)
        assert_int_equal(send_one(p->mport, n), 11);
    long long end = log_end(&p->m);
    char path[600];
    snprintf(path, sizeof path, "%s/store/commitlog/00000000000000000000", p->m.state_dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *log = malloc(FILE_SIZE);
    assert_int_equal(fread(log, 1, FILE_SIZE, f), FILE_SIZE);
    fclose(f);
    /* the master's log: our first 10 records */
    long long mend = 0;
    for (int k = 0; k < 10; k++)
        mend += get_be(log + mend, 4);
    int fport = rmq_tc_free_port();
    int lfd = listen_on(fport);
    assert_true(lfd >= 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", fport);
    int st = 0;
    rmq_td_ctl_output(&p->m, &st, "demote", addr, NULL);
    assert_int_equal(st, 0);
    long long rep = -1;
    int fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    assert_int_equal(rep, FILE_SIZE); /* our last file */
    assert_true(send_frame(fd, FILE_SIZE, NULL, 0));
    assert_true(send_frame(fd, FILE_SIZE, NULL, 0));
    int fd2 = accept_slave(lfd, &rep);
    assert_true(fd2 >= 0);
    close(fd);
    assert_int_equal(rep, 1); /* a file lower: from 0 */
    assert_true(send_frame(fd2, 1, log + 1, (size_t)mend - 1));
    uint8_t ack[8];
    assert_true(read_full(fd2, ack, 8));
    assert_int_equal(get_be(ack, 8), mend);
    assert_true(send_frame(fd2, mend, NULL, 0));
    assert_true(send_frame(fd2, mend, NULL, 0));
    fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    close(fd2);
    assert_int_equal(rep, mend); /* cut at the master's end, not above */
    const char *out = rmq_td_ctl_output(&p->m, &st, "ha-setaside", NULL);
    char want[128];
    snprintf(want, sizeof want, ": %d messages, log [%lld, %lld)", n - 10, mend, end);
    if (!strstr(out, want))
        fprintf(stderr, "ha-setaside: %s (want %s)\n", out, want);
    assert_non_null(strstr(out, want));
    assert_int_equal(log_end(&p->m), mend);
    assert_true(rmq_td_log_contains(&p->m, "has no data at 1048576"));
    close(fd);
    close(lfd);
    free(log);
}

/* A master whose record at our comparison start differs and that holds
 * nothing below it: the two logs share no known point. Replication stops,
 * loudly, and the log stays as it was (nothing set aside, nothing cut). */
static void test_rejoin_no_common_point(void **state)
{
    pair *p = *state;
    for (int n = 0; log_end(&p->m) <= FILE_SIZE; n++)
        assert_int_equal(send_one(p->mport, n), 11);
    long long end = log_end(&p->m);
    int fport = rmq_tc_free_port();
    int lfd = listen_on(fport);
    assert_true(lfd >= 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", fport);
    int st = 0;
    rmq_td_ctl_output(&p->m, &st, "demote", addr, NULL);
    assert_int_equal(st, 0);
    long long rep = -1;
    int fd = accept_slave(lfd, &rep);
    assert_true(fd >= 0);
    assert_int_equal(rep, FILE_SIZE);
    uint8_t other[4096];
    memset(other, 0x5a, sizeof other);
    assert_true(send_frame(fd, FILE_SIZE, other, sizeof other));
    int fd2 = accept_slave(lfd, &rep);
    assert_true(fd2 >= 0);
    close(fd);
    assert_int_equal(rep, 1); /* the file below */
    assert_true(send_frame(fd2, 1, NULL, 0));
    assert_true(send_frame(fd2, 1, NULL, 0));
    const char *out = wait_ha_text(&p->m, "STOPPED");
    assert_non_null(out);
    assert_non_null(strstr(out, "share no known point"));
    assert_int_equal(log_end(&p->m), end);
    out = rmq_td_ctl_output(&p->m, &st, "ha-setaside", NULL);
    assert_non_null(strstr(out, "nothing set aside"));
    close(fd2);
    close(lfd);
}

/* Records of d's commit log at or past `from` whose topic is `topic` and
 * whose UNIQ_KEY is `key`; *tran set when one carries TRAN_MSG. */
static int count_key(rmq_test_daemon *d, long long from, const char *topic, const char *key,
                     bool *tran)
{
    char dir[600], names[16][32];
    snprintf(dir, sizeof dir, "%s/store/commitlog", d->state_dir);
    size_t nf = list_files(dir, names, 16);
    int n = 0;
    uint8_t *buf = malloc(FILE_SIZE);
    assert_non_null(buf);
    for (size_t i = 0; i < nf; i++) {
        long long base = atoll(names[i]);
        if (base + FILE_SIZE <= from)
            continue;
        char path[700];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        size_t len = f ? fread(buf, 1, FILE_SIZE, f) : 0;
        if (f)
            fclose(f);
        size_t pos = from > base ? (size_t)(from - base) : 0;
        stored_record r;
        while (pos + 8 < len &&
               stored_record_decode(buf + pos, len - pos, false, &r) == STORED_RECORD_OK) {
            const char *v;
            size_t vl;
            if (r.topic_len == strlen(topic) && memcmp(r.topic, topic, r.topic_len) == 0 &&
                stored_props_get(r.props, (size_t)r.props_len, "UNIQ_KEY", &v, &vl) &&
                vl == strlen(key) && memcmp(v, key, vl) == 0) {
                n++;
                if (tran && stored_props_get(r.props, (size_t)r.props_len, "TRAN_MSG", &v, &vl))
                    *tran = true;
            }
            pos += r.total_size;
        }
    }
    free(buf);
    return n;
}

static int send_props(int port, int i, const char *props, rmq_cmd **answer)
{
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    char body[64];
    snprintf(body, sizeof body, "message %d", i);
    rmq_cmd *r = st_send(fd, i + 1, "TopicHA", 0, props, body, NULL);
    close(fd);
    assert_non_null(r);
    int code = r->code;
    if (answer)
        *answer = r;
    else
        rmq_cmd_free(r);
    return code;
}

/* `ha-setaside resend` sends each set-aside message as its producer sent
 * it (issue 18 §5): a delayed message still waiting goes to its real topic
 * with its DELAY level (the new master schedules it: it lands in
 * SCHEDULE_TOPIC_XXXX there, then in TopicHA once due), a delayed message
 * the old master had delivered goes once (its delivered copy), a pending
 * transaction half goes as a half (the new master's half topic, for its
 * check), a committed transaction message as a plain message without
 * TRAN_MSG (not a new half), and the committed message's half and op
 * record do not go. */
static void test_resend_delayed_and_halves(void **state)
{
    pair *p = *state;
    assert_true(start_slave(p, true) > 0);
    int n = 0;
    for (int first = send_one(p->mport, n++); first != 0; first = send_one(p->mport, n++))
        assert_int_equal(first, 11); /* until the slave reported */
    wait_caught_up(p);
    int st = 0;
    const char *out = rmq_td_ctl_output(&p->s, &st, "promote", NULL);
    assert_int_equal(st, 0);
    /* the old master goes on alone (11: no slave, stored) */
    assert_int_equal(send_props(p->mport, 1, "UNIQ_KEY\001KPLAIN", NULL), 11);
    assert_int_equal(
        send_props(p->mport, 2, "TRAN_MSG\001true\002PGROUP\001PG\002UNIQ_KEY\001KHALF", NULL), 11);
    rmq_cmd *r = NULL;
    assert_int_equal(
        send_props(p->mport, 3, "TRAN_MSG\001true\002PGROUP\001PG\002UNIQ_KEY\001KCOMMIT", &r), 11);
    const char *id = rmq_cmd_ext_get(r, "msgId");
    assert_non_null(id);
    char phys[32], qoff[32];
    snprintf(phys, sizeof phys, "%lld", strtoll(id + strlen(id) - 16, NULL, 16));
    snprintf(qoff, sizeof qoff, "%lld", st_ext_ll(r, "queueOffset"));
    rmq_cmd_free(r);
    const char *kv[] = {"producerGroup",
                        "PG",
                        "tranStateTableOffset",
                        qoff,
                        "commitLogOffset",
                        phys,
                        "commitOrRollback",
                        "8",
                        "fromTransactionCheck",
                        "false",
                        "msgId",
                        "KCOMMIT",
                        NULL};
    r = call(p->mport, 37, kv);
    assert_non_null(r);
    rmq_cmd_free(r);
    /* level 1 (1 s): delivered on the old master before the failover */
    assert_int_equal(send_props(p->mport, 4, "DELAY\0011\002UNIQ_KEY\001KDUE", NULL), 11);
    uint64_t until = rmq_test_now_ms() + 30000;
    while (count_key(&p->m, 0, "TopicHA", "KDUE", NULL) == 0 && rmq_test_now_ms() < until)
        rmq_test_pause_ms(200);
    assert_int_equal(count_key(&p->m, 0, "TopicHA", "KDUE", NULL), 1);
    assert_int_equal(count_key(&p->m, 0, "TopicHA", "KCOMMIT", NULL), 1);
    /* level 4 (30 s): still waiting at the failover and at the resend */
    assert_int_equal(send_props(p->mport, 5, "DELAY\0014\002UNIQ_KEY\001KWAIT", NULL), 11);

    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", p->s_ha_port);
    out = rmq_td_ctl_output(&p->m, &st, "demote", addr, NULL);
    assert_int_equal(st, 0);
    out = wait_ha_text(&p->m, "rejoin set aside ");
    assert_non_null(out);
    const char *name = strstr(out, "rejoin set aside ");
    char file[300];
    snprintf(file, sizeof file, "%s", strrchr(name, '/') + 1);
    file[strcspn(file, "\n")] = 0;
    long long s0 = log_end(&p->s);
    assert_true(count_key(&p->m, 0, "TopicHA", "KWAIT", NULL) == 0);

    char to[64];
    snprintf(to, sizeof to, "127.0.0.1:%d", p->sport);
    out = rmq_td_ctl_output(&p->m, &st, "ha-setaside", "resend", file, to, NULL);
    if (st != 0 || !strstr(out, "resent 5 messages"))
        fprintf(stderr, "resend: %s\n", out);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "resent 5 messages"));
    assert_non_null(strstr(out, "(1 delayed, 1 transaction halves)"));
    bool tran = false;
    assert_int_equal(count_key(&p->s, s0, "TopicHA", "KPLAIN", NULL), 1);
    assert_int_equal(count_key(&p->s, s0, "TopicHA", "KDUE", NULL), 1);
    assert_int_equal(count_key(&p->s, s0, "SCHEDULE_TOPIC_XXXX", "KDUE", NULL), 0);
    assert_int_equal(count_key(&p->s, s0, "TopicHA", "KCOMMIT", &tran), 1);
    assert_false(tran);
    assert_int_equal(count_key(&p->s, s0, "RMQ_SYS_TRANS_HALF_TOPIC", "KCOMMIT", NULL), 0);
    assert_int_equal(count_key(&p->s, s0, "RMQ_SYS_TRANS_HALF_TOPIC", "KHALF", NULL), 1);
    assert_int_equal(count_key(&p->s, s0, "TopicHA", "KHALF", NULL), 0);
    assert_int_equal(count_key(&p->s, s0, "SCHEDULE_TOPIC_XXXX", "KWAIT", NULL), 1);
    /* the new master delivers it once its level's delay has passed */
    until = rmq_test_now_ms() + 60000;
    while (count_key(&p->s, s0, "TopicHA", "KWAIT", NULL) == 0 && rmq_test_now_ms() < until)
        rmq_test_pause_ms(200);
    assert_int_equal(count_key(&p->s, s0, "TopicHA", "KWAIT", NULL), 1);
}

/* The master sets only the store's haListenPort (an ephemeral port, not
 * its port + 1) and no haServerAddr: broker-client-mgr registers the port
 * the store listens on, so a slave without haMasterAddress finds it
 * through the NameServer and replicates. */
static void test_registers_explicit_ha_port(void **state)
{
    pair *p = *state;
    assert_int_equal(configure_slave(p), 0);
    /* the slave's store without haMasterAddress */
    char set[256];
    snprintf(set, sizeof set,
             "mappedFileSizeCommitLog = 1048576; brokerRole = \"SLAVE\"; haListenPort = %d;",
             p->s_ha_port);
    assert_int_equal(rmq_td_add_plugin(&p->s, "store", "store", "broker", set), 0);
    assert_true(start_slave(p, false) > 0);
    /* SLAVE_NOT_AVAILABLE until the slave found the master's HA port */
    uint64_t until = rmq_test_now_ms() + 120000;
    int n = 0, code = 11;
    while (code != 0 && rmq_test_now_ms() < until) {
        code = send_one(p->mport, n++);
        if (code != 0)
            rmq_test_pause_ms(250);
    }
    int st = 0;
    if (code != 0)
        fprintf(stderr, "slave: %s\n", rmq_td_ctl_output(&p->s, &st, "ha", NULL));
    assert_int_equal(code, 0);
    char want[64];
    snprintf(want, sizeof want, "master 127.0.0.1:%d (connected)", p->ha_port);
    const char *out = rmq_td_ctl_output(&p->s, &st, "ha", NULL);
    if (!strstr(out, want))
        fprintf(stderr, "slave: %s\n", out);
    assert_non_null(strstr(out, want));
    wait_caught_up(p);
}

int main(void)
{
    /* RMQ_TEST_FILTER=test_name runs one test (cmocka pattern) */
    if (getenv("RMQ_TEST_FILTER"))
        cmocka_set_test_filter(getenv("RMQ_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replication, setup, teardown),
        cmocka_unit_test_setup_teardown(test_identical_logs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slave_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_frames, setup_raw, teardown),
        cmocka_unit_test_setup_teardown(test_slave_figures, setup_metrics, teardown),
        cmocka_unit_test_setup_teardown(test_rejoin_after_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejoin_killed_while_comparing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resend_delayed_and_halves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejoin_master_shorter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejoin_no_common_point, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_master_under_load, setup, teardown),
        cmocka_unit_test_teardown(test_learns_master_from_nameserver, teardown),
        cmocka_unit_test_setup_teardown(test_two_slaves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slave_against_fake_master, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registers_explicit_ha_port, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
