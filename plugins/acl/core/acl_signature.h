/* acl_signature.h — ACL 1.0 request signatures: HmacSHA1 over the values of
 * the ext fields sorted by key (Signature and _UNIQUE_KEY_QUERY left out)
 * followed by the body, Base64-encoded. Clients (Java's AclClientRPCHook,
 * ali-ons) and the server compute the same text. */
#ifndef ACL_SIGNATURE_H
#define ACL_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>

#include "sha1_digest.h"

#define ACL_SIGNATURE_LEN 28 /* Base64 of 20 bytes, without NUL */

/* One ext field; value NULL = null (Java appends the text "null"). */
typedef struct acl_field {
    const char *key;
    const char *value;
} acl_field;

/* An HMAC-SHA1 key with its two padded blocks already hashed (RFC 2104):
 * made once per account, it leaves two SHA-1 compressions per short request. */
typedef struct acl_hmac_key {
    sha1_ctx inner, outer;
} acl_hmac_key;

void acl_hmac_key_init(acl_hmac_key *k, const char *secret);
/* Sign: out gets ACL_SIGNATURE_LEN chars + NUL. Fields in any order (sorted
 * here; the array is reordered). */
void acl_sign_with_key(const acl_hmac_key *k, acl_field *fields, size_t nfields, const void *body,
                       size_t body_len, char out[ACL_SIGNATURE_LEN + 1]);
/* The same from the secret text. Always 0 (kept int for callers' checks). */
int acl_sign(const char *secret, acl_field *fields, size_t nfields, const void *body,
             size_t body_len, char out[ACL_SIGNATURE_LEN + 1]);
/* Compare in constant time (for equal lengths). */
bool acl_signature_equal(const char *expected, const char *given);

#endif
