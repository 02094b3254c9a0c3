# shellcheck shell=bash
# namesrv_daemon.sh — sourced by the bench scripts that run rmqhostd with the
# NameServer alone (cluster_storm.sh, register_compare.sh,
# compare_with_baseline.sh): writes its conf.d, starts the daemon and reads
# the ports it bound. (all_in_one_conf.sh is the same for the all-in-one;
# free_port comes from there.)

# shellcheck source=all_in_one_conf.sh
source "$(dirname "${BASH_SOURCE[0]}")/all_in_one_conf.sh"

# write_namesrv_conf DIR PLUGIN_DIR [NAMESRV_SETTINGS] [EXTRA_SERVERS]
# DIR gets conf.d/ (host.conf, 10-namesrv.conf) and state/ as state_dir:
# one I/O thread (on a 2-core machine shared with the load generator a
# second loop only competes with the client, docs/benchmarks.md), log level
# warn, the namesrv server on an ephemeral loopback port. NAMESRV_SETTINGS:
# libconfig statements inside the plugin's settings group; EXTRA_SERVERS:
# more entries of host.conf's servers group (their plugins' conf files the
# caller writes into DIR/conf.d).
write_namesrv_conf() {
  local dir=$1 plugins=$2 settings=${3:-} servers=${4:-}
  mkdir -p "$dir/conf.d"
  cat >"$dir/conf.d/host.conf" <<CONF
state_dir = "$dir/state";
io_threads = 1;
log_level = "warn";
servers = { namesrv = { listen = "127.0.0.1:0"; }; $servers };
CONF
  cat >"$dir/conf.d/10-namesrv.conf" <<CONF
plugin = { name = "namesrv"; path = "$plugins/namesrv.so"; server = "namesrv";
           settings = { $settings }; };
CONF
}

# start_daemon BIN_DIR DIR: rmqhostd on DIR/conf.d (log in DIR/daemon.log);
# sets daemon_pid (the caller stops it) and returns once the daemon has
# written the addresses it bound, or fails with its log after 10 s.
start_daemon() {
  local bin=$1 dir=$2
  "$bin/rmqhostd" -c "$dir/conf.d" >"$dir/daemon.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 1 100); do
    [[ -f $dir/state/listen.addrs ]] && return 0
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "rmqhostd did not start:" >&2
  cat "$dir/daemon.log" >&2
  return 1
}

# listen_port DIR SERVER: the port the daemon bound for that server
listen_port() {
  awk -v s="$2" '$1==s{n=split($2,a,":"); print a[n]}' "$1/state/listen.addrs"
}
