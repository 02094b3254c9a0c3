/* replay_targets.h — where rmqhost-replay sends frames: a server at an
 * address (plain sockets) or plugins loaded in-process through
 * librmqhost-testkit. Channels are numbered from 1, opened on first use. */
#ifndef RMQHOST_REPLAY_TARGETS_H
#define RMQHOST_REPLAY_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "remoting_command.h"

#define REPLAY_MAX_CHANNELS 64

typedef struct replay_target replay_target;

/* A server at "host:port". NULL with the reason in err. */
replay_target *replay_target_addr(const char *addr, char *err, size_t errlen);
/* Plugins in the test kit: names[i] loads paths[i] with settings[i] (a
 * NULL-terminated "key", "value" list). NULL with the reason in err. */
replay_target *replay_target_kit(size_t n, const char *const *names, const char *const *paths,
                                 const char *const *const *settings, char *err, size_t errlen);
/* Send one frame as is on channel ch. 0 or -1. */
int replay_send(replay_target *t, int ch, const uint8_t *frame, size_t len);
/* The answer carrying opaque on ch, or NULL after timeout_ms. */
rmq_cmd *replay_answer(replay_target *t, int ch, int32_t opaque, int timeout_ms);
void replay_answer_free(replay_target *t, rmq_cmd *c);
void replay_target_close(replay_target *t);

#endif
