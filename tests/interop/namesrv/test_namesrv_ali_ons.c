/* test_namesrv_ali_ons.c — ali-ons 3.12.0 pointed at the daemon fetches the
 * route of a topic a (raw-frame) test broker registered — through its own
 * parser of fastjson bare keys, as it is sent version 121 — and reports
 * TOPIC_NOT_EXIST for a topic nobody registered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmq_test_support.h"

static rmq_cmd *register_broker(int fd, const char *addr, long long id)
{
    char *body = rmq_tb_register_body_json(1, 1700000000000LL, "InteropTopic");
    assert_non_null(body);
    rmq_tc_broker b = {.cluster = "DefaultCluster", .name = "broker-a", .addr = addr, .id = id};
    rmq_cmd *req = rmq_tc_register_broker_request((int)id + 1, &b, body, strlen(body));
    assert_non_null(req);
    rmq_cmd *resp = rmq_tc_call(fd, req, 10000);
    rmq_cmd_free(req);
    free(body);
    return resp;
}

static json_t *find_line(json_t *lines, const char *topic)
{
    size_t i;
    json_t *l;
    json_array_foreach(lines, i, l)
    {
        if (strcmp(json_string_value(json_object_get(l, "topic")), topic) == 0)
            return l;
    }
    return NULL;
}

static void test_ali_ons_reads_registered_route_and_reports_missing_topic(void **state)
{
    (void)state;
    if (access(NS_NODE_MODULES "/ali-ons/package.json", R_OK) != 0)
        fail_msg("ali-ons is not installed in %s (interop_install_ali_ons)", NS_NODE_MODULES);
    rmq_test_daemon d;
    const char *servers[] = {"namesrv", NULL};
    assert_int_equal(rmq_td_init(&d, servers, NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    int port = rmq_td_port(&d, "namesrv");
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    rmq_cmd *r = register_broker(fd, "127.0.0.1:10911", 0);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = register_broker(fd, "127.0.0.1:10921", 1);
    rmq_cmd_free(r);

    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "NODE_PATH='%s' '%s' '%s' %d InteropTopic NoSuchTopic 2>&1",
             NS_NODE_MODULES, NS_NODE, NS_ROUTE_SCRIPT, port);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    json_t *lines = json_array();
    char line[8192];
    while (fgets(line, sizeof(line), p)) {
        json_t *j = json_loads(line, 0, NULL);
        if (j)
            json_array_append_new(lines, j);
        else
            fprintf(stderr, "node: %s", line);
    }
    int status = pclose(p);
    close(fd);
    rmq_td_cleanup(&d);
    assert_int_equal(status, 0);

    json_t *ok = find_line(lines, "InteropTopic");
    assert_non_null(ok);
    assert_true(json_is_true(json_object_get(ok, "ok")));
    json_t *route = json_object_get(ok, "route");
    json_t *bd = json_array_get(json_object_get(route, "brokerDatas"), 0);
    assert_string_equal(json_string_value(json_object_get(bd, "brokerName")), "broker-a");
    json_t *addrs = json_object_get(bd, "brokerAddrs");
    assert_string_equal(json_string_value(json_object_get(addrs, "0")), "127.0.0.1:10911");
    assert_string_equal(json_string_value(json_object_get(addrs, "1")), "127.0.0.1:10921");
    json_t *qd = json_array_get(json_object_get(route, "queueDatas"), 0);
    assert_int_equal(json_integer_value(json_object_get(qd, "readQueueNums")), 4);
    assert_int_equal(json_integer_value(json_object_get(qd, "writeQueueNums")), 4);
    assert_int_equal(json_integer_value(json_object_get(qd, "perm")), 6);

    json_t *missing = find_line(lines, "NoSuchTopic");
    assert_non_null(missing);
    assert_false(json_is_true(json_object_get(missing, "ok")));
    assert_int_equal(json_integer_value(json_object_get(missing, "code")), 17);
    assert_string_equal(json_string_value(json_object_get(missing, "name")), "MQClientException");
    assert_non_null(strstr(json_string_value(json_object_get(missing, "message")),
                           "No topic route info in name server for the topic: NoSuchTopic"));
    json_decref(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ali_ons_reads_registered_route_and_reports_missing_topic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
