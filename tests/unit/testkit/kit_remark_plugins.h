/* kit_remark_plugins.h — the two linked-in plugins of test_remark_hooks.c:
 * one with an ABI 1.7 before hook (remark into the host's buffer), one
 * declaring ABI 1.6 with a 1.0 before hook (remark pointer). */
#ifndef KIT_REMARK_PLUGINS_H
#define KIT_REMARK_PLUGINS_H

#include <rmqhost/rmqhost.h>

/* Refused with code 17 by the 1.7 hook when ext "who" is set: remark
 * "no entry for <who>"; ext "len" N instead: a remark of N 'x' characters.
 * Without either: answered SUCCESS by the processor. */
#define KR_CODE_NEW 9101
#define KR_REFUSED_NEW 17
/* Refused with code 18 by the 1.0 hook when ext "deny" is set: remark
 * "old hook says no"; else SUCCESS. */
#define KR_CODE_OLD 9102
#define KR_REFUSED_OLD 18
/* Refused with code 19 by the 1.7 hook with an empty remark buffer. */
#define KR_CODE_SILENT 9103
#define KR_REFUSED_SILENT 19

extern const rmq_plugin_descriptor kit_remark_hook_descriptor;
extern const rmq_plugin_descriptor kit_old_hook_descriptor;

#endif
