#!/usr/bin/env bash
# rmqhost and a Java 4.9.7 broker (4.9.8's broker is not on Maven Central)
# on each other's store directory, and in one cluster:
#  1. an rmqhost NameServer; broker-sa (rmqhost) on store A and broker-sb
#     (Java) on store B register to it, cluster DefaultCluster. One harness
#     JVM: a consumer group of two instances spread over both brokers gets
#     every message exactly once; on each store 40 messages are written and
#     consumed by a group g1 (its offsets are committed), then 20 more.
#  2. both brokers stop; now rmqhost serves store B and the Java broker
#     store A, under the same names. A second harness JVM: g1 gets exactly
#     the 20 it had not consumed (consumer offsets carried over), a new group
#     gets all 60 intact (commit log and consume queues), queryMessage by key
#     finds each (index); the swapped cluster spreads a group again.
# Every daemon and JVM is stopped on any exit.
# usage: store_cluster.sh RMQHOSTD PLUGIN_DIR PEERS_DIR HARNESS_DIR
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3 harness_dir=$4
java_dir=$(cd "$(dirname "$0")" && pwd)
plugins=$(cd "$plugins" && pwd)
# shellcheck source=java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
for need in client-4.9.8/RmqInterop.class; do
  [[ -f $harness_dir/$need ]] || { echo "store_cluster: no harness $need in $harness_dir (the Java client could not be fetched or compiled)" >&2; exit 1; }
done
[[ -f $peers/server-4.9.7/.fetched ]] || { echo "store_cluster: no Java 4.9.7 broker jars in $peers/server-4.9.7 (fetch_java_peers.sh could not get them)" >&2; exit 1; }
work=$(mktemp -d /tmp/rmq-java-store.XXXXXX)
failed=1
finish() {
  stop_all
  if [[ $failed -ne 0 ]]; then
    for log in "$work"/*/daemon.log "$work"/*/broker.log; do
      [[ -f $log ]] && { echo "--- $log"; tail -n 30 "$log"; }
    done
  fi
  rm -rf "$work"
}
trap finish EXIT

# The NameServer (rmqhostd with the namesrv role alone).
start_rmq_namesrv "$rmqhostd" "$work/ns" "$plugins"

# start_rmq_broker NAME STORE_ROOT: sets rmq_broker_pid.
start_rmq_broker() {
  rm -rf "$work/rmq-$1"
  rmq_conf "$work/rmq-$1" "$plugins" "" "$(broker_ports)" "$1" "$2"
  start_rmqhostd "$rmqhostd" "$work/rmq-$1"
  rmq_broker_pid=$rmq_pid
}

# start_java_store_broker NAME STORE_ROOT: a Java 4.9.7 broker (same delay
# levels and transaction timing as rmqhost's conf); sets java_broker_pid.
start_java_store_broker() {
  start_java_broker "$work/java-$1" "$(broker_ports)" "$1" "$2" "brokerId=0
mappedFileSizeCommitLog=67108864
autoCreateTopicEnable=true
enablePropertyFilter=true
messageDelayLevel=$DELAY_LEVELS"
  java_broker_pid=$java_pid
}

a=$work/store-a b=$work/store-b
echo "== phase 1: broker-sa = rmqhost on store A, broker-sb = Java on store B"
start_rmq_broker broker-sa "$a"
start_java_store_broker broker-sb "$b"
harness client-4.9.8 x spread:MixOne:40:broker-sa,broker-sb \
  produce:SA:broker-sa:0:40 consume:SA:SA_g1:0:40 produce:SA:broker-sa:40:60 \
  produce:SB:broker-sb:0:40 consume:SB:SB_g1:0:40 produce:SB:broker-sb:40:60
stop_pid "$rmq_broker_pid" || { echo "rmqhostd (broker-sa) exited with $? on SIGTERM" >&2; exit 1; }
stop_pid "$java_broker_pid" || true # a JVM ends with 143 on SIGTERM

echo "== phase 2: broker-sa = Java on store A, broker-sb = rmqhost on store B"
start_java_store_broker broker-sa "$a"
start_rmq_broker broker-sb "$b"
harness client-4.9.8 x \
  consume:SA:SA_g1:40:60 consume:SA:SA_g2:0:60 query:SA:0:60 \
  consume:SB:SB_g1:40:60 consume:SB:SB_g2:0:60 query:SB:0:60 \
  spread:MixTwo:40:broker-sa,broker-sb
stop_pid "$rmq_broker_pid" || { echo "rmqhostd (broker-sb) exited with $? on SIGTERM" >&2; exit 1; }
stop_pid "$ns_pid" || { echo "rmqhostd (NameServer) exited with $? on SIGTERM" >&2; exit 1; }
failed=0
