/* acl_account.c — owns one account: the checks Java's buildPlainAccessResource
 * makes (key lengths, resource permission syntax, white-address pattern) and
 * the parsed resource table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_config.h"
#include "acl_perm.h"

#define KEY_MIN_LENGTH 6 /* Java: length must be > 6 */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static char *trim_dup(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

static int add_res(acl_account *a, char *resource, uint8_t perm)
{
    for (size_t i = 0; i < a->nres; i++) {
        if (strcmp(a->res[i].resource, resource) == 0) {
            a->res[i].perm = perm; /* Java's HashMap.put: the later entry wins */
            free(resource);
            return 0;
        }
    }
    acl_resource_perm *n = realloc(a->res, (a->nres + 1) * sizeof(*n));
    if (!n) {
        free(resource);
        return -1;
    }
    a->res = n;
    a->res[a->nres].resource = resource;
    a->res[a->nres].perm = perm;
    a->nres++;
    return 0;
}

/* "name=PERM" as Java's StringUtils.split(resource, "="): runs of '=' are one
 * separator, empty pieces dropped; exactly two pieces are required. */
static int parse_resource_perm(acl_account *a, const char *text, bool topic, char *err,
                               size_t errlen)
{
    const char *pieces[3];
    size_t lens[3];
    int n = 0;
    const char *s = text;
    while (*s) {
        while (*s == '=')
            s++;
        if (!*s)
            break;
        const char *e = s;
        while (*e && *e != '=')
            e++;
        if (n < 3) {
            pieces[n] = s;
            lens[n] = (size_t)(e - s);
        }
        n++;
        s = e;
    }
    if (n != 2) {
        snprintf(err, errlen, "Parse resource permission failed for %s:%s",
                 topic ? "topic" : "group", text);
        return -1;
    }
    char *name = trim_dup(pieces[0], lens[0]);
    char *perm = trim_dup(pieces[1], lens[1]);
    char *resource = NULL;
    if (name && perm) {
        if (topic) {
            resource = name;
            name = NULL;
        } else {
            resource = malloc(strlen(ACL_RETRY_PREFIX) + strlen(name) + 1);
            if (resource)
                sprintf(resource, "%s%s", ACL_RETRY_PREFIX, name);
        }
    }
    int rc = resource ? add_res(a, resource, acl_perm_parse(perm)) : -1;
    free(name);
    free(perm);
    if (rc)
        snprintf(err, errlen, "out of memory");
    return rc;
}

static char **dup_list(char **src, size_t n)
{
    char **r = calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; r && i < n; i++) {
        r[i] = strdup(src[i] ? src[i] : "");
        if (!r[i]) {
            while (i--)
                free(r[i]);
            free(r);
            return NULL;
        }
    }
    return r;
}

int acl_account_init(acl_account *a, const char *access_key, const char *secret_key,
                     const char *white, bool admin, const char *dtp, const char *dgp,
                     char **topic_perms, size_t ntopic, char **group_perms, size_t ngroup,
                     char *err, size_t errlen)
{
    memset(a, 0, sizeof(*a));
    /* Java's message names the secret too; a log must never show it. */
    if (!access_key || !secret_key || strlen(access_key) <= KEY_MIN_LENGTH ||
        strlen(secret_key) <= KEY_MIN_LENGTH) {
        snprintf(err, errlen,
                 "The accessKey=%s and secretKey cannot be null and length should longer than 6",
                 access_key ? access_key : "null");
        return -1;
    }
    a->access_key = strdup(access_key);
    a->secret_key = strdup(secret_key);
    a->white_remote_address = dup_or_null(white);
    a->admin = admin;
    a->default_topic_perm = dup_or_null(dtp);
    a->default_group_perm = dup_or_null(dgp);
    a->default_topic_bits = acl_perm_parse(dtp);
    a->default_group_bits = acl_perm_parse(dgp);
    a->topic_perms = dup_list(topic_perms, ntopic);
    a->ntopic_perms = a->topic_perms ? ntopic : 0;
    a->group_perms = dup_list(group_perms, ngroup);
    a->ngroup_perms = a->group_perms ? ngroup : 0;
    if (!a->access_key || !a->secret_key || (white && !a->white_remote_address) ||
        (dtp && !a->default_topic_perm) || (dgp && !a->default_group_perm) || !a->topic_perms ||
        !a->group_perms) {
        snprintf(err, errlen, "out of memory");
        acl_account_clear(a);
        return -1;
    }
    /* Java parses group permissions first, then topics (same map). */
    for (size_t i = 0; i < ngroup; i++)
        if (parse_resource_perm(a, a->group_perms[i], false, err, errlen) != 0) {
            acl_account_clear(a);
            return -1;
        }
    for (size_t i = 0; i < ntopic; i++)
        if (parse_resource_perm(a, a->topic_perms[i], true, err, errlen) != 0) {
            acl_account_clear(a);
            return -1;
        }
    if (acl_pattern_compile(white, &a->white, err, errlen) != 0) {
        acl_account_clear(a);
        return -1;
    }
    acl_hmac_key_init(&a->hmac, a->secret_key);
    return 0;
}

void acl_account_clear(acl_account *a)
{
    if (!a)
        return;
    free(a->access_key);
    if (a->secret_key) {
        /* do not leave secrets in freed memory */
        memset(a->secret_key, 0, strlen(a->secret_key));
        free(a->secret_key);
    }
    free(a->white_remote_address);
    free(a->default_topic_perm);
    free(a->default_group_perm);
    for (size_t i = 0; i < a->ntopic_perms; i++)
        free(a->topic_perms[i]);
    free(a->topic_perms);
    for (size_t i = 0; i < a->ngroup_perms; i++)
        free(a->group_perms[i]);
    free(a->group_perms);
    for (size_t i = 0; i < a->nres; i++)
        free(a->res[i].resource);
    free(a->res);
    acl_pattern_free(a->white);
    memset(a, 0, sizeof(*a));
}

const acl_resource_perm *acl_account_find_res(const acl_account *a, const char *resource)
{
    for (size_t i = 0; i < a->nres; i++)
        if (strcmp(a->res[i].resource, resource) == 0)
            return &a->res[i];
    return NULL;
}
