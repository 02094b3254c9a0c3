/* test_robustness_request_fuzz.c — one daemon running namesrv,
 * broker-client-mgr and filter takes a few thousand mutated requests
 * (every registered code, catalog and recorded Java vectors, JSON and
 * ROCKETMQ, some oneway) from a fixed-seed PRNG: every non-oneway request
 * is answered, the daemon stays up, what was accepted before is still there
 * and SIGTERM still ends it cleanly. Prints a summary to stderr. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bcm_test_daemon.h"
#include "fuzz_counts.h"
#include "fuzz_rng.h"
#include "pipelined_client.h"
#include "request_catalog.h"
#include "request_mutator.h"
#include "rmq_test_support.h"

/* Fixed so every run sends the same stream; RMQ_FUZZ_SEED / RMQ_FUZZ_REQUESTS
 * in the environment override them for exploring by hand. */
#define FUZZ_SEED 0x5eed20261129ull
#define FUZZ_REQUESTS 3000
#define FUZZ_CONNS_PER_SERVER 3
#define FUZZ_WINDOW 16
/* a liveness bound, not a speed check: an answer slower than this means
 * the request was dropped */
#define ANSWER_DEADLINE_MS 20000
#define WAIT_MS 20000

#define KEEP_NS "RobustKeep"
#define KEEP_TOPIC "RobustTopic"
#define KEEP_GROUP "RobustGroup"
#define KEEP_BROKER "robust-broker"
#define MAX_VECTORS 128

typedef struct vector_frame {
    char name[96];
    uint8_t *bytes;
    size_t len;
} vector_frame;

typedef struct fixture {
    rmq_test_daemon d;
    int ns_port, broker_port;
    int opaque;
    bool died;
    uint64_t seed;
    int requests;
    vector_frame vectors[MAX_VECTORS];
    size_t nvectors;
} fixture;

/* ---- daemon and plain calls ---------------------------------------------- */

static bool daemon_alive(fixture *f)
{
    if (f->died)
        return false;
    int st = 0;
    pid_t r = waitpid(f->d.pid, &st, WNOHANG);
    if (r == 0)
        return true;
    f->died = true;
    fprintf(stderr, "robustness: daemon %d is gone: %s %d\n", (int)f->d.pid,
            r > 0 && WIFSIGNALED(st) ? "signal" : "status",
            r > 0 && WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    if (r > 0)
        f->d.pid = -1; /* reaped: rmq_td_stop must not wait on it */
    return false;
}

static rmq_cmd *call(fixture *f, int port, int code, const char *const *kv, const char *body)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return NULL;
    rmq_cmd *req = rmq_tc_request(code, ++f->opaque, kv);
    if (body)
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *resp = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    close(fd);
    return resp;
}

/* SUCCESS for KEEP_TOPIC's route naming KEEP_BROKER, polled: the broker
 * registers itself asynchronously after start. */
static bool route_names_keep_broker(fixture *f, int timeout_ms)
{
    const char *kv[] = {"topic", KEEP_TOPIC, NULL};
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    do {
        rmq_cmd *r = call(f, f->ns_port, 105, kv, NULL);
        bool ok = r && r->code == 0 && bcm_body_contains(r, KEEP_BROKER);
        rmq_cmd_free(r);
        if (ok)
            return true;
        rmq_test_pause_ms(100);
    } while (rmq_test_now_ms() < deadline);
    return false;
}

static void load_vectors(fixture *f)
{
    DIR *dir = opendir(RMQ_TEST_VECTORS_DIR);
    if (!dir)
        return;
    struct dirent *de;
    while ((de = readdir(dir)) && f->nvectors < MAX_VECTORS) {
        size_t n = strlen(de->d_name);
        bool req = n > 8 && strcmp(de->d_name + n - 8, ".req.bin") == 0;
        bool oneway = n > 11 && strcmp(de->d_name + n - 11, ".oneway.bin") == 0;
        if (!req && !oneway)
            continue;
        vector_frame *v = &f->vectors[f->nvectors];
        v->bytes = rmq_tc_load_vector(de->d_name, &v->len);
        if (!v->bytes)
            continue;
        snprintf(v->name, sizeof v->name, "%s", de->d_name);
        f->nvectors++;
    }
    closedir(dir);
    /* readdir order is the file system's: sort for a deterministic run */
    for (size_t i = 1; i < f->nvectors; i++)
        for (size_t j = i; j > 0 && strcmp(f->vectors[j - 1].name, f->vectors[j].name) > 0; j--) {
            vector_frame t = f->vectors[j];
            f->vectors[j] = f->vectors[j - 1];
            f->vectors[j - 1] = t;
        }
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    *state = f;
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char settings[1024];
    snprintf(settings, sizeof settings,
             "brokerName = \"" KEEP_BROKER "\"; brokerClusterName = \"RobustCluster\"; "
             "brokerId = 0;\nnamesrvAddr = \"127.0.0.1:%d\"; registerNameServerPeriod = 10000;\n"
             "topics = \"" KEEP_TOPIC ":4\";\n"
             /* held pulls and relays to silent clients end quickly, so a
              * late answer means a lost one */
             "pullSuspendMaxMillis = 200; callClientTimeoutMillis = 500;\n"
             /* a fuzzed heartbeat registers the connection as a client; under
              * ASan on a loaded machine the run outlasts the default 120 s
              * expiry, which would close the fuzz connections mid-run (the
              * expiry has its own test in broker_client_mgr_integration) */
             "channelExpiredTimeout = 86400000;\n",
             ns);
    if (ns <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "filter", "filter", "broker", NULL) != 0 ||
        bcm_start_namesrv_and_broker(&f->d, ns, "info", settings) != 0)
        return -1;
    f->ns_port = ns;
    f->broker_port = rmq_td_port(&f->d, "broker");
    f->opaque = 1;
    const char *seed = getenv("RMQ_FUZZ_SEED"), *count = getenv("RMQ_FUZZ_REQUESTS");
    f->seed = seed ? strtoull(seed, NULL, 0) : FUZZ_SEED;
    f->requests = count ? atoi(count) : FUZZ_REQUESTS;
    load_vectors(f);
    return f->broker_port > 0 ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    int status = f->d.pid > 0 ? rmq_td_stop_reporting(&f->d) : 0;
    rmq_td_cleanup(&f->d);
    for (size_t i = 0; i < f->nvectors; i++)
        free(f->vectors[i].bytes);
    free(f);
    return status == 0 ? 0 : -1;
}

/* ---- accepted state -------------------------------------------------------- */

static void assert_accepted_state(fixture *f)
{
    assert_true(route_names_keep_broker(f, WAIT_MS));

    const char *kv_get[] = {"namespace", KEEP_NS, "key", "k", NULL};
    rmq_cmd *r = call(f, f->ns_port, 101, kv_get, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "value") ? rmq_cmd_ext_get(r, "value") : "", "kept");
    rmq_cmd_free(r);

    const char *off_get[] = {"consumerGroup", KEEP_GROUP, "topic", KEEP_TOPIC,
                             "queueId",       "0",        NULL};
    r = call(f, f->broker_port, 14, off_get, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "offset") ? rmq_cmd_ext_get(r, "offset") : "", "42");
    rmq_cmd_free(r);
}

static void test_state_accepted_before_the_fuzz_is_in_place(void **state)
{
    fixture *f = *state;
    const char *kv_put[] = {"namespace", KEEP_NS, "key", "k", "value", "kept", NULL};
    rmq_cmd *r = call(f, f->ns_port, 100, kv_put, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *off_put[] = {"consumerGroup", KEEP_GROUP, "topic", KEEP_TOPIC, "queueId", "0",
                             "commitOffset",  "42",       NULL};
    r = call(f, f->broker_port, 15, off_put, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_accepted_state(f);
}

/* ---- the fuzz run ----------------------------------------------------------- */

typedef struct fuzz_run {
    fuzz_pipeline pipe;
    int ns_conn[FUZZ_CONNS_PER_SERVER], broker_conn[FUZZ_CONNS_PER_SERVER];
    fuzz_counts sent_by_code, sources, mutations;
    unsigned long oneway, unencodable;
} fuzz_run;

/* Codes no plugin registers: the host's own "not supported" answer. */
static const int UNREGISTERED_CODES[] = {0, 998, 999, 30000, -5};

static rmq_cmd *next_request(fixture *f, fuzz_rng *r, char *label, size_t len,
                             const fuzz_code_entry **entry)
{
    *entry = NULL;
    if (f->nvectors > 0 && fuzz_rng_chance(r, 20)) {
        const vector_frame *v = &f->vectors[fuzz_rng_below(r, f->nvectors)];
        char err[128];
        rmq_cmd *c = rmq_cmd_decode(v->bytes, v->len, err, sizeof err);
        if (c) {
            *entry = fuzz_catalog_find(c->code);
            snprintf(label, len, "vector:%s", v->name);
            return c;
        }
    }
    if (fuzz_rng_chance(r, 3)) {
        rmq_cmd *c = rmq_cmd_new();
        if (c) {
            c->code = UNREGISTERED_CODES[fuzz_rng_below(r, sizeof UNREGISTERED_CODES /
                                                               sizeof UNREGISTERED_CODES[0])];
            snprintf(label, len, "unregistered:%d", (int)c->code);
        }
        return c;
    }
    *entry = fuzz_catalog_at(fuzz_rng_below(r, fuzz_catalog_count()));
    snprintf(label, len, "catalog:%s", (*entry)->name);
    return fuzz_catalog_build(*entry);
}

/* Count each mutation word of a label once, without its parenthesised
 * detail ("ext-empty(topic=)" counts as ext-empty); the first word is the
 * source. */
static void count_mutations(fuzz_counts *c, const char *label)
{
    const char *p = strchr(label, ' ');
    char word[48];
    size_t n = 0;
    for (; p && *p; p++) {
        if (*p == '(') {
            const char *close = strchr(p, ')');
            if (!close)
                break;
            p = close;
            continue;
        }
        if (*p == ' ') {
            if (n > 0) {
                word[n] = '\0';
                fuzz_counts_add(c, word);
            }
            n = 0;
        } else if (n + 1 < sizeof word) {
            word[n++] = *p;
        }
    }
    if (n > 0) {
        word[n] = '\0';
        fuzz_counts_add(c, word);
    }
}

static void print_summary(const fixture *f, const fuzz_run *run, FILE *out)
{
    fprintf(out, "robustness_request_fuzz summary (seed 0x%llx, %d requests):\n",
            (unsigned long long)f->seed, f->requests);
    fuzz_counts_print(&run->sent_by_code, "  requests sent per code", out);
    fuzz_counts_print(&run->sources, "  sources", out);
    fuzz_counts_print(&run->mutations, "  mutations", out);
    fuzz_counts_print(&run->pipe.answers_by_code, "  answers per response code", out);
    fprintf(out,
            "  oneway %lu, unencodable %lu, answered %lu, unanswered %lu, stray answers %lu, "
            "server-initiated requests %lu\n",
            run->oneway, run->unencodable, run->pipe.answered, run->pipe.unanswered,
            run->pipe.stray_answers, run->pipe.server_requests);
    fprintf(out, "  error answers without a remark: %lu\n", run->pipe.silent_errors);
    for (size_t i = 0; i < run->pipe.silent_errors_kept; i++)
        fprintf(out, "  NO REMARK %s\n", run->pipe.silent_error_examples[i]);
    if (run->pipe.unanswered > 0) {
        fuzz_counts_print(&run->pipe.unanswered_by_code, "  UNANSWERED per code", out);
        for (size_t i = 0; i < run->pipe.failures_kept; i++)
            fprintf(out, "  UNANSWERED %s\n", run->pipe.failures[i]);
    }
}

static void test_every_fuzzed_request_is_answered_and_the_daemon_survives(void **state)
{
    fixture *f = *state;
    fuzz_run *run = calloc(1, sizeof *run);
    assert_non_null(run);
    fuzz_pipeline_init(&run->pipe, FUZZ_WINDOW, ANSWER_DEADLINE_MS);
    for (int i = 0; i < FUZZ_CONNS_PER_SERVER; i++) {
        run->ns_conn[i] = fuzz_pipeline_connect(&run->pipe, f->ns_port);
        run->broker_conn[i] = fuzz_pipeline_connect(&run->pipe, f->broker_port);
        assert_true(run->ns_conn[i] >= 0 && run->broker_conn[i] >= 0);
    }
    fuzz_rng r;
    fuzz_rng_seed(&r, f->seed);
    for (int i = 0; i < f->requests && !f->died; i++) {
        char label[224];
        const fuzz_code_entry *e;
        rmq_cmd *cmd = next_request(f, &r, label, sizeof label, &e);
        assert_non_null(cmd);
        char source[64];
        snprintf(source, sizeof source, "%.*s", (int)strcspn(label, ":"), label);
        fuzz_counts_add(&run->sources, source);
        fuzz_mutate_request(&r, cmd, e, label, sizeof label);
        count_mutations(&run->mutations, label);
        cmd->opaque = ++f->opaque;
        fuzz_counts_add_int(&run->sent_by_code, cmd->code);
        if (cmd->flag & RMQ_FLAG_ONEWAY)
            run->oneway++;
        int slot = i % FUZZ_CONNS_PER_SERVER;
        int conn = fuzz_catalog_server_of(cmd->code) == FUZZ_SERVER_NAMESRV
                       ? run->ns_conn[slot]
                       : run->broker_conn[slot];
        if (rmq_cmd_encoded_size(cmd) == 0)
            run->unencodable++;
        else
            fuzz_pipeline_submit(&run->pipe, (size_t)conn, cmd, label);
        rmq_cmd_free(cmd);
        if (i % 50 == 0)
            daemon_alive(f);
    }
    bool drained =
        fuzz_pipeline_drain(&run->pipe, rmq_test_now_ms() + (uint64_t)ANSWER_DEADLINE_MS + 5000);
    bool alive = daemon_alive(f);
    print_summary(f, run, stderr);
    unsigned long unanswered = run->pipe.unanswered;
    fuzz_pipeline_close(&run->pipe);
    fuzz_counts_free(&run->sent_by_code);
    fuzz_counts_free(&run->sources);
    fuzz_counts_free(&run->mutations);
    free(run);
    assert_true(alive);
    assert_true(drained);
    assert_int_equal(unanswered, 0);
}

static void test_state_accepted_before_the_fuzz_survives_it(void **state)
{
    fixture *f = *state;
    assert_false(f->died);
    assert_accepted_state(f);
    char hb[2048];
    bcm_consumer_heartbeat(hb, sizeof hb, "robust-client@1", KEEP_GROUP, KEEP_TOPIC, true);
    rmq_cmd *r = call(f, f->broker_port, 34, NULL, hb);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

static void test_daemon_exits_cleanly_after_the_fuzz(void **state)
{
    fixture *f = *state;
    assert_false(f->died);
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_accepted_before_the_fuzz_is_in_place),
        cmocka_unit_test(test_every_fuzzed_request_is_answered_and_the_daemon_survives),
        cmocka_unit_test(test_state_accepted_before_the_fuzz_survives_it),
        cmocka_unit_test(test_daemon_exits_cleanly_after_the_fuzz),
    };
    return cmocka_run_group_tests_name("robustness_request_fuzz", tests, setup, teardown);
}
