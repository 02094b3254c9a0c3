/* test_store_ali_ons.c — a real client (ali-ons) produces and consumes
 * through the all-in-one daemon (namesrv + broker-client-mgr + filter +
 * store): every message reaches a '*' group exactly once with body, tags,
 * keys and user properties intact; a TAG group gets only its tag, an SQL92
 * group only the matching messages (ali_ons_produce_consume.js checks each
 * delivery and prints RESULT). Again with SYNC_FLUSH (the staged group
 * write). One daemon, one node process per run, both always stopped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcm_test_daemon.h"
#include "rmq_test_node.h"

#define TOPIC "InteropTopic"
#define COUNT "40"

typedef struct fixture {
    rmq_test_daemon d;
    int ns_port;
    rmq_node_proc node;
} fixture;

static int setup_with(void **state, const char *store_settings)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->ns_port = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-s\"; brokerIP1 = "
             "\"127.0.0.1\"; topics = \"" TOPIC ":4\";",
             f->ns_port);
    if (f->ns_port <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, f->ns_port, "info", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "filter", "filter", "broker", NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker", store_settings) != 0 ||
        rmq_td_start(&f->d, NULL) != 0)
        return -1;
    return 0;
}

static int setup(void **state)
{
    return setup_with(state, "mappedFileSizeCommitLog = 1048576;");
}

/* SYNC_FLUSH: each send's records wait staged for the flusher's group write
 * and are answered after the fdatasync; the consumers' pulls read records
 * still staged (the store writes them out first) */
static int setup_sync_flush(void **state)
{
    return setup_with(state, "mappedFileSizeCommitLog = 1048576; flushDiskType = \"SYNC_FLUSH\";");
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    rmq_node_reap(&f->node, 0);
    int st = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    free(f);
    return st == 0 ? 0 : -1;
}

static void produce_and_consume_exactly_once(void **state)
{
    fixture *f = *state;
    char port[16];
    snprintf(port, sizeof port, "%d", f->ns_port);
    const char *argv[] = {ST_SCRIPT, port, TOPIC, COUNT, NULL};
    assert_int_equal(rmq_node_start(&f->node, ST_NODE, ST_NODE_MODULES, argv), 0);
    char result[1024] = "";
    bool got = rmq_node_line(&f->node, "RESULT ", result, sizeof result, 120000);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(result, "RESULT ok") != 0)
        fail_msg("ali-ons: %s", result);
    assert_int_equal(status, 0);
}

static void produce_and_consume_exactly_once_sync_flush(void **state)
{
    fixture *f = *state;
    assert_true(rmq_td_log_contains(&f->d, ": SYNC_FLUSH, sends"));
    produce_and_consume_exactly_once(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(produce_and_consume_exactly_once, setup, teardown),
        cmocka_unit_test_setup_teardown(produce_and_consume_exactly_once_sync_flush,
                                        setup_sync_flush, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
