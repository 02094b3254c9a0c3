/* java_config_keys.c — the BrokerConfig and NettyClientConfig keys of Java
 * 4.9.8's getBrokerConfig answer that broker-client-mgr has no setting of
 * that name for, each with the value this broker behaves as, so that an
 * operator's script reading them sees the truth (the store adds its part of
 * MessageStoreConfig and BrokerConfig through `store.queues`' config_text).
 * A Java key whose meaning has no counterpart here, and that any value
 * would misdescribe, is left out: docs/compat.md lists them. */
#include "broker_context.h"

#include <rmqhost/services/filter_service.h>

#include <stdio.h>
#include <string.h>

/* What the keys need that other plugins or the host know: read before the
 * tables lock is taken (a service may wait for a reload). */
void bcm_java_facts_read(bcm_ctx *c, bcm_java_facts *f)
{
    const rmq_host_api *a = c->api;
    /* brokerIP2: Java's HA address host, here that of haServerAddr
     * ("host:port") */
    pthread_mutex_lock(&c->reg_lock);
    bool have_ha = c->ha_addr[0] != 0;
    snprintf(f->broker_ip2, sizeof f->broker_ip2, "%s", have_ha ? c->ha_addr : c->s.advertised_ip);
    pthread_mutex_unlock(&c->reg_lock);
    char *colon = have_ha ? strrchr(f->broker_ip2, ':') : NULL;
    if (colon)
        *colon = 0;
    /* enablePropertyFilter: whether SQL92 subscriptions are accepted now,
     * as CHECK_CLIENT_CONFIG decides (the filter plugin's setting; none
     * without it) */
    f->property_filter = false;
    const void *table = NULL;
    void *tud = NULL;
    rmq_service_ref ref = 0;
    if (a->service_acquire(c->pctx, RMQ_FILTER_EXPR_SERVICE, RMQ_FILTER_EXPR_VERSION, &table, &tud,
                           &ref) == 0) {
        const rmq_filter_expr_service *svc = table;
        f->property_filter = svc->check(tud, "SQL92", "a = 1", NULL, 0) == RMQ_FILTER_CHECK_SUCCESS;
        a->service_release(c->pctx, ref);
    }
    f->use_tls_known = a->abi_minor >= 9 && a->outgoing_tls;
    f->use_tls = f->use_tls_known && a->outgoing_tls(c->pctx);
}

void bcm_java_config_keys(json_t *all, const bcm_java_facts *f)
{
    const struct {
        const char *k, *v;
    } keys[] = {
        {"brokerIP2", f->broker_ip2},
        {"messageStorePlugIn", ""}, /* no Java store plug-ins */
        {"fetchNamesrvAddrByAddressServer", "false"},
        /* the `client` and `consumer` executors' queues */
        {"clientManagerThreadPoolQueueCapacity", "1000000"},
        {"consumerManagerThreadPoolQueueCapacity", "1000000"},
        {"highSpeedMode", "false"},
        /* no commercial statistics (docs/compat.md, statsAll); the counts
         * only matter with them */
        {"commercialEnable", "false"},
        {"commercialTimerCount", "1"},
        {"commercialTransCount", "1"},
        {"commercialBigCount", "1"},
        {"commercialBaseCount", "1"},
        /* a slow consumer group is never disabled; the threshold only
         * matters with it */
        {"disableConsumeIfConsumerReadSlowly", "false"},
        {"consumerFallbehindThreshold", "17179869184"},
        {"enableCalcFilterBitMap", "false"}, /* no bit maps in consume queues */
        {"enablePropertyFilter", f->property_filter ? "true" : "false"},
        /* every periodic registration carries the whole table, unasked */
        {"forceRegister", "true"},
        {"enableDetailStat", "true"},       /* per-topic and per-group statistics */
        {"autoDeleteUnusedStats", "false"}, /* statistics items are never removed */
        {"isolateLogEnable", "false"},
        {"useTLS", f->use_tls ? "true" : "false"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(keys[i].k, "useTLS") == 0 && !f->use_tls_known)
            continue; /* a host older than SDK 1.9 does not tell */
        if (!json_object_get(all, keys[i].k))
            json_object_set_new(all, keys[i].k, json_string(keys[i].v));
    }
}
