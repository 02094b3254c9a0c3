/* own_address.c — whether an address a plugin calls is served by this very
 * process (one of its servers' listeners). At shutdown such a call can only
 * time out: the host has stopped reading its own server connections and the
 * plugin behind it may already be gone (all-in-one broker + NameServer). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host.h"

static int port_of(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    if (ss->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return -1;
}

static bool is_any(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
    return ss->ss_family == AF_INET6 &&
           IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

static bool same_ip(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

/* An address of this machine can be bound (port 0, nothing is listened on):
 * the way to tell it without walking the interfaces. */
static bool is_local_ip(const struct sockaddr_storage *ss, socklen_t len)
{
    struct sockaddr_storage probe = *ss;
    if (probe.ss_family == AF_INET)
        ((struct sockaddr_in *)&probe)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&probe)->sin6_port = 0;
    int fd = socket(probe.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool ok = bind(fd, (struct sockaddr *)&probe, len) == 0;
    close(fd);
    return ok;
}

static bool listener_serves(const char *bound_host, int bound_port,
                            const struct sockaddr_storage *to, socklen_t to_len)
{
    if (bound_port <= 0 || bound_port != port_of(to))
        return false;
    char spec[96];
    bool v6 = strchr(bound_host, ':') != NULL;
    snprintf(spec, sizeof(spec), "%s%s%s:%d", v6 ? "[" : "", bound_host, v6 ? "]" : "", bound_port);
    struct sockaddr_storage bound;
    socklen_t blen;
    if (socket_address_parse(spec, true, &bound, &blen) != 0)
        return false;
    if (is_any(&bound))
        return (bound.ss_family == to->ss_family || bound.ss_family == AF_INET6) &&
               is_local_ip(to, to_len);
    return same_ip(&bound, to);
}

bool host_addr_served_here(rmq_host *h, const char *addr)
{
    struct sockaddr_storage to;
    socklen_t len;
    if (!addr || socket_address_parse(addr, false, &to, &len) != 0)
        return false;
    for (size_t i = 0; i < h->nservers; i++) {
        const server *s = &h->servers[i];
        if (listener_serves(s->bound_host, s->bound_port, &to, len) ||
            (s->vip_fd >= 0 && listener_serves(s->vip_bound_host, s->vip_bound_port, &to, len)))
            return true;
    }
    return false;
}
