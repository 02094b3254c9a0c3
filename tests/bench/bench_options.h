/* bench_options.h — rmqbench's command line, parsed into one struct. */
#ifndef RMQBENCH_BENCH_OPTIONS_H
#define RMQBENCH_BENCH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define RMQ_BENCH_MAX_EXT 64

typedef struct rmq_bench_options {
    char target[256];             /* as given, for the report */
    struct sockaddr_storage addr; /* resolved target */
    unsigned connections;
    unsigned depth;
    unsigned threads;
    double seconds;
    double warmup_seconds;
    int32_t code;
    const char *ext_keys[RMQ_BENCH_MAX_EXT];
    const char *ext_values[RMQ_BENCH_MAX_EXT];
    size_t ext_count;
    char *ext_storage[RMQ_BENCH_MAX_EXT]; /* owned copies behind keys/values */
    uint8_t *body;                        /* owned, from --body FILE */
    size_t body_len;
    int rocketmq;
    int oneway;
    int json;
    /* register mode (register_mode.c): REGISTER_BROKER rounds instead of a
     * pipelined load */
    unsigned register_topics; /* 0 = not this mode */
    unsigned rounds;          /* registrations of the same topics */
    unsigned split;           /* topics per frame (0 = all in one frame) */
    unsigned brokers;         /* brokers registering in turn (big-cluster runs) */
    double period_seconds;    /* >0: brokers re-register every period (storm) */
    int compressed;           /* 4.9.8's compressed body form */
    int probe;                /* a second connection looks routes up meanwhile */
    int distinct_topics;      /* each broker its own topic names */
    unsigned expire_ms;       /* heartbeatTimeoutMillis; storm: wait for expiry */
    unsigned probe_every_us;  /* the probe starts a lookup at most this often (0: flat out) */
    const char *broker_prefix;
    /* create-topics mode (create_topics_mode.c) */
    unsigned create_topics; /* 0 = not this mode */
    unsigned report_every;  /* creations per reported block (1000) */
    int create_via_admin;   /* UPDATE_AND_CREATE_TOPIC instead of a send */
    int per_queue;          /* a message to every queue of each new topic */
    /* delete-topics mode (delete_topics_mode.c) */
    unsigned delete_topics;               /* 0 = not this mode */
    char namesrv_target[256];             /* --namesrv as given ("" = none) */
    struct sockaddr_storage namesrv_addr; /* resolved --namesrv */
    unsigned hold;    /* hold mode (hold_mode.c): connections to open and keep */
    int hold_request; /* ... each sending one request first */
    int tls;          /* --tls: every connection speaks TLS (server not verified) */
    /* --mode: raw (the request as given), send (SEND_MESSAGE_V2 of --size
     * bytes to --topic, the broker picks the queue), pull (PULL_MESSAGE of
     * --batch messages; connection i drains queue i % --queues from offset 0
     * until the queue is empty: the window ends then). */
    int mode;
    size_t msg_size;
    char topic[128];
    char group[128];
    unsigned queues;
    unsigned batch;
    /* gRPC mode (grpc_mode.c): --grpc ADDR, a 5.x client's send then
     * receive+ack of -n messages, -c in flight / consumers */
    int grpc;
    unsigned messages;     /* -n */
    unsigned ackc;         /* Acks in flight per consumer */
    unsigned grpc_conns;   /* the producer's connections */
    unsigned long_poll_ms; /* ReceiveMessage long_polling_timeout */
} rmq_bench_options;

enum { RMQ_BENCH_MODE_RAW = 0, RMQ_BENCH_MODE_SEND = 1, RMQ_BENCH_MODE_PULL = 2 };

/* Placeholders the pull template carries, patched per request (decimal with
 * leading zeros keeps the frame length fixed; Java parses leading zeros). */
#define RMQ_BENCH_QUEUE_MARKER "9999999991"
#define RMQ_BENCH_OFFSET_MARKER "9999999999999999992"

/* Parse argv. Returns 0 to run, 1 when help was printed, -1 on a usage error
 * (message already on stderr). Free with rmq_bench_options_free either way. */
int rmq_bench_options_parse(rmq_bench_options *o, int argc, char **argv);
void rmq_bench_options_free(rmq_bench_options *o);

#endif
