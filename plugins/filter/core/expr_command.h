/* expr_command.h — `rmqhostctl expr`: try a selector against properties
 * (issue 5 item 5). Pure: argument parsing, evaluation and output text; the
 * plugin wires it to the admin channel. */
#ifndef RMQ_FILTER_EXPR_COMMAND_H
#define RMQ_FILTER_EXPR_COMMAND_H

#include <stdbool.h>

#include "filter_engine.h"

typedef void (*expr_out_fn)(void *ud, const char *text);

#define EXPR_COMMAND_USAGE "expr [--type SQL92|TAG] [--json] [--] EXPR [KEY=VALUE ...]"

/* argv: the arguments after the command name. json: output one JSON object.
 * Returns the CLI exit status: 0 evaluated (match or no match), 1 the
 * selector does not compile, 2 usage error. */
int expr_command_run(const rmq_fx_options *opt, int argc, const char *const *argv, bool json,
                     expr_out_fn out, void *ud);

#endif
