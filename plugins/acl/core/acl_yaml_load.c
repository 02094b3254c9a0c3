/* acl_yaml_load.c — owns reading one plain_acl.yml with libyaml: the keys
 * Java reads (globalWhiteRemoteAddresses, accounts, dataVersion), YAML 1.1
 * scalars as snakeyaml resolves them (null, booleans, numbers as text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "acl_config.h"

typedef struct doc {
    yaml_document_t d;
} doc;

static yaml_node_t *node(doc *y, int id)
{
    return id ? yaml_document_get_node(&y->d, id) : NULL;
}

/* snakeyaml's null: an empty plain scalar, "~", "null"/"Null"/"NULL". */
static bool is_null(const yaml_node_t *n)
{
    if (!n)
        return true;
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *v = (const char *)n->data.scalar.value;
    return n->data.scalar.length == 0 || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
           strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

static const char *scalar(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE || is_null(n))
        return NULL;
    return (const char *)n->data.scalar.value;
}

static yaml_node_t *map_get(doc *y, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    yaml_node_t *found = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node(y, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0)
            found = node(y, p->value); /* a repeated key: the last wins, as a map */
    }
    return found;
}

/* A sequence of scalars (nulls skipped) → malloc'd array of borrowed
 * strings. A single scalar is taken as a one-item list. */
static int string_list(doc *y, yaml_node_t *n, const char *what, const char ***out, size_t *count,
                       char *err, size_t errlen)
{
    *out = NULL;
    *count = 0;
    if (is_null(n))
        return 0;
    if (n->type == YAML_SCALAR_NODE) {
        *out = malloc(sizeof(char *));
        if (!*out)
            return -1;
        (*out)[0] = scalar(n);
        *count = 1;
        return 0;
    }
    if (n->type != YAML_SEQUENCE_NODE) {
        snprintf(err, errlen, "%s must be a list", what);
        return -1;
    }
    size_t cap = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    *out = calloc(cap ? cap : 1, sizeof(char *));
    if (!*out)
        return -1;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        yaml_node_t *v = node(y, *it);
        if (is_null(v))
            continue;
        if (v->type != YAML_SCALAR_NODE) {
            snprintf(err, errlen, "%s: every item must be a string", what);
            free(*out);
            *out = NULL;
            return -1;
        }
        (*out)[(*count)++] = scalar(v);
    }
    return 0;
}

static int parse_bool(const yaml_node_t *n, bool *out)
{
    const char *v = scalar(n);
    *out = false;
    if (!v)
        return 0;
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(v, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcmp(v, no[i]) == 0)
            return 0;
    }
    return -1;
}

static int parse_account(doc *y, yaml_node_t *m, acl_account *a, char *err, size_t errlen)
{
    if (m->type != YAML_MAPPING_NODE) {
        snprintf(err, errlen, "accounts: every item must be a mapping");
        return -1;
    }
    const char **topics = NULL, **groups = NULL;
    size_t nt = 0, ng = 0;
    bool admin;
    const char *ak = scalar(map_get(y, m, "accessKey"));
    if (parse_bool(map_get(y, m, "admin"), &admin) != 0) {
        snprintf(err, errlen, "account %s: admin must be true or false", ak ? ak : "null");
        return -1;
    }
    if (string_list(y, map_get(y, m, "topicPerms"), "topicPerms", &topics, &nt, err, errlen) ||
        string_list(y, map_get(y, m, "groupPerms"), "groupPerms", &groups, &ng, err, errlen)) {
        free(topics);
        return -1;
    }
    int rc = acl_account_init(
        a, ak, scalar(map_get(y, m, "secretKey")), scalar(map_get(y, m, "whiteRemoteAddress")),
        admin, scalar(map_get(y, m, "defaultTopicPerm")), scalar(map_get(y, m, "defaultGroupPerm")),
        (char **)topics, nt, (char **)groups, ng, err, errlen);
    free(topics);
    free(groups);
    return rc;
}

static int parse_version(doc *y, yaml_node_t *n, acl_file *f)
{
    /* dataVersion: [ {timestamp: N, counter: N} ] — the first element */
    if (!n || n->type != YAML_SEQUENCE_NODE ||
        n->data.sequence.items.top == n->data.sequence.items.start)
        return 0;
    yaml_node_t *e = node(y, *n->data.sequence.items.start);
    const char *ts = scalar(map_get(y, e, "timestamp"));
    const char *ct = scalar(map_get(y, e, "counter"));
    if (ts)
        f->version_timestamp = strtoll(ts, NULL, 10);
    if (ct)
        f->version_counter = strtoll(ct, NULL, 10);
    f->has_version = ts || ct;
    return 0;
}

static int parse_root(doc *y, acl_file *f, char *err, size_t errlen)
{
    yaml_node_t *root = yaml_document_get_root_node(&y->d);
    if (!root || is_null(root))
        return 0; /* an empty file: no data, as Java's "No data in file" */
    if (root->type != YAML_MAPPING_NODE) {
        snprintf(err, errlen, "the top level must be a mapping");
        return -1;
    }
    const char **gw = NULL;
    size_t ngw = 0;
    if (string_list(y, map_get(y, root, "globalWhiteRemoteAddresses"), "globalWhiteRemoteAddresses",
                    &gw, &ngw, err, errlen))
        return -1;
    f->global_white = calloc(ngw ? ngw : 1, sizeof(char *));
    f->global_pats = calloc(ngw ? ngw : 1, sizeof(acl_pattern *));
    if (!f->global_white || !f->global_pats) {
        free(gw);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < ngw; i++) {
        f->global_white[i] = strdup(gw[i]);
        f->nglobal_white++;
        if (!f->global_white[i] || acl_pattern_compile(gw[i], &f->global_pats[i], err, errlen)) {
            free(gw);
            return -1;
        }
    }
    free(gw);
    yaml_node_t *acc = map_get(y, root, "accounts");
    if (!is_null(acc)) {
        if (acc->type != YAML_SEQUENCE_NODE) {
            snprintf(err, errlen, "accounts must be a list");
            return -1;
        }
        size_t cap = (size_t)(acc->data.sequence.items.top - acc->data.sequence.items.start);
        f->accounts = calloc(cap ? cap : 1, sizeof(acl_account));
        if (!f->accounts) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (yaml_node_item_t *it = acc->data.sequence.items.start;
             it < acc->data.sequence.items.top; it++) {
            yaml_node_t *m = node(y, *it);
            if (is_null(m))
                continue;
            if (parse_account(y, m, &f->accounts[f->naccounts], err, errlen) != 0)
                return -1;
            f->naccounts++;
        }
    }
    return parse_version(y, map_get(y, root, "dataVersion"), f);
}

int acl_file_parse(const char *path, const char *text, size_t len, acl_file *out, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof(*out));
    char why[400] = "";
    out->path = strdup(path ? path : "");
    if (!out->path) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    doc y;
    int rc = 0;
    if (!yaml_parser_load(&parser, &y.d)) {
        snprintf(err, errlen, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
                 parser.problem_mark.column + 1, parser.problem ? parser.problem : "bad YAML");
        yaml_parser_delete(&parser);
        acl_file_clear(out);
        return -1;
    }
    rc = parse_root(&y, out, why, sizeof(why));
    yaml_document_delete(&y.d);
    yaml_parser_delete(&parser);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, why);
        acl_file_clear(out);
    }
    return rc;
}

void acl_file_clear(acl_file *f)
{
    if (!f)
        return;
    free(f->path);
    for (size_t i = 0; i < f->nglobal_white; i++) {
        free(f->global_white[i]);
        acl_pattern_free(f->global_pats[i]);
    }
    free(f->global_white);
    free(f->global_pats);
    for (size_t i = 0; i < f->naccounts; i++)
        acl_account_clear(&f->accounts[i]);
    free(f->accounts);
    memset(f, 0, sizeof(*f));
}
