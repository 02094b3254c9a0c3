/* proxy_route.c — QueryRoute: the topic's route from the NameServer role of
 * this process (GET_ROUTEINFO_BY_TOPIC through invoke_local), turned into
 * message queues as Java's RouteActivity does (read-only, then write-only,
 * then read-write queue ids per queue data, one set per broker id), every
 * broker's endpoints being this proxy: the host the client dialled (the
 * request's endpoints) and the port this server listens on. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

#define GET_ROUTEINFO_BY_TOPIC 105
#define TOPIC_NOT_EXIST 17
#define PERM_READ 0x4
#define PERM_WRITE 0x2

void proxy_route_free(proxy_route *r)
{
    free(r->qd);
    r->qd = NULL;
    r->nqd = 0;
}

static void broker_ids_of(json_t *brokers, proxy_queue_data *q)
{
    size_t i;
    json_t *bd;
    json_array_foreach(brokers, i, bd)
    {
        const char *name = json_string_value(json_object_get(bd, "brokerName"));
        if (!name || strcmp(name, q->broker_name) != 0)
            continue;
        const char *id;
        json_t *addr;
        json_object_foreach(json_object_get(bd, "brokerAddrs"), id, addr)
        {
            if (q->nbroker_ids < (int)(sizeof(q->broker_ids) / sizeof(q->broker_ids[0])))
                q->broker_ids[q->nbroker_ids++] = strtol(id, NULL, 10);
        }
    }
}

rmq_cmd *proxy_route_request(proxy *px, const char *topic)
{
    const rmq_host_api *api = px->api;
    rmq_cmd *req = api->cmd_new_request(GET_ROUTEINFO_BY_TOPIC);
    if (req && (api->cmd_ext_set(req, "topic", topic) < 0 ||
                api->cmd_ext_set(req, "acceptStandardJsonOnly", "true") < 0)) {
        api->cmd_free(req);
        req = NULL;
    }
    return req;
}

int proxy_route_parse(proxy *px, const char *topic, const rmq_cmd *resp, proxy_route *out,
                      char *why, size_t whylen)
{
    const rmq_host_api *api = px->api;
    memset(out, 0, sizeof(*out));
    int32_t code = api->cmd_code(resp);
    if (code != 0) {
        const char *remark = api->cmd_remark(resp);
        snprintf(why, whylen, "%s", remark ? remark : "no route");
        return code == TOPIC_NOT_EXIST ? RMQ_ENOENT : RMQ_EIO;
    }
    size_t blen = 0;
    const char *body = api->cmd_body(resp, &blen);
    json_error_t jerr;
    json_t *root = body ? json_loadb(body, blen, 0, &jerr) : NULL;
    json_t *qds = json_object_get(root, "queueDatas");
    json_t *bds = json_object_get(root, "brokerDatas");
    if (!json_is_array(qds) || !json_is_array(bds)) {
        json_decref(root);
        snprintf(why, whylen, "route of %s: unreadable TopicRouteData", topic);
        return RMQ_EIO;
    }
    proxy_cluster_learn(px, bds); /* cluster mode: where each broker is */
    out->qd = calloc(json_array_size(qds) + 1, sizeof(*out->qd));
    if (!out->qd) {
        json_decref(root);
        return RMQ_ENOMEM;
    }
    size_t i;
    json_t *qd;
    json_array_foreach(qds, i, qd)
    {
        proxy_queue_data *q = &out->qd[out->nqd];
        const char *bn = json_string_value(json_object_get(qd, "brokerName"));
        if (!bn)
            continue;
        snprintf(q->broker_name, sizeof(q->broker_name), "%s", bn);
        q->read_queue_nums = (int)json_integer_value(json_object_get(qd, "readQueueNums"));
        q->write_queue_nums = (int)json_integer_value(json_object_get(qd, "writeQueueNums"));
        q->perm = (int)json_integer_value(json_object_get(qd, "perm"));
        broker_ids_of(bds, q);
        out->nqd++;
    }
    json_decref(root);
    return 0;
}

int proxy_route_fetch(proxy *px, const char *topic, proxy_route *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    rmq_cmd *req = proxy_route_request(px, topic);
    if (!req)
        return RMQ_ENOMEM;
    rmq_cmd *resp = NULL;
    int rc = proxy_namesrv_call(px, req, &resp);
    if (rc < 0) {
        snprintf(why, whylen, "route of %s from %s: %s", topic, proxy_backend_namesrv_label(px),
                 rmq_strerror(rc));
        return rc;
    }
    rc = proxy_route_parse(px, topic, resp, out, why, whylen);
    px->api->cmd_free(resp);
    return rc;
}

/* Java's genMessageQueueFromQueueData: how many queues of each permission. */
static void queue_split(const proxy_queue_data *q, int *r, int *w, int *rw, int *n)
{
    bool readable = (q->perm & PERM_READ) != 0, writable = (q->perm & PERM_WRITE) != 0;
    *r = *w = *rw = *n = 0;
    if (readable && writable) {
        *rw = q->write_queue_nums < q->read_queue_nums ? q->write_queue_nums : q->read_queue_nums;
        *r = q->read_queue_nums - *rw;
        *w = q->write_queue_nums - *rw;
    } else if (writable) {
        *w = q->write_queue_nums;
    } else if (readable) {
        *r = q->read_queue_nums;
    } else {
        int m = q->write_queue_nums > q->read_queue_nums ? q->write_queue_nums : q->read_queue_nums;
        *n = m > 1 ? m : 1;
    }
}

/* Every broker is reached through this proxy: the host the client dialled
 * (its request's first endpoint) and the port this server listens on. */
static void proxy_endpoints(proxy *px, const Apache__Rocketmq__V2__Endpoints *asked, char *host,
                            size_t hostlen, Apache__Rocketmq__V2__Address *addr,
                            Apache__Rocketmq__V2__Address **addrs,
                            Apache__Rocketmq__V2__Endpoints *ep)
{
    int port = 0;
    snprintf(host, hostlen, "127.0.0.1");
    px->api->server_address(px->ctx, host, hostlen, &port);
    apache__rocketmq__v2__address__init(addr);
    apache__rocketmq__v2__endpoints__init(ep);
    ep->scheme = APACHE__ROCKETMQ__V2__ADDRESS_SCHEME__IPv4;
    if (asked && asked->n_addresses > 0 && asked->addresses[0]->host &&
        asked->addresses[0]->host[0]) {
        addr->host = asked->addresses[0]->host;
        ep->scheme = asked->scheme;
    } else {
        addr->host = host;
    }
    addr->port = port;
    addrs[0] = addr;
    ep->n_addresses = 1;
    ep->addresses = addrs;
}

static Apache__Rocketmq__V2__Permission permission_of(int perm)
{
    bool r = (perm & PERM_READ) != 0, w = (perm & PERM_WRITE) != 0;
    return r && w ? APACHE__ROCKETMQ__V2__PERMISSION__READ_WRITE
           : r    ? APACHE__ROCKETMQ__V2__PERMISSION__READ
           : w    ? APACHE__ROCKETMQ__V2__PERMISSION__WRITE
                  : APACHE__ROCKETMQ__V2__PERMISSION__NONE;
}

static void route_status(Apache__Rocketmq__V2__Status *st, int rc, const char *why)
{
    if (rc == RMQ_ENOENT)
        proxy_status(st, PX_TOPIC_NOT_FOUND, why);
    else if (rc == RMQ_ETIMEDOUT)
        proxy_status(st, PX_PROXY_TIMEOUT, why);
    else if (rc < 0)
        proxy_status(st, PX_INTERNAL_SERVER_ERROR, why);
    else
        proxy_status(st, PX_OK, NULL);
}

/* QueryAssignment as Java's RouteActivity: per readable queue data whose
 * broker has a master, queue id -1 (any queue: the broker's POP picks), or
 * for an orderly (FIFO) group one assignment per readable queue id. */
int proxy_query_assignment(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    Apache__Rocketmq__V2__QueryAssignmentRequest *req =
        apache__rocketmq__v2__query_assignment_request__unpack(NULL, len, msg);
    if (!req)
        return px->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                    "QueryAssignmentRequest: undecodable protobuf");
    Apache__Rocketmq__V2__QueryAssignmentResponse resp =
        APACHE__ROCKETMQ__V2__QUERY_ASSIGNMENT_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    char why[512] = "";
    proxy_route route = {0};
    const char *topic = req->topic && req->topic->name ? req->topic->name : "";
    const char *group = req->group && req->group->name ? req->group->name : "";
    int rc = 0;
    if (!topic[0]) {
        proxy_status(&st, PX_ILLEGAL_TOPIC, "topic name cannot be empty");
        rc = RMQ_EINVAL;
    } else if (!group[0]) {
        proxy_status(&st, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_CONSUMER_GROUP,
                     "consumer group cannot be empty");
        rc = RMQ_EINVAL;
    } else {
        rc = proxy_route_fetch(px, topic, &route, why, sizeof(why));
        route_status(&st, rc, why);
    }
    char host[64];
    Apache__Rocketmq__V2__Address addr;
    Apache__Rocketmq__V2__Address *addrs[1];
    Apache__Rocketmq__V2__Endpoints ep;
    proxy_endpoints(px, req->endpoints, host, sizeof(host), &addr, addrs, &ep);
    bool fifo = rc == 0 && proxy_group_fifo(px, group);
    size_t cap = route.nqd + 1;
    for (size_t i = 0; fifo && i < route.nqd; i++)
        cap += route.qd[i].read_queue_nums > 0 ? (size_t)route.qd[i].read_queue_nums : 0;
    Apache__Rocketmq__V2__MessageQueue *mqs = calloc(cap, sizeof(*mqs));
    Apache__Rocketmq__V2__Broker *brokers = calloc(route.nqd + 1, sizeof(*brokers));
    Apache__Rocketmq__V2__Assignment *as = calloc(cap, sizeof(*as));
    Apache__Rocketmq__V2__Assignment **asp = calloc(cap, sizeof(*asp));
    size_t n = 0, nb = 0;
    if (!mqs || !brokers || !as || !asp) {
        rc = RMQ_ENOMEM;
        goto out;
    }
    for (size_t i = 0; rc == 0 && i < route.nqd; i++) {
        const proxy_queue_data *q = &route.qd[i];
        bool has_master = false;
        for (int b = 0; b < q->nbroker_ids; b++)
            has_master |= q->broker_ids[b] == 0;
        if (!(q->perm & PERM_READ) || q->read_queue_nums <= 0 || !has_master)
            continue;
        apache__rocketmq__v2__broker__init(&brokers[nb]);
        brokers[nb].name = (char *)q->broker_name;
        brokers[nb].id = 0;
        brokers[nb].endpoints = &ep;
        for (int32_t id = fifo ? 0 : -1; id < (fifo ? q->read_queue_nums : 0); id++) {
            apache__rocketmq__v2__message_queue__init(&mqs[n]);
            mqs[n].topic = req->topic;
            mqs[n].id = id;
            mqs[n].permission = permission_of(q->perm);
            mqs[n].broker = &brokers[nb];
            apache__rocketmq__v2__assignment__init(&as[n]);
            as[n].message_queue = &mqs[n];
            asp[n] = &as[n];
            n++;
        }
        nb++;
    }
    if (rc == 0 && n == 0)
        proxy_status(&st, PX_FORBIDDEN, "no readable queue");
    resp.status = &st;
    resp.n_assignments = n;
    resp.assignments = asp;
    rc = proxy_reply(px, call, &resp.base);
out:
    free(mqs);
    free(brokers);
    free(as);
    free(asp);
    proxy_route_free(&route);
    apache__rocketmq__v2__query_assignment_request__free_unpacked(req, NULL);
    return rc;
}

int proxy_query_route(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    Apache__Rocketmq__V2__QueryRouteRequest *req =
        apache__rocketmq__v2__query_route_request__unpack(NULL, len, msg);
    if (!req)
        return px->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                    "QueryRouteRequest: undecodable protobuf");
    Apache__Rocketmq__V2__QueryRouteResponse resp =
        APACHE__ROCKETMQ__V2__QUERY_ROUTE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    char why[512] = "";
    proxy_route route = {0};
    const char *topic = req->topic && req->topic->name ? req->topic->name : "";
    int rc = topic[0] ? proxy_route_fetch(px, topic, &route, why, sizeof(why)) : RMQ_EINVAL;
    if (rc == RMQ_EINVAL)
        proxy_status(&st, PX_ILLEGAL_TOPIC, "topic name cannot be empty");
    else
        route_status(&st, rc, why);
    resp.status = &st;
    char host[64];
    Apache__Rocketmq__V2__Address addr;
    Apache__Rocketmq__V2__Address *addrs[1];
    Apache__Rocketmq__V2__Endpoints ep;
    proxy_endpoints(px, req->endpoints, host, sizeof(host), &addr, addrs, &ep);

    size_t total = 0;
    for (size_t i = 0; i < route.nqd; i++) {
        int r, w, rw, n;
        queue_split(&route.qd[i], &r, &w, &rw, &n);
        total += (size_t)(r + w + rw + n) * (size_t)route.qd[i].nbroker_ids;
    }
    Apache__Rocketmq__V2__MessageQueue *mqs = calloc(total + 1, sizeof(*mqs));
    Apache__Rocketmq__V2__MessageQueue **mqp = calloc(total + 1, sizeof(*mqp));
    Apache__Rocketmq__V2__Broker *brokers = calloc(route.nqd * 8 + 1, sizeof(*brokers));
    if (!mqs || !mqp || !brokers) {
        free(mqs);
        free(mqp);
        free(brokers);
        proxy_route_free(&route);
        apache__rocketmq__v2__query_route_request__free_unpacked(req, NULL);
        return RMQ_ENOMEM;
    }
    size_t ntypes = 0;
    const Apache__Rocketmq__V2__MessageType *types =
        rc == 0 ? proxy_topic_accept_types(px, topic, &ntypes) : NULL;
    size_t nmq = 0, nb = 0;
    for (size_t i = 0; i < route.nqd && rc == 0; i++) {
        const proxy_queue_data *q = &route.qd[i];
        int counts[4];
        queue_split(q, &counts[0], &counts[1], &counts[2], &counts[3]);
        static const Apache__Rocketmq__V2__Permission perms[4] = {
            APACHE__ROCKETMQ__V2__PERMISSION__READ, APACHE__ROCKETMQ__V2__PERMISSION__WRITE,
            APACHE__ROCKETMQ__V2__PERMISSION__READ_WRITE, APACHE__ROCKETMQ__V2__PERMISSION__NONE};
        for (int b = 0; b < q->nbroker_ids; b++) {
            Apache__Rocketmq__V2__Broker *br = &brokers[nb++];
            apache__rocketmq__v2__broker__init(br);
            br->name = (char *)q->broker_name;
            br->id = (int32_t)q->broker_ids[b];
            br->endpoints = &ep;
            int id = 0;
            for (int k = 0; k < 4; k++)
                for (int j = 0; j < counts[k]; j++) {
                    Apache__Rocketmq__V2__MessageQueue *mq = &mqs[nmq];
                    apache__rocketmq__v2__message_queue__init(mq);
                    mq->topic = req->topic;
                    mq->id = id++;
                    mq->permission = perms[k];
                    mq->broker = br;
                    mq->n_accept_message_types = ntypes;
                    mq->accept_message_types = (Apache__Rocketmq__V2__MessageType *)types;
                    mqp[nmq++] = mq;
                }
        }
    }
    resp.n_message_queues = nmq;
    resp.message_queues = mqp;
    rc = proxy_reply(px, call, &resp.base);
    free(mqs);
    free(mqp);
    free(brokers);
    proxy_route_free(&route);
    apache__rocketmq__v2__query_route_request__free_unpacked(req, NULL);
    return rc;
}
