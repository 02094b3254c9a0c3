# shellcheck shell=bash
# split_daemons.sh — sourced by topics_scale.sh and restart_scale.sh, which
# run the all-in-one daemon's roles in two processes: the NameServer apart,
# so that the RSS and restart figures are the broker daemon's alone. The
# caller sets dir (its work directory, removed on exit) and dpid (the broker
# daemon's pid, empty when none runs).
# shellcheck source=../support/namesrv_daemon.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/namesrv_daemon.sh"

dpid=
nspid=
# split_cleanup: the EXIT trap: stops the broker daemon and the NameServer,
# removes $dir.
split_cleanup() {
  if [[ -n $dpid ]]; then kill "$dpid" 2>/dev/null || true; wait "$dpid" 2>/dev/null || true; fi
  if [[ -n $nspid ]]; then kill "$nspid" 2>/dev/null || true; wait "$nspid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap split_cleanup EXIT

# start_split_namesrv PLUGIN_DIR STATE_DIR STORE_SETTINGS: starts the
# NameServer (conf.d and log in $dir/ns, a port the kernel picks: sets ns
# and nspid), then writes the broker daemon's conf.d in $dir (state_dir
# STATE_DIR, log level LOG_LEVEL or warn, the broker on an ephemeral port,
# registering to that NameServer). The caller starts the broker daemon.
start_split_namesrv() {
  local plugins=$1 state=$2 store=$3
  write_namesrv_conf "$dir/ns" "$plugins"
  start_daemon "$bin" "$dir/ns" || { nspid=$daemon_pid; return 1; }
  nspid=$daemon_pid
  ns=$(listen_port "$dir/ns" namesrv)
  write_all_in_one_conf "$dir" "$plugins" "$ns" 1 "$store"
  rm "$dir/conf.d/10-namesrv.conf"
  cat >"$dir/conf.d/host.conf" <<CONF
state_dir = "$state";
io_threads = 1;
log_level = "${LOG_LEVEL:-warn}";
servers = { broker = { listen = "127.0.0.1:0"; }; };
CONF
}
