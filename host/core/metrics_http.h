/* metrics_http.h — the optional Prometheus endpoint: plain HTTP/1.0 on a
 * loopback address, on the control thread's loop. */
#ifndef RMQHOST_METRICS_HTTP_H
#define RMQHOST_METRICS_HTTP_H

#include <stddef.h>
#include <uv.h>

#include "host.h"

typedef struct metrics_http metrics_http;

/* Renders the exposition text (malloc'd) at each scrape. */
typedef char *(*metrics_render_fn)(rmq_host *h, size_t *len);

/* Listen on `listen` ("127.0.0.1:9100", "[::1]:9100"); anything but a
 * loopback address is refused. 0 or -1 + err. */
int metrics_http_start(rmq_host *h, uv_loop_t *loop, const char *listen, metrics_render_fn render,
                       metrics_http **out, char *err, size_t errlen);
/* Closes the listener and every scrape connection (NULL is fine). */
void metrics_http_stop(metrics_http *m);
/* Port actually bound (useful with port 0). */
int metrics_http_port(const metrics_http *m);

#endif
