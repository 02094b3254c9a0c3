/* store_features.c — owns the lifecycle of the store's message features
 * (retry/DLQ, delay levels, transactions, replies, broker admin codes): one
 * init that sets the send hooks and registers their processors, one fini. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "broker_stats.h"
#include "pop_service.h"
#include "store_features.h"

int store_features_init(store_plugin *sp)
{
    store_features *f = calloc(1, sizeof *f);
    if (!f)
        return RMQ_ENOMEM;
    f->sp = sp;
    f->hooks.retry_send = features_retry_send;
    f->hooks.special_send = features_special_send;
    f->store_reply = sp->api->setting_bool(sp->ctx, "storeReplyMessageEnable");
    sp->hooks = &f->hooks;
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/config", sp->set.root_dir);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        sp->api->log(sp->ctx, RMQ_LOG_WARN, "cannot create %s: %s", dir, strerror(errno));
    int rc = schedule_service_init(sp, f);
    if (rc == 0)
        rc = timer_service_init(sp, f);
    if (rc == 0)
        rc = recall_processor_register(sp);
    if (rc == 0)
        rc = consumer_send_back_register(sp);
    if (rc == 0)
        rc = transaction_service_init(sp, f);
    if (rc == 0)
        rc = reply_processor_register(sp);
    if (rc == 0)
        rc = broker_admin_processors_register(sp);
    if (rc == 0)
        rc = pop_service_init(sp, f); /* POP, ACK, CHANGE_INVISIBLETIME (5.x) */
    return rc;
}

void store_features_fini(store_plugin *sp)
{
    store_features *f = features_of(sp);
    if (!f)
        return;
    schedule_service_fini(sp, f);
    timer_service_fini(sp, f);
    /* after the schedule and timer services: their deliveries call on_arrival */
    pop_service_fini(sp, f);
    if (f->tx_check_interval_ms)
        pthread_mutex_destroy(&f->tx_mu);
    broker_admin_state_free(f->admin);
    broker_stats_free(f->broker_stats);
    sp->hooks = NULL;
    free(f);
}
