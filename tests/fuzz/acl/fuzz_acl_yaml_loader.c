/* fuzz_acl_yaml_loader.c — libFuzzer target for the plain_acl.yml loader:
 * any bytes must parse or be refused cleanly; what parses must answer
 * lookups and pattern matches, and render to YAML that parses back to the
 * same accounts and white list (the admin codes' write path). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl_check.h"
#include "acl_config.h"

static void check_round_trip(const acl_file *f)
{
    size_t len = 0;
    char *text = acl_yaml_render(f, &len);
    if (!text)
        return;
    acl_file back;
    char err[600];
    if (acl_file_parse("rendered.yml", text, len, &back, err, sizeof(err)) != 0)
        abort(); /* what we write must load */
    if (back.naccounts != f->naccounts || back.nglobal_white != f->nglobal_white)
        abort();
    for (size_t i = 0; i < f->naccounts; i++)
        if (strcmp(back.accounts[i].access_key, f->accounts[i].access_key) != 0 ||
            strcmp(back.accounts[i].secret_key, f->accounts[i].secret_key) != 0 ||
            back.accounts[i].admin != f->accounts[i].admin ||
            back.accounts[i].nres != f->accounts[i].nres)
            abort();
    acl_file_clear(&back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acl_file *f = calloc(1, sizeof(*f));
    char err[600];
    if (!f || acl_file_parse("fuzz.yml", (const char *)data, size, f, err, sizeof(err)) != 0) {
        free(f);
        return 0;
    }
    check_round_trip(f);
    acl_config *c = NULL;
    if (acl_config_build(f, 1, &c, err, sizeof(err)) != 0)
        return 0;
    static const char *const ips[] = {"127.0.0.1", "192.168.1.7", "10.10.103.5", "::1", "fe80::1"};
    for (size_t k = 0; k < c->nkeys; k++) {
        const acl_account *a = c->by_key[k];
        if (acl_config_find(c, a->access_key) == NULL)
            abort();
        for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
            (void)acl_pattern_match(a->white, ips[i]);
    }
    /* one request through both verdicts */
    acl_field fields[] = {{"AccessKey", c->nkeys ? c->by_key[0]->access_key : "x"},
                          {"b", "topicA"},
                          {"Signature", "AAAA"}};
    acl_request r = {.code = 310, .peer_ip = "127.0.0.1", .fields = fields, .nfields = 3};
    acl_verdict v;
    acl_check_broker(c, &r, &v);
    r.code = 105;
    acl_check_namesrv(c, &r, true, &v);
    acl_config_free(c);
    return 0;
}
