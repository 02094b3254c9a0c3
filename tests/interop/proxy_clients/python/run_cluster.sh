#!/usr/bin/env bash
# run_cluster.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR — the proxy plugin in cluster
# mode (proxyMode = "cluster") in front of two brokers of other processes,
# driven by RocketMQ 5.x's Python client (cluster_interop.py says what it
# checks). Three rmqhostd, every port an ephemeral loopback one:
#   A: NameServer + broker ClusterBrokerA (broker-client-mgr, filter, store)
#   B: broker ClusterBrokerB only, registered with A's NameServer
#   P: the proxy plugin alone on a gRPC server: no NameServer, no store;
#      namesrvAddr = a dead address, then A's NameServer (the first failed
#      call moves the proxy to the second)
# Before P, a proxy with an unknown proxyMode and one in cluster mode without
# namesrvAddr must refuse to start, saying why.
# Every daemon runs through rmq_tied and is stopped by the EXIT trap however
# the script ends; a daemon that exits non-zero or logs a sanitizer report
# fails the test.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1
RMQ_BIN=${1:?usage: run_cluster.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR}
plugins=${2:?plugin dir}
out=${3:?python out dir}
py=$out/venv/bin/python
if [[ ! -x $py ]] || ! "$py" -c 'import rocketmq' 2>/dev/null; then
  echo "proxy cluster interop: no rocketmq-python-client in $out/venv: the fixture" \
       "interop_install_python5_client did not get it from PyPI" >&2
  exit 1
fi
# shellcheck source=../../../support/all_in_one_conf.sh
source "$(dirname "$0")/../../../support/all_in_one_conf.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/rmq-proxy-cluster.XXXXXX")
# shellcheck source=cluster_daemons.sh
source "$(dirname "$0")/cluster_daemons.sh"

ns=$(free_port)
store="mappedFileSizeCommitLog = 16777216;"
write_all_in_one_conf "$dir/a" "$plugins" "$ns" 1 "$store" \
  'brokerName = "ClusterBrokerA"; topics = "ClTopicA:2;ClBoth:2";'
launch a broker

# B: the broker roles only, registering with A's NameServer
write_all_in_one_conf "$dir/b" "$plugins" "$ns" 1 "$store" \
  'brokerName = "ClusterBrokerB"; topics = "ClTopicB:2;ClBoth:2;ClTxTopic:2";'
rm "$dir/b/conf.d/10-namesrv.conf"
cat >"$dir/b/conf.d/host.conf" <<CONF
state_dir = "$dir/b/state";
io_threads = 1;
log_level = "warn";
servers = { broker = { listen = "127.0.0.1:0"; }; };
CONF
launch b broker

# proxy_conf NAME SETTINGS: a proxy-only conf.d in $dir/NAME
proxy_conf() {
  mkdir -p "$dir/$1/conf.d" "$dir/$1/state"
  cat >"$dir/$1/conf.d/host.conf" <<CONF
state_dir = "$dir/$1/state";
io_threads = 1;
log_level = "warn";
servers = { proxy = { listen = "127.0.0.1:0"; protocol = "grpc"; }; };
CONF
  cat >"$dir/$1/conf.d/50-proxy.conf" <<CONF
plugin = { name = "proxy"; path = "$plugins/proxy.so"; server = "proxy"; settings = { $2 }; };
CONF
}
# refused NAME SETTINGS WORDS: that proxy exits non-zero logging WORDS (and
# no sanitizer report)
refused() {
  proxy_conf "$1" "$2"
  local st=0
  "$RMQ_BIN/rmq_tied" timeout -k 5 30 "$RMQ_BIN/rmqhostd" -c "$dir/$1/conf.d" \
    >"$dir/$1/daemon.log" 2>&1 || st=$?
  if [[ $st -eq 0 || $st -eq 124 ]] || ! grep -qF "$3" "$dir/$1/daemon.log" ||
     grep -qE 'Sanitizer|runtime error:' "$dir/$1/daemon.log"; then
    echo "a proxy with settings { $2 } did not refuse to start with \"$3\" (status $st):" >&2
    cat "$dir/$1/daemon.log" >&2
    exit 1
  fi
}
refused bad-mode 'proxyMode = "remote";' 'proxyMode "remote": neither "local" nor "cluster"'
refused no-ns 'proxyMode = "cluster";' 'namesrvAddr is required'

# P: the proxy plugin alone, cluster mode; the first NameServer is dead
dead=$(free_port)
mkdir -p "$dir/p/conf.d" "$dir/p/state"
cat >"$dir/p/conf.d/host.conf" <<CONF
state_dir = "$dir/p/state";
io_threads = 1;
log_level = "warn";
servers = { proxy = { listen = "127.0.0.1:0"; protocol = "grpc"; }; };
CONF
cat >"$dir/p/conf.d/50-proxy.conf" <<CONF
plugin = { name = "proxy"; path = "$plugins/proxy.so"; server = "proxy";
           settings = { proxyMode = "cluster"; namesrvAddr = "127.0.0.1:$dead;127.0.0.1:$ns";
                        # 1 s client awaits; transaction messages to topics
                        # declared without a message.type
                        minLongPollingTimeoutMs = 500; enableTopicMessageTypeCheck = false; }; };
CONF
launch p proxy
proxy_addr=$launched_addr

export HOME=$dir # the client logs under ~/logs/rocketmq_python
"$RMQ_BIN/rmq_tied" timeout -k 5 170 "$RMQ_BIN/rmq_tied" \
  "$py" "$(dirname "$0")/cluster_interop.py" "$proxy_addr" ClusterBrokerA ClusterBrokerB 6
