/* proxy_cluster_check.c — cluster mode: a broker's CHECK_TRANSACTION_STATE
 * (39, oneway) arriving on the proxy's outgoing connection to it, where the
 * proxy registered the producer group by HEART_BEAT
 * (proxy_cluster_clients.c). As Java's cluster-mode proxy relays it
 * (ProxyClientRemotingProcessor), one producer of the half message's group
 * (its PGROUP; a 5.x producer group is the topic) — the one whose own
 * connection the broker chose ("ip:port#tag"), while it still publishes
 * to the group, else another — gets a
 * RecoverOrphanedTransactionCommand on its Telemetry stream; the
 * transaction id names the half (commitLogOffset, tranStateTableOffset) and
 * the broker, found by the connection's address, so the client's
 * EndTransaction (SOURCE_SERVER_CHECK) goes back to that broker. Runs on the
 * connection's I/O thread: it only packs and queues the push. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_cluster.h"

#define CHECK_TRANSACTION_STATE 39
#define NAME_SEP '\001'
#define PROP_SEP '\002'

/* The value of property `key` in a MessageDecoder properties string. */
static bool prop_get(const char *props, size_t len, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    const char *p = props, *end = props + len;
    while (p < end) {
        const char *sep = memchr(p, PROP_SEP, (size_t)(end - p));
        const char *stop = sep ? sep : end;
        if ((size_t)(stop - p) > kl && memcmp(p, key, kl) == 0 && p[kl] == NAME_SEP) {
            snprintf(out, cap, "%.*s", (int)(stop - p - (ptrdiff_t)kl - 1), p + kl + 1);
            return true;
        }
        p = stop + 1;
    }
    return false;
}

/* The properties of a stored record (MessageDecoder layout: sysFlag at 36,
 * the body length after the born/store hosts, whose widths the sysFlag's
 * IPv6 bits give, then body, topic and properties). */
static bool record_props(const uint8_t *r, size_t len, const char **props, size_t *plen)
{
    if (len < 52)
        return false;
    uint32_t sys_flag =
        (uint32_t)r[36] << 24 | (uint32_t)r[37] << 16 | (uint32_t)r[38] << 8 | r[39];
    /* MESSAGE_MAGIC_CODE_V2 (0xDAA320AB) has a two-byte topic length */
    bool v2 = r[4] == 0xDA && r[5] == 0xA3 && r[6] == 0x20 && r[7] == 0xAB;
    size_t born = (sys_flag & 0x10) ? 20 : 8, store = (sys_flag & 0x20) ? 20 : 8;
    size_t off = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + born + 8 + store + 4 + 8;
    if (off + 4 > len)
        return false;
    uint32_t blen = (uint32_t)r[off] << 24 | (uint32_t)r[off + 1] << 16 |
                    (uint32_t)r[off + 2] << 8 | r[off + 3];
    off += 4 + blen;
    if (off + (v2 ? 2 : 1) > len)
        return false;
    off += v2 ? 2 + ((size_t)r[off] << 8 | r[off + 1]) : 1 + (size_t)r[off];
    if (off + 2 > len)
        return false;
    size_t pl = (size_t)r[off] << 8 | r[off + 1];
    off += 2;
    if (off + pl > len)
        return false;
    *props = (const char *)r + off;
    *plen = pl;
    return true;
}

static rmq_cmd *on_check(const char *addr, const rmq_cmd *req, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    size_t len = 0;
    const uint8_t *body = (const uint8_t *)api->cmd_body(req, &len);
    const char *clo = api->cmd_ext_get(req, "commitLogOffset");
    const char *tso = api->cmd_ext_get(req, "tranStateTableOffset");
    const char *msg_id = api->cmd_ext_get(req, "msgId");
    const char *props = NULL;
    size_t plen = 0;
    char group[256] = "", broker[128] = "", phys_hex[32], tx[200], peer[128];
    /* "ip:port#tag": the broker's address and the client's tag */
    const char *hash = strchr(addr, '#');
    const char *tag = hash ? hash + 1 : NULL;
    snprintf(peer, sizeof peer, "%.*s", (int)(hash ? (size_t)(hash - addr) : strlen(addr)), addr);
    if (!body || !clo || !tso || !record_props(body, len, &props, &plen) ||
        !prop_get(props, plen, "PGROUP", group, sizeof group) ||
        !proxy_cluster_broker_name(px->cluster, peer, broker, sizeof broker)) {
        api->log(px->ctx, RMQ_LOG_WARN,
                 "CHECK_TRANSACTION_STATE from %s: no producer group, offsets or broker name "
                 "for it; dropped (the broker checks again)",
                 addr);
        return NULL;
    }
    snprintf(phys_hex, sizeof phys_hex, "%016" PRIX64, (uint64_t)strtoll(clo, NULL, 10));
    proxy_transaction_id(broker, phys_hex, strtoll(tso, NULL, 10), tx, sizeof tx);
    int rc = proxy_transaction_push_check(px, group, tag, body, len, tx, msg_id ? msg_id : "");
    if (rc != 0)
        api->log(px->ctx, RMQ_LOG_WARN,
                 "CHECK_TRANSACTION_STATE of %s (group %s) from %s: no producer of the group "
                 "to ask (%s)",
                 msg_id ? msg_id : "?", group, addr, rmq_strerror(rc));
    return NULL; /* oneway, as the broker sends it */
}

int proxy_cluster_check_init(proxy *px)
{
    const rmq_host_api *api = px->api;
    if (!proxy_backend_is_cluster(px))
        return 0;
    if (api->abi_minor < 12 || !api->register_client_processor) {
        api->log(px->ctx, RMQ_LOG_WARN,
                 "host ABI 1.%u: no requests on outgoing connections (1.12); brokers' "
                 "transaction checks cannot reach 5.x producers",
                 (unsigned)api->abi_minor);
        return 0;
    }
    return api->register_client_processor(px->ctx, CHECK_TRANSACTION_STATE, on_check, px);
}
