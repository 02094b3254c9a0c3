/* proxy_telemetry.c — Telemetry, the bidi stream each 5.x client keeps open
 * with its proxy (Java's GrpcChannelManager / ProxyChannel): the client
 * sends its Settings and gets the merged settings back (proxy_client.c's
 * proxy_answer_settings); the stream is held (grpc_hold, ABI 1.11) so the
 * server can push commands on it at any time from any thread:
 * RecoverOrphanedTransactionCommand (a transaction check-back,
 * proxy_transaction.c), PrintThreadStackTraceCommand and
 * VerifyMessageCommand (rmqhostctl proxy-client-command), whose answers
 * (ThreadStackTrace, VerifyMessageResult) come back on the same stream and
 * are matched by nonce. A stream leaves the table when the client
 * half-closes (finished OK), cancels or disconnects (on_done), or at the
 * plugin's quiesce (finished UNAVAILABLE: the client opens a new one). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy_internal.h"

typedef struct tele_stream {
    struct tele_stream *prev, *next;
    proxy *px;
    rmq_grpc_call *call;
    char client_id[128];
    char peer[64];
    char **topics; /* a producer's publishing topics (its producer groups) */
    size_t ntopics;
    bool producer;
} tele_stream;

/* An admin command waiting for a client's answer to a pushed command. */
typedef struct tele_wait {
    struct tele_wait *next;
    char nonce[40];
    bool done;
    bool gone;    /* no answer will come: the plugin is quiescing */
    int code;     /* the answer's Status code */
    char *answer; /* malloc'd text */
} tele_wait;

struct telemetry_table {
    pthread_mutex_t mu; /* streams and waits */
    pthread_cond_t cv;  /* a wait was answered */
    tele_stream *streams;
    tele_wait *waits;
    uint64_t next_nonce;
    unsigned round; /* which producer of a group a check goes to */
};

static void topics_free(tele_stream *s)
{
    for (size_t i = 0; i < s->ntopics; i++)
        free(s->topics[i]);
    free(s->topics);
    s->topics = NULL;
    s->ntopics = 0;
}

static void stream_free(tele_stream *s)
{
    topics_free(s);
    free(s);
}

/* Under mu: take s out of the table; false when someone else did. */
static bool unlink_locked(telemetry_table *t, tele_stream *s)
{
    bool in = s->prev || s->next || t->streams == s;
    if (!in)
        return false;
    if (s->prev)
        s->prev->next = s->next;
    else
        t->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    return true;
}

static tele_stream *find_locked(telemetry_table *t, const rmq_grpc_call *call)
{
    for (tele_stream *s = t->streams; s; s = s->next)
        if (s->call == call)
            return s;
    return NULL;
}

/* The client cancelled or left (IO thread). */
static void stream_done(rmq_grpc_call *call, void *ud)
{
    tele_stream *s = ud;
    proxy *px = s->px;
    pthread_mutex_lock(&px->tele->mu);
    bool mine = unlink_locked(px->tele, s);
    pthread_mutex_unlock(&px->tele->mu);
    if (!mine)
        return;
    px->api->grpc_release(call);
    stream_free(s);
}

int proxy_telemetry_init(proxy *px)
{
    telemetry_table *t = calloc(1, sizeof *t);
    if (!t)
        return RMQ_ENOMEM;
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    t->next_nonce = 1;
    px->tele = t;
    return 0;
}

void proxy_telemetry_quiesce(proxy *px)
{
    telemetry_table *t = px->tele;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        tele_stream *s = t->streams;
        if (s)
            unlink_locked(t, s);
        pthread_mutex_unlock(&t->mu);
        if (!s)
            break;
        px->api->grpc_finish(s->call, RMQ_GRPC_UNAVAILABLE, "proxy is restarting");
        px->api->grpc_release(s->call);
        stream_free(s);
    }
    /* the streams are gone: whoever waits for an answer stops waiting (a
     * broker relay would otherwise hold the reload for its whole timeout) */
    pthread_mutex_lock(&t->mu);
    for (tele_wait *w = t->waits; w; w = w->next)
        if (!w->done)
            w->done = w->gone = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

void proxy_telemetry_fini(proxy *px)
{
    telemetry_table *t = px->tele;
    if (!t)
        return;
    proxy_telemetry_quiesce(px);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t);
    px->tele = NULL;
}

/* Remember who the client is from its Settings. Under mu. */
static void learn_settings_locked(tele_stream *s, const Apache__Rocketmq__V2__Settings *st)
{
    if (st->pub_sub_case != APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING || !st->publishing)
        return;
    s->producer = true;
    char **n = calloc(st->publishing->n_topics + 1, sizeof *n);
    if (!n)
        return;
    size_t k = 0;
    for (size_t i = 0; i < st->publishing->n_topics; i++) {
        const Apache__Rocketmq__V2__Resource *r = st->publishing->topics[i];
        if (r && r->name && (n[k] = strdup(r->name)))
            k++;
    }
    topics_free(s);
    s->topics = n;
    s->ntopics = k;
}

/* A client's answer to a pushed command: wake the admin command waiting
 * for its nonce. */
static void answer_wait(telemetry_table *t, const char *nonce, int code, const char *text)
{
    if (!nonce)
        return;
    pthread_mutex_lock(&t->mu);
    for (tele_wait *w = t->waits; w; w = w->next)
        if (!w->done && strcmp(w->nonce, nonce) == 0) {
            w->answer = strdup(text ? text : "");
            w->code = code;
            w->done = true;
            pthread_cond_broadcast(&t->cv);
            break;
        }
    pthread_mutex_unlock(&t->mu);
}

int proxy_telemetry(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    telemetry_table *t = px->tele;
    if (!msg) {
        /* the client closed its side: it leaves, and its stream ends */
        const char *id = api->grpc_metadata(call, "x-mq-client-id");
        if (id && id[0])
            proxy_clients_terminate(px, id);
        pthread_mutex_lock(&t->mu);
        tele_stream *s = find_locked(t, call);
        bool mine = s && unlink_locked(t, s);
        pthread_mutex_unlock(&t->mu);
        if (mine) {
            api->grpc_finish(call, RMQ_GRPC_OK, NULL);
            api->grpc_release(call);
            stream_free(s);
        }
        return 0; /* not held: the host ends the call OK */
    }
    Apache__Rocketmq__V2__TelemetryCommand *cmd =
        apache__rocketmq__v2__telemetry_command__unpack(NULL, len, msg);
    if (!cmd)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                "TelemetryCommand: undecodable protobuf");
    int rc = 0;
    const char *client_id = api->grpc_metadata(call, "x-mq-client-id");
    char text[160];
    switch (cmd->command_case) {
    case APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS:
        if (!client_id || !client_id[0] || !cmd->settings) {
            Apache__Rocketmq__V2__TelemetryCommand out =
                APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__INIT;
            Apache__Rocketmq__V2__Status st;
            proxy_status(&st, PX_CLIENT_ID_REQUIRED, "client id cannot be empty");
            out.status = &st;
            rc = proxy_reply(px, call, &out.base);
            break;
        }
        pthread_mutex_lock(&t->mu);
        tele_stream *s = find_locked(t, call);
        if (s)
            learn_settings_locked(s, cmd->settings);
        pthread_mutex_unlock(&t->mu);
        if (!s && (s = calloc(1, sizeof *s))) {
            /* first Settings: keep the stream for server pushes */
            s->px = px;
            s->call = call;
            snprintf(s->client_id, sizeof s->client_id, "%s", client_id);
            snprintf(s->peer, sizeof s->peer, "%s", api->grpc_call_peer(call));
            learn_settings_locked(s, cmd->settings);
            pthread_mutex_lock(&t->mu);
            s->next = t->streams;
            if (t->streams)
                t->streams->prev = s;
            t->streams = s;
            pthread_mutex_unlock(&t->mu);
            int hrc = api->grpc_hold(call, stream_done, s);
            if (hrc < 0) {
                pthread_mutex_lock(&t->mu);
                bool mine = unlink_locked(t, s);
                pthread_mutex_unlock(&t->mu);
                if (mine)
                    stream_free(s);
            }
        }
        proxy_clients_settings(px, call, client_id, cmd->settings);
        rc = proxy_answer_settings(px, call, cmd->settings);
        break;
    case APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_THREAD_STACK_TRACE:
        if (cmd->thread_stack_trace)
            answer_wait(t, cmd->thread_stack_trace->nonce, cmd->status ? cmd->status->code : PX_OK,
                        cmd->thread_stack_trace->thread_stack_trace);
        break;
    case APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_VERIFY_MESSAGE_RESULT:
    case APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_VERIFY_MESSAGE_COMMAND: {
        /* Java's clients answer with a VerifyMessageResult; the Node.js
         * client echoes the command with status NOT_IMPLEMENTED */
        const char *nonce =
            cmd->command_case ==
                    APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_VERIFY_MESSAGE_RESULT
                ? (cmd->verify_message_result ? cmd->verify_message_result->nonce : NULL)
                : (cmd->verify_message_command ? cmd->verify_message_command->nonce : NULL);
        snprintf(text, sizeof text, "%s %s",
                 proxy_code_name(cmd->status ? cmd->status->code : PX_OK),
                 cmd->status && cmd->status->message ? cmd->status->message : "");
        answer_wait(t, nonce, cmd->status ? cmd->status->code : PX_OK, text);
        break;
    }
    default: break; /* nothing else comes from clients */
    }
    apache__rocketmq__v2__telemetry_command__free_unpacked(cmd, NULL);
    return rc;
}

/* Under mu: send `out` on s. */
static int push_locked(proxy *px, tele_stream *s, const ProtobufCMessage *out)
{
    return proxy_reply(px, s->call, out);
}

int proxy_telemetry_push_to_group(proxy *px, const char *group, const char *prefer_tag,
                                  const Apache__Rocketmq__V2__TelemetryCommand *cmd,
                                  char *client_id, size_t cap)
{
    telemetry_table *t = px->tele;
    int rc = RMQ_ENOENT;
    pthread_mutex_lock(&t->mu);
    size_t n = 0;
    tele_stream *preferred = NULL;
    for (tele_stream *s = t->streams; s; s = s->next)
        for (size_t i = 0; s->producer && i < s->ntopics; i++)
            if (strcmp(s->topics[i], group) == 0) {
                char tag[PROXY_CLIENT_TAG_LEN + 1];
                proxy_client_tag(s->client_id, tag);
                if (prefer_tag && !preferred && strcmp(tag, prefer_tag) == 0)
                    preferred = s;
                n++;
                break;
            }
    if (preferred) {
        rc = push_locked(px, preferred, &cmd->base);
        if (client_id)
            snprintf(client_id, cap, "%s", preferred->client_id);
    } else if (n > 0) {
        size_t pick = t->round++ % n, k = 0;
        for (tele_stream *s = t->streams; s && rc == RMQ_ENOENT; s = s->next)
            for (size_t i = 0; s->producer && i < s->ntopics; i++)
                if (strcmp(s->topics[i], group) == 0) {
                    if (k++ == pick) {
                        rc = push_locked(px, s, &cmd->base);
                        if (client_id)
                            snprintf(client_id, cap, "%s", s->client_id);
                    }
                    break;
                }
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int proxy_telemetry_ask(proxy *px, const char *client_id,
                        const Apache__Rocketmq__V2__TelemetryCommand *cmd, const char *nonce,
                        uint32_t timeout_ms, int *code, char **answer)
{
    telemetry_table *t = px->tele;
    tele_wait w = {0};
    snprintf(w.nonce, sizeof w.nonce, "%s", nonce);
    int rc = RMQ_ENOENT;
    pthread_mutex_lock(&t->mu);
    for (tele_stream *s = t->streams; s; s = s->next)
        if (strcmp(s->client_id, client_id) == 0) {
            rc = push_locked(px, s, &cmd->base);
            break;
        }
    if (rc == 0) {
        w.next = t->waits;
        t->waits = &w;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)timeout_ms * 1000000u;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        int wrc = 0;
        while (!w.done && wrc != ETIMEDOUT)
            wrc = pthread_cond_timedwait(&t->cv, &t->mu, &until);
        for (tele_wait **pp = &t->waits; *pp; pp = &(*pp)->next)
            if (*pp == &w) {
                *pp = w.next;
                break;
            }
        if (!w.done)
            rc = RMQ_ETIMEDOUT;
        else if (w.gone)
            rc = RMQ_ESHUTDOWN;
    }
    pthread_mutex_unlock(&t->mu);
    *answer = w.answer;
    if (code)
        *code = w.code;
    return rc;
}

void proxy_telemetry_nonce(proxy *px, char *out, size_t cap)
{
    pthread_mutex_lock(&px->tele->mu);
    uint64_t n = px->tele->next_nonce++;
    pthread_mutex_unlock(&px->tele->mu);
    snprintf(out, cap, "rmqhost-%" PRIu64 "-%" PRIu64, px->api->now_wall_ms(), n);
}

/* rmqhostctl proxy-client-command list
 *            proxy-client-command stack CLIENT_ID
 *            proxy-client-command verify CLIENT_ID COMMIT_LOG_OFFSET */
int proxy_telemetry_admin(rmq_admin_call *ac, int argc, const char *const *argv, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    argc--; /* argv[0] is the command's name */
    argv++;
    if (argc >= 1 && strcmp(argv[0], "list") == 0) {
        pthread_mutex_lock(&px->tele->mu);
        for (tele_stream *s = px->tele->streams; s; s = s->next) {
            api->admin_write(ac, "%s %s %s", s->client_id, s->peer,
                             s->producer ? "producer" : "consumer");
            for (size_t i = 0; i < s->ntopics; i++)
                api->admin_write(ac, "%s%s", i ? "," : " ", s->topics[i]);
            api->admin_write(ac, "\n");
        }
        pthread_mutex_unlock(&px->tele->mu);
        return 0;
    }
    bool stack = argc == 2 && strcmp(argv[0], "stack") == 0;
    bool verify = argc == 3 && strcmp(argv[0], "verify") == 0;
    if (!stack && !verify) {
        api->admin_write(ac, "usage: proxy-client-command list | stack CLIENT_ID | verify "
                             "CLIENT_ID COMMIT_LOG_OFFSET\n");
        return 2;
    }
    char nonce[40];
    proxy_telemetry_nonce(px, nonce, sizeof nonce);
    Apache__Rocketmq__V2__TelemetryCommand cmd = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__INIT;
    Apache__Rocketmq__V2__PrintThreadStackTraceCommand pc =
        APACHE__ROCKETMQ__V2__PRINT_THREAD_STACK_TRACE_COMMAND__INIT;
    Apache__Rocketmq__V2__VerifyMessageCommand vc =
        APACHE__ROCKETMQ__V2__VERIFY_MESSAGE_COMMAND__INIT;
    proxy_built *pb = NULL;
    if (stack) {
        pc.nonce = nonce;
        cmd.command_case =
            APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_PRINT_THREAD_STACK_TRACE_COMMAND;
        cmd.print_thread_stack_trace_command = &pc;
    } else {
        char *end = NULL;
        long long off = strtoll(argv[2], &end, 10);
        void *rec = NULL;
        size_t rlen = 0;
        int rc = end && !*end ? proxy_message_by_offset(px, off, &rec, &rlen) : RMQ_EINVAL;
        if (rc == 0) {
            pb = proxy_message_build(rec, rlen);
            free(rec);
        }
        if (!pb) {
            api->admin_write(ac, "no message at commit-log offset %s: %s\n", argv[2],
                             rmq_strerror(rc < 0 ? rc : RMQ_EINVAL));
            return 1;
        }
        vc.nonce = nonce;
        vc.message = proxy_message_of(pb);
        cmd.command_case = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_VERIFY_MESSAGE_COMMAND;
        cmd.verify_message_command = &vc;
    }
    char *answer = NULL;
    int rc = proxy_telemetry_ask(px, argv[1], &cmd, nonce, 5000, NULL, &answer);
    proxy_message_free(pb);
    if (rc < 0) {
        api->admin_write(ac, "%s: %s\n", argv[1],
                         rc == RMQ_ENOENT ? "no telemetry stream of that client"
                                          : rmq_strerror(rc));
        free(answer);
        return 1;
    }
    api->admin_write(ac, "%s\n", answer ? answer : "");
    free(answer);
    return 0;
}
