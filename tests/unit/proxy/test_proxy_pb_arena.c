/* test_proxy_pb_arena.c — the protobuf-c allocator SendMessage unpacks its
 * request with (proxy_pb_arena.c): a request unpacked into a block too
 * small for it (the rest spills to malloc) reads back field for field like
 * one unpacked with malloc; an undecodable one fails and leaves nothing
 * behind once released (ASan's leak check); pointers are aligned. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy_internal.h"

/* A SendMessageRequest of n messages, each with a topic, a message id, a
 * tag, two keys and a body: packed into *len bytes (malloc'd). */
static uint8_t *packed_request(size_t n, size_t *len)
{
    Apache__Rocketmq__V2__SendMessageRequest req = APACHE__ROCKETMQ__V2__SEND_MESSAGE_REQUEST__INIT;
    Apache__Rocketmq__V2__Message *m = calloc(n, sizeof(*m));
    Apache__Rocketmq__V2__Message **mp = calloc(n, sizeof(*mp));
    Apache__Rocketmq__V2__SystemProperties *sp = calloc(n, sizeof(*sp));
    Apache__Rocketmq__V2__Resource topic = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    topic.name = "ArenaTopic";
    static char *keys[] = {"k1", "key-two"};
    static char ids[64][32];
    static uint8_t body[300];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (uint8_t)i;
    for (size_t i = 0; i < n; i++) {
        apache__rocketmq__v2__message__init(&m[i]);
        apache__rocketmq__v2__system_properties__init(&sp[i]);
        snprintf(ids[i], sizeof ids[i], "ID-%zu", i);
        sp[i].message_id = ids[i];
        sp[i].tag = "TagA";
        sp[i].n_keys = 2;
        sp[i].keys = keys;
        m[i].topic = &topic;
        m[i].system_properties = &sp[i];
        m[i].body.data = body;
        m[i].body.len = 100 + i;
        mp[i] = &m[i];
    }
    req.n_messages = n;
    req.messages = mp;
    *len = apache__rocketmq__v2__send_message_request__get_packed_size(&req);
    uint8_t *out = malloc(*len);
    assert_non_null(out);
    apache__rocketmq__v2__send_message_request__pack(&req, out);
    free(m);
    free(mp);
    free(sp);
    return out;
}

static void same_request_as_malloc_even_past_the_block(void **state)
{
    (void)state;
    size_t len;
    uint8_t *wire = packed_request(40, &len);
    Apache__Rocketmq__V2__SendMessageRequest *want =
        apache__rocketmq__v2__send_message_request__unpack(NULL, len, wire);
    assert_non_null(want);
    /* a block a tenth of what the request needs: most of it spills */
    size_t cap = len / 10;
    uint8_t *block = malloc(cap);
    proxy_pb_arena a;
    proxy_pb_arena_init(&a, block, cap);
    Apache__Rocketmq__V2__SendMessageRequest *got =
        apache__rocketmq__v2__send_message_request__unpack(&a.pc, len, wire);
    assert_non_null(got);
    assert_non_null(a.spills);
    assert_true(a.used <= cap);
    assert_int_equal(got->n_messages, want->n_messages);
    for (size_t i = 0; i < got->n_messages; i++) {
        const Apache__Rocketmq__V2__Message *g = got->messages[i], *w = want->messages[i];
        assert_int_equal((uintptr_t)g % _Alignof(max_align_t), 0);
        assert_string_equal(g->topic->name, w->topic->name);
        assert_string_equal(g->system_properties->message_id, w->system_properties->message_id);
        assert_string_equal(g->system_properties->tag, "TagA");
        assert_int_equal(g->system_properties->n_keys, 2);
        assert_string_equal(g->system_properties->keys[1], "key-two");
        assert_int_equal(g->body.len, w->body.len);
        assert_memory_equal(g->body.data, w->body.data, w->body.len);
    }
    proxy_pb_arena_release(&a);
    assert_null(a.spills);
    apache__rocketmq__v2__send_message_request__free_unpacked(want, NULL);
    free(block);

    /* a block big enough: nothing spills */
    cap = 4 * len + 4096;
    block = malloc(cap);
    proxy_pb_arena_init(&a, block, cap);
    got = apache__rocketmq__v2__send_message_request__unpack(&a.pc, len, wire);
    assert_non_null(got);
    assert_null(a.spills);
    assert_string_equal(got->messages[39]->system_properties->message_id, "ID-39");
    proxy_pb_arena_release(&a);
    free(block);
    free(wire);
}

static void undecodable_leaves_nothing(void **state)
{
    (void)state;
    size_t len;
    uint8_t *wire = packed_request(3, &len);
    proxy_pb_arena a;
    proxy_pb_arena_init(&a, NULL, 0); /* no block: every allocation spills */
    /* cut inside the last message: protobuf-c fails after allocating */
    assert_null(apache__rocketmq__v2__send_message_request__unpack(&a.pc, len - 7, wire));
    proxy_pb_arena_release(&a); /* ASan: no leak */
    assert_null(a.spills);
    free(wire);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_request_as_malloc_even_past_the_block),
        cmocka_unit_test(undecodable_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
