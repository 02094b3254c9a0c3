#!/usr/bin/env bash
# The 5.x remoting client (rocketmq-client 5.3.3) consuming by POP from an
# all-in-one rmqhostd (RmqPopInterop.java, compiled here against the
# client-5.3.3 jars). Fails with a message when the client could not be
# fetched or compiled; rmqhostd and the JVM are stopped on every exit path.
# usage: pop_suite.sh RMQHOSTD PLUGIN_DIR PEERS_DIR
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3
pop_dir=$(cd "$(dirname "$0")" && pwd)
java_dir=$(cd "$pop_dir/.." && pwd)
plugins=$(cd "$plugins" && pwd)
# shellcheck source=../java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
set=client-5.3.3
work=$(mktemp -d /tmp/rmq-java-pop.XXXXXX)
trap 'stop_all; rm -rf "$work"' EXIT
javac_peer pop_suite "$set" "$work/classes" "$pop_dir/RmqPopInterop.java"
ns_addr=127.0.0.1:$(free_port)
port=$(broker_ports)
rmq_conf "$work/rmq" "$plugins" "$ns_addr" "$port" rmq-broker-a "$work/rmq/store"
start_rmqhostd "$rmqhostd" "$work/rmq"
rc=0
RMQ_JAVA_HOME_DIR="$work/java-home" sh "$java_dir/java_peer.sh" "$peers" \
  "$set:$work/classes" RmqPopInterop "$ns_addr" "127.0.0.1:$port" "$$" &
jpid=$!
started_pids+=("$jpid")
wait "$jpid" || rc=$?
end_rmqhostd_run "$rc" "$work/rmq" "the POP scenario"
