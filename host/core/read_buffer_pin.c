/* read_buffer_pin.c — the read buffer kept alive for deferred requests whose
 * body still lies in it: such a request holds a reference on the buffer, and
 * the connection carries on in a fresh one with the bytes not processed yet,
 * so the body a plugin was handed never moves (rmqhost.h promises the cmd,
 * body included, stays valid until deferred_reply). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

/* the connection's next reads land here too: leave room for one; also the
 * size of the buffers connections read into, the only ones handed back */
#define FRESH_ROOM (64 * 1024)

struct rbuf_pin {
    atomic_int refs; /* the connection's during the pass, one per command */
    uint8_t *data;   /* the old rbuf allocation */
    size_t cap;
    io_loop *loop;
};

/* Any thread: the last command (or the connection) lets go of the buffer. A
 * standard one is parked for its loop's next reader: under SYNC_FLUSH every
 * send is deferred, and a fresh 64 KiB per read (freed on the flusher's
 * thread, where glibc then consolidates) cost more than the copy saved. */
static void pin_release(void *ud, const void *body)
{
    (void)body;
    rbuf_pin *p = ud;
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
        return;
    uint8_t *none = NULL;
    if (p->cap != FRESH_ROOM ||
        !atomic_compare_exchange_strong(&p->loop->returned_rbuf, &none, p->data))
        free(p->data);
    free(p);
}

bool conn_rbuf_take_returned(connection *c)
{
    if (atomic_load_explicit(&c->loop->returned_rbuf, memory_order_relaxed) == NULL)
        return false;
    uint8_t *b = atomic_exchange(&c->loop->returned_rbuf, NULL);
    if (!b)
        return false;
    c->rbuf.data = b;
    c->rbuf.len = 0;
    c->rbuf.cap = FRESH_ROOM;
    return true;
}

void loop_free_returned_rbuf(io_loop *l)
{
    free(atomic_exchange(&l->returned_rbuf, NULL));
}

bool conn_keep_body(connection *c, rmq_cmd *cmd)
{
    if (!cmd->body_in_frame)
        return true;
    if (!c->rbuf_pin) {
        rbuf_pin *p = malloc(sizeof(*p));
        if (!p)
            return rmq_cmd_own_body(cmd) == 0; /* copying needs less */
        atomic_init(&p->refs, 1);
        p->data = c->rbuf.data;
        p->cap = c->rbuf.cap;
        p->loop = c->loop;
        c->rbuf_pin = p;
    }
    atomic_fetch_add_explicit(&c->rbuf_pin->refs, 1, memory_order_relaxed);
    rmq_cmd_body_keep(cmd, pin_release, c->rbuf_pin);
    return true;
}

int conn_rbuf_unpin(connection *c, size_t consumed)
{
    rbuf_pin *p = c->rbuf_pin;
    size_t rest = c->rbuf.len - consumed;
    byte_buf fresh = {0};
    int rc = 0;
    /* a closing connection's rest is never processed */
    if (rest && !c->closing) {
        rc = byte_buf_reserve(&fresh, rest + FRESH_ROOM);
        if (rc == 0) {
            memcpy(fresh.data, c->rbuf.data + consumed, rest);
            fresh.len = rest;
        }
    }
    c->rbuf_pin = NULL;
    c->rbuf = fresh;
    pin_release(p, NULL);
    return rc;
}
