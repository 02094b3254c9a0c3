/* acl_grpc_header.h — the `authorization` metadata of a RocketMQ 5.x gRPC
 * client ("MQv2-HMAC-SHA1 Credential=AK, SignedHeaders=x-mq-date-time,
 * Signature=<hex>"), read as Java 5.1's AuthorizationHeader reads it, and
 * the check of its signature: HMAC-SHA1 of the x-mq-date-time value with
 * the account's secret. Pure: no host, no I/O. */
#ifndef ACL_GRPC_HEADER_H
#define ACL_GRPC_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl_signature.h"

#define ACL_GRPC_SIG_MAX 64 /* decoded signature bytes kept (HMAC-SHA1 has 20) */

typedef struct acl_grpc_header {
    bool has_key;
    char access_key[256]; /* Credential up to its first '/' (cut to fit) */
    bool has_signature;
    uint8_t signature[ACL_GRPC_SIG_MAX];
    size_t signature_len; /* > ACL_GRPC_SIG_MAX: too long to be right */
} acl_grpc_header;

/* 0, or -1 with `err` set to the message of Java's DecoderException
 * ("authorization header is incorrect", "Odd number of characters.", ...). */
int acl_grpc_header_parse(const char *text, acl_grpc_header *h, char *err, size_t errlen);

/* Whether h's signature is the HMAC-SHA1 of `content` with key k (constant
 * time over the digest). */
bool acl_grpc_signature_ok(const acl_hmac_key *k, const acl_grpc_header *h, const char *content);

#endif
