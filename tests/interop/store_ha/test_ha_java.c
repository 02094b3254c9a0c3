/* test_ha_java.c — replication with a real Java broker (4.9.7 jars from
 * Maven Central; 4.9.8's broker is not published there, its HA code is the
 * same) on loopback, 1 MiB commit-log files on both sides:
 *  - Java SLAVE of an rmqhost SYNC_MASTER: every send is SEND_OK once the
 *    Java slave reported (its acks answer them), the Java slave's commit-log
 *    files are byte-identical to ours (it starts at our last file), and it
 *    serves a pull of our records (topic config copied from our VIP port);
 *  - rmqhost SLAVE of a Java SYNC_MASTER: the Java master answers SEND_OK
 *    (our acks), our files equal Java's, our slave serves pulls and copied
 *    the Java master's topic configs (21 from its port − 2);
 *  - rejoin with a Java master (issue 18 §5): our former master, demoted
 *    to a Java slave restarted as ASYNC_MASTER, compares a file lower than
 *    it started (the Java master lacks that file), sets its divergent tail
 *    aside, replicates, and the resent tail follows on the Java master:
 *    read back by the raw pull client and by a new consumer group of the
 *    Java 4.9.8 client (the harness of tests/interop/java).
 * The SEND_OK / kill -9 of the master / a new Java consumer group reads
 * every acknowledged message from the slave sequence of issue 18, for
 * these two pairs and rmqhost + rmqhost, is tests/interop/java/ha_pair.sh.
 * A JVM that cannot be started fails the test with what was missing. Every
 * daemon and JVM is stopped even when an assertion fails. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

#define BODY 4000

typedef struct world {
    rmq_test_daemon d;
    pid_t java;
    pid_t consumer; /* a harness JVM reading back */
    char java_dir[256];
    int java_port; /* listenPort; HA = +1, VIP = -2 */
    int our_port, our_ha;
    int ns_port; /* set: the NameServer's port while our daemon is down */
} world;

static bool port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* A port p with p-2, p-1, p, p+1 free (a broker's VIP, main and HA ports),
 * below the kernel's ephemeral range (32768+): no port the kernel hands out
 * (nor a port-0 daemon's derived HA port, its port + 1) can take them while
 * the Java broker starts. */
static int broker_ports(void)
{
    for (int i = 0; i < 200; i++) {
        int p = 10002 + (int)((unsigned)rand() % 22000);
        if (port_free(p - 2) && port_free(p - 1) && port_free(p) && port_free(p + 1))
            return p;
    }
    return -1;
}

static int teardown(void **state)
{
    world *w = *state;
    if (w->consumer > 0) {
        kill(-w->consumer, SIGKILL);
        waitpid(w->consumer, NULL, 0);
    }
    if (w->java > 0) {
        kill(-w->java, SIGKILL);
        waitpid(w->java, NULL, 0);
    }
    int st = rmq_td_stop_reporting(&w->d);
    rmq_td_cleanup(&w->d);
    char cmd[400];
    if (w->java_dir[0] && !getenv("KEEP_STORE")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->java_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", w->java_dir);
    }
    free(w);
    return st == 0 ? 0 : -1;
}

/* Start the Java broker with `props` (extra lines); its log in java_dir
 * (a new one unless w->java_dir is set: a restart on the same store). */
static void start_java(world *w, const char *props)
{
    if (!w->java_dir[0]) {
        snprintf(w->java_dir, sizeof w->java_dir, "/tmp/rmq-ha-java.XXXXXX");
        assert_non_null(mkdtemp(w->java_dir));
    }
    char path[400];
    snprintf(path, sizeof path, "%s/broker.properties", w->java_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "brokerClusterName=TestCluster\nbrokerName=broker-t\nlistenPort=%d\n"
            "namesrvAddr=127.0.0.1:%d\nbrokerIP1=127.0.0.1\nbrokerIP2=127.0.0.1\n"
            "storePathRootDir=%s/store\nstorePathCommitLog=%s/store/commitlog\n"
            "mappedFileSizeCommitLog=1048576\nflushDiskType=ASYNC_FLUSH\n"
            "autoCreateTopicEnable=true\n%s",
            w->java_port, w->ns_port ? w->ns_port : rmq_td_port(&w->d, "namesrv"), w->java_dir,
            w->java_dir, props);
    fclose(f);
    char log[400];
    snprintf(log, sizeof log, "%s/java.log", w->java_dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        /* Java 17: the 4.9.x store's mapped-file cleaner */
        setenv("RMQ_JAVA_OPTS", "-Xmx384m --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED", 1);
        execl("/bin/sh", "sh", RMQ_JAVA_PEER_SCRIPT, RMQ_JAVA_PEERS_DIR, "server-4.9.7",
              "org.apache.rocketmq.broker.BrokerStartup", "-c", path, (char *)NULL);
        _exit(127);
    }
    w->java = pid;
    uint64_t until = rmq_test_now_ms() + 90000;
    while (rmq_test_now_ms() < until) {
        int fd = rmq_tc_connect(w->java_port);
        if (fd >= 0) {
            close(fd);
            return;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            w->java = 0;
            break;
        }
        rmq_test_pause_ms(200);
    }
    char cmd[500];
    snprintf(cmd, sizeof cmd, "tail -40 '%s' >&2", log);
    if (system(cmd) != 0)
        fprintf(stderr, "(no Java log)\n");
    fail_msg("the Java 4.9.7 broker (%s/server-4.9.7 via %s) did not start", RMQ_JAVA_PEERS_DIR,
             RMQ_JAVA_PEER_SCRIPT);
}

/* A 4000-byte body of letter i % 26, ending with i: every message's body
 * is its own. */
static char *body_of(int i)
{
    char *body = malloc(BODY + 1);
    memset(body, 'a' + i % 26, BODY);
    snprintf(body + BODY - 12, 13, "#%011d", i);
    return body;
}

static int send_one(int port, int i)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return -1;
    char *body = body_of(i);
    rmq_cmd *r = st_send(fd, i + 1, "TopicHA", 0, NULL, body, NULL);
    free(body);
    close(fd);
    int code = r ? r->code : -1;
    if (r && code != 0 && code != 11)
        fprintf(stderr, "send %d answered %d: %s\n", i, code, r->remark ? r->remark : "");
    rmq_cmd_free(r);
    return code;
}

/* A Java master pre-creates its next file: only files with a record count. */
static bool holds_data(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    unsigned char b[8] = {0};
    bool data = f && fread(b, 1, sizeof b, f) == sizeof b && (b[4] | b[5] | b[6] | b[7]) != 0;
    if (f)
        fclose(f);
    return data;
}

/* Wait until every file of the slave's dir equals the master's of that
 * name and the slave has the master's newest file holding data; how many
 * compared. */
static size_t wait_identical(const char *mdir, const char *sdir)
{
    uint64_t until = rmq_test_now_ms() + 90000;
    size_t same = 0;
    bool ok = false;
    while (!ok && rmq_test_now_ms() < until) {
        DIR *d = opendir(mdir);
        char newest[32] = "";
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL)
            if (strlen(de->d_name) == 20 && strcmp(de->d_name, newest) > 0 &&
                holds_data(mdir, de->d_name))
                snprintf(newest, sizeof newest, "%s", de->d_name);
        if (d)
            closedir(d);
        ok = newest[0] != 0;
        same = 0;
        d = opendir(sdir);
        bool has_newest = false;
        while (ok && d && (de = readdir(d)) != NULL) {
            if (strlen(de->d_name) != 20)
                continue;
            char a[600], b[600];
            snprintf(a, sizeof a, "%s/%s", mdir, de->d_name);
            snprintf(b, sizeof b, "%s/%s", sdir, de->d_name);
            has_newest |= strcmp(de->d_name, newest) == 0;
            if (st_same_file(a, b))
                same++;
            else
                ok = false;
        }
        if (d)
            closedir(d);
        ok = ok && has_newest;
        if (!ok)
            rmq_test_pause_ms(300);
    }
    if (!ok) {
        char cmd[1000];
        snprintf(
            cmd, sizeof cmd,
            "ls -l '%s' '%s' >&2; for f in '%s'/0*; do cmp \"$f\" '%s'/$(basename $f) >&2; done",
            mdir, sdir, sdir, mdir);
        if (system(cmd) != 0)
            fprintf(stderr, "(compare failed)\n");
    }
    assert_true(ok);
    return same;
}

static void expect_pull(int port, long long offset)
{
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    st_pull_args pa = {.group = "GHA", .topic = "TopicHA", .queue = 0, .offset = offset, .max = 1};
    rmq_cmd *r = st_pull(fd, 9, &pa);
    close(fd);
    assert_non_null(r);
    if (r->code != 0)
        fprintf(stderr, "pull answered %d: %s\n", r->code, r->remark ? r->remark : "");
    assert_int_equal(r->code, 0);
    stored_record rec[2];
    assert_int_equal(st_records(r, rec, 2), 1);
    assert_int_equal(rec[0].queue_offset, offset);
    assert_int_equal(((const char *)rec[0].body)[0], 'a' + offset % 26);
    rmq_cmd_free(r);
}

/* Our SYNC_MASTER with VIP and HA ports as Java derives them. */
static void test_java_slave_of_rmqhost(void **state)
{
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    *state = w;
    w->our_port = broker_ports();
    w->java_port = broker_ports();
    assert_true(w->our_port > 0 && w->java_port > 0);
    const char *servers[] = {"namesrv", "broker", NULL};
    int ns = rmq_tc_free_port();
    char host_conf[1024], bcm[512];
    assert_int_equal(rmq_td_init(&w->d, servers, NULL), 0);
    snprintf(host_conf, sizeof host_conf,
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"info\";\n"
             "io_threads = 2;\nservers = {\n  namesrv = { listen = \"127.0.0.1:%d\"; };\n"
             "  broker = { listen = \"127.0.0.1:%d\"; vip_listen = \"127.0.0.1:%d\"; };\n};\n",
             w->d.state_dir, w->d.admin_socket, ns, w->our_port, w->our_port - 2);
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\";",
             ns);
    assert_int_equal(rmq_td_write_conf(&w->d, "host.conf", host_conf), 0);
    assert_int_equal(rmq_td_add_plugin(&w->d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(
        rmq_td_add_plugin(&w->d, "broker-client-mgr", "broker-client-mgr", "broker", bcm), 0);
    assert_int_equal(rmq_td_add_plugin(&w->d, "filter", "filter", "broker", NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&w->d, "store", "store", "broker",
                                       "mappedFileSizeCommitLog = 1048576; "
                                       "brokerRole = \"SYNC_MASTER\";"),
                     0);
    assert_int_equal(rmq_td_start(&w->d, NULL), 0);
    /* history before the slave: > 1 file; SLAVE_NOT_AVAILABLE, stored */
    for (int i = 0; i < 300; i++)
        assert_int_equal(send_one(w->our_port, i), 11);

    char props[256];
    snprintf(props, sizeof props, "brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:%d\n",
             w->our_port + 1);
    start_java(w, props);
    /* the Java slave reports ~5 s after connecting; then it acks */
    uint64_t until = rmq_test_now_ms() + 90000;
    int code = 11, i = 300;
    while (code == 11 && rmq_test_now_ms() < until) {
        code = send_one(w->our_port, i++);
        if (code == 11)
            rmq_test_pause_ms(500);
    }
    assert_int_equal(code, 0);
    for (int k = 0; k < 100; k++)
        assert_int_equal(send_one(w->our_port, i++), 0);
    char mdir[400], sdir[400];
    snprintf(mdir, sizeof mdir, "%s/store/commitlog", w->d.state_dir);
    snprintf(sdir, sizeof sdir, "%s/store/commitlog", w->java_dir);
    assert_true(wait_identical(mdir, sdir) >= 1);
    /* the Java slave started at our last file: not at 0 */
    char first[450];
    snprintf(first, sizeof first, "%s/00000000000000000000", sdir);
    assert_int_not_equal(access(first, F_OK), 0);
    /* it serves our records once it copied TopicHA from our VIP port */
    until = rmq_test_now_ms() + 60000;
    bool served = false;
    while (!served && rmq_test_now_ms() < until) {
        int fd = rmq_tc_connect(w->java_port);
        st_pull_args pa = {
            .group = "GHA", .topic = "TopicHA", .queue = 0, .offset = i - 1, .max = 1};
        rmq_cmd *r = fd >= 0 ? st_pull(fd, 9, &pa) : NULL;
        if (fd >= 0)
            close(fd);
        served = r && r->code == 0;
        rmq_cmd_free(r);
        if (!served)
            rmq_test_pause_ms(500);
    }
    assert_true(served);
    expect_pull(w->java_port, i - 1);
}

/* A Java SYNC_MASTER; our slave finds it through haMasterAddress and its
 * topic configs through the NameServer's masterAddr. */
static void test_rmqhost_slave_of_java(void **state)
{
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    *state = w;
    w->java_port = broker_ports();
    assert_true(w->java_port > 0);
    char set[256];
    snprintf(set, sizeof set, "brokerRole = \"SLAVE\"; haMasterAddress = \"127.0.0.1:%d\";",
             w->java_port + 1);
    assert_int_equal(st_configure(&w->d, set), 0);
    assert_int_equal(rmq_td_start(&w->d, NULL), 0);
    w->our_port = rmq_td_port(&w->d, "broker");
    start_java(w, "brokerId=0\nbrokerRole=SYNC_MASTER\n");
    /* our slave reports at once: the Java master answers SEND_OK */
    uint64_t until = rmq_test_now_ms() + 60000;
    int code = -1, i = 0;
    while (code != 0 && rmq_test_now_ms() < until) {
        code = send_one(w->java_port, i++);
        if (code != 0)
            rmq_test_pause_ms(500);
    }
    assert_int_equal(code, 0);
    int first_ok = i - 1;
    for (int k = 0; k < 300; k++)
        assert_int_equal(send_one(w->java_port, i++), 0);
    char mdir[400], sdir[400];
    snprintf(mdir, sizeof mdir, "%s/store/commitlog", w->java_dir);
    snprintf(sdir, sizeof sdir, "%s/store/commitlog", w->d.state_dir);
    assert_true(wait_identical(mdir, sdir) >= 1);
    /* our slave serves the Java master's records once it has TopicHA */
    until = rmq_test_now_ms() + 60000;
    bool served = false;
    while (!served && rmq_test_now_ms() < until) {
        int fd = rmq_tc_connect(w->our_port);
        st_pull_args pa = {
            .group = "GHA", .topic = "TopicHA", .queue = 0, .offset = i - 1, .max = 1};
        rmq_cmd *r = fd >= 0 ? st_pull(fd, 9, &pa) : NULL;
        if (fd >= 0)
            close(fd);
        served = r && r->code == 0;
        rmq_cmd_free(r);
        if (!served)
            rmq_test_pause_ms(500);
    }
    assert_true(served);
    expect_pull(w->our_port, i - 1);
    expect_pull(w->our_port, first_ok);
}

/* The Java broker's files with data are byte-identical to ours of that
 * name, and we hold no data in a file past its newest one. */
static void wait_same_as_master(const char *jdir, const char *odir)
{
    uint64_t until = rmq_test_now_ms() + 90000;
    bool ok = false;
    while (!ok && rmq_test_now_ms() < until) {
        DIR *d = opendir(jdir);
        char newest[32] = "";
        int same = 0;
        ok = d != NULL;
        struct dirent *de;
        while (ok && (de = readdir(d)) != NULL) {
            if (strlen(de->d_name) != 20 || !holds_data(jdir, de->d_name))
                continue;
            char a[600], b[600];
            snprintf(a, sizeof a, "%s/%s", jdir, de->d_name);
            snprintf(b, sizeof b, "%s/%s", odir, de->d_name);
            if (strcmp(de->d_name, newest) > 0)
                snprintf(newest, sizeof newest, "%s", de->d_name);
            ok = st_same_file(a, b);
            same++;
        }
        if (d)
            closedir(d);
        ok = ok && same > 0;
        d = opendir(odir);
        while (ok && d && (de = readdir(d)) != NULL)
            if (strlen(de->d_name) == 20 && strcmp(de->d_name, newest) > 0 &&
                holds_data(odir, de->d_name))
                ok = false;
        if (d)
            closedir(d);
        if (!ok)
            rmq_test_pause_ms(300);
    }
    if (!ok) {
        char cmd[1000];
        snprintf(cmd, sizeof cmd,
                 "ls -l '%s' '%s' >&2; for f in '%s'/0*; do cmp \"$f\" '%s'/$(basename $f) >&2; "
                 "done",
                 jdir, odir, jdir, odir);
        if (system(cmd) != 0)
            fprintf(stderr, "(compare failed)\n");
    }
    assert_true(ok);
}

/* Pull queue 0 of TopicHA from port from `from` on (group g): up to max
 * records into rec (bodies copied into bodies[]); how many. */
static int pull_all(int port, const char *g, long long from, char (*bodies)[BODY + 1], int max)
{
    int n = 0;
    long long off = from;
    uint64_t until = rmq_test_now_ms() + 60000;
    while (n < max && rmq_test_now_ms() < until) {
        int fd = rmq_tc_connect(port);
        if (fd < 0)
            break;
        st_pull_args pa = {.group = g, .topic = "TopicHA", .queue = 0, .offset = off, .max = 32};
        rmq_cmd *r = st_pull(fd, 9, &pa);
        close(fd);
        if (!r || r->code != 0) {
            /* 19 PULL_NOT_FOUND, 21 PULL_OFFSET_MOVED: no more */
            int code = r ? r->code : -1;
            rmq_cmd_free(r);
            if (code == 19 || code == 21)
                break;
            rmq_test_pause_ms(500);
            continue;
        }
        stored_record rec[32];
        int k = st_records(r, rec, 32);
        for (int i = 0; i < k && n < max; i++, n++) {
            assert_int_equal(rec[i].queue_offset, off + i);
            int len = rec[i].body_len > BODY ? BODY : rec[i].body_len;
            memcpy(bodies[n], rec[i].body, (size_t)len);
            bodies[n][len] = 0;
        }
        off += k;
        rmq_cmd_free(r);
        if (k == 0)
            break;
    }
    return n;
}

/* A new consumer group of the Java 4.9.8 client (harness scenario
 * cbodies, through the NameServer on ns_port) gets exactly once each
 * message body_of(idx[k]) of TopicHA, and nothing else. */
static void java_read_back(world *w, int ns_port, const char *group, const int *idx, int n)
{
    char list[400], out[400];
    snprintf(list, sizeof list, "%s/%s.idx", w->java_dir, group);
    snprintf(out, sizeof out, "%s/%s.out", w->java_dir, group);
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    for (int k = 0; k < n; k++)
        fprintf(f, "%d\n", idx[k]);
    assert_int_equal(fclose(f), 0);
    char set[300], ns[64], scenario[600];
    snprintf(set, sizeof set, "client-4.9.8:%s/client-4.9.8", RMQ_JAVA_HARNESS_DIR);
    snprintf(ns, sizeof ns, "127.0.0.1:%d", ns_port);
    snprintf(scenario, sizeof scenario, "cbodies:TopicHA:%s:%s", group, list);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl("/bin/sh", "sh", RMQ_JAVA_PEER_SCRIPT, RMQ_JAVA_PEERS_DIR, set, "RmqInterop", ns,
              "ha", scenario, (char *)NULL);
        _exit(127);
    }
    w->consumer = pid;
    int st = -1;
    uint64_t until = rmq_test_now_ms() + 180000;
    while (rmq_test_now_ms() < until && waitpid(pid, &st, WNOHANG) != pid)
        rmq_test_pause_ms(200);
    bool ended = rmq_test_now_ms() < until || waitpid(pid, &st, WNOHANG) == pid;
    if (!ended) {
        kill(-pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    w->consumer = 0;
    char cmd[500];
    snprintf(cmd, sizeof cmd, "grep -v '^ ' '%s' | cut -c1-600 >&2", out);
    if (system(cmd) != 0)
        fprintf(stderr, "(no output of the Java consumer in %s)\n", out);
    if (!ended || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("the Java 4.9.8 consumer (%s, harness in %s) did not get the %d messages", group,
                 RMQ_JAVA_HARNESS_DIR, n);
}

/* Issue 18 §5 with a Java master: our ASYNC_MASTER replicates to a Java
 * slave from the first byte; the Java slave dies (kill -9), we go on alone
 * (the divergent tail, across a file end) and die too; the Java broker
 * comes back as the master (brokerId 0, ASYNC_MASTER: Java needs the
 * restart) and takes new sends; we come back and are demoted to it. Our
 * comparison starts at our last file, which the Java master does not have
 * (it only heartbeats there): we must go a file lower rather than cut our
 * log above its end, find where the logs part, set the tail aside, and
 * replicate: our files equal the Java master's. The set-aside messages,
 * resent to the Java master, follow its new ones: a consumer of the Java
 * master reads every acknowledged message once, in order. */
static void test_rejoin_java_master(void **state)
{
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    *state = w;
    w->our_port = broker_ports();
    w->java_port = broker_ports();
    assert_true(w->our_port > 0 && w->java_port > 0);
    const char *servers[] = {"namesrv", "broker", NULL};
    int ns = rmq_tc_free_port();
    char host_conf[1024], bcm[512];
    w->ns_port = ns;
    assert_int_equal(rmq_td_init(&w->d, servers, NULL), 0);
    snprintf(host_conf, sizeof host_conf,
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"info\";\n"
             "io_threads = 2;\nservers = {\n  namesrv = { listen = \"127.0.0.1:%d\"; };\n"
             "  broker = { listen = \"127.0.0.1:%d\"; vip_listen = \"127.0.0.1:%d\"; };\n};\n",
             w->d.state_dir, w->d.admin_socket, ns, w->our_port, w->our_port - 2);
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\";",
             ns);
    assert_int_equal(rmq_td_write_conf(&w->d, "host.conf", host_conf), 0);
    assert_int_equal(rmq_td_add_plugin(&w->d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(
        rmq_td_add_plugin(&w->d, "broker-client-mgr", "broker-client-mgr", "broker", bcm), 0);
    assert_int_equal(rmq_td_add_plugin(&w->d, "filter", "filter", "broker", NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&w->d, "store", "store", "broker",
                                       "mappedFileSizeCommitLog = 1048576; "
                                       "brokerRole = \"ASYNC_MASTER\"; "
                                       "diskMaxUsedSpaceRatio = 95;"),
                     0);
    assert_int_equal(rmq_td_start(&w->d, NULL), 0);
    /* the Java slave from our first byte: our log is within its first file */
    char props[256];
    snprintf(props, sizeof props, "brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:%d\n",
             w->our_port + 1);
    start_java(w, props);
    const int common = 150, tail = 260, fresh = 5;
    for (int i = 0; i < common; i++)
        assert_int_equal(send_one(w->our_port, i), 0);
    char odir[400], jdir[400];
    snprintf(odir, sizeof odir, "%s/store/commitlog", w->d.state_dir);
    snprintf(jdir, sizeof jdir, "%s/store/commitlog", w->java_dir);
    wait_identical(odir, jdir);
    char first[450];
    snprintf(first, sizeof first, "%s/00000000000000000000", jdir);
    assert_int_equal(access(first, F_OK), 0);
    int st = 0;
    const char *out = rmq_td_ctl_output(&w->d, &st, "ha", NULL);
    char *end_line = strstr(out, "commitLogMaxOffset ");
    assert_non_null(end_line);
    long long java_end = atoll(end_line + strlen("commitLogMaxOffset "));

    /* the Java slave dies; we go on alone past a file end, then die */
    kill(-w->java, SIGKILL);
    waitpid(w->java, NULL, 0);
    w->java = 0;
    for (int i = common; i < common + tail; i++)
        assert_int_equal(send_one(w->our_port, i), 0);
    out = rmq_td_ctl_output(&w->d, &st, "ha", NULL);
    end_line = strstr(out, "commitLogMaxOffset ");
    assert_non_null(end_line);
    long long diverged_end = atoll(end_line + strlen("commitLogMaxOffset "));
    assert_true(diverged_end > 1048576 && java_end < 1048576);
    assert_int_equal(kill(w->d.pid, SIGKILL), 0);
    waitpid(w->d.pid, NULL, 0);
    w->d.pid = 0;
    char addrs[400];
    snprintf(addrs, sizeof addrs, "%s/listen.addrs", w->d.state_dir);
    unlink(addrs);

    /* the Java broker comes back as the master and takes new sends */
    /* registering every 10 s (Java's least): the NameServer, restarted
     * with us, has its route soon for the Java read-back below */
    start_java(w, "brokerId=0\nbrokerRole=ASYNC_MASTER\nregisterNameServerPeriod=10000\n");
    for (int i = 0; i < fresh; i++)
        assert_int_equal(send_one(w->java_port, 9000 + i), 0);

    /* we come back (a master still) and are demoted to the Java master */
    assert_int_equal(rmq_td_start(&w->d, NULL), 0);
    char ha[64];
    snprintf(ha, sizeof ha, "127.0.0.1:%d", w->java_port + 1);
    out = rmq_td_ctl_output(&w->d, &st, "demote", ha, NULL);
    if (st != 0)
        fprintf(stderr, "demote: %s\n", out);
    assert_int_equal(st, 0);
    char said[160], range[128];
    snprintf(said, sizeof said, ": %d messages, log [%lld, %lld)", tail, java_end, diverged_end);
    snprintf(range, sizeof range, "rejoin set aside ");
    uint64_t until = rmq_test_now_ms() + 120000;
    bool settled = false;
    while (!settled && rmq_test_now_ms() < until) {
        out = rmq_td_ctl_output(&w->d, &st, "ha-setaside", NULL);
        settled = st == 0 && strstr(out, said) != NULL;
        if (!settled)
            rmq_test_pause_ms(300);
    }
    if (!settled) {
        fprintf(stderr, "ha-setaside: %s (want %s)\nha: %s\n", out, said,
                rmq_td_ctl_output(&w->d, &st, "ha", NULL));
        char cmd[900];
        snprintf(cmd, sizeof cmd, "grep -h 'HA' '%s' | tail -30 >&2; tail -20 '%s/java.log' >&2",
                 w->d.log_path, w->java_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "(no logs)\n");
    }
    assert_true(settled);
    /* it compared a file lower than it started: never cut above the
     * Java master's end */
    assert_true(rmq_td_log_contains(&w->d, "has no data at 1048576"));
    out = rmq_td_ctl_output(&w->d, &st, "ha", NULL);
    assert_non_null(strstr(out, "role SLAVE"));
    assert_non_null(strstr(out, range));
    assert_null(strstr(out, "STOPPED"));
    wait_same_as_master(jdir, odir);

    /* the set-aside messages resent to the Java master */
    char dir[450], file[300] = "";
    snprintf(dir, sizeof dir, "%s/store/ha-setaside", w->d.state_dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 10 && strcmp(de->d_name + l - 10, ".commitlog") == 0)
            snprintf(file, sizeof file, "%s", de->d_name);
    }
    closedir(d);
    assert_true(file[0] != 0);
    char to[64], want[64];
    snprintf(to, sizeof to, "127.0.0.1:%d", w->java_port);
    out = rmq_td_ctl_output(&w->d, &st, "ha-setaside", "resend", file, to, NULL);
    snprintf(want, sizeof want, "resent %d messages", tail);
    if (st != 0 || !strstr(out, want))
        fprintf(stderr, "resend: %s\n", out);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, want));

    /* a consumer of the Java master: every acknowledged message once */
    const int total = common + fresh + tail;
    char(*bodies)[BODY + 1] = calloc((size_t)total + 8, sizeof *bodies);
    assert_non_null(bodies);
    int got = pull_all(w->java_port, "GRejoin", 0, bodies, total + 8);
    if (got != total)
        fprintf(stderr, "pulled %d of %d\n", got, total);
    for (int k = 0; k < got && k < total; k++) {
        int idx = k < common ? k : k < common + fresh ? 9000 + k - common : k - fresh;
        char *b = body_of(idx);
        if (strcmp(bodies[k], b) != 0)
            fprintf(stderr, "queue offset %d: body of %.24s... want %s\n", k, bodies[k] + BODY - 24,
                    b + BODY - 12);
        assert_string_equal(bodies[k], b);
        free(b);
    }
    free(bodies);
    assert_int_equal(got, total);
    /* the same with the Java client: a new consumer group, each once */
    int *idx = calloc((size_t)total, sizeof *idx);
    assert_non_null(idx);
    for (int k = 0; k < total; k++)
        idx[k] = k < common ? k : k < common + fresh ? 9000 + k - common : k - fresh;
    java_read_back(w, w->ns_port, "GRejoinJava", idx, total);
    free(idx);
    /* and the demoted broker replicated the resent messages too */
    wait_same_as_master(jdir, odir);
}

int main(void)
{
    /* RMQ_TEST_FILTER=test_name runs one test (cmocka pattern) */
    if (getenv("RMQ_TEST_FILTER"))
        cmocka_set_test_filter(getenv("RMQ_TEST_FILTER"));
    srand((unsigned)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_java_slave_of_rmqhost, teardown),
        cmocka_unit_test_teardown(test_rmqhost_slave_of_java, teardown),
        cmocka_unit_test_teardown(test_rejoin_java_master, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
