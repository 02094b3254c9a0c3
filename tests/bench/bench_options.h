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
    const char *broker_prefix;
    unsigned hold;    /* hold mode (hold_mode.c): connections to open and keep */
    int hold_request; /* ... each sending one request first */
    int tls; /* --tls: every connection speaks TLS (server not verified) */
} rmq_bench_options;

/* Parse argv. Returns 0 to run, 1 when help was printed, -1 on a usage error
 * (message already on stderr). Free with rmq_bench_options_free either way. */
int rmq_bench_options_parse(rmq_bench_options *o, int argc, char **argv);
void rmq_bench_options_free(rmq_bench_options *o);

#endif
