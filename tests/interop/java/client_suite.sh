#!/usr/bin/env bash
# Java clients against rmqhost: one all-in-one rmqhostd (NameServer +
# broker-client-mgr + filter + store, ephemeral ports) and one harness JVM
# of client set SET running every client scenario of RmqInterop.java in
# sequence (exactly-once delivery with bodies/keys/tags/properties, TAG and
# SQL92 selectors, retry, DLQ, delay level, timer messages (5.x client),
# orderly consumption,
# transactions with check-back, request/reply, batch). Fails if any
# scenario fails; rmqhostd and the JVM are stopped on every exit path.
# usage: client_suite.sh RMQHOSTD PLUGIN_DIR PEERS_DIR HARNESS_DIR SET [SCENARIO...]
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3 harness_dir=$4 set=$5
shift 5
scenarios=(basic tag sql retry dlq delay orderly transaction request batch)
if [[ $# -gt 0 ]]; then scenarios=("$@"); fi
java_dir=$(cd "$(dirname "$0")" && pwd)
plugins=$(cd "$plugins" && pwd)
# shellcheck source=java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
[[ -f $harness_dir/$set/RmqInterop.class ]] || {
  echo "client_suite: no harness for $set in $harness_dir (the Java client could not be fetched or compiled)" >&2
  exit 1
}
work=$(mktemp -d /tmp/rmq-java-client.XXXXXX)
trap 'stop_all; rm -rf "$work"' EXIT
ns_addr=127.0.0.1:$(free_port)
rmq_conf "$work/rmq" "$plugins" "$ns_addr" "$(broker_ports)" rmq-broker-a "$work/rmq/store"
start_rmqhostd "$rmqhostd" "$work/rmq"
rc=0
harness "$set" "$$" "${scenarios[@]}" || rc=$?
end_rmqhostd_run "$rc" "$work/rmq" "the scenarios"
