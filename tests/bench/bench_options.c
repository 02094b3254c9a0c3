/* bench_options.c — turns rmqbench's argv into rmq_bench_options: defaults,
 * validation, address resolution and --body loading. Must not open
 * connections or start loops; errors go to stderr once, here. */
#include "bench_options.h"

#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_text[] =
    "usage: rmqbench [options]\n"
    "  -a host:port     target (default 127.0.0.1:9876)\n"
    "  -c N             connections (default 4)\n"
    "  -d D             requests in flight per connection (default 32)\n"
    "  -s S             measured seconds (default 5, fractions allowed)\n"
    "  -w W             warm-up seconds, not measured (default 1)\n"
    "  -t T             event-loop threads sharing the connections (default 1)\n"
    "  --code N         request code (default 105, GET_ROUTEINFO_BY_TOPIC)\n"
    "  -e key=value     ext field, repeatable (default topic=TopicTest)\n"
    "  --body FILE      request body from FILE\n"
    "  --rocketmq       ROCKETMQ binary headers instead of JSON\n"
    "  --oneway         oneway requests (no responses; measures send rate)\n"
    "  --json           one JSON object instead of text\n"
    "  --mode M         raw (default), send (SEND_MESSAGE_V2) or pull (PULL_MESSAGE drain)\n"
    "  --size N         send: message body bytes (default 1024)\n"
    "  --topic T        send/pull: topic (default BenchTopic)\n"
    "  --group G        send/pull: producer / consumer group (default BenchGroup)\n"
    "  --queues Q       pull: queues drained, connection i takes queue i % Q (default 4)\n"
    "  --batch B        pull: maxMsgNums and the offset step (default 32)\n"
    "  --tls            TLS on every connection (TLS >= 1.2, the server's certificate is not\n"
    "                   verified: a transport cost measurement, not a security check)\n"
    "register mode (REGISTER_BROKER over the wire, one request at a time):\n"
    "  --register N     N topics x 8 queues per broker (4.9.8 body shape)\n"
    "  --rounds R       registrations of the same topics, DataVersion counter\n"
    "                   changed each round (default 10; round 1 = first)\n"
    "  --split K        at most K topics per frame, same DataVersion (5.x split)\n"
    "  --compressed     4.9.8's compressed body (compressed=true)\n"
    "  --brokers B      B brokers (names PREFIX-0..B-1) registering in turn\n"
    "  --period S       with --brokers: every broker re-registers every S s\n"
    "                   for -s seconds (a registration storm)\n"
    "  --probe          meanwhile look routes up on a second connection and\n"
    "                   report their latency (max = the longest wait)\n"
    "  --probe-every-us U  the probe starts one lookup every U us (default: one\n"
    "                   after the other; pacing keeps its own load out of the\n"
    "                   throughput a storm run compares)\n"
    "  --distinct       each broker registers its own topic names (default:\n"
    "                   every broker the same N topics)\n"
    "  --expire-ms X    heartbeatTimeoutMillis X; after a storm, wait until the\n"
    "                   brokers expire while the probe keeps looking up\n"
    "  --broker-prefix P  broker and topic names (default bench-<pid>)\n"
    "create-topics mode (one connection, one request at a time):\n"
    "  --create-topics N  create topics <--topic>-0..N-1 by SEND_MESSAGE_V2 of --size\n"
    "                   bytes (auto-creation from TBW102, --queues queues); report\n"
    "                   the time per 1000 every --report-every creations, then\n"
    "                   send latency to the first and the last topic\n"
    "  --create-via-admin  create by UPDATE_AND_CREATE_TOPIC (17) instead\n"
    "  --per-queue      a message to each of the --queues queues of every new topic\n"
    "                   (the block times then include those sends)\n"
    "  --report-every K  creations per reported block (1000)\n"
    "delete-topics mode (one connection, one request at a time):\n"
    "  --delete-topics N  delete topics <--topic>-0..N-1 by DELETE_TOPIC_IN_BROKER\n"
    "                   (215); report the time per 1000 every --report-every\n"
    "  --namesrv H:P    then DELETE_TOPIC_IN_NAMESRV (216) there, as mqadmin\n"
    "                   deleteTopic does\n"
    "gRPC mode (RocketMQ 5.x, apache.rocketmq.v2.MessagingService):\n"
    "  --grpc H:P       send -n messages of --size bytes to --topic with -c calls in\n"
    "                   flight, then -c SimpleConsumers of --group receive them in\n"
    "                   batches of --batch and acknowledge each; --tls for TLS (h2\n"
    "                   by ALPN), else h2c with prior knowledge\n"
    "  -n N             messages (default 20000)\n"
    "  --ackc K         Acks in flight per consumer (default 1: one after another)\n"
    "  --grpc-conns K   the producer's HTTP/2 connections (default 1, as one 5.x\n"
    "                   Producer has); each consumer has its own\n"
    "  --long-poll-ms M ReceiveMessage's long_polling_timeout (default 5000, Java's\n"
    "                   minimum)\n"
    "hold mode:\n"
    "  --hold N         open N connections (127.0.0.x sources), keep them -s s\n"
    "  --hold-request   send each one request (--code, -e) first\n";

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int parse_seconds(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= 0.0) || v > 86400.0)
        return -1;
    *out = v;
    return 0;
}

static int resolve_target(rmq_bench_options *o, const char *spec)
{
    snprintf(o->target, sizeof(o->target), "%s", spec);
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || colon[1] == '\0') {
        fprintf(stderr, "rmqbench: -a wants host:port, got '%s'\n", spec);
        return -1;
    }
    size_t hlen = (size_t)(colon - spec);
    if (hlen >= sizeof(host))
        return -1;
    memcpy(host, spec, hlen);
    host[hlen] = '\0';
    if (host[0] == '[' && hlen > 2 && host[hlen - 1] == ']') {
        memmove(host, host + 1, hlen - 2);
        host[hlen - 2] = '\0';
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0 || !res) {
        fprintf(stderr, "rmqbench: cannot resolve '%s': %s\n", spec, gai_strerror(rc));
        return -1;
    }
    memcpy(&o->addr, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

/* --namesrv: resolved like the target, into its own fields. */
static int resolve_namesrv(rmq_bench_options *o, const char *spec)
{
    char target[sizeof o->target];
    struct sockaddr_storage addr = o->addr;
    memcpy(target, o->target, sizeof target);
    int rc = resolve_target(o, spec);
    if (rc == 0) {
        memcpy(o->namesrv_target, o->target, sizeof o->namesrv_target);
        o->namesrv_addr = o->addr;
    }
    memcpy(o->target, target, sizeof target);
    o->addr = addr;
    return rc;
}

static int add_ext(rmq_bench_options *o, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv) {
        fprintf(stderr, "rmqbench: -e wants key=value, got '%s'\n", kv);
        return -1;
    }
    if (o->ext_count == RMQ_BENCH_MAX_EXT) {
        fprintf(stderr, "rmqbench: at most %d -e options\n", RMQ_BENCH_MAX_EXT);
        return -1;
    }
    char *copy = strdup(kv);
    if (!copy)
        return -1;
    copy[eq - kv] = '\0';
    o->ext_storage[o->ext_count] = copy;
    o->ext_keys[o->ext_count] = copy;
    o->ext_values[o->ext_count] = copy + (eq - kv) + 1;
    o->ext_count++;
    return 0;
}

static int load_body(rmq_bench_options *o, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (len < cap)
            break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int failed = !buf || ferror(f);
    fclose(f);
    if (failed) {
        fprintf(stderr, "rmqbench: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    free(o->body);
    o->body = buf;
    o->body_len = len;
    return 0;
}

static int add_extf(rmq_bench_options *o, const char *key, const char *value)
{
    char kv[512];
    snprintf(kv, sizeof kv, "%s=%s", key, value);
    return add_ext(o, kv);
}

/* The request of --mode send / pull, unless -e / --code / --body say otherwise. */
static int mode_defaults(rmq_bench_options *o, int code_given, int warmup_given)
{
    char born[32];
    snprintf(born, sizeof born, "%lld", (long long)time(NULL) * 1000);
    if (o->mode == RMQ_BENCH_MODE_SEND) {
        if (!code_given)
            o->code = 310;
        if (!o->body) {
            o->body = malloc(o->msg_size ? o->msg_size : 1);
            if (!o->body)
                return -1;
            memset(o->body, 'x', o->msg_size);
            o->body_len = o->msg_size;
        }
        if (o->ext_count)
            return 0;
        /* WAIT=true: under SYNC_FLUSH the answer waits for the fsync */
        return add_extf(o, "a", o->group) || add_extf(o, "b", o->topic) ||
               add_extf(o, "c", "TBW102") || add_extf(o, "d", "4") || add_extf(o, "e", "-1") ||
               add_extf(o, "f", "0") || add_extf(o, "g", born) || add_extf(o, "h", "0") ||
               add_extf(o, "i", "WAIT\001true\002TAGS\001TagA") || add_extf(o, "j", "0") ||
               add_extf(o, "k", "false") || add_extf(o, "m", "false");
    }
    if (!code_given)
        o->code = 11;
    if (!warmup_given)
        o->warmup_seconds = 0.0; /* a drain is measured from its first pull */
    if (o->ext_count)
        return 0;
    char batch[16];
    snprintf(batch, sizeof batch, "%u", o->batch);
    /* inline subscription (sysFlag 4): no heartbeat needed; no suspension */
    return add_extf(o, "consumerGroup", o->group) || add_extf(o, "topic", o->topic) ||
           add_extf(o, "queueId", RMQ_BENCH_QUEUE_MARKER) ||
           add_extf(o, "queueOffset", RMQ_BENCH_OFFSET_MARKER) ||
           add_extf(o, "maxMsgNums", batch) || add_extf(o, "sysFlag", "4") ||
           add_extf(o, "commitOffset", "0") || add_extf(o, "suspendTimeoutMillis", "0") ||
           add_extf(o, "subscription", "*") || add_extf(o, "subVersion", "0") ||
           add_extf(o, "expressionType", "TAG");
}

enum {
    OPT_CODE = 256,
    OPT_BODY,
    OPT_ROCKETMQ,
    OPT_ONEWAY,
    OPT_JSON,
    OPT_REGISTER,
    OPT_ROUNDS,
    OPT_SPLIT,
    OPT_BROKERS,
    OPT_PERIOD,
    OPT_COMPRESSED,
    OPT_PROBE,
    OPT_PROBE_EVERY,
    OPT_BROKER_PREFIX,
    OPT_DISTINCT,
    OPT_EXPIRE_MS,
    OPT_HOLD,
    OPT_HOLD_REQUEST,
    OPT_TLS,
    OPT_MODE,
    OPT_SIZE,
    OPT_TOPIC,
    OPT_GROUP,
    OPT_QUEUES,
    OPT_BATCH,
    OPT_CREATE_TOPICS,
    OPT_CREATE_VIA_ADMIN,
    OPT_REPORT_EVERY,
    OPT_PER_QUEUE,
    OPT_DELETE_TOPICS,
    OPT_NAMESRV,
    OPT_GRPC,
    OPT_ACKC,
    OPT_GRPC_CONNS,
    OPT_LONG_POLL
};

int rmq_bench_options_parse(rmq_bench_options *o, int argc, char **argv)
{
    memset(o, 0, sizeof(*o));
    o->connections = 4;
    o->depth = 32;
    o->threads = 1;
    o->seconds = 5.0;
    o->warmup_seconds = 1.0;
    o->code = 105;
    o->rounds = 10;
    o->brokers = 1;
    o->msg_size = 1024;
    o->queues = 4;
    o->batch = 32;
    o->messages = 20000;
    o->ackc = 1;
    o->grpc_conns = 1;
    o->long_poll_ms = 5000;
    snprintf(o->topic, sizeof o->topic, "BenchTopic");
    snprintf(o->group, sizeof o->group, "BenchGroup");
    int code_given = 0, warmup_given = 0;
    const char *target = "127.0.0.1:9876";

    static const struct option longopts[] = {
        {"code", required_argument, NULL, OPT_CODE},
        {"body", required_argument, NULL, OPT_BODY},
        {"rocketmq", no_argument, NULL, OPT_ROCKETMQ},
        {"oneway", no_argument, NULL, OPT_ONEWAY},
        {"tls", no_argument, NULL, OPT_TLS},
        {"json", no_argument, NULL, OPT_JSON},
        {"register", required_argument, NULL, OPT_REGISTER},
        {"rounds", required_argument, NULL, OPT_ROUNDS},
        {"split", required_argument, NULL, OPT_SPLIT},
        {"brokers", required_argument, NULL, OPT_BROKERS},
        {"period", required_argument, NULL, OPT_PERIOD},
        {"compressed", no_argument, NULL, OPT_COMPRESSED},
        {"probe", no_argument, NULL, OPT_PROBE},
        {"probe-every-us", required_argument, NULL, OPT_PROBE_EVERY},
        {"broker-prefix", required_argument, NULL, OPT_BROKER_PREFIX},
        {"distinct", no_argument, NULL, OPT_DISTINCT},
        {"expire-ms", required_argument, NULL, OPT_EXPIRE_MS},
        {"hold", required_argument, NULL, OPT_HOLD},
        {"hold-request", no_argument, NULL, OPT_HOLD_REQUEST},
        {"mode", required_argument, NULL, OPT_MODE},
        {"size", required_argument, NULL, OPT_SIZE},
        {"topic", required_argument, NULL, OPT_TOPIC},
        {"group", required_argument, NULL, OPT_GROUP},
        {"queues", required_argument, NULL, OPT_QUEUES},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"create-topics", required_argument, NULL, OPT_CREATE_TOPICS},
        {"create-via-admin", no_argument, NULL, OPT_CREATE_VIA_ADMIN},
        {"report-every", required_argument, NULL, OPT_REPORT_EVERY},
        {"per-queue", no_argument, NULL, OPT_PER_QUEUE},
        {"delete-topics", required_argument, NULL, OPT_DELETE_TOPICS},
        {"namesrv", required_argument, NULL, OPT_NAMESRV},
        {"grpc", required_argument, NULL, OPT_GRPC},
        {"ackc", required_argument, NULL, OPT_ACKC},
        {"grpc-conns", required_argument, NULL, OPT_GRPC_CONNS},
        {"long-poll-ms", required_argument, NULL, OPT_LONG_POLL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "a:c:d:s:w:t:e:n:h", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'a': target = optarg; break;
        case OPT_GRPC:
            target = optarg;
            o->grpc = 1;
            break;
        case 'n': bad = parse_uint(optarg, 1, 100000000, &o->messages); break;
        case OPT_ACKC: bad = parse_uint(optarg, 1, 1024, &o->ackc); break;
        case OPT_GRPC_CONNS: bad = parse_uint(optarg, 1, 1024, &o->grpc_conns); break;
        case OPT_LONG_POLL: bad = parse_uint(optarg, 1, 600000, &o->long_poll_ms); break;
        case 'c': bad = parse_uint(optarg, 1, 10000, &o->connections); break;
        case 'd': bad = parse_uint(optarg, 1, 65536, &o->depth); break;
        case 't': bad = parse_uint(optarg, 1, 256, &o->threads); break;
        case 's': bad = parse_seconds(optarg, &o->seconds) || o->seconds <= 0.0; break;
        case 'w':
            bad = parse_seconds(optarg, &o->warmup_seconds);
            warmup_given = 1;
            break;
        case OPT_MODE:
            if (strcmp(optarg, "raw") == 0)
                o->mode = RMQ_BENCH_MODE_RAW;
            else if (strcmp(optarg, "send") == 0)
                o->mode = RMQ_BENCH_MODE_SEND;
            else if (strcmp(optarg, "pull") == 0)
                o->mode = RMQ_BENCH_MODE_PULL;
            else
                bad = 1;
            break;
        case OPT_SIZE: {
            unsigned v = 0;
            bad = parse_uint(optarg, 0, 64u << 20, &v);
            o->msg_size = v;
            break;
        }
        case OPT_TOPIC: snprintf(o->topic, sizeof o->topic, "%s", optarg); break;
        case OPT_GROUP: snprintf(o->group, sizeof o->group, "%s", optarg); break;
        case OPT_QUEUES: bad = parse_uint(optarg, 1, 1024, &o->queues); break;
        case OPT_BATCH: bad = parse_uint(optarg, 1, 1024, &o->batch); break;
        case 'e':
            if (add_ext(o, optarg) != 0)
                return -1;
            break;
        case OPT_CODE: {
            char *end;
            long v = strtol(optarg, &end, 10);
            bad = *optarg == '\0' || *end != '\0' || v < INT32_MIN || v > INT32_MAX;
            o->code = (int32_t)v;
            code_given = 1;
            break;
        }
        case OPT_BODY:
            if (load_body(o, optarg) != 0)
                return -1;
            break;
        case OPT_ROCKETMQ: o->rocketmq = 1; break;
        case OPT_ONEWAY: o->oneway = 1; break;
        case OPT_TLS: o->tls = 1; break;
        case OPT_JSON: o->json = 1; break;
        case OPT_REGISTER: bad = parse_uint(optarg, 1, 1000000, &o->register_topics); break;
        case OPT_ROUNDS: bad = parse_uint(optarg, 1, 1000000, &o->rounds); break;
        case OPT_SPLIT: bad = parse_uint(optarg, 1, 1000000, &o->split); break;
        case OPT_BROKERS: bad = parse_uint(optarg, 1, 100000, &o->brokers); break;
        case OPT_PERIOD: bad = parse_seconds(optarg, &o->period_seconds); break;
        case OPT_COMPRESSED: o->compressed = 1; break;
        case OPT_PROBE: o->probe = 1; break;
        case OPT_PROBE_EVERY:
            bad = parse_uint(optarg, 1, 10000000, &o->probe_every_us);
            o->probe = 1;
            break;
        case OPT_BROKER_PREFIX: o->broker_prefix = optarg; break;
        case OPT_DISTINCT: o->distinct_topics = 1; break;
        case OPT_EXPIRE_MS: bad = parse_uint(optarg, 1, 86400000, &o->expire_ms); break;
        case OPT_HOLD: bad = parse_uint(optarg, 1, 10000000, &o->hold); break;
        case OPT_HOLD_REQUEST: o->hold_request = 1; break;
        case OPT_CREATE_TOPICS:
            bad = parse_uint(optarg, 1, 10000000, &o->create_topics);
            if (!bad && o->mode == RMQ_BENCH_MODE_RAW)
                o->mode = RMQ_BENCH_MODE_SEND; /* the body of --size */
            break;
        case OPT_CREATE_VIA_ADMIN: o->create_via_admin = 1; break;
        case OPT_PER_QUEUE: o->per_queue = 1; break;
        case OPT_DELETE_TOPICS: bad = parse_uint(optarg, 1, 10000000, &o->delete_topics); break;
        case OPT_NAMESRV: bad = resolve_namesrv(o, optarg); break;
        case OPT_REPORT_EVERY: bad = parse_uint(optarg, 1, 10000000, &o->report_every); break;
        case 'h': fputs(usage_text, stdout); return 1;
        default: fputs(usage_text, stderr); return -1;
        }
        if (bad) {
            fprintf(stderr, "rmqbench: bad value '%s' for -%c\n", optarg, c < 256 ? c : '-');
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "rmqbench: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->mode != RMQ_BENCH_MODE_RAW && mode_defaults(o, code_given, warmup_given) != 0)
        return -1;
    if (o->ext_count == 0 && add_ext(o, "topic=TopicTest") != 0)
        return -1;
    if (o->threads > o->connections)
        o->threads = o->connections;
    return resolve_target(o, target);
}

void rmq_bench_options_free(rmq_bench_options *o)
{
    for (size_t i = 0; i < o->ext_count; i++)
        free(o->ext_storage[i]);
    o->ext_count = 0;
    free(o->body);
    o->body = NULL;
}
