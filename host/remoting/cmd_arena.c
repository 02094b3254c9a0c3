/* cmd_arena.c — allocation of rmq_cmd with its string arena, and the setters
 * (remark, ext fields, body). Owns every byte a command points at except a
 * borrowed or in-frame body (and says how those become owned). Must not
 * know about wire formats. */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_internal.h"

#define ARENA_ALIGN alignof(max_align_t)
#define ARENA_MIN_BLOCK 256u

struct rmq_arena_block {
    struct rmq_arena_block *next;
    size_t cap;
    size_t used;
    max_align_t data[];
};

static size_t align_up(size_t n)
{
    return (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
}

static unsigned char *block_data(struct rmq_arena_block *b)
{
    return (unsigned char *)b->data;
}

/* The first block shares the command's malloc; it sits right after the
 * command so rmq_cmd_free can tell it apart from chained blocks. */
static struct rmq_arena_block *embedded_block(rmq_cmd *cmd)
{
    return (struct rmq_arena_block *)((unsigned char *)cmd + align_up(sizeof(rmq_cmd)));
}

rmq_cmd *rmq_cmd_alloc_with_arena(size_t arena_hint)
{
    size_t cap = align_up(arena_hint < 64 ? 64 : arena_hint);
    size_t head = align_up(sizeof(rmq_cmd)) + align_up(sizeof(struct rmq_arena_block));
    if (cap > SIZE_MAX - head)
        return NULL;
    rmq_cmd *cmd = malloc(head + cap);
    if (!cmd)
        return NULL;
    memset(cmd, 0, sizeof(*cmd));
    cmd->language = RMQ_LANG_JAVA;
    cmd->serialize_type = RMQ_SERIALIZE_JSON;
    struct rmq_arena_block *b = embedded_block(cmd);
    b->next = NULL;
    b->cap = cap;
    b->used = 0;
    cmd->arena = b;
    return cmd;
}

rmq_cmd *rmq_cmd_new(void)
{
    rmq_cmd *cmd = rmq_cmd_alloc_with_arena(ARENA_MIN_BLOCK);
    if (cmd)
        cmd->version = RMQ_HOST_CMD_VERSION;
    return cmd;
}

rmq_cmd *rmq_cmd_new_response(const rmq_cmd *req, int32_t code, const char *remark)
{
    if (!req)
        return NULL;
    rmq_cmd *cmd = rmq_cmd_new();
    if (!cmd)
        return NULL;
    cmd->code = code;
    cmd->flag = RMQ_FLAG_RESPONSE;
    cmd->opaque = req->opaque;
    cmd->serialize_type = req->serialize_type;
    if (remark && rmq_cmd_set_remark(cmd, remark) != 0) {
        rmq_cmd_free(cmd);
        return NULL;
    }
    return cmd;
}

static void release_body(rmq_cmd *cmd)
{
    if (cmd->body_free && cmd->body)
        cmd->body_free(cmd->body_free_ud, cmd->body);
    cmd->body = NULL;
    cmd->body_len = 0;
    cmd->body_free = NULL;
    cmd->body_free_ud = NULL;
    cmd->body_in_frame = false;
}

void rmq_cmd_free(rmq_cmd *cmd)
{
    if (!cmd)
        return;
    release_body(cmd);
    struct rmq_arena_block *embedded = embedded_block(cmd);
    struct rmq_arena_block *b = cmd->arena;
    while (b) {
        struct rmq_arena_block *next = b->next;
        if (b != embedded)
            free(b);
        b = next;
    }
    free(cmd);
}

static struct rmq_arena_block *new_block(size_t cap)
{
    size_t head = align_up(sizeof(struct rmq_arena_block));
    if (cap > SIZE_MAX - head)
        return NULL;
    struct rmq_arena_block *b = malloc(head + cap);
    if (!b)
        return NULL;
    b->cap = cap;
    b->used = 0;
    b->next = NULL;
    return b;
}

static size_t free_room(const struct rmq_arena_block *b, size_t align)
{
    size_t off = (b->used + align - 1) & ~(align - 1);
    return off > b->cap ? 0 : b->cap - off;
}

/* Returns a block with `size` free bytes at `align`. A large request gets its
 * own block linked behind the head, so the head keeps serving the small
 * strings that follow. */
static struct rmq_arena_block *block_with_room(rmq_cmd *cmd, size_t size, size_t align)
{
    struct rmq_arena_block *head = cmd->arena;
    if (head && free_room(head, align) >= size)
        return head;
    size_t grow = head ? head->cap * 2 : ARENA_MIN_BLOCK;
    if (grow > 64u * 1024u)
        grow = 64u * 1024u;
    if (head && size > grow / 2) {
        struct rmq_arena_block *b = new_block(align_up(size));
        if (!b)
            return NULL;
        b->next = head->next;
        head->next = b;
        return b;
    }
    struct rmq_arena_block *b = new_block(size > grow ? align_up(size) : grow);
    if (!b)
        return NULL;
    b->next = head;
    cmd->arena = b;
    return b;
}

static void *arena_alloc_aligned(rmq_cmd *cmd, size_t size, size_t align)
{
    if (size > SIZE_MAX - ARENA_ALIGN)
        return NULL;
    if (size == 0)
        size = 1;
    struct rmq_arena_block *b = block_with_room(cmd, size, align);
    if (!b)
        return NULL;
    size_t off = (b->used + align - 1) & ~(align - 1);
    b->used = off + size;
    return block_data(b) + off;
}

void *rmq_arena_alloc(rmq_cmd *cmd, size_t size)
{
    return arena_alloc_aligned(cmd, size, ARENA_ALIGN);
}

/* Strings need no alignment; packing them keeps a decoded header inside the
 * block sized from its frame. */
char *rmq_arena_alloc_str(rmq_cmd *cmd, size_t size)
{
    return arena_alloc_aligned(cmd, size, 1);
}

char *rmq_cmd_strndup(rmq_cmd *cmd, const char *s, size_t n)
{
    if (!cmd || !s || n == SIZE_MAX)
        return NULL;
    char *p = rmq_arena_alloc_str(cmd, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *rmq_cmd_strdup(rmq_cmd *cmd, const char *s)
{
    if (!s)
        return NULL;
    return rmq_cmd_strndup(cmd, s, strlen(s));
}

int rmq_cmd_set_remark(rmq_cmd *cmd, const char *remark)
{
    if (!remark) {
        cmd->remark = NULL;
        return 0;
    }
    char *r = rmq_cmd_strdup(cmd, remark);
    if (!r)
        return -ENOMEM;
    cmd->remark = r;
    return 0;
}

rmq_arena_mark rmq_arena_get_mark(const rmq_cmd *cmd)
{
    rmq_arena_mark m = {cmd->arena, cmd->arena ? cmd->arena->used : 0};
    return m;
}

void rmq_arena_rewind(rmq_cmd *cmd, rmq_arena_mark mark)
{
    /* a block pushed since the mark holds bytes we cannot hand back one by
     * one; it stays chained and goes with the command */
    if (cmd->arena && cmd->arena == mark.head && mark.used <= cmd->arena->used)
        cmd->arena->used = mark.used;
}

int rmq_cmd_ext_reserve(rmq_cmd *cmd, uint32_t cap)
{
    if (cap <= cmd->ext_cap)
        return 0;
    if (cap > UINT32_MAX / 2)
        return -ENOMEM;
    rmq_ext_field *n = rmq_arena_alloc(cmd, (size_t)cap * sizeof(*n));
    if (!n)
        return -ENOMEM;
    if (cmd->ext_count)
        memcpy(n, cmd->ext, cmd->ext_count * sizeof(*n));
    cmd->ext = n;
    cmd->ext_cap = cap;
    return 0;
}

static rmq_ext_field *find_ext(const rmq_cmd *cmd, const char *key)
{
    for (uint32_t i = 0; i < cmd->ext_count; i++)
        if (cmd->ext[i].key[0] == key[0] && strcmp(cmd->ext[i].key, key) == 0)
            return &cmd->ext[i];
    return NULL;
}

int rmq_cmd_ext_put_owned(rmq_cmd *cmd, char *key, char *value)
{
    rmq_ext_field *f = find_ext(cmd, key);
    if (f) {
        cmd->has_ext = true;
        f->value = value;
        return 0;
    }
    return rmq_cmd_ext_append_owned(cmd, key, value);
}

int rmq_cmd_ext_append_owned(rmq_cmd *cmd, char *key, char *value)
{
    cmd->has_ext = true;
    if (cmd->ext_count == cmd->ext_cap &&
        rmq_cmd_ext_reserve(cmd, cmd->ext_cap ? cmd->ext_cap * 2 : 8) != 0)
        return -ENOMEM;
    cmd->ext[cmd->ext_count].key = key;
    cmd->ext[cmd->ext_count].value = value;
    cmd->ext_count++;
    return 0;
}

const char *rmq_cmd_ext_get(const rmq_cmd *cmd, const char *key)
{
    if (!cmd || !key)
        return NULL;
    const rmq_ext_field *f = find_ext(cmd, key);
    return f ? f->value : NULL;
}

int rmq_cmd_ext_set(rmq_cmd *cmd, const char *key, const char *value)
{
    if (!cmd || !key)
        return -EINVAL;
    rmq_ext_field *f = find_ext(cmd, key);
    if (!value) {
        if (f) {
            /* keep insertion order: it is the order the JSON encoder emits */
            size_t idx = (size_t)(f - cmd->ext);
            memmove(f, f + 1, (cmd->ext_count - idx - 1) * sizeof(*f));
            cmd->ext_count--;
        }
        return 0;
    }
    char *v = rmq_cmd_strdup(cmd, value);
    if (!v)
        return -ENOMEM;
    if (f) {
        f->value = v;
        cmd->has_ext = true;
        return 0;
    }
    char *k = rmq_cmd_strdup(cmd, key);
    if (!k)
        return -ENOMEM;
    return rmq_cmd_ext_append_owned(cmd, k, v); /* not there: find_ext said so */
}

int rmq_cmd_set_body(rmq_cmd *cmd, const void *data, size_t len, rmq_body_free_fn free_fn,
                     void *free_ud)
{
    if (len > UINT32_MAX)
        return -ENOMEM;
    if (len == 0 || !data) {
        release_body(cmd);
        /* the caller handed the bytes over; an empty body keeps none */
        if (free_fn && data)
            free_fn(free_ud, data);
        return 0;
    }
    if (free_fn) {
        release_body(cmd);
        cmd->body = data;
        cmd->body_len = (uint32_t)len;
        cmd->body_free = free_fn;
        cmd->body_free_ud = free_ud;
        return 0;
    }
    uint8_t *copy = (uint8_t *)rmq_arena_alloc_str(cmd, len);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, data, len);
    release_body(cmd);
    cmd->body = copy;
    cmd->body_len = (uint32_t)len;
    return 0;
}

int rmq_cmd_own_body(rmq_cmd *cmd)
{
    if (!cmd->body_in_frame)
        return 0;
    uint8_t *copy = (uint8_t *)rmq_arena_alloc_str(cmd, cmd->body_len);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, cmd->body, cmd->body_len);
    cmd->body = copy;
    cmd->body_in_frame = false;
    return 0;
}

bool rmq_cmd_body_keep(rmq_cmd *cmd, rmq_body_free_fn free_fn, void *free_ud)
{
    if (!cmd->body_in_frame)
        return false;
    /* only the release fields change: another thread may be reading the
     * body of a deferred request right now, and the bytes stay put */
    cmd->body_free = free_fn;
    cmd->body_free_ud = free_ud;
    cmd->body_in_frame = false;
    return true;
}
