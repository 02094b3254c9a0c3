#!/usr/bin/env bash
# run_cluster_registration.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR — the proxy
# plugin in cluster mode registers its 5.x clients at the broker and relays
# the broker's transaction check-back, driven by RocketMQ 5.x's Python
# client (cluster_registration_interop.py says what it checks). Two
# rmqhostd, every port an ephemeral loopback one:
#   A: NameServer + broker RegBroker (broker-client-mgr, filter, store), its
#      transaction check every second for half messages older than 1 s
#   P: the proxy plugin alone on a gRPC server, proxyMode = "cluster",
#      namesrvAddr = A's NameServer
# Every daemon runs through rmq_tied and is stopped by the EXIT trap however
# the script ends; a daemon that exits non-zero or logs a sanitizer report
# fails the test.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1
RMQ_BIN=${1:?usage: run_cluster_registration.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR}
plugins=${2:?plugin dir}
out=${3:?python out dir}
py=$out/venv/bin/python
if [[ ! -x $py ]] || ! "$py" -c 'import rocketmq' 2>/dev/null; then
  echo "proxy cluster registration interop: no rocketmq-python-client in $out/venv: the" \
       "fixture interop_install_python5_client did not get it from PyPI" >&2
  exit 1
fi
# shellcheck source=../../../support/all_in_one_conf.sh
source "$(dirname "$0")/../../../support/all_in_one_conf.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/rmq-proxy-cluster-reg.XXXXXX")
# shellcheck source=cluster_daemons.sh
source "$(dirname "$0")/cluster_daemons.sh"

ns=$(free_port)
write_all_in_one_conf "$dir/a" "$plugins" "$ns" 1 \
  "mappedFileSizeCommitLog = 16777216; transactionCheckInterval = 1000; transactionTimeOut = 1000;" \
  'brokerName = "RegBroker"; topics = "RegTxTopic:2";'
launch a broker
broker_addr=$launched_addr

mkdir -p "$dir/p/conf.d" "$dir/p/state"
cat >"$dir/p/conf.d/host.conf" <<CONF
state_dir = "$dir/p/state";
io_threads = 1;
log_level = "info";
servers = { proxy = { listen = "127.0.0.1:0"; protocol = "grpc"; }; };
CONF
cat >"$dir/p/conf.d/50-proxy.conf" <<CONF
plugin = { name = "proxy"; path = "$plugins/proxy.so"; server = "proxy";
           settings = { proxyMode = "cluster"; namesrvAddr = "127.0.0.1:$ns";
                        minLongPollingTimeoutMs = 500; enableTopicMessageTypeCheck = false; }; };
CONF
launch p proxy
proxy_addr=$launched_addr

export HOME=$dir # the client logs under ~/logs/rocketmq_python
"$RMQ_BIN/rmq_tied" timeout -k 5 170 "$RMQ_BIN/rmq_tied" \
  "$py" "$(dirname "$0")/cluster_registration_interop.py" "$proxy_addr" "$broker_addr"
# the check-back went through the proxy's outgoing connection (not the
# local event path: this proxy has no store)
if ! grep -q "transaction check of .* sent to client" "$dir/p/daemon.log"; then
  echo "the proxy's log does not show the relayed transaction check" >&2
  exit 1
fi
