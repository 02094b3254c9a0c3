/* test_ha_java.c — replication with a real Java broker (4.9.7 jars from
 * Maven Central; 4.9.8's broker is not published there, its HA code is the
 * same) on loopback, 1 MiB commit-log files on both sides:
 *  - Java SLAVE of an rmqhost SYNC_MASTER: every send is SEND_OK once the
 *    Java slave reported (its acks answer them), the Java slave's commit-log
 *    files are byte-identical to ours (it starts at our last file), and it
 *    serves a pull of our records (topic config copied from our VIP port);
 *  - rmqhost SLAVE of a Java SYNC_MASTER: the Java master answers SEND_OK
 *    (our acks), our files equal Java's, our slave serves pulls and copied
 *    the Java master's topic configs (21 from its port − 2).
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
    char java_dir[256];
    int java_port; /* listenPort; HA = +1, VIP = -2 */
    int our_port, our_ha;
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

/* Start the Java broker with `props` (extra lines); its log in java_dir. */
static void start_java(world *w, const char *props)
{
    snprintf(w->java_dir, sizeof w->java_dir, "/tmp/rmq-ha-java.XXXXXX");
    assert_non_null(mkdtemp(w->java_dir));
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
            w->java_port, rmq_td_port(&w->d, "namesrv"), w->java_dir, w->java_dir, props);
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

static int send_one(int port, int i)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return -1;
    char *body = malloc(BODY + 1);
    memset(body, 'a' + i % 26, BODY);
    body[BODY] = 0;
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

int main(void)
{
    srand((unsigned)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_java_slave_of_rmqhost, teardown),
        cmocka_unit_test_teardown(test_rmqhost_slave_of_java, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
