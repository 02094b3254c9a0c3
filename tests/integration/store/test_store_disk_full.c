/* test_store_disk_full.c — issue 21 §1 end to end: the all-in-one daemon
 * with its store on a small tmpfs this test mounts (root only, else skipped
 * with exit 77), filled to the last byte by a filler file while SEND_MESSAGE_V2
 * goes on, freed, filled again, restarted. Before the fix the daemon died of
 * SIGBUS (a consume-queue page the full tmpfs could not supply). Checks:
 * the daemon lives and stops cleanly; sends are refused with Java's 14 and
 * remark; pulls keep serving every acknowledged message; the ratio in
 * GET_BROKER_RUNTIME_INFO is Java's (1.0 when full); sends resume by
 * themselves once the disk is freed; everything acknowledged is readable
 * after a restart. cleanFileForciblyEnable = false: above 85 % Java's
 * retention deletes the oldest segments whatever their age, which would
 * take acknowledged messages away (and make room by itself). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

#define TOPIC "TopicDiskFull"
#define NQ 4
#define BODY 1000
#define SEG (4 * 1024 * 1024)

static char g_mnt[256];

typedef struct acked {
    int queue;
    long long offset;
    int seed;
} acked;

typedef struct run {
    rmq_test_daemon d;
    int port, fd, opaque, seed;
    acked *v;
    size_t n, cap;
} run;

static void body_of(int seed, char *out)
{
    int k = snprintf(out, BODY + 1, "m%d-", seed);
    for (int i = k; i < BODY; i++)
        out[i] = (char)('a' + (seed + i) % 26);
    out[BODY] = 0;
}

/* One SEND_MESSAGE_V2; acknowledged ones are recorded. The answer's code
 * (-1: no answer: the daemon is gone), its remark copied into remark. */
static int send_one(run *r, char *remark, size_t cap)
{
    char body[BODY + 1];
    int seed = r->seed++;
    body_of(seed, body);
    int q = seed % NQ;
    char props[96]; /* a unique key: the index's hash slots are written at random */
    snprintf(props, sizeof props, "UNIQ_KEY\001AC1100%026X\002TAGS\001t", (unsigned)seed);
    rmq_cmd *a = st_send(r->fd, ++r->opaque, TOPIC, q, props, body, NULL);
    if (!a)
        return -1;
    int code = a->code;
    if (remark)
        snprintf(remark, cap, "%s", a->remark ? a->remark : "");
    if (code == 0) {
        if (r->n == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 1024;
            r->v = realloc(r->v, r->cap * sizeof *r->v);
            assert_non_null(r->v);
        }
        r->v[r->n++] = (acked){q, st_ext_ll(a, "queueOffset"), seed};
    }
    rmq_cmd_free(a);
    return code;
}

static void send_ok(run *r, int n)
{
    for (int i = 0; i < n; i++) {
        char remark[512];
        int code = send_one(r, remark, sizeof remark);
        if (code != 0)
            fail_msg("send answered %d (%s)", code, remark);
    }
}

/* Send until refused: Java's disk answer, then it keeps refusing. */
static void send_until_refused(run *r)
{
    char remark[512];
    int code = 0;
    for (int i = 0; i < 200000 && code == 0; i++)
        code = send_one(r, remark, sizeof remark);
    if (code == -1)
        fail_msg("no answer to a send on a full disk: the daemon died");
    if (code == 0)
        fail_msg("200000 sends on a full disk were all accepted");
    fprintf(stderr, "full disk: first refusal %d after %zu acknowledged sends\n", code, r->n);
    for (int i = 0; i < 10; i++) {
        code = send_one(r, remark, sizeof remark);
        assert_int_equal(code, 14);
        const char *want = "service not available now. It may be caused by one of the following "
                           "reasons: the broker's disk is full [CL: ";
        if (strncmp(remark, want, strlen(want)) != 0 ||
            !strstr(remark, "[CL:  1.00 CQ:  1.00 INDEX:  1.00]"))
            fail_msg("remark of the refusal: \"%s\"", remark);
    }
}

/* Every acknowledged message pulled from its queue offset with its body. */
static void check_all_pulled(run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        st_pull_args pa = {
            .topic = TOPIC, .queue = r->v[i].queue, .offset = r->v[i].offset, .max = 1};
        rmq_cmd *a = st_pull(r->fd, ++r->opaque, &pa);
        if (!a)
            fail_msg("no answer to a pull: the daemon died");
        stored_record rec[1];
        if (a->code != 0 || st_records(a, rec, 1) != 1)
            fail_msg("acknowledged message %zu (queue %d offset %lld) not pulled: code %d", i,
                     r->v[i].queue, r->v[i].offset, a->code);
        char body[BODY + 1];
        body_of(r->v[i].seed, body);
        assert_int_equal(rec[0].body_len, BODY);
        assert_memory_equal(rec[0].body, body, BODY);
        rmq_cmd_free(a);
    }
}

static void fill_to_last_byte(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    static char buf[1024 * 1024];
    memset(buf, 0x5a, sizeof buf);
    for (size_t chunk = sizeof buf; chunk >= 1; chunk /= 16) {
        ssize_t w;
        while ((w = write(fd, buf, chunk)) > 0)
            ;
        assert_int_equal(errno, ENOSPC);
    }
    close(fd);
}

/* GET_BROKER_RUNTIME_INFO (28): commitLogDiskRatio as text */
static void runtime_ratio(run *r, char *out, size_t cap)
{
    rmq_cmd *req = rmq_tc_request(28, ++r->opaque, NULL);
    rmq_cmd *a = rmq_tc_call(r->fd, req, 10000);
    rmq_cmd_free(req);
    assert_non_null(a);
    assert_int_equal(a->code, 0);
    out[0] = 0;
    const char *key = "\"commitLogDiskRatio\":\"";
    char *body = strndup((const char *)a->body, a->body_len);
    char *p = strstr(body, key);
    assert_non_null(p);
    p += strlen(key);
    size_t k = strcspn(p, "\"");
    snprintf(out, cap, "%.*s", (int)k, p);
    free(body);
    rmq_cmd_free(a);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* The store a test left on the small file system: its room goes back. */
static void remove_store(const char *name)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/%s", g_mnt, name);
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void reconnect(run *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->port = rmq_td_port(&r->d, "broker");
    r->fd = rmq_tc_connect(r->port);
    assert_true(r->fd >= 0);
}

static void fill_free_fill_restart(void **state)
{
    (void)state;
    run r = {.fd = -1};
    char settings[600], filler[300];
    snprintf(settings, sizeof settings,
             "storePathRootDir = \"%s/store\"; cleanResourceInterval = 200; "
             "mappedFileSizeCommitLog = %d; cleanFileForciblyEnable = false;",
             g_mnt, SEG);
    snprintf(filler, sizeof filler, "%s/filler", g_mnt);
    assert_true(st_start(&r.d, settings) > 0);
    reconnect(&r);
    send_ok(&r, 200);

    fill_to_last_byte(filler);
    send_until_refused(&r);
    check_all_pulled(&r);
    char ratio[40];
    runtime_ratio(&r, ratio, sizeof ratio); /* Java's formula: nothing usable left */
    assert_string_equal(ratio, "1.0");
    /* the NameServer role of the same process answers too
     * (GET_ALL_TOPIC_LIST_FROM_NAMESERVER) */
    int ns = rmq_tc_connect(rmq_td_port(&r.d, "namesrv"));
    assert_true(ns >= 0);
    rmq_cmd *req = rmq_tc_request(206, 1, NULL);
    rmq_cmd *ans = rmq_tc_call(ns, req, 10000);
    rmq_cmd_free(req);
    assert_non_null(ans);
    assert_int_equal(ans->code, 0);
    rmq_cmd_free(ans);
    close(ns);

    /* some space back, a probe file fits but the next segment does not:
     * still refused (resuming here let sends write into pages the disk
     * could not supply: SIGBUS) */
    struct stat st;
    assert_int_equal(stat(filler, &st), 0);
    assert_int_equal(truncate(filler, st.st_size - 2 * 1024 * 1024), 0);
    uint64_t until = rmq_test_now_ms() + 12000; /* past the old 10 s re-check */
    while (rmq_test_now_ms() < until) {
        int c = send_one(&r, NULL, 0);
        if (c == -1)
            fail_msg("no answer to a send with 2 MiB free: the daemon died");
        if (c != 14)
            fail_msg("a send with 2 MiB free (less than a segment) answered %d", c);
        rmq_test_pause_ms(5);
    }
    check_all_pulled(&r);

    /* freed: sends resume by themselves (cleanResourceInterval re-check) */
    assert_int_equal(unlink(filler), 0);
    uint64_t deadline = rmq_test_now_ms() + 30000;
    int code = 14;
    while (code != 0 && rmq_test_now_ms() < deadline) {
        code = send_one(&r, NULL, 0);
        assert_int_not_equal(code, -1);
        if (code != 0)
            rmq_test_pause_ms(100);
    }
    if (code != 0)
        fail_msg("sends did not resume within 30 s of freeing the disk");
    send_ok(&r, 1000);
    check_all_pulled(&r);

    fill_to_last_byte(filler);
    send_until_refused(&r);
    check_all_pulled(&r);

    /* the daemon stops cleanly and keeps everything over a restart, full */
    close(r.fd);
    r.fd = -1;
    assert_int_equal(rmq_td_stop(&r.d), 0);
    assert_int_equal(rmq_td_start(&r.d, NULL), 0);
    reconnect(&r);
    check_all_pulled(&r);
    assert_int_equal(unlink(filler), 0);
    close(r.fd);
    assert_int_equal(rmq_td_stop_reporting(&r.d), 0);
    rmq_td_cleanup(&r.d);
    remove_store("store");
    free(r.v);
}

/* SYNC_FLUSH, two connections with 16 sends in flight each: the disk is
 * filled to the last byte while a round's sends wait for their group
 * commit. Each send gets one answer: 0 (its bytes were synced: it must be
 * readable), 10 FLUSH_DISK_TIMEOUT (stored, not confirmed), 14 or 1
 * (refused); the refusals come and stay; freed, sends are confirmed again. */
#define CONNS 2
#define DEPTH 16

typedef struct round_stats {
    int ok, refused, timeout;
} round_stats;

static void sync_round(run *r, int *fds, bool fill_meanwhile, const char *filler, round_stats *rs)
{
    int seeds[CONNS][DEPTH];
    for (int c = 0; c < CONNS; c++)
        for (int k = 0; k < DEPTH; k++) {
            char body[BODY + 1], props[96];
            int seed = r->seed++;
            seeds[c][k] = seed;
            body_of(seed, body);
            snprintf(props, sizeof props, "UNIQ_KEY\001AC1100%026X\002TAGS\001t", (unsigned)seed);
            rmq_cmd *req = st_send_request(1000 + k, TOPIC, seed % NQ, props, body, NULL);
            assert_non_null(req);
            assert_int_equal(rmq_tc_send(fds[c], req), 0);
            rmq_cmd_free(req);
        }
    if (fill_meanwhile)
        fill_to_last_byte(filler);
    for (int c = 0; c < CONNS; c++)
        for (int k = 0; k < DEPTH; k++) {
            rmq_cmd *a = rmq_tc_recv(fds[c], 15000);
            if (!a)
                fail_msg("a pipelined SYNC_FLUSH send got no answer: the daemon died?");
            int i = a->opaque - 1000;
            assert_true(i >= 0 && i < DEPTH);
            int seed = seeds[c][i];
            if (a->code == 0) {
                if (r->n == r->cap) {
                    r->cap = r->cap ? r->cap * 2 : 1024;
                    r->v = realloc(r->v, r->cap * sizeof *r->v);
                    assert_non_null(r->v);
                }
                r->v[r->n++] = (acked){seed % NQ, st_ext_ll(a, "queueOffset"), seed};
                rs->ok++;
            } else if (a->code == 10) {
                rs->timeout++;
            } else if (a->code == 14 || a->code == 1) {
                rs->refused++;
            } else {
                fail_msg("SYNC_FLUSH send answered %d (%s)", a->code, a->remark ? a->remark : "");
            }
            rmq_cmd_free(a);
        }
}

static void sync_flush_groups_when_disk_fills(void **state)
{
    (void)state;
    run r = {.fd = -1};
    char settings[600], filler[300];
    snprintf(settings, sizeof settings,
             "storePathRootDir = \"%s/sstore\"; cleanResourceInterval = 200; "
             "mappedFileSizeCommitLog = %d; cleanFileForciblyEnable = false; "
             "flushDiskType = \"SYNC_FLUSH\";",
             g_mnt, SEG);
    snprintf(filler, sizeof filler, "%s/filler", g_mnt);
    unlink(filler); /* left by a failed test before */
    remove_store("store");
    assert_true(st_start(&r.d, settings) > 0);
    reconnect(&r);
    int fds[CONNS];
    for (int c = 0; c < CONNS; c++) {
        fds[c] = rmq_tc_connect(r.port);
        assert_true(fds[c] >= 0);
    }
    round_stats rs = {0};
    for (int i = 0; i < 20; i++)
        sync_round(&r, fds, false, filler, &rs);
    assert_int_equal(rs.ok, 20 * CONNS * DEPTH);
    /* the disk fills while a round waits; then rounds until refused */
    sync_round(&r, fds, true, filler, &rs);
    for (int i = 0; i < 5000 && rs.refused == 0; i++)
        sync_round(&r, fds, false, filler, &rs);
    if (rs.refused == 0)
        fail_msg("SYNC_FLUSH sends on a full disk were never refused");
    round_stats after = {0};
    sync_round(&r, fds, false, filler, &after);
    assert_int_equal(after.refused, CONNS * DEPTH);
    fprintf(stderr, "SYNC_FLUSH: %d confirmed, %d FLUSH_DISK_TIMEOUT, %d refused\n", rs.ok,
            rs.timeout, rs.refused);
    check_all_pulled(&r);

    assert_int_equal(unlink(filler), 0);
    uint64_t deadline = rmq_test_now_ms() + 30000;
    round_stats back = {0};
    while (back.ok == 0 && rmq_test_now_ms() < deadline) {
        sync_round(&r, fds, false, filler, &back);
        if (back.ok == 0)
            rmq_test_pause_ms(100);
    }
    if (back.ok == 0)
        fail_msg("SYNC_FLUSH sends were not confirmed again within 30 s of freeing the disk");
    round_stats more = {0};
    sync_round(&r, fds, false, filler, &more);
    assert_int_equal(more.ok, CONNS * DEPTH);
    check_all_pulled(&r);
    for (int c = 0; c < CONNS; c++)
        close(fds[c]);
    close(r.fd);
    r.fd = -1;
    assert_int_equal(rmq_td_stop(&r.d), 0);
    assert_int_equal(rmq_td_start(&r.d, NULL), 0);
    reconnect(&r);
    check_all_pulled(&r);
    close(r.fd);
    assert_int_equal(rmq_td_stop_reporting(&r.d), 0);
    rmq_td_cleanup(&r.d);
    remove_store("sstore");
    free(r.v);
}

int main(void)
{
    if (geteuid() != 0) {
        printf("test_store_disk_full: skipped: mounting a small tmpfs needs root\n");
        return 77;
    }
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g_mnt, sizeof g_mnt, "%s/store-dfull-XXXXXX", base);
    if (!mkdtemp(g_mnt)) {
        printf("test_store_disk_full: cannot create a mount point: %s\n", strerror(errno));
        return 1;
    }
    /* 4 MiB segments, a 21 MiB index file (Java's slot count) and 8 MiB
     * headroom to resume */
    if (mount("tmpfs", g_mnt, "tmpfs", 0, "size=64m,mode=0755") != 0) {
        printf("test_store_disk_full: skipped: mount -t tmpfs: %s\n", strerror(errno));
        rmdir(g_mnt);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_free_fill_restart),
        cmocka_unit_test(sync_flush_groups_when_disk_fills),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    umount2(g_mnt, MNT_DETACH);
    rmdir(g_mnt);
    return rc;
}
