/* ali-ons consumers against broker-client-mgr (namesrv plugin on a second
 * server of the same daemon): membership as they join, leave and are killed,
 * NOTIFY_CONSUMER_IDS_CHANGED seen by a raw-protocol member of the group
 * (ali-ons ignores server requests), offsets the client commits, kept across
 * a daemon restart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bcm_test_daemon.h"
#include "rmq_test_node.h"

#define WAIT_MS 30000
#define GROUP "InteropGroup"
#define TOPIC "InteropTopic"

typedef struct fixture {
    rmq_test_daemon d;
    rmq_node_proc procs[2];
    int raw_fd;
} fixture;

static int node_start(rmq_node_proc *p, int ns_port, const char *instance)
{
    char port[16];
    snprintf(port, sizeof port, "%d", ns_port);
    const char *argv[] = {BCM_CONSUMER_JS, port, GROUP, TOPIC, instance, NULL};
    return rmq_node_start(p, BCM_NODE, BCM_NODE_MODULES, argv);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->raw_fd = -1;
    *state = f;
    return f ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 2; i++)
        rmq_node_reap(&f->procs[i], 0);
    if (f->raw_fd >= 0)
        close(f->raw_fd);
    rmq_td_cleanup(&f->d);
    free(f);
    return 0;
}

/* Sorted, comma-joined consumer ids of the group ("" when none). */
static void member_ids(int port, char *out, size_t len)
{
    const char *kv[] = {"consumerGroup", GROUP, NULL};
    rmq_cmd *r = bcm_call(port, 38, kv, NULL);
    out[0] = '\0';
    json_t *root = (r && r->code == 0 && r->body)
                       ? json_loadb((const char *)r->body, r->body_len, 0, NULL)
                       : NULL;
    json_t *ids = json_object_get(root, "consumerIdList");
    size_t n = json_array_size(ids);
    const char **v = calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = json_string_value(json_array_get(ids, i));
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(v[j], v[i]) < 0) {
                const char *t = v[i];
                v[i] = v[j];
                v[j] = t;
            }
    size_t o = 0;
    for (size_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "," : "", v[i]);
    free(v);
    json_decref(root);
    rmq_cmd_free(r);
}

static bool wait_members(int port, const char *want)
{
    char got[1024] = "";
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        member_ids(port, got, sizeof got);
        if (strcmp(got, want) == 0)
            return true;
        rmq_test_pause_ms(100);
    }
    fprintf(stderr, "members: got '%s', want '%s'\n", got, want);
    return false;
}

static void raw_heartbeat(int fd)
{
    char body[2048];
    bcm_consumer_heartbeat(body, sizeof body, "zz-raw@1", GROUP, TOPIC, true);
    rmq_cmd *req = rmq_tc_request(34, 424242, NULL);
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    rmq_cmd_free(req);
}

static int64_t query_offset(int port, int queue)
{
    char q[16];
    snprintf(q, sizeof q, "%d", queue);
    const char *kv[] = {"consumerGroup", GROUP, "topic", TOPIC, "queueId", q, NULL};
    rmq_cmd *r = bcm_call(port, 14, kv, NULL);
    int64_t v = (r && r->code == 0 && rmq_cmd_ext_get(r, "offset"))
                    ? atoll(rmq_cmd_ext_get(r, "offset"))
                    : -99;
    rmq_cmd_free(r);
    return v;
}

static void test_ali_ons_members_notifications_and_offsets(void **state)
{
    fixture *f = *state;
    int live = rmq_tc_free_port();
    assert_true(live > 0);
    const char *servers[] = {"namesrv", "broker", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    char settings[512];
    snprintf(settings, sizeof settings,
             "brokerName = \"broker-ons\"; namesrvAddr = \"127.0.0.1:%d\"; topics = \"" TOPIC
             ":4\";"
             " pullSuspendMaxMillis = 2000;",
             live);
    assert_int_equal(bcm_start_namesrv_and_broker(&f->d, live, "info", settings), 0);
    int bport = rmq_td_port(&f->d, "broker");

    /* the raw member */
    f->raw_fd = rmq_tc_connect(bport);
    assert_true(f->raw_fd >= 0);
    raw_heartbeat(f->raw_fd);
    assert_true(bcm_wait_notify(f->raw_fd, GROUP, WAIT_MS));
    assert_true(wait_members(bport, "zz-raw@1"));

    char line[1024];
    assert_int_equal(node_start(&f->procs[0], live, "ons-a"), 0);
    assert_true(rmq_node_line(&f->procs[0], "READY ", line, sizeof line, WAIT_MS));
    assert_string_equal(line, "READY 127.0.0.1@ons-a");
    assert_true(wait_members(bport, "127.0.0.1@ons-a,zz-raw@1"));
    assert_true(bcm_wait_notify(f->raw_fd, GROUP, WAIT_MS));

    assert_int_equal(node_start(&f->procs[1], live, "ons-b"), 0);
    assert_true(rmq_node_line(&f->procs[1], "READY ", line, sizeof line, WAIT_MS));
    assert_true(wait_members(bport, "127.0.0.1@ons-a,127.0.0.1@ons-b,zz-raw@1"));
    assert_true(bcm_wait_notify(f->raw_fd, GROUP, WAIT_MS));

    rmq_node_send(&f->procs[1], "close\n");
    assert_true(rmq_node_line(&f->procs[1], "CLOSED", line, sizeof line, WAIT_MS));
    rmq_node_reap(&f->procs[1], WAIT_MS);
    assert_true(wait_members(bport, "127.0.0.1@ons-a,zz-raw@1"));
    assert_true(bcm_wait_notify(f->raw_fd, GROUP, WAIT_MS));

    /* offsets committed through the client's own offset store */
    rmq_node_send(&f->procs[0], "commit 4000\n");
    assert_true(rmq_node_line(&f->procs[0], "COMMITTED ", line, sizeof line, WAIT_MS));
    fprintf(stderr, "ali-ons %s\n", line);
    int queues[8], nq = 0;
    for (char *tok = strtok(line + 10, ","); tok && nq < 8; tok = strtok(NULL, ","))
        queues[nq++] = atoi(tok);
    assert_true(nq > 0);
    for (int i = 0; i < nq; i++)
        assert_int_equal(query_offset(bport, queues[i]), 4000 + queues[i]);

    /* a killed client vanishes (its socket closes) */
    rmq_node_reap(&f->procs[0], 0);
    assert_true(wait_members(bport, "zz-raw@1"));
    assert_true(bcm_wait_notify(f->raw_fd, GROUP, WAIT_MS));
    close(f->raw_fd);
    f->raw_fd = -1;

    assert_int_equal(rmq_td_stop(&f->d), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    bport = rmq_td_port(&f->d, "broker");
    for (int i = 0; i < nq; i++)
        assert_int_equal(query_offset(bport, queues[i]), 4000 + queues[i]);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ali_ons_members_notifications_and_offsets, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
