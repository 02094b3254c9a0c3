/* testkit_internal.h — the test kit's own state around one in-process
 * rmq_host: the plugins to load, test doubles, client channels, the virtual
 * timer schedule and captured outgoing calls. Internal to librmqhost-testkit. */
#ifndef RMQHOST_TESTKIT_INTERNAL_H
#define RMQHOST_TESTKIT_INTERNAL_H

#include <pthread.h>

#include "frame_reader.h"
#include "host.h"
#include "plugin_reload.h"
#include "rmqhost/testkit.h"

#define TK_SERVER "kit"
#define TK_DOUBLES_NAME "testkit"

typedef struct tk_plugin {
    char name[CONF_NAME_MAX];
    char path[CONF_PATH_MAX]; /* "linked:NAME" for linked descriptors */
    const rmq_plugin_descriptor *desc;
    char **settings; /* key, value, ..., NULL */
} tk_plugin;

typedef struct tk_service {
    char name[128];
    uint32_t version;
    const void *table;
    void *table_ud;
} tk_service;

typedef struct tk_sub {
    char event[128];
    rmq_event_fn fn;
    void *ud;
} tk_sub;

typedef struct tk_frame {
    rmq_cmd *cmd;
    struct tk_frame *next;
} tk_frame;

typedef struct tk_channel {
    int fd; /* -1 once closed */
    int local_port;
    rmq_channel_id id;
    rmq_frame_reader rd;
    tk_frame *stash; /* answers read while waiting for another opaque */
} tk_channel;

typedef struct tk_timer {
    timer_rec *t;
    uint64_t due;
    uint64_t seq; /* ties fire in activation order */
} tk_timer;

struct rmq_tk_outgoing {
    rmq_tk_out_kind kind;
    rmq_channel_id ch;
    char addr[128];
    bool to_addr;
    rmq_cmd *req;
    uint32_t timeout_ms;
    uint64_t deadline; /* virtual ms */
    rmq_response_fn cb;
    void *ud;
    plugin_inst *plugin;
    bool done;   /* answered, failed or timed out (oneway: at once) */
    bool handed; /* returned by rmq_tk_next_outgoing */
    /* invoke_sync: the caller waits on the kit's cv for these */
    int err;
    rmq_cmd *resp;
    struct rmq_tk_outgoing *next;
};

struct rmq_testkit {
    rmq_host host; /* first: the host's callbacks find the kit from it */
    char dir[256];
    char state_dir[300];
    char log_path[320];
    int io_threads;
    bool started;
    bool registered_rcu; /* this kit registered the test's thread with liburcu */

    tk_plugin *plugins;
    size_t nplugins;
    tk_service *services;
    size_t nservices;
    tk_sub *subs;
    size_t nsubs;
    plugin_inst *doubles; /* the generation holding the doubles */

    pthread_mutex_t mu; /* channels' ids, timers, calls */
    pthread_cond_t cv;
    tk_channel *channels; /* handle = index + 1 */
    size_t nchannels;
    int port;
    int32_t next_opaque;

    tk_timer *timers;
    size_t ntimers, cap_timers;
    uint64_t timer_seq;

    rmq_tk_outgoing *calls_head, *calls_tail;
    size_t ncalls;
    rmq_tk_responder_fn responder;
    void *responder_ud;

    plugin_retired retired;
};

static inline rmq_testkit *tk_of_host(rmq_host *h)
{
    return (rmq_testkit *)(void *)h;
}

/* testkit_clock.c */
void tk_clock_install(rmq_testkit *kit);
void tk_timer_takeover(rmq_host *h, plugin_inst *p, bool activate);
int tk_cancel_timer(rmq_plugin_ctx *ctx, rmq_timer_id id);
void tk_clock_release(rmq_testkit *kit);

/* testkit_outgoing.c */
void tk_outgoing_install(rmq_host *h);
void tk_calls_expire(rmq_testkit *kit, uint64_t now);
void tk_calls_fail_pending(rmq_testkit *kit);
void tk_calls_free(rmq_testkit *kit);

/* testkit_doubles.c */
extern const rmq_plugin_descriptor tk_doubles_descriptor;

/* testkit_channels.c */
void tk_channels_close_all(rmq_testkit *kit);
void tk_channel_learned(rmq_testkit *kit, rmq_channel_id id, const char *peer);

#endif
