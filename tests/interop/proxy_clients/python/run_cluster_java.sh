#!/usr/bin/env bash
# run_cluster_java.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR PEERS_DIR — the proxy
# plugin in cluster mode in front of a Java 4.9.7 broker (the java_peers
# fixture's server-4.9.7): a NameServer-only rmqhostd, the Java broker
# registered with it (topic ClJava made with mqadmin 4.9.8 updateTopic), and a
# proxy-only rmqhostd; RocketMQ 5.x's Python client and raw stubs send,
# pull and read offsets through the proxy (java_broker_interop.py says what
# it checks, including what a 4.9.7 broker cannot do: POP). Every daemon and
# JVM is tied to this script and killed by its EXIT trap however it ends.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1
RMQ_BIN=${1:?usage: run_cluster_java.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR PEERS_DIR}
plugins=${2:?plugin dir}
out=${3:?python out dir}
peers=${4:?java peers dir}
py=$out/venv/bin/python
if [[ ! -x $py ]] || ! "$py" -c 'import rocketmq' 2>/dev/null; then
  echo "proxy cluster java interop: no rocketmq-python-client in $out/venv: the fixture" \
       "interop_install_python5_client did not get it from PyPI" >&2
  exit 1
fi
if [[ ! -d $peers/server-4.9.7 || ! -d $peers/tools-4.9.8 ]]; then
  echo "proxy cluster java interop: no Java 4.9.7 broker / mqadmin 4.9.8 in $peers: the" \
       "fixture interop_fetch_java_peers did not get them from Maven Central" >&2
  exit 1
fi
java_dir=$(cd "$(dirname "$0")/../../java" && pwd)
RMQ_TIED=$RMQ_BIN/rmq_tied
# shellcheck source=../../java/java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/rmq-proxy-cluster-java.XXXXXX")
finish() {
  local rc=$?
  stop_all
  if [[ $rc -ne 0 ]]; then
    for f in ns/daemon.log p/daemon.log broker/broker.log mqadmin.log; do
      echo "---- $f (tail)" >&2
      tail -n 20 "$work/$f" >&2 2>/dev/null || true
    done
  fi
  [[ -n ${RMQ_TEST_KEEP:-} ]] || rm -rf "$work"
  exit "$rc"
}
trap finish EXIT

start_rmq_namesrv "$RMQ_BIN/rmqhostd" "$work/ns" "$plugins"

port=$(broker_ports)
start_java_broker "$work/broker" "$port" ClusterJava "$work/store" "mappedFileSizeCommitLog=16777216
autoCreateTopicEnable=false"
RMQ_JAVA_HOME_DIR="$work/admin-home" "$RMQ_TIED" sh "$java_dir/java_peer.sh" "$peers" \
  tools-4.9.8 org.apache.rocketmq.tools.command.MQAdminStartup updateTopic \
  -b "127.0.0.1:$port" -t ClJava -r 4 -w 4 >"$work/mqadmin.log" 2>&1

mkdir -p "$work/p/conf.d"
cat >"$work/p/conf.d/host.conf" <<CONF
state_dir = "$work/p/state";
io_threads = 1;
log_level = "warn";
servers = { proxy = { listen = "127.0.0.1:0"; protocol = "grpc"; }; };
CONF
cat >"$work/p/conf.d/50-proxy.conf" <<CONF
plugin = { name = "proxy"; path = "$plugins/proxy.so"; server = "proxy";
           settings = { proxyMode = "cluster"; namesrvAddr = "$ns_addr";
                        minLongPollingTimeoutMs = 500; }; };
CONF
start_rmqhostd "$RMQ_BIN/rmqhostd" "$work/p"
proxy_pid=$rmq_pid
proxy_addr=$(awk '$1 == "proxy" {print $2}' "$work/p/state/listen.addrs")

export HOME=$work # the client logs under ~/logs/rocketmq_python
"$RMQ_TIED" timeout -k 5 120 "$RMQ_TIED" \
  "$py" "$(dirname "$0")/java_broker_interop.py" "$proxy_addr" ClusterJava ClJava 8
# the two rmqhostd stop cleanly (exit 0, no sanitizer report in the ASan build)
for d in p ns; do
  pid=$proxy_pid
  [[ $d == ns ]] && pid=$ns_pid
  st=0
  stop_pid "$pid" || st=$?
  if [[ $st -ne 0 ]] || grep -qE 'Sanitizer|runtime error:' "$work/$d/daemon.log"; then
    echo "rmqhostd $d exited with status $st or reported a sanitizer error" >&2
    exit 1
  fi
done
