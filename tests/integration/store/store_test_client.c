/* store_test_client.c — raw-frame helpers of the store integration tests:
 * the all-roles daemon configuration, SEND/PULL requests, record decoding.
 * Must not assert. */
#include "store_test_client.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* bcm_configure_namesrv_and_broker writes host.conf whole: extra lines go
 * after it */
static int host_conf_append(rmq_test_daemon *d, const char *extra)
{
    if (!extra)
        return 0;
    char path[512];
    snprintf(path, sizeof path, "%s/host.conf", d->conf_dir);
    FILE *f = fopen(path, "a");
    if (!f)
        return -1;
    int rc = fprintf(f, "%s\n", extra) > 0 ? 0 : -1;
    return fclose(f) == 0 ? rc : -1;
}

int st_configure(rmq_test_daemon *d, const char *store_settings)
{
    return st_configure_host(d, store_settings, NULL);
}

int st_configure_host(rmq_test_daemon *d, const char *store_settings, const char *extra_host_conf)
{
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\";",
             ns);
    char store[2048];
    /* 1 MiB segments unless the test sets its own size */
    bool own_size = store_settings && strstr(store_settings, "mappedFileSizeCommitLog");
    snprintf(store, sizeof store, "%s%s", own_size ? "" : "mappedFileSizeCommitLog = 1048576; ",
             store_settings ? store_settings : "");
    if (ns <= 0 || rmq_td_init(d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(d, ns, "info", bcm) != 0 ||
        host_conf_append(d, extra_host_conf) != 0 ||
        rmq_td_add_plugin(d, "filter", "filter", "broker", "enablePropertyFilter = true;") != 0 ||
        rmq_td_add_plugin(d, "store", "store", "broker", store) != 0)
        return -1;
    return 0;
}

int st_setup(void **state)
{
    st_fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->port = st_start(&f->d, NULL);
    if (f->port <= 0) {
        rmq_td_cleanup(&f->d);
        free(f);
        return -1;
    }
    f->fd = rmq_tc_connect(f->port);
    *state = f;
    return f->fd >= 0 ? 0 : -1;
}

int st_teardown(void **state)
{
    st_fixture *f = *state;
    if (f->fd >= 0)
        close(f->fd);
    int st = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    free(f);
    return st == 0 ? 0 : -1;
}

int st_start(rmq_test_daemon *d, const char *store_settings)
{
    if (st_configure(d, store_settings) != 0 || rmq_td_start(d, NULL) != 0)
        return -1;
    return rmq_td_port(d, "broker");
}

rmq_cmd *st_send_request(int opaque, const char *topic, int queue, const char *props,
                         const char *body, const char *const *extra)
{
    char q[16];
    snprintf(q, sizeof q, "%d", queue);
    const char *kv[] = {"a", "PG",
                        "b", topic,
                        "c", "TBW102",
                        "d", "4",
                        "e", q,
                        "f", "0",
                        "g", "1700000000000",
                        "h", "0",
                        "i", props ? props : "",
                        "j", "0",
                        "k", "false",
                        "m", "false",
                        NULL};
    rmq_cmd *req = rmq_tc_request(310, opaque, kv);
    if (!req)
        return NULL;
    for (const char *const *e = extra; e && e[0]; e += 2)
        rmq_cmd_ext_set(req, e[0], e[1]);
    if (body)
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    return req;
}

rmq_cmd *st_send(int fd, int opaque, const char *topic, int queue, const char *props,
                 const char *body, const char *const *extra)
{
    rmq_cmd *req = st_send_request(opaque, topic, queue, props, body, extra);
    if (!req)
        return NULL;
    rmq_cmd *resp = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    return resp;
}

rmq_cmd *st_pull_request(int opaque, const st_pull_args *a)
{
    char q[16], off[32], max[16], flag[16], susp[32], commit[32], subv[32];
    snprintf(q, sizeof q, "%d", a->queue);
    snprintf(off, sizeof off, "%lld", a->offset);
    snprintf(max, sizeof max, "%d", a->max ? a->max : 32);
    snprintf(flag, sizeof flag, "%d", a->sys_flag ? a->sys_flag : 4);
    snprintf(susp, sizeof susp, "%lld", a->suspend_ms);
    snprintf(commit, sizeof commit, "%lld", a->commit_offset);
    snprintf(subv, sizeof subv, "%lld", a->sub_version);
    const char *kv[] = {"consumerGroup",
                        a->group ? a->group : "CG",
                        "topic",
                        a->topic,
                        "queueId",
                        q,
                        "queueOffset",
                        off,
                        "maxMsgNums",
                        max,
                        "sysFlag",
                        flag,
                        "commitOffset",
                        commit,
                        "suspendTimeoutMillis",
                        susp,
                        "subscription",
                        a->sub ? a->sub : "*",
                        "subVersion",
                        subv,
                        "expressionType",
                        a->expr_type ? a->expr_type : "TAG",
                        NULL};
    return rmq_tc_request(11, opaque, kv);
}

rmq_cmd *st_pull(int fd, int opaque, const st_pull_args *a)
{
    rmq_cmd *req = st_pull_request(opaque, a);
    if (!req)
        return NULL;
    rmq_cmd *resp = rmq_tc_call_response(fd, req, 25000);
    rmq_cmd_free(req);
    return resp;
}

size_t st_records(const rmq_cmd *c, stored_record *out, size_t max)
{
    size_t n = 0, at = 0;
    if (!c || !c->body)
        return 0;
    while (at < c->body_len && n < max) {
        if (stored_record_decode(c->body + at, c->body_len - at, true, &out[n]) != STORED_RECORD_OK)
            break;
        at += (size_t)out[n].total_size;
        n++;
    }
    return n;
}

char *st_prop(const stored_record *r, const char *name)
{
    const char *v;
    size_t l;
    if (!stored_props_get(r->props, r->props_len, name, &v, &l))
        return NULL;
    return strndup(v, l);
}

long long st_ext_ll(const rmq_cmd *c, const char *key)
{
    const char *v = c ? rmq_cmd_ext_get(c, key) : NULL;
    return v ? atoll(v) : LLONG_MIN;
}

long long st_max_offset(int port, const char *topic, int queue)
{
    char q[16];
    snprintf(q, sizeof q, "%d", queue);
    const char *kv[] = {"topic", topic, "queueId", q, NULL};
    rmq_cmd *r = bcm_call(port, 30, kv, NULL);
    long long v = r && r->code == 0 ? st_ext_ll(r, "offset") : -1;
    rmq_cmd_free(r);
    return v;
}

bool st_same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    while (same) {
        int x = fgetc(fa), y = fgetc(fb);
        if (x != y)
            same = false;
        if (x == EOF || y == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}
