/* fuzz_acl_grpc_header.c — libFuzzer target for a 5.x client's
 * `authorization` metadata (network input the acl plugin reads for every
 * gRPC call): any text must parse or be refused with a message, and what
 * parses must go through the signature check and a whole gRPC verdict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl_check.h"
#include "acl_grpc_header.h"

static const char YML[] = "accounts:\n"
                          "- accessKey: RocketMQ\n"
                          "  secretKey: 12345678\n"
                          "  defaultTopicPerm: DENY\n"
                          "  topicPerms:\n"
                          "  - topicB=PUB|SUB\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0'; /* metadata values are NUL-terminated strings */
    acl_grpc_header h;
    char err[200];
    if (acl_grpc_header_parse(text, &h, err, sizeof(err)) != 0) {
        if (!err[0])
            abort(); /* every refusal says why */
    } else {
        if (h.has_key && strlen(h.access_key) >= sizeof(h.access_key))
            abort();
        acl_hmac_key k;
        acl_hmac_key_init(&k, "12345678");
        (void)acl_grpc_signature_ok(&k, &h, "20261206T051200Z");
    }
    /* acl_config_build takes the parsed file over, the array too */
    acl_file *f = calloc(1, sizeof(*f));
    acl_config *c = NULL;
    if (f && acl_file_parse("fuzz.yml", YML, sizeof(YML) - 1, f, err, sizeof(err)) != 0) {
        free(f);
        f = NULL;
    }
    if (f && acl_config_build(f, 1, &c, err, sizeof(err)) == 0) {
        acl_grpc_need needs[] = {{"topicB", 4, false}, {"g", 8, true}};
        acl_grpc_request r = {.peer_ip = "127.0.0.1",
                              .authorization = text,
                              .date_time = "20261206T051200Z",
                              .needs = needs,
                              .nneeds = 2};
        acl_verdict v;
        acl_check_grpc(c, &r, &v);
        if (v.outcome != ACL_ALLOWED && !v.message[0])
            abort();
        acl_config_free(c);
    }
    free(text);
    return 0;
}
