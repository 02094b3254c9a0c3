/* request_mutator.h — turns a well-formed request (catalog entry or recorded
 * Java vector) into a bad one: ext fields missing, empty, non-numeric, huge
 * or negative where numbers are expected, garbage, extra; bodies from
 * body_mutations.h; JSON or ROCKETMQ serialization; sometimes oneway. */
#ifndef REQUEST_MUTATOR_H
#define REQUEST_MUTATOR_H

#include <stddef.h>

#include "fuzz_rng.h"
#include "remoting_command.h"
#include "request_catalog.h"

/* Mutates cmd in place (opaque untouched). e gives the numeric keys (NULL for
 * vectors: keys with all-digit values count as numeric). Appends a
 * description of what was done to label (space-separated mutation names,
 * e.g. " ROCKETMQ ext-empty(topic) body-truncated"). */
void fuzz_mutate_request(fuzz_rng *r, rmq_cmd *cmd, const fuzz_code_entry *e, char *label,
                         size_t label_len);

#endif
