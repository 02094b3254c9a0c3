/* filter_services.c — what the filter plugin offers others: the
 * "filter.expr" and "filter.servers" service tables (filter_service.h) and
 * the `expr` admin command. Thin adapters over the engine and the tables. */
#include <stdlib.h>
#include <string.h>

#include "expr_command.h"
#include "filter_plugin.h"

static int svc_compile(void *ud, const char *type, const char *expression, rmq_filter_expr **out,
                       char *err, size_t errlen, int *err_pos)
{
    filter_plugin *fp = ud;
    if (!out)
        return RMQ_EINVAL;
    const char *text = expression ? expression : "";
    return rmq_fx_compile(type, text, strlen(text), &fp->opt, out, err, errlen, err_pos);
}

static rmq_filter_result svc_evaluate(void *ud, const rmq_filter_expr *expr, const char *tag,
                                      rmq_filter_lookup_fn lookup, void *lookup_ud, char *err,
                                      size_t errlen)
{
    (void)ud;
    return rmq_fx_evaluate(expr, tag, lookup, lookup_ud, err, errlen);
}

static void svc_free_expr(void *ud, rmq_filter_expr *expr)
{
    (void)ud;
    free(expr);
}

static int32_t svc_check(void *ud, const char *type, const char *expression, char *err,
                         size_t errlen)
{
    filter_plugin *fp = ud;
    return rmq_fx_check(fp->enable_property_filter, &fp->opt, type, expression, err, errlen);
}

static int32_t svc_tag_hash_code(void *ud, const char *tag)
{
    (void)ud;
    return tag ? rmq_java_string_hash(tag, strlen(tag)) : 0;
}

static int svc_consumer_filter(void *ud, const char *topic, const char *group,
                               rmq_consumer_filter_data *out)
{
    filter_plugin *fp = ud;
    if (!topic || !group || !out)
        return RMQ_EINVAL;
    memset(out, 0, sizeof *out);
    bool dead = false;
    int rc = consumer_filter_table_get_compiled(&fp->filters, topic, group, &out->client_version,
                                                &dead, out->expression_type,
                                                sizeof out->expression_type, &out->compiled);
    out->dead = dead;
    return rc > 0 ? 0 : rc == 0 ? RMQ_ENOENT : RMQ_ENOMEM;
}

static size_t svc_for_each(void *ud, rmq_filter_server_fn fn, void *fn_ud)
{
    filter_plugin *fp = ud;
    return filter_server_table_for_each(&fp->servers, fn, fn_ud);
}

static size_t svc_to_json(void *ud, char *buf, size_t len)
{
    filter_plugin *fp = ud;
    return filter_server_table_to_json(&fp->servers, buf, len);
}

static void admin_out(void *ud, const char *text)
{
    /* ud is the admin call; admin_write takes a format, so pass the text as %s */
    const filter_plugin *fp = ((void **)ud)[0];
    fp->api->admin_write(((void **)ud)[1], "%s", text);
}

/* `rmqhostctl expr ...`: argv[0] is the command name when the host passes it. */
static int admin_expr(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    filter_plugin *fp = ud;
    if (argc > 0)
        argc--, argv++; /* argv[0] is the command name, as main() */
    void *pair[2] = {fp, call};
    bool json = fp->api->admin_wants_json && fp->api->admin_wants_json(call);
    return expr_command_run(&fp->opt, argc, argv, json, admin_out, pair);
}

/* `rmqhostctl consumer-filter`: the consumer filter data as consumerFilter.json
 * holds it, live (not the file), for operators and reload checks. */
static int admin_consumer_filter(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    (void)argc;
    (void)argv;
    filter_plugin *fp = ud;
    char *text = consumer_filter_table_to_json(&fp->filters, false);
    if (!text)
        return 1;
    fp->api->admin_write(call, "%s\n", text);
    free(text);
    return 0;
}

int filter_export_services(filter_plugin *fp)
{
    fp->expr_svc = (rmq_filter_expr_service){
        .size = sizeof(rmq_filter_expr_service),
        .compile = svc_compile,
        .evaluate = svc_evaluate,
        .free_expr = svc_free_expr,
        .check = svc_check,
        .tag_hash_code = svc_tag_hash_code,
        .consumer_filter = svc_consumer_filter,
    };
    fp->servers_svc = (rmq_filter_servers_service){
        .size = sizeof(rmq_filter_servers_service),
        .for_each = svc_for_each,
        .to_json = svc_to_json,
    };
    int rc = fp->api->export_service(fp->pctx, RMQ_FILTER_EXPR_SERVICE, RMQ_FILTER_EXPR_VERSION,
                                     &fp->expr_svc, fp);
    if (rc == 0)
        rc = fp->api->export_service(fp->pctx, RMQ_FILTER_SERVERS_SERVICE,
                                     RMQ_FILTER_SERVERS_VERSION, &fp->servers_svc, fp);
    if (rc == 0)
        rc = fp->api->register_admin_command(fp->pctx, "expr", EXPR_COMMAND_USAGE, admin_expr, fp);
    if (rc == 0)
        rc = fp->api->register_admin_command(fp->pctx, "consumer-filter",
                                             "consumer-filter (live consumerFilter.json content)",
                                             admin_consumer_filter, fp);
    return rc;
}
