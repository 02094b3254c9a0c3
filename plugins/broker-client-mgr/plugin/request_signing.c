/* request_signing.c — owns signing outgoing NameServer requests: AccessKey
 * added first, then HmacSHA1 (secretKey) over the ext-field values sorted by
 * key followed by the body, Base64, as Java's AclClientRPCHook. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

#include "request_signing.h"

typedef struct kv {
    const char *k, *v;
} kv;

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const kv *)a)->k, ((const kv *)b)->k);
}

void bcm_sign_request(bcm_ctx *c, rmq_cmd *req)
{
    const rmq_host_api *a = c->api;
    const char *ak = a->setting_string(c->pctx, "accessKey");
    const char *sk = a->setting_string(c->pctx, "secretKey");
    if (!ak || !*ak || !sk || !*sk)
        return;
    a->cmd_ext_set(req, "AccessKey", ak);
    size_t n = a->cmd_ext_count(req), blen = 0, total = 0;
    const void *body = a->cmd_body(req, &blen);
    kv *f = calloc(n ? n : 1, sizeof(*f));
    size_t k = 0;
    for (size_t i = 0; f && i < n; i++)
        if (a->cmd_ext_at(req, i, &f[k].k, &f[k].v) == 0 && f[k].k &&
            strcmp(f[k].k, "Signature") != 0 && strcmp(f[k].k, "_UNIQUE_KEY_QUERY") != 0) {
            total += f[k].v ? strlen(f[k].v) : 4;
            k++;
        }
    unsigned char *content = f ? malloc(total + blen + 1) : NULL;
    if (!content) {
        free(f);
        a->log(c->pctx, RMQ_LOG_ERROR, "out of memory signing a request: sent unsigned");
        return;
    }
    qsort(f, k, sizeof(*f), cmp_kv);
    size_t off = 0;
    for (size_t i = 0; i < k; i++) {
        const char *v = f[i].v ? f[i].v : "null"; /* Java appends null as "null" */
        memcpy(content + off, v, strlen(v));
        off += strlen(v);
    }
    if (blen)
        memcpy(content + off, body, blen);
    off += blen;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    char sig[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    if (HMAC(EVP_sha1(), sk, (int)strlen(sk), content, off, mac, &maclen)) {
        EVP_EncodeBlock((unsigned char *)sig, mac, (int)maclen);
        a->cmd_ext_set(req, "Signature", sig);
    } else {
        a->log(c->pctx, RMQ_LOG_ERROR, "HmacSHA1 failed: request sent unsigned");
    }
    free(content);
    free(f);
}
