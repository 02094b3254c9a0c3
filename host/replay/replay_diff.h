/* replay_diff.h — how an answer differs from a reference answer (a frame
 * recorded from Java, or the daemon's answer to the same request): code,
 * flag, opaque, serialization, remark, ext fields and the body, JSON bodies
 * compared as values (key order and array order aside). Used by
 * rmqhost-replay and by the tests comparing the kit with the daemon. */
#ifndef RMQHOST_REPLAY_DIFF_H
#define RMQHOST_REPLAY_DIFF_H

#include <stddef.h>

#include "remoting_command.h"

/* Keys (ext fields or JSON object members, at any depth) whose values
 * depend on the session (timestamps, client ports): they must be present
 * with the same JSON type, their values may differ. NULL-terminated. */
typedef struct replay_ignore {
    const char *const *keys;
} replay_ignore;

/* Number of differences between `want` and `got`; each is described in
 * `out` ("; "-separated, truncated to outlen). */
int replay_diff(const rmq_cmd *want, const rmq_cmd *got, const replay_ignore *ign, char *out,
                size_t outlen);

#endif
