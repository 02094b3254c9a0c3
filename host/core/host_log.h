/* host_log.h — the daemon's log sink: one line per message with level, UTC
 * time, origin (host or plugin name) and text; stderr or a reopenable file. */
#ifndef RMQHOST_HOST_LOG_H
#define RMQHOST_HOST_LOG_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "rmqhost/rmqhost.h"

typedef struct host_log {
    int level; /* rmq_log_level; messages above it are dropped */
    FILE *fp;  /* stderr or the opened file */
    char path[4096];
    pthread_mutex_t mu;
} host_log;

void host_log_init(host_log *lg, int level);
/* Log to `path` (appending) instead of stderr; 0 or -errno. */
int host_log_open_file(host_log *lg, const char *path);
/* SIGUSR1: reopen the file after rotation. */
int host_log_reopen(host_log *lg);
void host_log_close(host_log *lg);
int host_log_level_parse(const char *name); /* -1 if unknown */

void host_log_v(host_log *lg, int level, const char *origin, const char *fmt, va_list ap);
void host_log_write(host_log *lg, int level, const char *origin, const char *fmt, ...)
    RMQ_PRINTF(4, 5);

#define HLOG_ERROR(h, ...) host_log_write(&(h)->log, RMQ_LOG_ERROR, "host", __VA_ARGS__)
#define HLOG_WARN(h, ...) host_log_write(&(h)->log, RMQ_LOG_WARN, "host", __VA_ARGS__)
#define HLOG_INFO(h, ...) host_log_write(&(h)->log, RMQ_LOG_INFO, "host", __VA_ARGS__)
#define HLOG_DEBUG(h, ...) host_log_write(&(h)->log, RMQ_LOG_DEBUG, "host", __VA_ARGS__)

#endif
