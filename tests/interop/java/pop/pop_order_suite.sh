#!/usr/bin/env bash
# Order POP with the 5.x remoting client (rocketmq-client 5.3.3) across a
# kill -9 of rmqhostd (RmqPopOrderInterop.java: phase "before", SIGKILL,
# restart on the same store, phase "after"). Fails with a message when the
# client could not be fetched or compiled; rmqhostd and the JVMs are
# stopped on every exit path.
# usage: pop_order_suite.sh RMQHOSTD PLUGIN_DIR PEERS_DIR
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3
pop_dir=$(cd "$(dirname "$0")" && pwd)
java_dir=$(cd "$pop_dir/.." && pwd)
plugins=$(cd "$plugins" && pwd)
# shellcheck source=../java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
set=client-5.3.3
work=$(mktemp -d /tmp/rmq-java-pop-order.XXXXXX)
trap 'stop_all; rm -rf "$work"' EXIT
javac_peer pop_order_suite "$set" "$work/classes" "$pop_dir/RmqPopOrderInterop.java" \
  "$pop_dir/PopInteropClient.java"
ns_addr=127.0.0.1:$(free_port)
port=$(broker_ports)
rmq_conf "$work/rmq" "$plugins" "$ns_addr" "$port" rmq-broker-a "$work/rmq/store"
start_rmqhostd "$rmqhostd" "$work/rmq"

phase() {
  local rc=0
  RMQ_JAVA_HOME_DIR="$work/java-home" sh "$java_dir/java_peer.sh" "$peers" \
    "$set:$work/classes" RmqPopOrderInterop "$ns_addr" "127.0.0.1:$port" rmq-broker-a "$$" "$1" &
  local jpid=$!
  started_pids+=("$jpid")
  wait "$jpid" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "--- rmqhostd log (port $port, namesrv $ns_addr):"
    tail -n 40 "$work/rmq/daemon.log"
    exit 1
  fi
}

phase before
kill -KILL "$rmq_pid"
wait "$rmq_pid" 2>/dev/null || true
cp "$work/rmq/daemon.log" "$work/rmq/daemon-before-kill.log"
start_rmqhostd "$rmqhostd" "$work/rmq"
phase after
stop_pid "$rmq_pid" || { echo "rmqhostd exited with $? on SIGTERM:" >&2; cat "$work/rmq/daemon.log" >&2; exit 1; }
