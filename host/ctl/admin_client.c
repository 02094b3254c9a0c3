/* admin_client.c — connects to the daemon's admin socket, writes one request
 * line and reads one response line. Knows the framing, not the commands. */
#include "admin_client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../core/host_config.h"

int admin_client_socket_path(const char *conf_dir, char *out, size_t cap, char *err, size_t errlen)
{
    host_conf c;
    memset(&c, 0, sizeof(c));
    if (host_conf_load(&c, conf_dir, err, errlen) != 0 || host_conf_finish(&c, err, errlen) != 0) {
        host_conf_free(&c);
        return -1;
    }
    snprintf(out, cap, "%s", c.admin_socket);
    host_conf_free(&c);
    return 0;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

json_t *admin_client_call(const char *socket_path, const json_t *req, int timeout_ms, char *err,
                          size_t errlen)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(socket_path) >= sizeof(sa.sun_path)) {
        snprintf(err, errlen, "admin socket path too long: %s", socket_path);
        return NULL;
    }
    memcpy(sa.sun_path, socket_path, strlen(socket_path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        snprintf(err, errlen, "cannot reach the daemon at %s: %s", socket_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *line = json_dumps(req, JSON_COMPACT);
    int wrc = line ? write_all(fd, line, strlen(line)) : -1;
    if (wrc == 0)
        wrc = write_all(fd, "\n", 1);
    free(line);
    if (wrc != 0) {
        snprintf(err, errlen, "cannot send to the daemon at %s: %s", socket_path, strerror(errno));
        close(fd);
        return NULL;
    }
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    long long deadline = now_ms() + timeout_ms;
    json_t *resp = NULL;
    while (buf) {
        char *nl = memchr(buf, '\n', len);
        if (nl) {
            json_error_t jerr;
            resp = json_loadb(buf, (size_t)(nl - buf), 0, &jerr);
            if (!resp)
                snprintf(err, errlen, "garbled answer from the daemon: %s", jerr.text);
            break;
        }
        long long left = deadline - now_ms();
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = left > 0 ? poll(&pfd, 1, (int)left) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            snprintf(err, errlen, "no answer from the daemon within %d ms", timeout_ms);
            break;
        }
        if (len + 4096 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        ssize_t r = recv(fd, buf + len, cap - len, 0);
        if (r <= 0) {
            snprintf(err, errlen, "the daemon closed the admin connection without an answer");
            break;
        }
        len += (size_t)r;
    }
    if (!buf)
        snprintf(err, errlen, "out of memory");
    free(buf);
    close(fd);
    return resp;
}
