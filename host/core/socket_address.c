/* socket_address.c — "ip:port" / "[v6]:port" text to a sockaddr, one parser
 * for listen addresses and for the addresses plugins call. Numeric only
 * ("localhost" aside): the daemon never blocks a loop on name resolution. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

int socket_address_parse(const char *spec, bool empty_host_is_any, struct sockaddr_storage *ss,
                         socklen_t *len)
{
    char host[128];
    const char *colon = strrchr(spec, ':');
    if (!colon)
        return -1;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || port < 0 || port > 65535)
        return -1;
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof(host))
        return -1;
    memcpy(host, spec, hl);
    host[hl] = 0;
    memset(ss, 0, sizeof(*ss));
    if (host[0] == '[') {
        if (hl < 3 || host[hl - 1] != ']')
            return -1;
        host[hl - 1] = 0;
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
            return -1;
        *len = sizeof(*a);
        return 0;
    }
    if (!host[0] && !empty_host_is_any)
        return -1;
    const char *ip = !host[0] ? "0.0.0.0" : strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, ip, &a->sin_addr) == 1) {
        *len = sizeof(*a);
        return 0;
    }
    /* A bare IPv6 literal without brackets (what some tools print). */
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    memset(ss, 0, sizeof(*ss));
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        *len = sizeof(*a6);
        return 0;
    }
    return -1;
}
