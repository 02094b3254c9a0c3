/* acl_perm.h — ACL 1.0 permission bits (DENY, ANY, PUB, SUB), their text
 * form in plain_acl.yml and the request codes that need an admin account. */
#ifndef ACL_PERM_H
#define ACL_PERM_H

#include <stdbool.h>
#include <stdint.h>

#define ACL_PERM_DENY 1
#define ACL_PERM_ANY 2
#define ACL_PERM_PUB 4
#define ACL_PERM_SUB 8

#define ACL_RETRY_PREFIX "%RETRY%"

/* "PUB", "SUB", "PUB|SUB", "SUB|PUB", "DENY" (surrounding blanks ignored);
 * NULL and anything else → DENY, as Java's parsePermFromString. */
uint8_t acl_perm_parse(const char *text);
/* Java's Permission.checkPermission: an owned DENY refuses everything; a
 * needed ANY is satisfied by PUB or SUB; otherwise the bits must meet. */
bool acl_perm_allows(uint8_t needed, uint8_t owned);
/* Broker codes 4.9.8 reserves to admin accounts (17, 25, 200, 207, 215),
 * plus rmqhost's ACL admin codes 50-54 (an rmqhost deviation: 4.9.8 lets any
 * account change the ACL, see docs/compat.md). */
bool acl_broker_code_needs_admin(int32_t code);
/* True for the broker's ACL admin codes 50..54. */
bool acl_is_acl_admin_code(int32_t code);
/* NameServer codes that only read state; every other code (including
 * unknown ones) changes state and needs an admin or a white-listed address. */
bool acl_namesrv_code_is_read(int32_t code);
bool acl_is_retry_topic(const char *name);

#endif
