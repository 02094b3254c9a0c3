/* expr_command.c — owns the `expr` admin command's grammar and output:
 * options only before EXPR, EXPR taken literally (even "-x"), KEY=VALUE
 * properties (KEY= is an empty string, an absent key is missing). Must not
 * touch plugin state: it compiles its own throw-away expression. */
#include "expr_command.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROPS 256

typedef struct props {
    const char *kv[2 * MAX_PROPS + 1]; /* pointers into `store` */
    char *store[MAX_PROPS];
    size_t n;
} props;

static const char *lookup(void *ud, const char *name)
{
    const props *p = ud;
    /* the last KEY=VALUE for a key wins, as with repeated -D options */
    const char *v = NULL;
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->kv[2 * i], name) == 0)
            v = p->kv[2 * i + 1];
    return v;
}

static void outf(expr_out_fn out, void *ud, const char *fmt, ...) RMQ_PRINTF(3, 4);
static void outf(expr_out_fn out, void *ud, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out(ud, buf);
}

static void emit_json(expr_out_fn out, void *ud, bool compiled, const char *error, int pos,
                      const char *result, bool result_is_string, const char *eval_error)
{
    json_t *o = json_object();
    json_object_set_new(o, "compile", json_boolean(compiled));
    json_object_set_new(o, "error", error ? json_string(error) : json_null());
    if (!compiled && pos > 0)
        json_object_set_new(o, "position", json_integer(pos));
    if (!result)
        json_object_set_new(o, "result", json_null());
    else if (result_is_string)
        json_object_set_new(o, "result", json_string(result));
    else
        json_object_set_new(o, "result", json_boolean(strcmp(result, "true") == 0));
    json_object_set_new(o, "evalError", eval_error ? json_string(eval_error) : json_null());
    char *text = json_dumps(o, JSON_SORT_KEYS);
    json_decref(o);
    if (text) {
        out(ud, text);
        out(ud, "\n");
    }
    free(text);
}

static void free_props(props *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->store[i]);
}

int expr_command_run(const rmq_fx_options *opt, int argc, const char *const *argv, bool json,
                     expr_out_fn out, void *ud)
{
    const char *type = "SQL92";
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--type") == 0) {
            if (i + 1 >= argc) {
                outf(out, ud, "usage: %s\n", EXPR_COMMAND_USAGE);
                return 2;
            }
            type = argv[++i];
        } else if (strncmp(a, "--type=", 7) == 0) {
            type = a + 7;
        } else {
            break; /* EXPR, even when it starts with '-' */
        }
    }
    if (strcmp(type, "SQL92") != 0 && strcmp(type, "TAG") != 0) {
        outf(out, ud, "usage: %s\n  --type must be SQL92 or TAG, not '%s'\n", EXPR_COMMAND_USAGE,
             type);
        return 2;
    }
    if (i >= argc) {
        outf(out, ud, "usage: %s\n", EXPR_COMMAND_USAGE);
        return 2;
    }
    const char *expr = argv[i++];
    props p;
    memset(&p, 0, sizeof p);
    for (; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq || eq == argv[i] || p.n >= MAX_PROPS) {
            outf(out, ud, "usage: %s\n  expected KEY=VALUE, got '%s'\n", EXPR_COMMAND_USAGE,
                 argv[i]);
            free_props(&p);
            return 2;
        }
        char *copy = strdup(argv[i]);
        if (!copy) {
            free_props(&p);
            return 1;
        }
        copy[eq - argv[i]] = '\0';
        p.store[p.n] = copy;
        p.kv[2 * p.n] = copy;
        p.kv[2 * p.n + 1] = copy + (eq - argv[i]) + 1;
        p.n++;
    }

    char err[2048];
    int pos = 0;
    struct rmq_filter_expr *e = NULL;
    int rc = rmq_fx_compile(type, expr, strlen(expr), opt, &e, err, sizeof err, &pos);
    if (rc != 0) {
        if (json) {
            emit_json(out, ud, false, err, pos, NULL, false, NULL);
        } else {
            outf(out, ud, "error: %s\n", err);
            if (pos > 0 && !strchr(expr, '\n') && strlen(expr) < 200) {
                /* caret under the offending character (positions count characters) */
                char caret[256];
                size_t col = 0;
                for (const unsigned char *s = (const unsigned char *)expr; *s && (int)col < pos - 1;
                     s++)
                    if ((*s & 0xC0) != 0x80)
                        col++;
                if (col > sizeof caret - 2)
                    col = sizeof caret - 2;
                memset(caret, ' ', col);
                caret[col] = '^';
                caret[col + 1] = '\0';
                outf(out, ud, "  at character %d:\n    %s\n    %s\n", pos, expr, caret);
            }
        }
        free_props(&p);
        return 1;
    }

    const char *tag = strcmp(type, "TAG") == 0 ? lookup(&p, "TAGS") : NULL;
    char why[1024];
    rmq_filter_result r = rmq_fx_evaluate(e, tag, lookup, &p, why, sizeof why);
    free(e);
    free_props(&p);
    if (json) {
        switch (r) {
        case RMQ_FILTER_TRUE: emit_json(out, ud, true, NULL, 0, "true", false, NULL); break;
        case RMQ_FILTER_FALSE: emit_json(out, ud, true, NULL, 0, "false", false, NULL); break;
        case RMQ_FILTER_NULL: emit_json(out, ud, true, NULL, 0, NULL, false, NULL); break;
        default: emit_json(out, ud, true, NULL, 0, "eval-error", true, why); break;
        }
        return 0;
    }
    switch (r) {
    case RMQ_FILTER_TRUE: outf(out, ud, "match\n"); break;
    case RMQ_FILTER_FALSE: outf(out, ud, "no match: false\n"); break;
    case RMQ_FILTER_NULL:
        outf(out, ud, "no match: null (unknown: a property the selector needs is missing)\n");
        break;
    default:
        outf(out, ud, "no match: evaluation error (the broker skips the message): %s\n", why);
        break;
    }
    return 0;
}
