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
start_rmq_namesrv "$rmqhostd" "$work/ns" "$plugins"
start_java_broker "$work/broker" "$(broker_ports)" java-ref "$work/store" "mappedFileSizeCommitLog=67108864
autoCreateTopicEnable=true
enablePropertyFilter=true
messageDelayLevel=$DELAY_LEVELS
transactionCheckInterval=1000
transactionTimeOut=1000"
harness "$set" "ref$$" "$@"
