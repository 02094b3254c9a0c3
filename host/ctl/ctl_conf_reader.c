/* ctl_conf_reader.c — rmqhostctl reads conf.d with the daemon's own parser,
 * so both resolve admin_socket by the same rules (relative to state_dir,
 * itself relative to the parent of conf.d). Compiled in as a unit of its own
 * because host/CMakeLists.txt builds exactly the ctl directory into the CLI. */
#include "../core/host_config.c"
#include "../core/message_text.c"
#include "../core/tls_config.c"
