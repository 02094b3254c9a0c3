/* fuzz_counts.c — the summary tallies of the request fuzz test. Owns only
 * its table; a failed allocation drops a count (the summary is for the log,
 * never for pass/fail). */
#include "fuzz_counts.h"

#include <stdlib.h>
#include <string.h>

/* Numeric keys sort numerically ("9" before "10"), others by text. */
static int key_cmp(const char *a, const char *b)
{
    char *ea, *eb;
    long na = strtol(a, &ea, 10), nb = strtol(b, &eb, 10);
    if (*a && *b && !*ea && !*eb)
        return na < nb ? -1 : na > nb;
    return strcmp(a, b);
}

void fuzz_counts_add(fuzz_counts *c, const char *key)
{
    size_t i = 0;
    while (i < c->n && key_cmp(c->v[i].key, key) < 0)
        i++;
    if (i < c->n && key_cmp(c->v[i].key, key) == 0) {
        c->v[i].count++;
        return;
    }
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 32;
        fuzz_count_entry *v = realloc(c->v, nc * sizeof *v);
        if (!v)
            return;
        c->v = v;
        c->cap = nc;
    }
    memmove(&c->v[i + 1], &c->v[i], (c->n - i) * sizeof *c->v);
    snprintf(c->v[i].key, sizeof c->v[i].key, "%s", key);
    c->v[i].count = 1;
    c->n++;
}

void fuzz_counts_add_int(fuzz_counts *c, long key)
{
    char k[24];
    snprintf(k, sizeof k, "%ld", key);
    fuzz_counts_add(c, k);
}

unsigned long fuzz_counts_total(const fuzz_counts *c)
{
    unsigned long t = 0;
    for (size_t i = 0; i < c->n; i++)
        t += c->v[i].count;
    return t;
}

void fuzz_counts_print(const fuzz_counts *c, const char *title, FILE *out)
{
    fprintf(out, "%s (total %lu):", title, fuzz_counts_total(c));
    for (size_t i = 0; i < c->n; i++)
        fprintf(out, "%s%s=%lu", i % 10 == 0 ? "\n   " : " ", c->v[i].key, c->v[i].count);
    fputc('\n', out);
}

void fuzz_counts_free(fuzz_counts *c)
{
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}
