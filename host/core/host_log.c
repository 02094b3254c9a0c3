/* host_log.c — formats and writes log lines. Each line is built in a stack
 * buffer and written with one fwrite under a mutex so lines from different
 * threads never interleave. Never allocates. */
#include "host_log.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void host_log_init(host_log *lg, int level)
{
    memset(lg, 0, sizeof(*lg));
    lg->level = level;
    lg->fp = stderr;
    pthread_mutex_init(&lg->mu, NULL);
}

int host_log_open_file(host_log *lg, const char *path)
{
    FILE *fp = fopen(path, "a");
    if (!fp)
        return -errno;
    pthread_mutex_lock(&lg->mu);
    if (lg->fp && lg->fp != stderr)
        fclose(lg->fp);
    lg->fp = fp;
    snprintf(lg->path, sizeof(lg->path), "%s", path);
    pthread_mutex_unlock(&lg->mu);
    return 0;
}

int host_log_reopen(host_log *lg)
{
    if (!lg->path[0])
        return 0;
    char path[sizeof(lg->path)];
    memcpy(path, lg->path, sizeof(path));
    return host_log_open_file(lg, path);
}

void host_log_close(host_log *lg)
{
    pthread_mutex_lock(&lg->mu);
    if (lg->fp && lg->fp != stderr)
        fclose(lg->fp);
    lg->fp = stderr;
    pthread_mutex_unlock(&lg->mu);
    pthread_mutex_destroy(&lg->mu);
}

int host_log_level_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcasecmp(name, level_names[i]) == 0)
            return i;
    if (strcasecmp(name, "warning") == 0)
        return RMQ_LOG_WARN;
    return -1;
}

void host_log_v(host_log *lg, int level, const char *origin, const char *fmt, va_list ap)
{
    if (level > lg->level)
        return;
    if (level < 0)
        level = 0;
    if (level > 3)
        level = 3;
    char line[2048];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %-5s [%s] ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (int)(tv.tv_usec / 1000), level_names[level], origin ? origin : "host");
    if (n < 0)
        return;
    size_t used = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
    int m = vsnprintf(line + used, sizeof(line) - used, fmt, ap);
    if (m > 0)
        used += (size_t)m < sizeof(line) - used ? (size_t)m : sizeof(line) - used - 1;
    if (used >= sizeof(line) - 1)
        used = sizeof(line) - 2;
    line[used++] = '\n';
    pthread_mutex_lock(&lg->mu);
    fwrite(line, 1, used, lg->fp);
    fflush(lg->fp);
    pthread_mutex_unlock(&lg->mu);
}

void host_log_write(host_log *lg, int level, const char *origin, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    host_log_v(lg, level, origin, fmt, ap);
    va_end(ap);
}
