/* bcm_test_daemon.c — helpers shared by the broker-client-mgr daemon tests
 * (integration, vector replay, ali-ons interop). Owns no daemon state of its
 * own: everything lives in the caller's rmq_test_daemon. Must not assert. */
#include "bcm_test_daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bcm_configure_namesrv_and_broker(rmq_test_daemon *d, int ns_port, const char *log_level,
                                     const char *broker_settings)
{
    /* the NameServer's port is fixed before start because the broker's
     * settings must name it */
    char host_conf[2048];
    snprintf(host_conf, sizeof host_conf,
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"%s\";\nio_threads = 2;\n"
             "servers = {\n  namesrv = { listen = \"127.0.0.1:%d\"; };\n"
             "  broker = { listen = \"127.0.0.1:0\"; };\n};\n",
             d->state_dir, d->admin_socket, log_level, ns_port);
    if (rmq_td_write_conf(d, "host.conf", host_conf) != 0 ||
        rmq_td_add_plugin(d, "namesrv", "namesrv", "namesrv", NULL) != 0 ||
        rmq_td_add_plugin(d, "broker-client-mgr", "broker-client-mgr", "broker", broker_settings) !=
            0)
        return -1;
    return 0;
}

int bcm_start_namesrv_and_broker(rmq_test_daemon *d, int ns_port, const char *log_level,
                                 const char *broker_settings)
{
    if (bcm_configure_namesrv_and_broker(d, ns_port, log_level, broker_settings) != 0)
        return -1;
    return rmq_td_start(d, NULL);
}

int bcm_configure_pair(rmq_test_daemon *d, const char *log_level, const char *settings)
{
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char all[1024];
    snprintf(all, sizeof all, "namesrvAddr = \"127.0.0.1:%d\"; %s", ns, settings);
    if (ns <= 0 || rmq_td_init(d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(d, ns, log_level, all) != 0)
        return -1;
    return 0;
}

int bcm_start_pair(rmq_test_daemon *d, const char *log_level, const char *settings)
{
    if (bcm_configure_pair(d, log_level, settings) != 0 || rmq_td_start(d, NULL) != 0)
        return -1;
    return rmq_td_port(d, "broker");
}

int bcm_pair_setup(void **state, const char *settings)
{
    bcm_pair *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->port = bcm_start_pair(&f->d, "info", settings);
    return f->port > 0 ? 0 : -1;
}

int bcm_pair_teardown(void **state)
{
    bcm_pair *f = *state;
    if (f) {
        rmq_td_cleanup(&f->d);
        free(f);
    }
    return 0;
}

rmq_cmd *bcm_call(int port, int code, const char *const *kv, const char *body)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return NULL;
    rmq_cmd *req = rmq_tc_request(code, 1, kv);
    if (body)
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *resp = rmq_tc_call(fd, req, 5000);
    rmq_cmd_free(req);
    close(fd);
    return resp;
}

bool bcm_body_contains(const rmq_cmd *c, const char *needle)
{
    if (!c || !c->body)
        return false;
    char *s = strndup((const char *)c->body, c->body_len);
    bool r = s && strstr(s, needle) != NULL;
    free(s);
    return r;
}

bool bcm_wait_notify(int fd, const char *group, int timeout_ms)
{
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        if (!c)
            continue;
        const char *g = rmq_cmd_ext_get(c, "consumerGroup");
        bool ok = c->code == 40 && c->flag == 2 && g && strcmp(g, group) == 0;
        rmq_cmd_free(c);
        if (ok)
            return true;
    }
    return false;
}

const char *bcm_consumer_heartbeat(char *buf, size_t len, const char *client_id, const char *group,
                                   const char *topic, bool with_retry)
{
    char retry[512] = "";
    if (with_retry)
        snprintf(retry, sizeof retry,
                 ",{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\","
                 "\"subString\":\"*\",\"subVersion\":1700000000000,\"tagsSet\":[],"
                 "\"topic\":\"%%RETRY%%%s\"}",
                 group);
    snprintf(
        buf, len,
        "{\"clientID\":\"%s\",\"consumerDataSet\":[{\"consumeFromWhere\":\"CONSUME_FROM_LAST_"
        "OFFSET\","
        "\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":\"%s\",\"messageModel\":"
        "\"CLUSTERING\","
        "\"subscriptionDataSet\":[{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":"
        "\"TAG\","
        "\"subString\":\"*\",\"subVersion\":1700000000000,\"tagsSet\":[],\"topic\":\"%s\"}%s],"
        "\"unitMode\":false}],\"producerDataSet\":[{\"groupName\":\"CLIENT_INNER_PRODUCER\"}]}",
        client_id, group, topic, retry);
    return buf;
}
