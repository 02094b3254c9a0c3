/* request_mutator.c — applies one to three mutations to a request so that
 * every kind of bad ext field and body reaches every processor. Changes only
 * the command it is given; deterministic for a given PRNG state. */
#include "request_mutator.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body_mutations.h"

typedef enum {
    M_EXT_DROP_ONE,
    M_EXT_DROP_ALL,
    M_EXT_EMPTY,
    M_EXT_NON_NUMERIC,
    M_EXT_HUGE_NUMBER,
    M_EXT_NEGATIVE,
    M_EXT_GARBAGE,
    M_EXT_EXTRA,
    M_EXT_NULL,
    M_BODY_NONE,
    M_BODY_RANDOM,
    M_BODY_TRUNCATED,
    M_BODY_FLIPPED,
    M_BODY_HUGE,
    M_BODY_WRONG_SHAPE,
    M_BODY_RETYPED,
    M_BODY_DEEP,
    M_BODY_DEFLATE,
    M_COUNT
} mutation;

static const char *const NON_NUMERIC[] = {"abc",      "1.5",          "0x10", " 12", "12 ",
                                          "12abc",    "1e3",          "+",    "-",   "NaN",
                                          "Infinity", "\xef\xbc\x91", "true", "null"};
static const char *const HUGE_NUMBERS[] = {"2147483647",
                                           "2147483648",
                                           "4294967296",
                                           "9223372036854775807",
                                           "9223372036854775808",
                                           "99999999999999999999999999999999",
                                           "1e308",
                                           "+2147483648"};
static const char *const NEGATIVES[] = {
    "-1", "-2147483648", "-2147483649", "-9223372036854775808", "-9223372036854775809",
    "-0", "--1"};

#define PICK(r, arr) ((arr)[fuzz_rng_below((r), sizeof(arr) / sizeof((arr)[0]))])

static void append(char *label, size_t len, const char *fmt, const char *a)
{
    size_t at = strlen(label);
    if (at < len)
        snprintf(label + at, len - at, fmt, a);
}

static bool all_digits(const char *v)
{
    if (!v || !*v)
        return false;
    for (; *v; v++)
        if (!isdigit((unsigned char)*v) && *v != '-')
            return false;
    return true;
}

static bool is_numeric_key(const fuzz_code_entry *e, const rmq_cmd *cmd, const char *key)
{
    if (e) {
        for (size_t i = 0; i < FUZZ_MAX_EXT && e->ext[i].key; i++)
            if (strcmp(e->ext[i].key, key) == 0)
                return e->ext[i].numeric;
        return false;
    }
    return all_digits(rmq_cmd_ext_get(cmd, key));
}

/* A key of cmd (numeric ones first when want_numeric), or NULL when empty. */
static const char *pick_key(fuzz_rng *r, const rmq_cmd *cmd, const fuzz_code_entry *e,
                            bool want_numeric)
{
    if (cmd->ext_count == 0)
        return NULL;
    if (want_numeric) {
        const char *nums[64];
        size_t n = 0;
        for (uint32_t i = 0; i < cmd->ext_count && n < 64; i++)
            if (is_numeric_key(e, cmd, cmd->ext[i].key))
                nums[n++] = cmd->ext[i].key;
        if (n > 0)
            return nums[fuzz_rng_below(r, n)];
    }
    return cmd->ext[fuzz_rng_below(r, cmd->ext_count)].key;
}

/* Garbage text: JSON headers must stay valid UTF-8 (the frame itself is not
 * what is under test), the binary header takes any byte. */
static char *garbage_text(fuzz_rng *r, bool binary)
{
    static const char *const pieces[] = {"\xe4\xb8\xad\xe6\x96\x87",
                                         "\t",
                                         "\n",
                                         "\"",
                                         "\\",
                                         "%RETRY%",
                                         "@",
                                         ";",
                                         ":",
                                         "{}",
                                         "\x01",
                                         "\x7f",
                                         "127.0.0.1:1"};
    size_t n = fuzz_rng_chance(r, 95) ? fuzz_rng_below(r, 64) : 1024 + fuzz_rng_below(r, 65536);
    char *s = malloc(n + 16);
    if (!s)
        return NULL;
    size_t at = 0;
    while (at < n) {
        if (fuzz_rng_chance(r, 10)) {
            const char *p = PICK(r, pieces);
            size_t pl = strlen(p);
            if (at + pl > n)
                break;
            memcpy(s + at, p, pl);
            at += pl;
        } else {
            unsigned char c = (unsigned char)fuzz_rng_next(r);
            if (!binary)
                c = (unsigned char)(0x20 + c % 0x5f);
            s[at++] = c ? (char)c : 'z';
        }
    }
    s[at] = '\0';
    return s;
}

static void set_body(rmq_cmd *cmd, fuzz_body b, char *label, size_t len)
{
    rmq_cmd_set_body(cmd, b.data, b.len, NULL, NULL);
    free(b.data);
    append(label, len, " %s", b.label);
}

static void drop_all_ext(rmq_cmd *cmd)
{
    while (cmd->ext_count > 0) {
        char key[256];
        snprintf(key, sizeof key, "%s", cmd->ext[0].key);
        if (rmq_cmd_ext_set(cmd, key, NULL) != 0)
            break;
    }
    cmd->has_ext = false;
}

static void apply(fuzz_rng *r, rmq_cmd *cmd, const fuzz_code_entry *e, mutation m, char *label,
                  size_t len)
{
    bool binary = cmd->serialize_type == RMQ_SERIALIZE_ROCKETMQ;
    const uint8_t *ob = cmd->body;
    size_t ol = cmd->body_len;
    const char *key = NULL;
    switch (m) {
    case M_EXT_DROP_ONE:
        key = pick_key(r, cmd, e, false);
        if (key) {
            append(label, len, " ext-drop(%s)", key);
            char k[256];
            snprintf(k, sizeof k, "%s", key);
            rmq_cmd_ext_set(cmd, k, NULL);
            return;
        }
        append(label, len, "%s", " ext-drop(none)");
        return;
    case M_EXT_DROP_ALL:
        append(label, len, "%s", " ext-drop-all");
        drop_all_ext(cmd);
        return;
    case M_EXT_EMPTY:
    case M_EXT_NON_NUMERIC:
    case M_EXT_HUGE_NUMBER:
    case M_EXT_NEGATIVE: {
        key = pick_key(r, cmd, e, m != M_EXT_EMPTY);
        if (!key) {
            append(label, len, "%s", " ext-none");
            return;
        }
        const char *v = m == M_EXT_EMPTY         ? ""
                        : m == M_EXT_NON_NUMERIC ? PICK(r, NON_NUMERIC)
                        : m == M_EXT_HUGE_NUMBER ? PICK(r, HUGE_NUMBERS)
                                                 : PICK(r, NEGATIVES);
        char k[256];
        snprintf(k, sizeof k, "%s", key);
        char what[320];
        snprintf(what, sizeof what, " ext-%s(%s=",
                 m == M_EXT_EMPTY         ? "empty"
                 : m == M_EXT_NON_NUMERIC ? "nonnum"
                 : m == M_EXT_HUGE_NUMBER ? "huge"
                                          : "neg",
                 k);
        append(label, len, "%s", what);
        append(label, len, "%s)", v);
        rmq_cmd_ext_set(cmd, k, v);
        return;
    }
    case M_EXT_GARBAGE: {
        key = pick_key(r, cmd, e, false);
        char k[256];
        snprintf(k, sizeof k, "%s", key ? key : "garbageKey");
        char *v = garbage_text(r, binary);
        if (v)
            rmq_cmd_ext_set(cmd, k, v);
        cmd->has_ext = true;
        append(label, len, " ext-garbage(%s)", k);
        free(v);
        return;
    }
    case M_EXT_EXTRA: {
        size_t n = fuzz_rng_chance(r, 90) ? 1 + fuzz_rng_below(r, 4) : 200 + fuzz_rng_below(r, 800);
        for (size_t i = 0; i < n; i++) {
            char k[32];
            snprintf(k, sizeof k, "unknown%zu", i);
            rmq_cmd_ext_set(cmd, k, i % 2 ? "x" : "");
        }
        cmd->has_ext = true;
        append(label, len, "%s", n > 4 ? " ext-extra-many" : " ext-extra");
        return;
    }
    case M_EXT_NULL: /* JSON "key":null; binary: an empty value */
        if (cmd->ext_count == 0) {
            append(label, len, "%s", " ext-none");
            return;
        }
        {
            rmq_ext_field *f = &cmd->ext[fuzz_rng_below(r, cmd->ext_count)];
            append(label, len, " ext-null(%s)", f->key);
            f->value = NULL;
        }
        return;
    case M_BODY_NONE:
        rmq_cmd_set_body(cmd, NULL, 0, NULL, NULL);
        append(label, len, "%s", " body-none");
        return;
    case M_BODY_RANDOM: set_body(cmd, fuzz_body_random(r), label, len); return;
    case M_BODY_TRUNCATED: set_body(cmd, fuzz_body_truncated(r, ob, ol), label, len); return;
    case M_BODY_FLIPPED: set_body(cmd, fuzz_body_flipped(r, ob, ol), label, len); return;
    case M_BODY_HUGE: set_body(cmd, fuzz_body_huge(r), label, len); return;
    case M_BODY_WRONG_SHAPE: set_body(cmd, fuzz_body_wrong_shape(r), label, len); return;
    case M_BODY_RETYPED: set_body(cmd, fuzz_body_retyped_json(r, ob, ol), label, len); return;
    case M_BODY_DEEP: set_body(cmd, fuzz_body_deep_nesting(r), label, len); return;
    case M_BODY_DEFLATE:
        rmq_cmd_ext_set(cmd, "compressed", "true");
        cmd->has_ext = true;
        set_body(cmd, fuzz_body_deflate_garbage(r, ob, ol), label, len);
        return;
    case M_COUNT: break;
    }
}

void fuzz_mutate_request(fuzz_rng *r, rmq_cmd *cmd, const fuzz_code_entry *e, char *label,
                         size_t label_len)
{
    if (fuzz_rng_chance(r, 35))
        cmd->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    if (fuzz_rng_chance(r, 8))
        cmd->flag |= RMQ_FLAG_ONEWAY;
    append(label, label_len, "%s",
           cmd->serialize_type == RMQ_SERIALIZE_ROCKETMQ ? " ROCKETMQ" : " JSON");
    if (cmd->flag & RMQ_FLAG_ONEWAY)
        append(label, label_len, "%s", " oneway");
    if (fuzz_rng_chance(r, 5)) {
        static const int32_t versions[] = {0, -1, 37, 401, 32767, -32768};
        cmd->version = PICK(r, versions);
        append(label, label_len, "%s", " odd-version");
    }
    if (fuzz_rng_chance(r, 4)) {
        cmd->language = (int32_t)fuzz_rng_below(r, 256);
        append(label, label_len, "%s", " odd-language");
    }
    if (fuzz_rng_chance(r, 3)) {
        char *t = garbage_text(r, cmd->serialize_type == RMQ_SERIALIZE_ROCKETMQ);
        rmq_cmd_set_remark(cmd, t);
        free(t);
        append(label, label_len, "%s", " remark");
    }
    if (fuzz_rng_chance(r, 4)) {
        append(label, label_len, "%s", " unmutated");
        return;
    }
    size_t n = 1 + fuzz_rng_below(r, 3);
    for (size_t i = 0; i < n; i++) {
        mutation m = (mutation)fuzz_rng_below(r, M_COUNT);
        /* huge bodies cost the most time: one in three draws keeps them */
        if (m == M_BODY_HUGE && !fuzz_rng_chance(r, 33))
            m = M_BODY_RANDOM;
        /* JSON bodies get more retyped values: they pass the parser and
         * reach the field readers */
        /* REGISTER_BROKER is the one code with a compressed body decoder */
        if (cmd->code == 103 && fuzz_rng_chance(r, 25))
            m = M_BODY_DEFLATE;
        if (m == M_BODY_RANDOM && cmd->body_len > 0 && cmd->body[0] == '{' &&
            fuzz_rng_chance(r, 60))
            m = M_BODY_RETYPED;
        apply(r, cmd, e, m, label, label_len);
    }
    /* a matching CRC lets the bad body reach the decoder, unless the CRC
     * itself was the mutation */
    if (!strstr(label, "(bodyCrc32") && fuzz_rng_chance(r, 80))
        fuzz_catalog_refresh_crc(cmd);
}
