/* proxy_acl.c — owns the ACL of gRPC calls. Every MessagingService handler
 * is registered behind a guard that, when an ACL plugin offers the service
 * "acl.check" (SDK acl_service.h), names the resources the request touches
 * as Java 5.1's PlainAccessResource.parse(GeneratedMessageV3, ...) does and
 * lets that plugin judge the client's signature and permissions. A refusal
 * is answered as Java 5.3's proxy answers an authentication or authorisation
 * failure: the method's response with Status UNAUTHORIZED and the reason,
 * then the call ends OK. Without the service every call passes unchecked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/helpers.h>
#include <rmqhost/services/acl_service.h>

#include "proxy_internal.h"

#define MAX_NEEDS 64

typedef struct needs {
    rmq_acl_need n[MAX_NEEDS];
    size_t count;
    char *owned[MAX_NEEDS]; /* namespace-wrapped names */
    size_t nowned;
    const char *refusal; /* a message Java's parse refuses before validating */
} needs;

/* NamespaceUtil.wrapNamespace: "<namespace>%<name>" when a namespace is set. */
static void add(needs *nd, const Apache__Rocketmq__V2__Resource *r, uint32_t need, bool group)
{
    if (!r || !r->name || nd->count == MAX_NEEDS)
        return;
    const char *name = r->name;
    if (r->resource_namespace && *r->resource_namespace && nd->nowned < MAX_NEEDS) {
        size_t n = strlen(r->resource_namespace) + strlen(r->name) + 2;
        char *w = malloc(n);
        if (!w)
            return;
        snprintf(w, n, "%s%%%s", r->resource_namespace, r->name);
        nd->owned[nd->nowned++] = w;
        name = w;
    }
    nd->n[nd->count++] = (rmq_acl_need){.resource = name, .need = need, .group = group};
}

/* what a consumer RPC needs: SUB on its group, then SUB on its topic */
static void add_sub(needs *nd, const Apache__Rocketmq__V2__Resource *group,
                    const Apache__Rocketmq__V2__Resource *topic)
{
    add(nd, group, RMQ_ACL_NEED_SUB, true);
    add(nd, topic, RMQ_ACL_NEED_SUB, false);
}

static bool same_resource(const Apache__Rocketmq__V2__Resource *a,
                          const Apache__Rocketmq__V2__Resource *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a->name ? a->name : "", b->name ? b->name : "") == 0 &&
           strcmp(a->resource_namespace ? a->resource_namespace : "",
                  b->resource_namespace ? b->resource_namespace : "") == 0;
}

static void send_needs(const Apache__Rocketmq__V2__SendMessageRequest *r, needs *nd)
{
    if (r->n_messages == 0) {
        nd->refusal = "SendMessageRequest, messageCount is zero";
        return;
    }
    const Apache__Rocketmq__V2__Resource *topic = r->messages[0]->topic;
    for (size_t i = 1; i < r->n_messages; i++)
        if (!same_resource(r->messages[i]->topic, topic)) {
            nd->refusal = "SendMessageRequest, messages' topic is not consistent";
            return;
        }
    add(nd, topic, RMQ_ACL_NEED_PUB, false);
}

static void telemetry_needs(const Apache__Rocketmq__V2__TelemetryCommand *t, needs *nd)
{
    if (t->command_case != APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS ||
        !t->settings)
        return;
    const Apache__Rocketmq__V2__Settings *s = t->settings;
    if (s->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING && s->publishing) {
        for (size_t i = 0; i < s->publishing->n_topics; i++)
            add(nd, s->publishing->topics[i], RMQ_ACL_NEED_PUB, false);
    } else if (s->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_SUBSCRIPTION &&
               s->subscription) {
        add(nd, s->subscription->group, RMQ_ACL_NEED_SUB, true);
        for (size_t i = 0; i < s->subscription->n_subscriptions; i++)
            add(nd, s->subscription->subscriptions[i]->topic, RMQ_ACL_NEED_SUB, false);
    } else {
        nd->refusal = "settings command doesn't have publishing or subscription";
    }
}

static const Apache__Rocketmq__V2__Resource *
queue_topic(const Apache__Rocketmq__V2__MessageQueue *mq)
{
    return mq ? mq->topic : NULL;
}

/* The resources of one decoded request (Java 5.1's list; the RPCs it did
 * not have yet — PullMessage, the offsets, RecallMessage — by the same
 * rule: a consumer's group and topic SUB, a producer's topic PUB). */
static void collect(const ProtobufCMessage *m, needs *nd)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
#define IS(name) (d == &apache__rocketmq__v2__##name##__descriptor)
    if (IS(heartbeat_request)) {
        const Apache__Rocketmq__V2__HeartbeatRequest *r = (const void *)m;
        if (r->client_type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__PUSH_CONSUMER ||
            r->client_type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER) {
            if (!r->group)
                nd->refusal = "Consumer heartbeat doesn't have group";
            else
                add(nd, r->group, RMQ_ACL_NEED_SUB, true);
        }
    } else if (IS(send_message_request)) {
        send_needs((const void *)m, nd);
    } else if (IS(receive_message_request)) {
        const Apache__Rocketmq__V2__ReceiveMessageRequest *r = (const void *)m;
        add_sub(nd, r->group, queue_topic(r->message_queue));
    } else if (IS(ack_message_request)) {
        const Apache__Rocketmq__V2__AckMessageRequest *r = (const void *)m;
        add_sub(nd, r->group, r->topic);
    } else if (IS(forward_message_to_dead_letter_queue_request)) {
        const Apache__Rocketmq__V2__ForwardMessageToDeadLetterQueueRequest *r = (const void *)m;
        add_sub(nd, r->group, r->topic);
    } else if (IS(end_transaction_request)) {
        add(nd, ((const Apache__Rocketmq__V2__EndTransactionRequest *)(const void *)m)->topic,
            RMQ_ACL_NEED_PUB, false);
    } else if (IS(telemetry_command)) {
        telemetry_needs((const void *)m, nd);
    } else if (IS(notify_client_termination_request)) {
        add(nd,
            ((const Apache__Rocketmq__V2__NotifyClientTerminationRequest *)(const void *)m)->group,
            RMQ_ACL_NEED_SUB, true);
    } else if (IS(query_route_request)) {
        add(nd, ((const Apache__Rocketmq__V2__QueryRouteRequest *)(const void *)m)->topic,
            RMQ_ACL_NEED_ANY, false);
    } else if (IS(query_assignment_request)) {
        const Apache__Rocketmq__V2__QueryAssignmentRequest *r = (const void *)m;
        add_sub(nd, r->group, r->topic);
    } else if (IS(change_invisible_duration_request)) {
        const Apache__Rocketmq__V2__ChangeInvisibleDurationRequest *r = (const void *)m;
        add_sub(nd, r->group, r->topic);
    } else if (IS(pull_message_request)) {
        const Apache__Rocketmq__V2__PullMessageRequest *r = (const void *)m;
        add_sub(nd, r->group, queue_topic(r->message_queue));
    } else if (IS(update_offset_request)) {
        const Apache__Rocketmq__V2__UpdateOffsetRequest *r = (const void *)m;
        add_sub(nd, r->group, queue_topic(r->message_queue));
    } else if (IS(get_offset_request)) {
        const Apache__Rocketmq__V2__GetOffsetRequest *r = (const void *)m;
        add_sub(nd, r->group, queue_topic(r->message_queue));
    } else if (IS(query_offset_request)) {
        add(nd,
            queue_topic(
                ((const Apache__Rocketmq__V2__QueryOffsetRequest *)(const void *)m)->message_queue),
            RMQ_ACL_NEED_SUB, false);
    } else if (IS(recall_message_request)) {
        add(nd, ((const Apache__Rocketmq__V2__RecallMessageRequest *)(const void *)m)->topic,
            RMQ_ACL_NEED_PUB, false);
    }
#undef IS
}

/* The method's response carrying only `status` (every MessagingService
 * response has one; in ReceiveMessageResponse it is a oneof member). */
static int answer_status(proxy *px, rmq_grpc_call *call, const ProtobufCMessageDescriptor *out,
                         const char *message)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(out, "status");
    if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
        return px->api->grpc_finish(call, RMQ_GRPC_INTERNAL, message);
    ProtobufCMessage *resp = calloc(1, out->sizeof_message);
    if (!resp)
        return RMQ_ENOMEM;
    out->message_init(resp);
    Apache__Rocketmq__V2__Status st;
    proxy_status(&st, APACHE__ROCKETMQ__V2__CODE__UNAUTHORIZED, message);
    *(Apache__Rocketmq__V2__Status **)(void *)((char *)resp + f->offset) = &st;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        *(uint32_t *)(void *)((char *)resp + f->quantifier_offset) = f->id;
    int rc = proxy_reply(px, call, resp);
    free(resp);
    if (rc == 0)
        rc = px->api->grpc_finish(call, RMQ_GRPC_OK, NULL);
    return rc;
}

typedef struct guard {
    proxy *px;
    char method[48];
    rmq_grpc_handler_fn fn;
    const ProtobufCMessageDescriptor *in, *out;
} guard;

struct proxy_acl {
    guard g[32];
    size_t n;
};

/* 1 admitted (or no ACL), 0 refused and answered, < 0 error. */
static int judge(guard *g, rmq_grpc_call *call, const void *msg, size_t len)
{
    proxy *px = g->px;
    const rmq_host_api *api = px->api;
    const void *table;
    void *tud;
    rmq_service_ref ref;
    if (api->service_acquire(px->ctx, RMQ_ACL_CHECK_SERVICE, RMQ_ACL_CHECK_VERSION, &table, &tud,
                             &ref) != 0)
        return 1; /* no ACL plugin guards the broker */
    const rmq_acl_check_v1 *acl = table;
    ProtobufCMessage *m = g->in ? protobuf_c_message_unpack(g->in, NULL, len, msg) : NULL;
    needs nd = {.count = 0};
    if (m)
        collect(m, &nd);
    char reason[RMQ_REMARK_BUF_MIN_CAP] = "";
    rmq_remark_buf rb = {.size = sizeof(rb), .data = reason, .cap = sizeof(reason)};
    int verdict = RMQ_ACL_FORBIDDEN;
    if (nd.refusal) {
        rmq_remark_set(&rb, nd.refusal);
    } else {
        rmq_acl_grpc_request req = {.size = sizeof(req),
                                    .peer = api->grpc_call_peer(call),
                                    .authorization = api->grpc_metadata(call, "authorization"),
                                    .date_time = api->grpc_metadata(call, "x-mq-date-time"),
                                    .rpc = g->method,
                                    .needs = nd.n,
                                    .nneeds = nd.count};
        verdict = acl->check_grpc(tud, &req, &rb);
    }
    api->service_release(px->ctx, ref);
    for (size_t i = 0; i < nd.nowned; i++)
        free(nd.owned[i]);
    if (m)
        protobuf_c_message_free_unpacked(m, NULL);
    if (verdict == RMQ_ACL_ADMITTED)
        return 1;
    if (!g->out) /* a method this file does not know: end the call itself */
        return api->grpc_finish(call, RMQ_GRPC_PERMISSION_DENIED, reason);
    int rc = answer_status(px, call, g->out, reason);
    return rc < 0 ? rc : 0;
}

static int guarded(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    guard *g = ud;
    int rc = judge(g, call, msg, len);
    if (rc == 1)
        return g->fn(call, msg, len, g->px);
    return rc < 0 ? rc : RMQ_OK;
}

static void descriptors_of(const char *method, const ProtobufCMessageDescriptor **in,
                           const ProtobufCMessageDescriptor **out)
{
    const ProtobufCMethodDescriptor *md = protobuf_c_service_descriptor_get_method_by_name(
        &apache__rocketmq__v2__messaging_service__descriptor, method);
    *in = md ? md->input : NULL;
    *out = md ? md->output : NULL;
}

int proxy_acl_register(proxy *px, const char *method, rmq_grpc_kind kind, rmq_grpc_handler_fn fn,
                       const char *executor)
{
    char path[128];
    snprintf(path, sizeof(path), PROXY_SERVICE "%s", method);
    if (!px->acl && !(px->acl = calloc(1, sizeof(*px->acl))))
        return RMQ_ENOMEM;
    proxy_acl *a = px->acl;
    if (a->n == sizeof(a->g) / sizeof(a->g[0]))
        return RMQ_ENOMEM;
    guard *g = &a->g[a->n++];
    g->px = px;
    g->fn = fn;
    snprintf(g->method, sizeof(g->method), "%s", method);
    descriptors_of(method, &g->in, &g->out);
    return px->api->register_grpc_method(px->ctx, path, kind, guarded, g, executor);
}

void proxy_acl_free(proxy *px)
{
    free(px->acl);
    px->acl = NULL;
}
