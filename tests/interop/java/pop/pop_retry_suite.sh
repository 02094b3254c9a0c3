#!/usr/bin/env bash
# The POP retry topic with the 5.x remoting client (rocketmq-client 5.3.3,
# RmqPopRetryInterop.java compiled here against the client-5.3.3 jars): an
# unacknowledged message comes back from %RETRY%<group>_<topic> counted,
# its ack works, the retry topic is listed and routed. Fails with a message
# when the client could not be fetched or compiled; rmqhostd and the JVM
# are stopped on every exit path.
# usage: pop_retry_suite.sh RMQHOSTD PLUGIN_DIR PEERS_DIR
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3
pop_dir=$(cd "$(dirname "$0")" && pwd)
java_dir=$(cd "$pop_dir/.." && pwd)
plugins=$(cd "$plugins" && pwd)
# shellcheck source=../java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
set=client-5.3.3
[[ -f $peers/$set/.fetched ]] || {
  echo "pop_retry_suite: no jars of rocketmq-client 5.3.3 in $peers (fetch_java_peers.sh could not get them)" >&2
  exit 1
}
work=$(mktemp -d /tmp/rmq-java-pop-retry.XXXXXX)
trap 'stop_all; rm -rf "$work"' EXIT
mkdir -p "$work/classes"
javac -nowarn -encoding UTF-8 --release 11 -cp "$peers/$set/*" -d "$work/classes" \
  "$pop_dir/RmqPopRetryInterop.java" "$pop_dir/PopInteropClient.java"
ns_addr=127.0.0.1:$(free_port)
port=$(broker_ports)
rmq_conf "$work/rmq" "$plugins" "$ns_addr" "$port" rmq-broker-a "$work/rmq/store"
start_rmqhostd "$rmqhostd" "$work/rmq"
rc=0
RMQ_JAVA_HOME_DIR="$work/java-home" sh "$java_dir/java_peer.sh" "$peers" \
  "$set:$work/classes" RmqPopRetryInterop "$ns_addr" "127.0.0.1:$port" rmq-broker-a "$$" &
jpid=$!
started_pids+=("$jpid")
wait "$jpid" || rc=$?
if [[ $rc -ne 0 ]]; then
  echo "--- rmqhostd log (port $port, namesrv $ns_addr):"
  tail -n 40 "$work/rmq/daemon.log"
  exit 1
fi
stop_pid "$rmq_pid" || { echo "rmqhostd exited with $? on SIGTERM:" >&2; cat "$work/rmq/daemon.log" >&2; exit 1; }
