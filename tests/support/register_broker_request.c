/* register_broker_request.c — the REGISTER_BROKER request a test broker
 * sends: ext fields as 4.9.8's BrokerOuterAPI fills them, bodyCrc32 over the
 * body. Builds the frame only; sending and judging stay with the test. */
#include <stdio.h>

#include "rmq_test_support.h"

rmq_cmd *rmq_tc_register_broker_request(int opaque, const rmq_tc_broker *b, const void *body,
                                        size_t len)
{
    char crc[16], idtxt[24];
    rmq_tb_body_crc32_text(body ? body : "", body ? len : 0, crc);
    snprintf(idtxt, sizeof(idtxt), "%lld", b->id);
    const char *kv[] = {"brokerName",
                        b->name,
                        "brokerAddr",
                        b->addr,
                        "clusterName",
                        b->cluster,
                        "haServerAddr",
                        b->ha_addr ? b->ha_addr : "127.0.0.1:10912",
                        "brokerId",
                        idtxt,
                        "bodyCrc32",
                        crc,
                        "compressed",
                        "false",
                        NULL};
    rmq_cmd *c = rmq_tc_request(103, opaque, kv);
    if (c && body && len && rmq_cmd_set_body(c, body, len, NULL, NULL) != 0) {
        rmq_cmd_free(c);
        return NULL;
    }
    return c;
}
