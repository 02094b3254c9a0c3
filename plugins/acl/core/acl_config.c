/* acl_config.c — owns one immutable configuration built from several files:
 * reading them (refusing files group/other may read), the access-key index
 * (the first file defining a key wins, as Java's accessKeyTable). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acl_config.h"

#define MAX_FILE_BYTES (4u << 20)

static int read_file(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        fclose(f);
        return -1;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        snprintf(err, errlen,
                 "%s: holds secret keys but group/other may access it (mode %04o): chmod 600 it",
                 path, (unsigned)(st.st_mode & 07777));
        fclose(f);
        return -1;
    }
    if ((uint64_t)st.st_size > MAX_FILE_BYTES) {
        snprintf(err, errlen, "%s: larger than %u bytes", path, MAX_FILE_BYTES);
        fclose(f);
        return -1;
    }
    *data = malloc((size_t)st.st_size + 1);
    if (!*data) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    *len = fread(*data, 1, (size_t)st.st_size, f);
    (*data)[*len] = 0;
    fclose(f);
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    const acl_account *x = *(const acl_account *const *)a, *y = *(const acl_account *const *)b;
    int c = strcmp(x->access_key, y->access_key);
    if (c)
        return c;
    return x->file < y->file ? -1 : x->file > y->file; /* stable: first file first */
}

int acl_config_build(acl_file *files, size_t nfiles, acl_config **out, char *err, size_t errlen)
{
    *out = NULL;
    acl_config *c = calloc(1, sizeof(*c));
    size_t total = 0;
    for (size_t i = 0; i < nfiles; i++)
        total += files[i].naccounts;
    acl_account **all = calloc(total ? total : 1, sizeof(*all));
    if (!c || !all) {
        free(c);
        free(all);
        for (size_t i = 0; i < nfiles; i++)
            acl_file_clear(&files[i]);
        free(files);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->files = files;
    c->nfiles = nfiles;
    size_t n = 0;
    for (size_t i = 0; i < nfiles; i++) {
        /* within one file a repeated key: the later account wins (a map) */
        for (size_t k = 0; k < files[i].naccounts; k++) {
            acl_account *a = &files[i].accounts[k];
            a->file = i;
            bool later = false;
            for (size_t j = k + 1; j < files[i].naccounts && !later; j++)
                later = strcmp(files[i].accounts[j].access_key, a->access_key) == 0;
            if (!later)
                all[n++] = a;
        }
    }
    qsort(all, n, sizeof(*all), cmp_key);
    size_t w = 0;
    for (size_t r = 0; r < n; r++)
        if (w == 0 || strcmp(all[w - 1]->access_key, all[r]->access_key) != 0)
            all[w++] = all[r];
    c->by_key = all;
    c->nkeys = w;
    *out = c;
    return 0;
}

int acl_config_load(const char *const *paths, size_t npaths, acl_config **out, char *err,
                    size_t errlen)
{
    acl_file *files = calloc(npaths ? npaths : 1, sizeof(*files));
    if (!files) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < npaths; i++) {
        char *text = NULL;
        size_t len = 0;
        int rc = read_file(paths[i], &text, &len, err, errlen);
        if (rc == 0)
            rc = acl_file_parse(paths[i], text, len, &files[i], err, errlen);
        free(text);
        if (rc) {
            for (size_t k = 0; k < i; k++)
                acl_file_clear(&files[k]);
            free(files);
            return -1;
        }
    }
    return acl_config_build(files, npaths, out, err, errlen);
}

void acl_config_free(acl_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nfiles; i++)
        acl_file_clear(&c->files[i]);
    free(c->files);
    free(c->by_key);
    free(c);
}

const acl_account *acl_config_find(const acl_config *c, const char *access_key)
{
    if (!c || !access_key)
        return NULL;
    size_t lo = 0, hi = c->nkeys;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = strcmp(c->by_key[mid]->access_key, access_key);
        if (r == 0)
            return c->by_key[mid];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
