#!/usr/bin/env bash
# An rmqhost broker registering with a Java 4.9.7 NameServer (4.9.8's is not
# on Maven Central; its RouteInfoManager is the same): the REGISTER_BROKER
# bodies broker-client-mgr streams from its topic structs must be what Java's
# RegisterBrokerBody.decode takes, in the JSON and the zlib (compressed)
# form, for the incremental rounds of new topics and for the whole table.
# For each form:
#  1. a Java NameServer; the broker creates TOPICS topics by
#     UPDATE_AND_CREATE_TOPIC (each answered after its incremental round);
#     mqadmin topicList lists them all;
#  2. the NameServer is restarted empty on the same port: only the broker's
#     next full round (registerNameServerPeriod 10 s) can bring the topics
#     back; topicList lists them all again and topicRoute gives the last
#     one's queues and permission.
# Every daemon and JVM is stopped on any exit.
# usage: namesrv_registration.sh RMQHOSTD PLUGIN_DIR PEERS_DIR RMQBENCH [TOPICS]
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3 rmqbench=$4 topics=${5:-3000}
java_dir=$(cd "$(dirname "$0")" && pwd)
plugins=$(cd "$plugins" && pwd)
# shellcheck source=java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
for set in server-4.9.7 tools-4.9.8; do
  [[ -f $peers/$set/.fetched ]] || { echo "namesrv_registration: no Java jars in $peers/$set (fetch_java_peers.sh could not get them)" >&2; exit 1; }
done
[[ -x $rmqbench ]] || { echo "namesrv_registration: no rmqbench at $rmqbench" >&2; exit 1; }
work=$(mktemp -d /tmp/rmq-java-nsreg.XXXXXX)
failed=1
finish() {
  stop_all
  if [[ $failed -ne 0 ]]; then
    for log in "$work"/*/daemon.log "$work"/ns*.log "$work"/*.out; do
      [[ -f $log ]] && { echo "--- $log"; tail -n 30 "$log"; }
    done
  fi
  rm -rf "$work"
}
trap finish EXIT

# the Java NameServer starts again on this port: below the ephemeral range
# (ports.sh), no outgoing connection takes it between two starts
ns_port=$(fixed_port)
ns_addr=127.0.0.1:$ns_port
ns_pid=

# start_java_ns N: a fresh Java NameServer (empty tables) on $ns_port.
start_java_ns() {
  mkdir -p "$work/ns-home-$1"
  printf 'listenPort=%s\n' "$ns_port" >"$work/ns-$1.conf"
  RMQ_JAVA_HOME_DIR="$work/ns-home-$1" sh "$java_dir/java_peer.sh" "$peers" server-4.9.7 \
    org.apache.rocketmq.namesrv.NamesrvStartup -c "$work/ns-$1.conf" >"$work/ns-$1.log" 2>&1 &
  ns_pid=$!
  started_pids+=("$ns_pid")
  wait_port "$ns_port" "$ns_pid" "the Java NameServer" "$work/ns-$1.log"
}

# mqadmin OUT SUBCOMMAND ARGS...: one mqadmin 4.9.8 run against the NameServer.
mqadmin() {
  local out=$1
  shift
  RMQ_JAVA_HOME_DIR="$work/admin-home" sh "$java_dir/java_peer.sh" "$peers" tools-4.9.8 \
    org.apache.rocketmq.tools.command.MQAdminStartup "$@" -n "$ns_addr" >"$work/$out.out" 2>&1 &
  local pid=$!
  started_pids+=("$pid")
  wait "$pid" || true
}

# expect_all_listed OUT: topicList printed every created topic.
expect_all_listed() {
  local n
  n=$(grep -cE '^Reg\|x%y-[0-9]+$' "$work/$1.out" || true)
  if [[ $n -ne $topics ]]; then
    echo "namesrv_registration: the Java NameServer lists $n of the $topics topics ($1)" >&2
    exit 1
  fi
}

# until_all_listed OUT: topicList again until it lists them all (the full
# round comes within the registration period and its first retry), 40 s.
until_all_listed() {
  for _ in $(seq 1 8); do
    mqadmin "$1" topicList
    if [[ $(grep -cE '^Reg\|x%y-[0-9]+$' "$work/$1.out" || true) -eq $topics ]]; then return 0; fi
    sleep 5
  done
  expect_all_listed "$1"
}

for compressed in false true; do
  echo "== compressedRegister = $compressed"
  start_java_ns "$compressed-1"
  port=$(broker_ports)
  rmq_conf "$work/rmq-$compressed" "$plugins" "" "$port" "broker-reg" "$work/store-$compressed" \
    "registerNameServerPeriod = 10000; compressedRegister = $compressed;"
  start_rmqhostd "$rmqhostd" "$work/rmq-$compressed"
  broker_pid=$rmq_pid
  "$rmqbench" -a "127.0.0.1:$port" --create-topics "$topics" --create-via-admin \
    --topic 'Reg|x%y' --queues 3 --report-every "$topics" >"$work/create-$compressed.out"
  mqadmin "list-$compressed-1" topicList
  expect_all_listed "list-$compressed-1"
  stop_pid "$ns_pid" || true # a JVM ends with 143 on SIGTERM
  start_java_ns "$compressed-2"
  until_all_listed "list-$compressed-2"
  last="Reg|x%y-$((topics - 1))"
  mqadmin "route-$compressed" topicRoute -t "$last"
  if ! grep -q '"brokerName":"broker-reg"' "$work/route-$compressed.out" ||
    ! grep -q '"readQueueNums":3' "$work/route-$compressed.out" ||
    ! grep -q '"perm":6' "$work/route-$compressed.out"; then
    echo "namesrv_registration: the Java NameServer's route of $last is not the broker's 3 queues, perm 6" >&2
    exit 1
  fi
  stop_pid "$broker_pid" || { echo "rmqhostd exited with $? on SIGTERM" >&2; exit 1; }
  stop_pid "$ns_pid" || true
  echo "ok: $topics topics registered with the Java NameServer (compressed=$compressed)"
done
failed=0
