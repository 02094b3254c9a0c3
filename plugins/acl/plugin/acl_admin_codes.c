/* acl_admin_codes.c — owns the broker's ACL admin codes (mqadmin
 * updateAclConfig, deleteAclConfig, updateGlobalWhiteAddr,
 * clusterAclConfigVersion, getAclConfig): 50..54. A change is written to the
 * file that holds the account (new accounts: the default file) and then
 * published like a file edit. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include <rmqhost/services/broker_meta_service.h>

#include "acl_file_write.h"
#include "acl_plugin.h"

enum {
    UPDATE_AND_CREATE_ACL_CONFIG = 50,
    DELETE_ACL_CONFIG = 51,
    GET_BROKER_CLUSTER_ACL_INFO = 52,
    UPDATE_GLOBAL_WHITE_ADDRS_CONFIG = 53,
    GET_BROKER_CLUSTER_ACL_CONFIG = 54,
    UPDATE_AND_CREATE_ACL_CONFIG_FAILED = 209,
    DELETE_ACL_CONFIG_FAILED = 210,
    UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED = 211,
};

static int answer(acl_plugin *p, rmq_request *req, const rmq_cmd *cmd, int32_t code,
                  const char *remark)
{
    rmq_cmd *resp = p->api->cmd_new_response(cmd, code, remark);
    if (!resp)
        return RMQ_ENOMEM;
    return p->api->reply(req, resp);
}

/* Java's UtilAll.split(s, ","): NULL stays NULL (absent), "" is one empty item. */
static char **split_commas(const char *s, size_t *n)
{
    *n = 0;
    if (!s)
        return NULL;
    size_t cap = 1;
    for (const char *c = s; *c; c++)
        cap += *c == ',';
    char **v = calloc(cap, sizeof(char *));
    if (!v)
        return NULL;
    const char *start = s;
    for (;;) {
        const char *e = strchr(start, ',');
        size_t len = e ? (size_t)(e - start) : strlen(start);
        v[*n] = strndup(start, len);
        if (!v[*n])
            break;
        (*n)++;
        if (!e)
            break;
        start = e + 1;
    }
    /* String.split drops trailing empty strings (but keeps a lone "") */
    while (*n > 1 && v[*n - 1][0] == 0)
        free(v[--*n]);
    return v;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Read one file fresh from disk as a one-file configuration. */
static acl_config *read_one(const char *path, char *err, size_t errlen)
{
    acl_config *c = NULL;
    const char *paths[1] = {path};
    if (acl_config_load(paths, 1, &c, err, errlen) != 0)
        return NULL;
    return c;
}

static void next_version(acl_plugin *p, acl_file *f)
{
    f->has_version = true;
    f->version_counter++;
    f->version_timestamp = (int64_t)p->api->now_wall_ms();
}

static int write_and_publish(acl_plugin *p, const acl_file *f, const char *why, char *err,
                             size_t errlen)
{
    size_t len = 0;
    char *text = acl_yaml_render(f, &len);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = acl_write_file_0600(f->path, text, len, err, errlen);
    memset(text, 0, len);
    free(text);
    if (rc == 0)
        rc = acl_reload(p, why, err, errlen);
    return rc;
}

/* The file holding `ak` now, else the default file (copied: the
 * configuration may be replaced meanwhile). */
static char *file_for(acl_plugin *p, const char *ak)
{
    char *path = NULL;
    rcu_read_lock();
    const acl_config *c = rcu_dereference(p->cfg);
    const acl_account *a = ak ? acl_config_find(c, ak) : NULL;
    const char *f = a ? c->files[a->file].path : acl_default_file(p, c);
    if (f)
        path = strdup(f);
    rcu_read_unlock();
    return path;
}

static int on_update_account(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    acl_plugin *p = ud;
    const rmq_host_api *a = p->api;
    const char *ak = a->cmd_ext_get(cmd, "accessKey");
    char err[600] = "";
    char *path = file_for(p, ak);
    acl_config *one = path ? read_one(path, err, sizeof(err)) : NULL;
    int rc = -1;
    if (!path)
        snprintf(err, sizeof(err), "no ACL file to write to");
    if (one) {
        acl_file *f = &one->files[0];
        const acl_account *old = NULL;
        size_t at = f->naccounts;
        for (size_t i = 0; ak && i < f->naccounts; i++)
            if (strcmp(f->accounts[i].access_key, ak) == 0) {
                old = &f->accounts[i];
                at = i;
            }
        /* Java merges: fields the request leaves out keep their value */
        const char *sk = a->cmd_ext_get(cmd, "secretKey");
        const char *white = a->cmd_ext_get(cmd, "whiteRemoteAddress");
        const char *dtp = a->cmd_ext_get(cmd, "defaultTopicPerm");
        const char *dgp = a->cmd_ext_get(cmd, "defaultGroupPerm");
        const char *admin = a->cmd_ext_get(cmd, "admin");
        size_t nt = 0, ng = 0;
        char **tp = split_commas(a->cmd_ext_get(cmd, "topicPerms"), &nt);
        char **gp = split_commas(a->cmd_ext_get(cmd, "groupPerms"), &ng);
        bool keep_t = !a->cmd_ext_get(cmd, "topicPerms") && old;
        bool keep_g = !a->cmd_ext_get(cmd, "groupPerms") && old;
        acl_account fresh;
        /* the secret is required on every update, as Java's checkPlainAccessConfig */
        rc = acl_account_init(&fresh, ak, sk,
                              white ? white
                              : old ? old->white_remote_address
                                    : NULL,
                              admin && strcmp(admin, "true") == 0,
                              (dtp && *dtp) ? dtp
                              : old         ? old->default_topic_perm
                                            : NULL,
                              (dgp && *dgp) ? dgp
                              : old         ? old->default_group_perm
                                            : NULL,
                              keep_t ? old->topic_perms : tp, keep_t ? old->ntopic_perms : nt,
                              keep_g ? old->group_perms : gp, keep_g ? old->ngroup_perms : ng, err,
                              sizeof(err));
        free_list(tp, nt);
        free_list(gp, ng);
        if (rc == 0) {
            if (at == f->naccounts) {
                acl_account *nv = realloc(f->accounts, (f->naccounts + 1) * sizeof(*nv));
                if (!nv) {
                    acl_account_clear(&fresh);
                    rc = -1;
                    snprintf(err, sizeof(err), "out of memory");
                } else {
                    f->accounts = nv;
                    f->accounts[f->naccounts++] = fresh;
                }
            } else {
                acl_account_clear(&f->accounts[at]);
                f->accounts[at] = fresh;
            }
        }
        if (rc == 0) {
            next_version(p, f);
            rc = write_and_publish(p, f, "UPDATE_AND_CREATE_ACL_CONFIG", err, sizeof(err));
        }
        acl_config_free(one);
    }
    free(path);
    if (rc != 0) {
        a->log(p->ctx, RMQ_LOG_WARN,
               "UPDATE_AND_CREATE_ACL_CONFIG for accessKey=%s from %s failed: %s", ak ? ak : "null",
               a->request_peer(req), err);
        return answer(p, req, cmd, UPDATE_AND_CREATE_ACL_CONFIG_FAILED, err);
    }
    return answer(p, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

static int on_delete_account(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    acl_plugin *p = ud;
    const rmq_host_api *a = p->api;
    const char *ak = a->cmd_ext_get(cmd, "accessKey");
    char err[600] = "";
    int rc = -1;
    rcu_read_lock();
    bool known = ak && acl_config_find(rcu_dereference(p->cfg), ak);
    rcu_read_unlock();
    char *path = known ? file_for(p, ak) : NULL;
    acl_config *one = path ? read_one(path, err, sizeof(err)) : NULL;
    if (one) {
        acl_file *f = &one->files[0];
        size_t w = 0;
        for (size_t i = 0; i < f->naccounts; i++) {
            if (strcmp(f->accounts[i].access_key, ak) == 0)
                acl_account_clear(&f->accounts[i]);
            else
                f->accounts[w++] = f->accounts[i];
        }
        if (w != f->naccounts) {
            f->naccounts = w;
            next_version(p, f);
            rc = write_and_publish(p, f, "DELETE_ACL_CONFIG", err, sizeof(err));
        }
        acl_config_free(one);
    }
    free(path);
    if (rc != 0) {
        char remark[300];
        snprintf(remark, sizeof(remark),
                 "The accessKey[%s] corresponding to accessConfig has been deleted failed.",
                 ak ? ak : "null");
        if (err[0])
            a->log(p->ctx, RMQ_LOG_WARN, "DELETE_ACL_CONFIG: %s", err);
        return answer(p, req, cmd, DELETE_ACL_CONFIG_FAILED, remark);
    }
    return answer(p, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

static int on_update_white(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    acl_plugin *p = ud;
    const rmq_host_api *a = p->api;
    const char *addrs = a->cmd_ext_get(cmd, "globalWhiteAddrs");
    const char *file = a->cmd_ext_get(cmd, "aclFileFullPath");
    char err[600] = "";
    int rc = -1;
    char *path = NULL;
    if (file && *file) {
        /* only one of the files this instance reads */
        rcu_read_lock();
        const acl_config *c = rcu_dereference(p->cfg);
        for (size_t i = 0; c && i < c->nfiles && !path; i++)
            if (strcmp(c->files[i].path, file) == 0)
                path = strdup(file);
        rcu_read_unlock();
    } else {
        path = file_for(p, NULL);
    }
    acl_config *one = (path && addrs) ? read_one(path, err, sizeof(err)) : NULL;
    if (one) {
        acl_file *f = &one->files[0];
        size_t n = 0;
        char **v = split_commas(addrs, &n);
        acl_pattern **pats = calloc(n ? n : 1, sizeof(*pats));
        rc = v && pats ? 0 : -1;
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = acl_pattern_compile(v[i], &pats[i], err, sizeof(err));
        if (rc == 0) {
            for (size_t i = 0; i < f->nglobal_white; i++) {
                free(f->global_white[i]);
                acl_pattern_free(f->global_pats[i]);
            }
            free(f->global_white);
            free(f->global_pats);
            f->global_white = v;
            f->global_pats = pats;
            f->nglobal_white = n;
            v = NULL;
            pats = NULL;
            next_version(p, f);
            rc = write_and_publish(p, f, "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG", err, sizeof(err));
        } else {
            for (size_t i = 0; pats && i < n; i++)
                acl_pattern_free(pats[i]);
        }
        free(pats);
        free_list(v, v ? n : 0);
        acl_config_free(one);
    }
    free(path);
    if (rc != 0) {
        char remark[700];
        snprintf(remark, sizeof(remark), "The globalWhiteAddresses[%s] has been updated failed.",
                 addrs ? addrs : "null");
        if (err[0])
            a->log(p->ctx, RMQ_LOG_WARN, "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: %s", err);
        return answer(p, req, cmd, UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED, remark);
    }
    return answer(p, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

static json_t *version_json(const acl_file *f)
{
    return json_pack("{s:I, s:I}", "counter", (json_int_t)f->version_counter, "timestamp",
                     (json_int_t)f->version_timestamp);
}

/* The broker's name, cluster and address from broker.meta (false: absent). */
static bool broker_identity(acl_plugin *p, rmq_broker_config *out)
{
    const void *tbl;
    void *ud;
    rmq_service_ref ref;
    if (p->api->service_acquire(p->ctx, RMQ_BROKER_META_SERVICE, RMQ_BROKER_META_VERSION, &tbl, &ud,
                                &ref) != 0)
        return false;
    const rmq_broker_meta_service *m = tbl;
    int rc = m->broker_config(ud, out);
    p->api->service_release(p->ctx, ref);
    return rc == 0;
}

static int on_acl_info(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    acl_plugin *p = ud;
    const rmq_host_api *a = p->api;
    rmq_cmd *resp = a->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp)
        return RMQ_ENOMEM;
    json_t *all = json_object();
    char *version = NULL;
    rcu_read_lock();
    const acl_config *c = rcu_dereference(p->cfg);
    const char *def = acl_default_file(p, c);
    for (size_t i = 0; c && i < c->nfiles; i++) {
        json_object_set_new(all, c->files[i].path, version_json(&c->files[i]));
        if (def && strcmp(def, c->files[i].path) == 0 && !version) {
            json_t *v = version_json(&c->files[i]);
            version = json_dumps(v, JSON_COMPACT);
            json_decref(v);
        }
    }
    rcu_read_unlock();
    char *alltext = json_dumps(all, JSON_COMPACT);
    json_decref(all);
    /* Java answers the broker's own brokerIP1:listenPort, brokerName and
     * brokerClusterName: broker.meta holds them when the broker plugin runs
     * on this daemon; without it only the bound address is known. */
    rmq_broker_config bc;
    bool have_bc = broker_identity(p, &bc);
    char host[128];
    int port = 0;
    if (have_bc && bc.broker_ip1[0]) {
        char addr[160];
        snprintf(addr, sizeof(addr), "%s:%d", bc.broker_ip1, (int)bc.listen_port);
        a->cmd_ext_set(resp, "brokerAddr", addr);
    } else if (a->server_address(p->ctx, host, sizeof(host), &port) == 0) {
        char addr[160];
        snprintf(addr, sizeof(addr), "%s:%d", host, port);
        a->cmd_ext_set(resp, "brokerAddr", addr);
    }
    if (have_bc) {
        a->cmd_ext_set(resp, "brokerName", bc.broker_name);
        a->cmd_ext_set(resp, "clusterName", bc.cluster_name);
    }
    a->cmd_ext_set(resp, "version", version ? version : "{\"counter\":0,\"timestamp\":0}");
    if (alltext)
        a->cmd_ext_set(resp, "allAclFileVersion", alltext);
    free(version);
    free(alltext);
    return a->reply(req, resp);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *str_list(char **v, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_string(v[i]));
    return arr;
}

static int on_acl_config(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    acl_plugin *p = ud;
    const rmq_host_api *a = p->api;
    json_t *white = json_array(), *accounts = json_array();
    rcu_read_lock();
    const acl_config *c = rcu_dereference(p->cfg);
    for (size_t f = 0; c && f < c->nfiles; f++) {
        const acl_file *file = &c->files[f];
        for (size_t i = 0; i < file->nglobal_white; i++)
            json_array_append_new(white, json_string(file->global_white[i]));
    }
    for (size_t k = 0; c && k < c->nkeys; k++) {
        const acl_account *x = c->by_key[k];
        json_t *o = json_object();
        json_object_set_new(o, "accessKey", json_string(x->access_key));
        json_object_set_new(o, "secretKey", json_string(x->secret_key));
        json_object_set_new(o, "whiteRemoteAddress", str_or_null(x->white_remote_address));
        json_object_set_new(o, "admin", json_boolean(x->admin));
        json_object_set_new(o, "defaultTopicPerm", str_or_null(x->default_topic_perm));
        json_object_set_new(o, "defaultGroupPerm", str_or_null(x->default_group_perm));
        json_object_set_new(o, "topicPerms", str_list(x->topic_perms, x->ntopic_perms));
        json_object_set_new(o, "groupPerms", str_list(x->group_perms, x->ngroup_perms));
        json_array_append_new(accounts, o);
    }
    rcu_read_unlock();
    json_t *body =
        json_pack("{s:o, s:o}", "globalWhiteAddrs", white, "plainAccessConfigs", accounts);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    rmq_cmd *resp = a->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp || !text) {
        free(text);
        if (resp)
            a->cmd_free(resp);
        return RMQ_ENOMEM;
    }
    a->cmd_set_body(resp, text, strlen(text), NULL, NULL);
    memset(text, 0, strlen(text));
    free(text);
    return a->reply(req, resp);
}

int acl_admin_codes_register(acl_plugin *p)
{
    static const struct {
        int32_t code;
        rmq_processor_fn fn;
    } B[] = {
        {UPDATE_AND_CREATE_ACL_CONFIG, on_update_account},
        {DELETE_ACL_CONFIG, on_delete_account},
        {GET_BROKER_CLUSTER_ACL_INFO, on_acl_info},
        {UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, on_update_white},
        {GET_BROKER_CLUSTER_ACL_CONFIG, on_acl_config},
    };
    /* one thread: admin changes are serialised (read, change, write, publish) */
    int rc = p->api->declare_executor(p->ctx, "acl-admin", 1, 64);
    for (size_t i = 0; rc == 0 && i < sizeof(B) / sizeof(B[0]); i++)
        rc = p->api->register_processor(p->ctx, B[i].code, B[i].fn, p, "acl-admin");
    return rc;
}
