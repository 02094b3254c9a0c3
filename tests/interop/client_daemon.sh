# shellcheck shell=bash
# client_daemon.sh — sourced by the shell-driven interop tests (the Go client,
# the README snippets): an all-in-one rmqhostd (namesrv + broker-client-mgr +
# filter + store, as `make run`) on loopback ports of its own, which dies
# with the test however the test ends:
#   - the daemon and every client run through rmq_tied (PR_SET_PDEATHSIG), so
#     a script killed by SIGKILL or a ctest timeout takes them along;
#   - an EXIT trap stops the daemon, waits for it and removes its directory
#     when the script ends, whether its checks passed or failed.
# The sourcing script sets RMQ_BIN (the build's bin/: rmqhostd, rmq_tied).

# shellcheck source=../support/all_in_one_conf.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/all_in_one_conf.sh"

client_daemon_pid=""
client_daemon_dir=""

client_daemon_cleanup() {
  local rc=$?
  if [[ -n $client_daemon_pid ]] && kill -0 "$client_daemon_pid" 2>/dev/null; then
    kill -TERM "$client_daemon_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$client_daemon_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$client_daemon_pid" 2>/dev/null || true
  fi
  wait 2>/dev/null || true
  if [[ -n $client_daemon_dir && -z ${RMQ_TEST_KEEP:-} ]]; then
    rm -rf "$client_daemon_dir"
  fi
  exit "$rc"
}

# free_port_with_vip: a free loopback port P whose P - 2 is free as well
free_port_with_vip() {
  python3 -c '
import socket
for _ in range(100):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p - 2))
    except OSError:
        continue
    print(p)
    break
'
}

# start_client_daemon PLUGIN_DIR [rmqhostd -o overrides...]
# Sets client_daemon_dir, client_daemon_pid and ns_addr (127.0.0.1:PORT of
# its NameServer); fails with the daemon's log when it does not come up.
start_client_daemon() {
  local bin=$RMQ_BIN plugins=$1
  shift
  trap client_daemon_cleanup EXIT
  trap 'exit 143' TERM INT
  client_daemon_dir=$(mktemp -d "${TMPDIR:-/tmp}/rmq-client-test.XXXXXX")
  local ns broker
  ns=$(free_port)
  broker=$(free_port_with_vip)
  write_all_in_one_conf "$client_daemon_dir" "$plugins" "$ns" 1 \
    "mappedFileSizeCommitLog = 16777216;"
  # Java 4.x clients send to the VIP port, listenPort - 2 (as `make run`'s
  # 10911/10909)
  "$bin/rmq_tied" "$bin/rmqhostd" -c "$client_daemon_dir/conf.d" \
    -o "servers.broker.listen=127.0.0.1:$broker" \
    -o "servers.broker.vip_listen=127.0.0.1:$((broker - 2))" "$@" \
    >"$client_daemon_dir/daemon.log" 2>&1 &
  client_daemon_pid=$!
  for _ in $(seq 1 100); do
    [[ -f $client_daemon_dir/state/listen.addrs ]] && break
    kill -0 "$client_daemon_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ ! -f $client_daemon_dir/state/listen.addrs ]]; then
    echo "rmqhostd did not start; its log:" >&2
    cat "$client_daemon_dir/daemon.log" >&2
    return 1
  fi
  ns_addr="127.0.0.1:$ns"
}

# run_tied SECONDS COMMAND...: a client in the foreground, stopped after
# SECONDS (a hung client fails the test instead of hanging it). timeout is
# tied to this script and the client to timeout, which is not the script.
run_tied() {
  local secs=$1
  shift
  "$RMQ_BIN/rmq_tied" timeout -k 5 "$secs" "$RMQ_BIN/rmq_tied" "$@"
}
