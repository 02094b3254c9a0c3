/* test_namesrv_liveness.c — broker liveness in a real daemon: a closed
 * broker connection removes its brokers at once, a silent broker expires
 * (short settings), and a stale connection's close never removes a fresher
 * registration (protocol.md §4.7, issue item 3). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "namesrv_frames.h"

static int setup(void **state)
{
    return ns_setup(state, "scanNotActiveBrokerInterval = 100; brokerChannelExpiredTime = 1000;");
}

static void test_closing_the_broker_connection_removes_it_at_once(void **state)
{
    ns_fixture *f = *state;
    int broker = ns_broker_connect(f, "gone", "127.0.0.1:7001", "CloseTopic");
    rmq_cmd_free(ns_register(f->fd, "C", "stays", "127.0.0.1:7002", 0, 1, "StayTopic"));
    close(broker);
    /* well before the 1 s expiry could matter: the CLOSE event does it */
    assert_true(ns_wait_route_code(f->fd, "CloseTopic", 17, NS_WAIT_MS));
    rmq_cmd *r = ns_call(f->fd, ns_request(106, NULL, NULL, 0, -1));
    char *body = ns_body_text(r);
    assert_null(strstr(body, "gone"));
    free(body);
    rmq_cmd_free(r);
}

static void test_silent_broker_expires_with_short_settings(void **state)
{
    ns_fixture *f = *state;
    int broker = rmq_tc_connect(f->port);
    rmq_cmd_free(ns_register(broker, "C", "silent", "127.0.0.1:7003", 0, 1, "SilentTopic"));
    rmq_cmd *r = ns_route(f->fd, "SilentTopic", 409, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* the connection stays open: only the expiry scan can remove it */
    assert_true(ns_wait_route_code(f->fd, "SilentTopic", 17, NS_WAIT_MS));
    /* Java closes the expired broker's channel */
    assert_true(rmq_tc_wait_closed(broker, NS_WAIT_MS));
    close(broker);
}

static void test_heartbeating_broker_does_not_expire(void **state)
{
    ns_fixture *f = *state;
    int broker = rmq_tc_connect(f->port);
    rmq_cmd_free(ns_register(broker, "C", "alive", "127.0.0.1:7004", 0, 1, "AliveTopic"));
    uint64_t end = rmq_test_now_ms() + 3000;
    while (rmq_test_now_ms() < end) {
        rmq_cmd_free(ns_register(broker, "C", "alive", "127.0.0.1:7004", 0, 1, "AliveTopic"));
        rmq_cmd *r = ns_route(f->fd, "AliveTopic", 409, false);
        assert_int_equal(r->code, 0);
        rmq_cmd_free(r);
        rmq_test_pause_ms(200);
    }
    close(broker);
}

static void test_stale_connection_close_keeps_fresher_registration(void **state)
{
    ns_fixture *f = *state;
    int old_conn = rmq_tc_connect(f->port);
    int new_conn = rmq_tc_connect(f->port);
    rmq_cmd_free(ns_register(old_conn, "C", "moved", "127.0.0.1:7005", 0, 1, "MovedTopic"));
    rmq_cmd_free(ns_register(new_conn, "C", "moved", "127.0.0.1:7005", 0, 1, "MovedTopic"));
    close(old_conn);
    /* let the CLOSE event be processed: a marker broker on its own
     * connection is closed after it and must be gone first */
    int marker = rmq_tc_connect(f->port);
    rmq_cmd_free(ns_register(marker, "C", "marker", "127.0.0.1:7006", 0, 1, "MarkerTopic"));
    close(marker);
    assert_true(ns_wait_route_code(f->fd, "MarkerTopic", 17, NS_WAIT_MS));
    rmq_cmd *r = ns_route(f->fd, "MovedTopic", 409, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    close(new_conn);
    assert_true(ns_wait_route_code(f->fd, "MovedTopic", 17, NS_WAIT_MS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_closing_the_broker_connection_removes_it_at_once,
                                        setup, ns_teardown),
        cmocka_unit_test_setup_teardown(test_silent_broker_expires_with_short_settings, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_heartbeating_broker_does_not_expire, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_stale_connection_close_keeps_fresher_registration,
                                        setup, ns_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
