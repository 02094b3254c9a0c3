/* rmq_test_support.h — what integration tests use to run a real rmqhostd and
 * talk to it with raw frames. Owns temp directories, the daemon process and
 * blocking test sockets; never asserts (tests decide what is a failure). */
#ifndef RMQHOST_TEST_SUPPORT_H
#define RMQHOST_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "remoting_command.h"
#include "rmq_test_bodies.h"

/* Paths baked in by CMake: RMQ_TEST_DAEMON (bin/rmqhostd), RMQ_TEST_CTL
 * (bin/rmqhostctl), RMQ_TEST_PLUGIN_DIR (build/plugins, where *.so land),
 * RMQ_TEST_VECTORS_DIR (tests/vectors). */

typedef struct rmq_test_daemon {
    pid_t pid;
    char dir[256];       /* temp root, removed by rmq_td_cleanup */
    char conf_dir[300];  /* dir/conf.d */
    char state_dir[300]; /* dir/state */
    char admin_socket[300];
    char log_path[300]; /* daemon stderr goes here */
    /* the last rmq_td_ctl_output: owned here so a failed assertion on it
     * leaks nothing (a cmocka failure jumps past any free) */
    char ctl_out[1 << 16];
} rmq_test_daemon;

/* Create a temp root with conf.d/ and state/. Writes host.conf declaring the
 * servers given as "name" strings (NULL-terminated), each listening on
 * 127.0.0.1:0, with state_dir, admin_socket, io_threads = 2, log_level debug.
 * A string "name@statements" puts the statements inside that server's group
 * (e.g. "proxy@protocol = \"grpc\";").
 * extra_host_conf (may be NULL) is appended inside host.conf verbatim.
 * Returns 0 or -1. */
int rmq_td_init(rmq_test_daemon *d, const char *const *servers, const char *extra_host_conf);

/* Write conf.d/<file_name> with `content` (a whole plugin file). */
int rmq_td_write_conf(rmq_test_daemon *d, const char *file_name, const char *content);

/* Convenience: a plugin file for plugin `name` (<RMQ_TEST_PLUGIN_DIR>/<so_name>.so)
 * bound to `server`, enabled, with `settings_body` placed inside
 * `settings = { ... };` (may be NULL). */
int rmq_td_add_plugin(rmq_test_daemon *d, const char *name, const char *so_name, const char *server,
                      const char *settings_body);

/* Start rmqhostd -c conf_dir [extra args...] (NULL-terminated, may be NULL),
 * wait until state_dir/listen.addrs exists (up to 60 s). 0 or -1 (the
 * daemon log is then printed to stderr). */
int rmq_td_start(rmq_test_daemon *d, const char *const *extra_args);

/* Port the daemon bound for `server` (from state_dir/listen.addrs), or -1. */
int rmq_td_port(const rmq_test_daemon *d, const char *server);

/* SIGTERM, wait up to 60 s (then SIGKILL). Returns the exit status
 * (0..255), 128+signal if killed by a signal, or -1. Idempotent. */
int rmq_td_stop(rmq_test_daemon *d);

/* Stop if running, then remove the temp root. */
void rmq_td_cleanup(rmq_test_daemon *d);

/* True if the daemon log contains `needle`. */
bool rmq_td_log_contains(const rmq_test_daemon *d, const char *needle);

/* Run rmqhostctl -s <admin socket> args...; captures stdout into out (NUL-
 * terminated, may be NULL). Returns the exit status or -1. */
int rmq_td_ctl(const rmq_test_daemon *d, char *out, size_t out_len, const char *const *args);

/* rmqhostctl with its arguments listed inline (NULL-terminated, at most 15):
 * returns its stdout (up to 64 KiB) in d->ctl_out, valid until the next call
 * on d, and stores the exit status (or -1) in *status. Nothing to free, so
 * an assertion that fails on the text leaks nothing. */
const char *rmq_td_ctl_output(rmq_test_daemon *d, int *status, const char *first, ...)
    __attribute__((sentinel));

/* rmq_td_stop, and when the exit status is not 0 print it with the last 60
 * lines of the daemon log to stderr (a clean stop is what teardowns check:
 * under ASan it includes no leaks). Returns the status. */
int rmq_td_stop_reporting(rmq_test_daemon *d);

/* True when `name` matches one of the ':'-separated globs in filter (a test
 * binary's argv[1]); every name when filter is NULL. */
bool rmq_test_name_selected(const char *filter, const char *name);

/* ---- clock and ports ---- */
uint64_t rmq_test_now_ms(void); /* CLOCK_MONOTONIC in ms */
void rmq_test_pause_ms(int ms); /* between polls of a deadline loop */
/* A loopback TCP port free at the time of the call (for a server whose port
 * must be known before the daemon starts), or -1. */
int rmq_tc_free_port(void);

/* ---- raw-frame client (blocking sockets) ---- */
int rmq_tc_connect(int port);                /* 127.0.0.1:port, fd or -1 */
int rmq_tc_send(int fd, const rmq_cmd *cmd); /* 0 or -1 */
int rmq_tc_send_raw(int fd, const void *buf, size_t len);
/* Next frame from fd, or NULL on timeout/EOF/garbage. timeout_ms bounds the
 * wait for the frame to begin; a frame that has begun is read to its end
 * (up to 10 s more), so a timeout never drops part of a frame. */
rmq_cmd *rmq_tc_recv(int fd, int timeout_ms);
/* Send req (opaque set by caller) and receive one frame. */
rmq_cmd *rmq_tc_call(int fd, const rmq_cmd *req, int timeout_ms);
/* True when the peer closed the connection within timeout_ms. */
bool rmq_tc_wait_closed(int fd, int timeout_ms);
/* Send req and return the response carrying req's opaque, skipping frames
 * the server sends meanwhile (e.g. NOTIFY_CONSUMER_IDS_CHANGED ahead of a
 * heartbeat's answer). NULL when none arrives within timeout_ms. */
rmq_cmd *rmq_tc_call_response(int fd, const rmq_cmd *req, int timeout_ms);

/* Build a request: code, JSON serialization, version 409, language JAVA,
 * opaque given, ext fields from key,value pairs (NULL-terminated). */
rmq_cmd *rmq_tc_request(int code, int opaque, const char *const *kv);

/* A broker as REGISTER_BROKER names it; ha_addr NULL means
 * "127.0.0.1:10912". */
typedef struct rmq_tc_broker {
    const char *cluster;
    const char *name;
    const char *addr;
    const char *ha_addr;
    long long id;
} rmq_tc_broker;

/* REGISTER_BROKER (103) for `b` carrying `body` (may be NULL), with
 * bodyCrc32 computed over it and compressed = false. NULL when out of memory. */
rmq_cmd *rmq_tc_register_broker_request(int opaque, const rmq_tc_broker *b, const void *body,
                                        size_t len);

/* The recorded frame tests/vectors/NAME decoded, or NULL with the reason
 * in why. */
rmq_cmd *rmq_tc_load_vector_cmd(const char *name, char *why, size_t why_len);
/* True when `got` answers like the recorded `want` in code, flag, opaque,
 * serialization, remark, every ext field and whether a body is present (the
 * body itself is the caller's to compare); else false with the first
 * difference in why. */
bool rmq_tc_same_answer_head(const rmq_cmd *want, const rmq_cmd *got, char *why, size_t why_len);

/* test_certs.c: a self-signed P-256 certificate for 127.0.0.1 and
 * localhost (CN cn) in a new directory made from dir_template by mkdtemp
 * (e.g. "/tmp/rmqcert.XXXXXX", rewritten in place): its paths in cert and
 * key. 0, or -1 (openssl's words in <dir>/openssl.log). */
int rmq_test_self_signed_cert(char *dir_template, const char *cn, char *cert, size_t cert_len,
                              char *key, size_t key_len);
/* rm -rf dir, a test's own temporary directory (nothing when empty). */
void rmq_test_remove_tree(const char *dir);

/* Load a vector file (tests/vectors/NAME) into a malloc'd buffer. */
unsigned char *rmq_tc_load_vector(const char *name, size_t *len);

#endif
