#!/usr/bin/env bash
# Not a ctest: runs the client scenarios against a Java 4.9.7 broker (behind
# an rmqhost NameServer) instead of rmqhost's broker, to check that a
# harness expectation is Java's behaviour before it is asserted of rmqhost.
# Same settings as client_suite.sh's daemon (delay levels, transaction check).
# usage: reference_java_broker.sh RMQHOSTD PLUGIN_DIR PEERS_DIR HARNESS_DIR SET SCENARIO...
#   e.g. build/bin/rmqhostd build/plugins build/java-peers build/java-harness client-4.9.8 basic dlq
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$(cd "$3" && pwd) harness_dir=$(cd "$4" && pwd) set=$5
shift 5
java_dir=$(cd "$(dirname "$0")" && pwd)
plugins=$(cd "$plugins" && pwd)
# shellcheck source=java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
work=$(mktemp -d /tmp/rmq-java-ref.XXXXXX)
trap 'stop_all; rm -rf "$work"' EXIT
ns_addr=127.0.0.1:$(free_port)
mkdir -p "$work/ns/conf.d"
cat >"$work/ns/conf.d/host.conf" <<CONF
state_dir = "$work/ns/state";
io_threads = 1;
log_level = "warn";
servers = { namesrv = { listen = "$ns_addr"; }; };
CONF
cat >"$work/ns/conf.d/10-namesrv.conf" <<CONF
plugin = { name = "namesrv"; path = "$plugins/namesrv.so"; server = "namesrv"; };
CONF
start_rmqhostd "$rmqhostd" "$work/ns"
port=$(broker_ports)
cat >"$work/broker.conf" <<CONF
brokerClusterName=DefaultCluster
brokerName=java-ref
brokerIP1=127.0.0.1
listenPort=$port
namesrvAddr=$ns_addr
storePathRootDir=$work/store
storePathCommitLog=$work/store/commitlog
mappedFileSizeCommitLog=67108864
autoCreateTopicEnable=true
enablePropertyFilter=true
messageDelayLevel=$DELAY_LEVELS
transactionCheckInterval=1000
transactionTimeOut=1000
CONF
RMQ_JAVA_HOME_DIR="$work/broker-home" sh "$java_dir/java_peer.sh" "$peers" server-4.9.7 \
  org.apache.rocketmq.broker.BrokerStartup -c "$work/broker.conf" >"$work/broker.log" 2>&1 &
broker_pid=$!
started_pids+=("$broker_pid")
wait_port "$port" "$broker_pid" "the Java broker" "$work/broker.log"
harness "$set" "ref$$" "$@"
