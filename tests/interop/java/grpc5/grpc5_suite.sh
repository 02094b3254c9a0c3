#!/usr/bin/env bash
# The Java 5.x gRPC client (rocketmq-client-java, set grpc-client-java-5)
# against the proxy server of an all-in-one rmqhostd (namesrv, broker roles
# and plugins/proxy on a `protocol = "grpc"` server): GrpcTopicSetup
# (rocketmq-client 5.3.3, set client-5.3.3) creates the topics with their
# message.type attributes, then RmqGrpcClient5 runs the client cases. Fails
# with a message when a client could not be fetched or compiled; rmqhostd
# and the JVMs are stopped on every exit path.
# usage: grpc5_suite.sh RMQHOSTD PLUGIN_DIR PEERS_DIR
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3
here=$(cd "$(dirname "$0")" && pwd)
java_dir=$(cd "$here/.." && pwd)
plugins=$(cd "$plugins" && pwd)
# shellcheck source=../java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
for set in grpc-client-java-5 client-5.3.3 tools-4.9.8; do
  [[ -f $peers/$set/.fetched ]] || {
    echo "grpc5_suite: no jars of set $set in $peers (fetch_java_peers.sh could not get them)" >&2
    exit 1
  }
done
work=$(mktemp -d /tmp/rmq-java-grpc5.XXXXXX)
trap 'stop_all; [[ -n ${RMQ_KEEP_WORK:-} ]] || rm -rf "$work"' EXIT
mkdir -p "$work/client" "$work/setup"
javac -nowarn -encoding UTF-8 --release 11 -cp "$peers/grpc-client-java-5/*" -d "$work/client" \
  "$here/RmqGrpcClient5.java"
javac -nowarn -encoding UTF-8 --release 11 -cp "$peers/client-5.3.3/*" -d "$work/setup" \
  "$here/GrpcTopicSetup.java"
ns_addr=127.0.0.1:$(free_port)
port=$(broker_ports)
proxy_addr=127.0.0.1:$(free_port)
rmq_conf "$work/rmq" "$plugins" "$ns_addr" "$port" rmq-broker-a "$work/rmq/store"
# the proxy server and plugin beside the namesrv and broker ones
sed -i "s|^servers = { |servers = { proxy = { listen = \"$proxy_addr\"; protocol = \"grpc\"; };\n            |" \
  "$work/rmq/conf.d/host.conf"
cat >"$work/rmq/conf.d/50-proxy.conf" <<CONF
plugin = { name = "proxy"; path = "$plugins/proxy.so"; server = "proxy"; };
CONF
start_rmqhostd "$rmqhostd" "$work/rmq"
run=$$
peer() {
  local set=$1 cp=$2
  shift 2
  RMQ_JAVA_HOME_DIR="$work/java-home" sh "$java_dir/java_peer.sh" "$peers" "$set:$cp" "$@" &
  local pid=$!
  started_pids+=("$pid")
  wait "$pid"
}
rc=0
peer client-5.3.3 "$work/setup" GrpcTopicSetup "$ns_addr" "127.0.0.1:$port" \
  "grpc5_normal_$run=NORMAL" "grpc5_fifo_$run=FIFO" "grpc5_delay_$run=DELAY" "grpc5_recall_$run=DELAY" \
  "grpc5_push_$run=-" "grpc5_off_$run=NORMAL" "grpc5_conn_$run=NORMAL" \
  "grpc5_tx_$run=TRANSACTION" || rc=$?
# mqadmin (tools 4.9.8) on the broker's client housekeeping: prints its
# verdict line, returns non-zero on a wrong answer.
mqadmin() {
  RMQ_JAVA_HOME_DIR="$work/java-home" sh "$java_dir/java_peer.sh" "$peers" tools-4.9.8 \
    org.apache.rocketmq.tools.command.MQAdminStartup "$@" -n "$ns_addr" 2>&1 &
  local pid=$!
  started_pids+=("$pid")
  wait "$pid" || true
}
# mqadmin until its output matches PATTERN, at most 3 times: on this shared
# machine a JVM's first NameServer lookup sometimes times out (mqadmin's
# 3 s) before the command reached anything; the last output is printed.
mqadmin_until() {
  local pattern=$1 out
  shift
  for _ in 1 2 3; do
    out=$(mqadmin "$@")
    grep -q -- "$pattern" <<<"$out" && break
  done
  printf '%s\n' "$out"
}
# While the client JVM holds a producer and a SimpleConsumer (file "up"),
# both are listed; once they closed (file "down"), neither is.
check_connections() {
  local sync=$1 group="grpc5_conn_$run" topic="grpc5_conn_$run" out why=""
  local id='@[0-9]\+@[0-9]\+@'
  for _ in $(seq 1 6000); do [[ -f $sync/up || ! -d /proc/$cpid ]] && break; sleep 0.1; done
  [[ -f $sync/up ]] || return 0 # the client JVM failed before: it says why
  out=$(mqadmin_until "$id" consumerConnection -g "$group")
  # one client (5.x client ids are host@pid@index@...), its subscription
  # with the TAG expression, CLUSTERING and CONSUME_ACTIVELY (a SimpleConsumer)
  [[ $(grep -c "$id" <<<"$out") -eq 1 ]] || why="consumerConnection: not exactly one client"
  grep -q "$topic *tagA || tagB" <<<"$out" || why="${why:-consumerConnection: no subscription $topic 'tagA || tagB'}"
  grep -q "CONSUME_ACTIVELY" <<<"$out" || why="${why:-consumerConnection: not CONSUME_ACTIVELY}"
  grep -q "CLUSTERING" <<<"$out" || why="${why:-consumerConnection: not CLUSTERING}"
  [[ -z $why ]] || printf '%s\n' "$out" >&2
  # the client's own language and version (x-mq-language, x-mq-client-version)
  grep -q "$id.* JAVA *V5_2_0" <<<"$out" || why="${why:-consumerConnection: not JAVA V5_2_0}"
  [[ -z $why ]] || printf '%s\n' "$out" >&2
  local pout
  pout=$(mqadmin_until "$id" producerConnection -g "$topic" -t "$topic")
  [[ $(grep -c "$id" <<<"$pout") -eq 1 ]] || { why="${why:-producerConnection: no producer under group $topic}"; printf '%s\n' "$pout" >&2; }
  grep -q "$id.* JAVA *V5_2_0" <<<"$pout" || { why="${why:-producerConnection: not JAVA V5_2_0}"; printf '%s\n' "$pout" >&2; }
  # the PushConsumer: running info with its jstack over Telemetry, and one
  # message consumed directly (its listener says it saw it)
  local cpush="grpc5_cpush_$run" cid sout dout
  local cout
  cout=$(mqadmin_until "$id" consumerConnection -g "$cpush")
  cid=$(grep -o "[^ ]*$id[^ ]*" <<<"$cout" | head -n 1)
  if [[ -z $cid ]]; then
    why="${why:-consumerConnection: no client in $cpush}"
    printf '%s\n' "$cout" >&2
  else
    sout=$(mqadmin_until "#Consumer jstack#" consumerStatus -g "$cpush" -i "$cid" -s)
    { grep -q "#Consumer jstack#" <<<"$sout" && grep -q "PROP_CONSUME_TYPE *: *CONSUME_PASSIVELY" <<<"$sout" &&
      grep -q "java.lang.Thread" <<<"$sout"; } ||
      { why="${why:-consumerStatus -s: no running info with a jstack}"; printf '%s\n' "$sout" >&2; }
    # retried only when no result came back (the listener counts each try
    # that reached the client, so a retry after one would fail the case)
    dout=$(mqadmin_until "ConsumeMessageDirectlyResult" queryMsgByUniqueKey \
      -i "$(cat "$sync/msgid")" -t "$topic" -g "$cpush" -d "$cid")
    grep -q "consumeResult=CR_SUCCESS, remark=from gRPC client" <<<"$dout" ||
      { why="${why:-queryMsgByUniqueKey -g -d: not consumed directly with CR_SUCCESS}"; printf '%s\n' "$dout" >&2; }
  fi
  touch "$sync/checked-up"
  for _ in $(seq 1 600); do [[ -f $sync/down || ! -d /proc/$cpid ]] && break; sleep 0.1; done
  if [[ -f $sync/down ]]; then
    out=$(mqadmin consumerConnection -g "$group")
    grep -q "$id" <<<"$out" && { why="${why:-consumerConnection: a client left after NotifyClientTermination}"; printf '%s\n' "$out" >&2; }
    pout=$(mqadmin producerConnection -g "$topic" -t "$topic")
    grep -q "$id" <<<"$pout" && { why="${why:-producerConnection: a producer left after it closed}"; printf '%s\n' "$pout" >&2; }
  else
    why="${why:-the client JVM never closed its clients}"
  fi
  touch "$sync/checked-down"
  if [[ -n $why ]]; then echo "FAIL mqadmin_connections: $why"; return 1; fi
  echo "PASS mqadmin_connections"
}
if [[ $rc -eq 0 ]]; then
  mkdir -p "$work/sync"
  GRPC5_SYNC_DIR="$work/sync" RMQ_JAVA_HOME_DIR="$work/java-home" sh "$java_dir/java_peer.sh" \
    "$peers" "grpc-client-java-5:$work/client" RmqGrpcClient5 "$proxy_addr" "$run" \
    ${RMQ_GRPC5_CASES:-} &
  cpid=$!
  started_pids+=("$cpid")
  crc=0
  if [[ -z ${RMQ_GRPC5_CASES:-} || ${RMQ_GRPC5_CASES:-} == *connections* ]]; then
    check_connections "$work/sync" || crc=1
  fi
  if [[ -z ${RMQ_GRPC5_CASES:-} || ${RMQ_GRPC5_CASES:-} == *settings_across_reload* ]]; then
    # the client case asks for a hot reload of the proxy plugin
    for _ in $(seq 1 6000); do [[ -f $work/sync/reload || ! -d /proc/$cpid ]] && break; sleep 0.1; done
    if [[ -f $work/sync/reload ]]; then
      "$(dirname "$rmqhostd")/rmqhostctl" -c "$work/rmq/conf.d" reload proxy ||
        { echo "FAIL settings_across_reload: rmqhostctl reload proxy failed"; crc=1; }
      touch "$work/sync/reloaded"
    fi
  fi
  wait "$cpid" || rc=$?
  [[ $crc -eq 0 ]] || rc=1
fi
end_rmqhostd_run "$rc" "$work/rmq" "the 5.x gRPC client cases"
