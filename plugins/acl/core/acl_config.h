/* acl_config.h — the accounts and white lists of one or more plain_acl.yml
 * files (Java 4.9.8's format), immutable once built: the plugin publishes a
 * new one with RCU when a file changes. */
#ifndef ACL_CONFIG_H
#define ACL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl_signature.h"
#include "address_pattern.h"

typedef struct acl_resource_perm {
    char *resource; /* topic, or %RETRY%group for a group */
    uint8_t perm;
} acl_resource_perm;

typedef struct acl_account {
    char *access_key;
    char *secret_key;
    char *white_remote_address; /* as written; NULL when absent */
    bool admin;
    char *default_topic_perm; /* as written; NULL when absent (DENY) */
    char *default_group_perm;
    uint8_t default_topic_bits, default_group_bits;
    char **topic_perms; /* "topicA=PUB" as written */
    size_t ntopic_perms;
    char **group_perms;
    size_t ngroup_perms;
    acl_resource_perm *res; /* parsed: group entries first, then topics; later wins */
    size_t nres;
    acl_pattern *white;
    acl_hmac_key hmac; /* from secret_key, made once */
    size_t file;       /* index of the file that defines it */
} acl_account;

typedef struct acl_file {
    char *path;
    char **global_white; /* as written */
    size_t nglobal_white;
    acl_pattern **global_pats;
    acl_account *accounts;
    size_t naccounts;
    bool has_version;
    int64_t version_timestamp, version_counter;
} acl_file;

typedef struct acl_config {
    acl_file *files;
    size_t nfiles;
    acl_account **by_key; /* sorted by access key; the first file wins a duplicate */
    size_t nkeys;
    uint64_t generation; /* set by the plugin, shown in stats */
} acl_config;

/* Parse one file's text. 0, or -1 with "path: message" in err (the message
 * of the AclException Java throws where it has one). */
int acl_file_parse(const char *path, const char *text, size_t len, acl_file *out, char *err,
                   size_t errlen);
void acl_file_clear(acl_file *f);

/* Read every path (a file group/other can read is refused) and build one
 * configuration. 0, or -1 with err. */
int acl_config_load(const char *const *paths, size_t npaths, acl_config **out, char *err,
                    size_t errlen);
/* Build from parsed files (takes them over, even on failure). */
int acl_config_build(acl_file *files, size_t nfiles, acl_config **out, char *err, size_t errlen);
void acl_config_free(acl_config *c);
const acl_account *acl_config_find(const acl_config *c, const char *access_key);
/* Java's ownership of a resource: explicit entry or NULL. */
const acl_resource_perm *acl_account_find_res(const acl_account *a, const char *resource);

/* Build an account from its fields (admin code 50 and the loader). 0, or -1
 * with Java's AclException message in err. */
int acl_account_init(acl_account *a, const char *access_key, const char *secret_key,
                     const char *white, bool admin, const char *dtp, const char *dgp,
                     char **topic_perms, size_t ntopic, char **group_perms, size_t ngroup,
                     char *err, size_t errlen);
void acl_account_clear(acl_account *a);

/* The YAML text of one file (after an admin code changed it), Java's layout,
 * every string double-quoted. malloc'd (caller frees), NULL when out of
 * memory. acl_file_parse reads it back to the same content. */
char *acl_yaml_render(const acl_file *f, size_t *len);

#endif
