/* address_pattern.h — Java's white-address patterns of plain_acl.yml:
 * "*" (everyone), one address (IPv4 or IPv6), "a,b,c", "192.168.1.{1,2}",
 * "192.168.*", "192.168.1.1-10", "fe80:0:0:0:0:0:0:*" and blank (nobody). */
#ifndef ACL_ADDRESS_PATTERN_H
#define ACL_ADDRESS_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct acl_pattern acl_pattern;

/* Compile `text` (NULL or blank: matches nobody). 0, or -1 with a message
 * naming the bad part in err. *out is freed with acl_pattern_free. */
int acl_pattern_compile(const char *text, acl_pattern **out, char *err, size_t errlen);
/* `ip` is an address without port ("10.0.0.1", "::1"). */
bool acl_pattern_match(const acl_pattern *p, const char *ip);
void acl_pattern_free(acl_pattern *p);

/* The address part of a peer "ip:port" / "[v6]:port" into buf (as Java's
 * remoteAddr up to the last ':'). */
void acl_peer_ip(const char *peer, char *buf, size_t len);

#endif
