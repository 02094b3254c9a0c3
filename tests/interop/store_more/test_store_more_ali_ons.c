/* test_store_more_ali_ons.c — more of the store proven with a real client
 * (ali-ons) through the all-in-one daemon: large and compressed bodies and
 * the maxMessageSize refusal, a consumer restart resuming from committed
 * offsets, a daemon restart keeping messages and offsets (and a crash its
 * acknowledged messages), BROADCASTING next to CLUSTERING, per-key queue
 * order, transactional half messages. Each test runs its own daemon on
 * ephemeral ports and one node script (the ali_ons_*.js beside this file
 * check every delivery and print RESULT); both are always stopped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcm_test_daemon.h"
#include "rmq_test_node.h"

#define TOPIC "MoreTopic"
/* records up to the 4 MiB maxMessageSize fit a segment with room to spare */
#define STORE_SETTINGS "mappedFileSizeCommitLog = 16777216;"
#define MAX_MESSAGE_SIZE "4194304"

typedef struct fixture {
    rmq_test_daemon d;
    int ns_port;
    rmq_node_proc node;
} fixture;

/* (Re)write conf.d for a NameServer on a fresh ephemeral port and start the
 * daemon; the store and its state dir stay those of `f->d` */
static int configure_and_start(fixture *f)
{
    f->ns_port = rmq_tc_free_port();
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-m\"; brokerIP1 = "
             "\"127.0.0.1\"; topics = \"" TOPIC ":4\";",
             f->ns_port);
    if (f->ns_port <= 0 || bcm_configure_namesrv_and_broker(&f->d, f->ns_port, "info", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "filter", "filter", "broker", NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker", STORE_SETTINGS) != 0)
        return -1;
    return rmq_td_start(&f->d, NULL);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    const char *servers[] = {"namesrv", "broker", NULL};
    if (rmq_td_init(&f->d, servers, NULL) != 0)
        return -1;
    return configure_and_start(f);
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    rmq_node_reap(&f->node, 0);
    /* a test that failed while the daemon was down leaves nothing to stop */
    int st = f->d.pid > 0 ? rmq_td_stop_reporting(&f->d) : 0;
    rmq_td_cleanup(&f->d);
    free(f);
    return st == 0 ? 0 : -1;
}

/* Run `script args...` (the NameServer port is passed first) and require
 * "RESULT ok" and exit 0 */
static void run_script(fixture *f, const char *script, const char *const *args)
{
    char port[16];
    snprintf(port, sizeof port, "%d", f->ns_port);
    const char *argv[16] = {script, port};
    size_t n = 2;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    assert_int_equal(rmq_node_start(&f->node, ST_NODE, ST_NODE_MODULES, argv), 0);
    char result[2048] = "";
    bool got = rmq_node_line(&f->node, "RESULT ", result, sizeof result, 180000);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(result, "RESULT ok") != 0)
        fail_msg("%s: %s", script, result);
    assert_int_equal(status, 0);
}

static void large_and_compressed_bodies(void **state)
{
    fixture *f = *state;
    const char *args[] = {TOPIC, MAX_MESSAGE_SIZE, NULL};
    run_script(f, ST_DIR "/ali_ons_large_bodies.js", args);
    /* the refusal is the store's: answered, not a dropped connection */
    assert_true(rmq_td_port(&f->d, "broker") > 0);
}

static void consumer_restart_resumes_from_committed_offsets(void **state)
{
    const char *args[] = {TOPIC, "40", NULL};
    run_script(*state, ST_DIR "/ali_ons_consumer_restart.js", args);
}

static void daemon_restart_keeps_messages_and_offsets(void **state)
{
    fixture *f = *state;
    const char *before[] = {TOPIC, "before", "40", "16", NULL};
    run_script(f, ST_DIR "/ali_ons_daemon_restart.js", before);
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
    /* same conf.d/ and state/, new ports: the clients find the broker again
     * through the NameServer */
    assert_int_equal(configure_and_start(f), 0);
    const char *after[] = {TOPIC, "after", "40", "16", NULL};
    run_script(f, ST_DIR "/ali_ons_daemon_restart.js", after);
}

/* SIGKILL instead of SIGTERM: what was acknowledged is in the files (the
 * page cache outlives the process); the restart's recovery must rebuild the
 * consume queues from the commit log with nothing lost or doubled */
static void daemon_crash_keeps_acknowledged_messages(void **state)
{
    fixture *f = *state;
    const char *before[] = {TOPIC, "before", "40", "16", NULL};
    run_script(f, ST_DIR "/ali_ons_daemon_restart.js", before);
    assert_int_equal(kill(f->d.pid, SIGKILL), 0);
    assert_int_equal(rmq_td_stop(&f->d), 128 + SIGKILL);
    assert_int_equal(configure_and_start(f), 0);
    const char *after[] = {TOPIC, "after_crash", "40", "16", NULL};
    run_script(f, ST_DIR "/ali_ons_daemon_restart.js", after);
}

static void broadcasting_delivers_to_every_consumer(void **state)
{
    const char *args[] = {TOPIC, "30", NULL};
    run_script(*state, ST_DIR "/ali_ons_broadcast.js", args);
}

static void sharding_key_keeps_queue_order(void **state)
{
    const char *args[] = {TOPIC, "12", NULL};
    run_script(*state, ST_DIR "/ali_ons_sharding_order.js", args);
}

static void transactional_half_messages(void **state)
{
    const char *args[] = {TOPIC, NULL};
    run_script(*state, ST_DIR "/ali_ons_transaction_half.js", args);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(large_and_compressed_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(consumer_restart_resumes_from_committed_offsets, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(daemon_restart_keeps_messages_and_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(daemon_crash_keeps_acknowledged_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(broadcasting_delivers_to_every_consumer, setup, teardown),
        cmocka_unit_test_setup_teardown(sharding_key_keeps_queue_order, setup, teardown),
        cmocka_unit_test_setup_teardown(transactional_half_messages, setup, teardown),
    };
    /* argv[1]: ':'-separated globs of test names to run (all by default) */
    struct CMUnitTest chosen[sizeof all / sizeof all[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            chosen[n++] = all[i];
    return _cmocka_run_group_tests("store_more_ali_ons", chosen, n, NULL, NULL);
}
