/* acl_check.c — owns the decision for one request: global white list,
 * access key, account white address, signature, then permissions, in Java
 * 4.9.8's order and with its exception texts; the NameServer policy reuses
 * the same steps with admin/read rules of its own. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_check.h"
#include "acl_grpc_header.h"
#include "acl_perm.h"

/* Java answers a refused request with SYSTEM_ERROR and
 * RemotingHelper.exceptionSimpleDesc(e): the exception's toString() and its
 * first stack frame — in 4.9.8 these lines of PlainPermissionManager. */
#define FRAME_VALIDATE "validate"
#define FRAME_CHECKPERM "checkPerm"
#define LINE_NO_ACCESS_KEY 664
#define LINE_NO_ACL_CONFIG 668
#define LINE_BAD_SIGNATURE 684
#define LINE_NEED_ADMIN 581
#define LINE_NO_DEFAULT_PERM 606
#define LINE_NO_PERM 611

#define MAX_RES 64

typedef struct res_need {
    char *name;
    uint8_t perm;
    size_t seq;
    uint32_t hash;
    size_t bucket;
} res_need;

typedef struct needs {
    res_need r[MAX_RES];
    size_t n;
    bool overflow;
} needs;

static void refuse(acl_verdict *v, acl_outcome o, const char *method, int line, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));

static void refuse(acl_verdict *v, acl_outcome o, const char *method, int line, const char *fmt,
                   ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    v->outcome = o;
    snprintf(v->message, sizeof(v->message), "%s", msg);
    snprintf(
        v->remark, sizeof(v->remark),
        "org.apache.rocketmq.acl.common.AclException: %s, "
        "org.apache.rocketmq.acl.plain.PlainPermissionManager.%s(PlainPermissionManager.java:%d)",
        msg, method, line);
}

static const char *field(const acl_request *r, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < r->nfields; i++)
        if (r->fields[i].key[0] == key[0] && strcmp(r->fields[i].key, key) == 0)
            v = r->fields[i].value; /* a JSON object with a repeated key: the last */
    return v;
}

/* Java's String.hashCode over UTF-16 code units of UTF-8 text. */
static uint32_t java_hash(const char *s)
{
    uint32_t h = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t cp;
        int n;
        if (*p < 0x80) {
            cp = *p;
            n = 1;
        } else if ((*p & 0xe0) == 0xc0 && p[1]) {
            cp = (uint32_t)(*p & 0x1f) << 6 | (p[1] & 0x3f);
            n = 2;
        } else if ((*p & 0xf0) == 0xe0 && p[1] && p[2]) {
            cp = (uint32_t)(*p & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
            n = 3;
        } else if ((*p & 0xf8) == 0xf0 && p[1] && p[2] && p[3]) {
            cp = (uint32_t)(*p & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
                 (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
            n = 4;
        } else {
            cp = 0xfffd;
            n = 1;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = 31 * h + (0xd800 + (cp >> 10));
            h = 31 * h + (0xdc00 + (cp & 0x3ff));
        } else {
            h = 31 * h + cp;
        }
        p += n;
    }
    return h;
}

static void need(needs *nd, const char *resource, uint8_t perm)
{
    if (!resource)
        return; /* Java's addResourceAndPerm ignores null */
    for (size_t i = 0; i < nd->n; i++)
        if (strcmp(nd->r[i].name, resource) == 0) {
            nd->r[i].perm = perm;
            return;
        }
    if (nd->n == MAX_RES) {
        nd->overflow = true;
        return;
    }
    char *copy = strdup(resource);
    if (!copy) {
        nd->overflow = true;
        return;
    }
    nd->r[nd->n] = (res_need){copy, perm, nd->n, java_hash(resource), 0};
    nd->n++;
}

static void need_group(needs *nd, const char *group, uint8_t perm)
{
    if (!group)
        return;
    size_t n = strlen(ACL_RETRY_PREFIX) + strlen(group) + 1;
    char *t = malloc(n);
    if (!t) {
        nd->overflow = true;
        return;
    }
    snprintf(t, n, "%s%s", ACL_RETRY_PREFIX, group);
    need(nd, t, perm);
    free(t);
}

static void needs_free(needs *nd)
{
    for (size_t i = 0; i < nd->n; i++)
        free(nd->r[i].name);
    nd->n = 0;
}

/* The iteration order of Java's HashMap holding these keys: by bucket of
 * the final table (16, doubled past 0.75 load), insertion order within one.
 * Which refusal Java reports first depends on it. */
static int cmp_bucket(const void *a, const void *b)
{
    const res_need *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void java_order(needs *nd)
{
    size_t cap = 16;
    while (nd->n > cap * 3 / 4)
        cap *= 2;
    for (size_t i = 0; i < nd->n; i++) {
        uint32_t h = nd->r[i].hash ^ (nd->r[i].hash >> 16);
        nd->r[i].bucket = h & (cap - 1);
    }
    qsort(nd->r, nd->n, sizeof(nd->r[0]), cmp_bucket);
}

static void heartbeat_needs(const acl_request *r, needs *nd)
{
    if (!r->body || !r->body_len)
        return;
    json_t *root = json_loadb(r->body, r->body_len, 0, NULL);
    json_t *set = root ? json_object_get(root, "consumerDataSet") : NULL;
    size_t i, k;
    json_t *cd, *sd;
    json_array_foreach(set, i, cd)
    {
        need_group(nd, json_string_value(json_object_get(cd, "groupName")), ACL_PERM_SUB);
        json_array_foreach(json_object_get(cd, "subscriptionDataSet"), k, sd)
            need(nd, json_string_value(json_object_get(sd, "topic")), ACL_PERM_SUB);
    }
    json_decref(root);
}

/* The resources a broker request touches (4.9.8 PlainAccessValidator.parse). */
static void broker_needs(const acl_request *r, needs *nd)
{
    const char *t;
    switch (r->code) {
    case 10: /* SEND_MESSAGE */
        t = field(r, "topic");
        if (acl_is_retry_topic(t))
            need_group(nd, field(r, "group"), ACL_PERM_SUB);
        else
            need(nd, t, ACL_PERM_PUB);
        break;
    case 310: /* SEND_MESSAGE_V2 */
        t = field(r, "b");
        if (acl_is_retry_topic(t))
            need_group(nd, field(r, "a"), ACL_PERM_SUB);
        else
            need(nd, t, ACL_PERM_PUB);
        break;
    case 36: /* CONSUMER_SEND_MSG_BACK */ need_group(nd, field(r, "group"), ACL_PERM_SUB); break;
    case 11: /* PULL_MESSAGE */
        need(nd, field(r, "topic"), ACL_PERM_SUB);
        need_group(nd, field(r, "consumerGroup"), ACL_PERM_SUB);
        break;
    case 12: /* QUERY_MESSAGE */ need(nd, field(r, "topic"), ACL_PERM_SUB); break;
    case 34: /* HEART_BEAT */ heartbeat_needs(r, nd); break;
    case 35: /* UNREGISTER_CLIENT */
    case 38: /* GET_CONSUMER_LIST_BY_GROUP */
        need_group(nd, field(r, "consumerGroup"), ACL_PERM_SUB);
        break;
    case 15: /* UPDATE_CONSUMER_OFFSET */
        need_group(nd, field(r, "consumerGroup"), ACL_PERM_SUB);
        need(nd, field(r, "topic"), ACL_PERM_SUB);
        break;
    default: break;
    }
}

static const char *group_of(const char *retry_topic)
{
    return retry_topic + strlen(ACL_RETRY_PREFIX);
}

/* PlainPermissionManager.checkPerm. */
static void check_perm(const acl_account *a, needs *nd, int32_t code, bool admin_only,
                       acl_verdict *v)
{
    if (admin_only && !a->admin) {
        refuse(v, ACL_REFUSED_PERM, FRAME_CHECKPERM, LINE_NEED_ADMIN,
               "Need admin permission for request code=%d, but accessKey=%s is not", code,
               a->access_key);
        return;
    }
    if (nd->n == 0 && !nd->overflow)
        return;
    if (a->nres == 0 && a->admin)
        return;
    if (nd->overflow) {
        refuse(v, ACL_REFUSED_PERM, FRAME_CHECKPERM, LINE_NO_PERM,
               "No default permission for more than %d resources", MAX_RES);
        return;
    }
    java_order(nd);
    for (size_t i = 0; i < nd->n; i++) {
        const res_need *rn = &nd->r[i];
        bool group = acl_is_retry_topic(rn->name);
        const acl_resource_perm *own = acl_account_find_res(a, rn->name);
        uint8_t owned = own ? own->perm : group ? a->default_group_bits : a->default_topic_bits;
        if (!acl_perm_allows(rn->perm, owned)) {
            refuse(v, ACL_REFUSED_PERM, FRAME_CHECKPERM, own ? LINE_NO_PERM : LINE_NO_DEFAULT_PERM,
                   "No default permission for %s:%s", group ? "group" : "topic",
                   group ? group_of(rn->name) : rn->name);
            return;
        }
    }
}

static bool global_white(const acl_config *c, const char *ip)
{
    for (size_t f = 0; c && f < c->nfiles; f++)
        for (size_t i = 0; i < c->files[f].nglobal_white; i++)
            if (acl_pattern_match(c->files[f].global_pats[i], ip))
                return true;
    return false;
}

/* validate() up to the signature: NULL when refused (verdict filled). */
static const acl_account *authenticate(const acl_config *c, acl_request *r, acl_verdict *v,
                                       bool *address_admitted)
{
    *address_admitted = false;
    const char *ak = v->access_key;
    if (!ak) {
        refuse(v, ACL_REFUSED_AUTH, FRAME_VALIDATE, LINE_NO_ACCESS_KEY,
               "No accessKey is configured");
        return NULL;
    }
    const acl_account *a = acl_config_find(c, ak);
    if (!a) {
        refuse(v, ACL_REFUSED_AUTH, FRAME_VALIDATE, LINE_NO_ACL_CONFIG, "No acl config for %s", ak);
        return NULL;
    }
    if (acl_pattern_match(a->white, r->peer_ip)) {
        *address_admitted = true; /* Java: the account's white address skips the rest */
        return a;
    }
    char sig[ACL_SIGNATURE_LEN + 1];
    const char *given = field(r, "Signature");
    acl_sign_with_key(&a->hmac, r->fields, r->nfields, r->body, r->body_len, sig);
    if (!acl_signature_equal(sig, given)) {
        refuse(v, ACL_REFUSED_AUTH, FRAME_VALIDATE, LINE_BAD_SIGNATURE,
               "Check signature failed for accessKey=%s", ak);
        return NULL;
    }
    return a;
}

void acl_check_broker(const acl_config *c, acl_request *r, acl_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->access_key = field(r, "AccessKey");
    if (global_white(c, r->peer_ip)) {
        v->white_listed = true;
        return;
    }
    bool by_address;
    const acl_account *a = authenticate(c, r, v, &by_address);
    if (!a || by_address)
        return;
    needs nd = {.n = 0};
    broker_needs(r, &nd);
    /* 4.9.8 lets message-trace sends through without a permission check */
    for (size_t i = 0; i < nd.n; i++)
        if (strcmp(nd.r[i].name, "RMQ_SYS_TRACE_TOPIC") == 0 && nd.r[i].perm == ACL_PERM_PUB) {
            needs_free(&nd);
            return;
        }
    check_perm(a, &nd, r->code, acl_broker_code_needs_admin(r->code), v);
    needs_free(&nd);
}

void acl_check_namesrv(const acl_config *c, acl_request *r, bool allow_anonymous_read,
                       acl_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->access_key = field(r, "AccessKey");
    if (global_white(c, r->peer_ip)) {
        v->white_listed = true;
        return;
    }
    bool read = acl_namesrv_code_is_read(r->code);
    /* an empty AccessKey (the C++ client always sends one) is no key */
    if (v->access_key && !*v->access_key)
        v->access_key = NULL;
    if (read && allow_anonymous_read && !v->access_key) {
        /* anonymous, unless it carries a signature it cannot back */
        const char *sig = field(r, "Signature");
        if (!sig || !*sig)
            return;
    }
    bool by_address;
    const acl_account *a = authenticate(c, r, v, &by_address);
    if (!a || read)
        return;
    needs nd = {.n = 0};
    check_perm(a, &nd, r->code, true, v);
}

/* Java 5.1 validates a gRPC message's PlainAccessResource with the same
 * PlainPermissionManager; the signed content is the x-mq-date-time value. */
void acl_check_grpc(const acl_config *c, const acl_grpc_request *r, acl_verdict *v)
{
    memset(v, 0, sizeof(*v));
    if (global_white(c, r->peer_ip)) {
        v->white_listed = true;
        return;
    }
    acl_grpc_header h;
    char err[200];
    if (r->authorization && acl_grpc_header_parse(r->authorization, &h, err, sizeof(err)) != 0) {
        refuse(v, ACL_REFUSED_AUTH, FRAME_VALIDATE, LINE_NO_ACCESS_KEY, "%s", err);
        return;
    }
    if (!r->authorization || !h.has_key) {
        refuse(v, ACL_REFUSED_AUTH, FRAME_VALIDATE, LINE_NO_ACCESS_KEY,
               "No accessKey is configured");
        return;
    }
    snprintf(v->ak_buf, sizeof(v->ak_buf), "%s", h.access_key);
    v->access_key = v->ak_buf;
    const acl_account *a = acl_config_find(c, h.access_key);
    if (!a) {
        refuse(v, ACL_REFUSED_AUTH, FRAME_VALIDATE, LINE_NO_ACL_CONFIG, "No acl config for %s",
               h.access_key);
        return;
    }
    if (acl_pattern_match(a->white, r->peer_ip))
        return; /* the account's white address skips the rest, as on remoting */
    if (!acl_grpc_signature_ok(&a->hmac, &h, r->date_time)) {
        refuse(v, ACL_REFUSED_AUTH, FRAME_VALIDATE, LINE_BAD_SIGNATURE,
               "Check signature failed for accessKey=%s", h.access_key);
        return;
    }
    needs nd = {.n = 0};
    for (size_t i = 0; i < r->nneeds; i++) {
        if (r->needs[i].group)
            need_group(&nd, r->needs[i].name, r->needs[i].perm);
        else
            need(&nd, r->needs[i].name, r->needs[i].perm);
    }
    for (size_t i = 0; i < nd.n; i++)
        if (strcmp(nd.r[i].name, "RMQ_SYS_TRACE_TOPIC") == 0 && nd.r[i].perm == ACL_PERM_PUB) {
            needs_free(&nd);
            return;
        }
    check_perm(a, &nd, 0, false, v);
    needs_free(&nd);
}
