#!/usr/bin/env bash
# run_go.sh BIN_DIR PLUGIN_DIR GO_OUT_DIR — RocketMQ 5.x's Go client
# (github.com/apache/rocketmq-clients/golang/v5, built by fetch_go.sh)
# against the proxy plugin of an all-in-one rmqhostd: producer, delay,
# SimpleConsumer receive/ack/change invisible duration/redelivery, FIFO when
# the route accepts it (interop/main.go says exactly what it checks). The
# program's own checks decide; the daemon is stopped whatever they say.
set -euo pipefail
RMQ_BIN=${1:?usage: run_go.sh BIN_DIR PLUGIN_DIR GO_OUT_DIR}
plugins=${2:?plugin dir}
out=${3:?go out dir}
prog=$out/bin/proxy_go_interop
if [[ ! -x $prog ]]; then
  echo "proxy go interop: no $prog: the fixture interop_fetch_go5_client did not get" \
       "github.com/apache/rocketmq-clients/golang/v5" >&2
  exit 1
fi
# shellcheck source=../proxy_daemon.sh
source "$(dirname "$0")/../proxy_daemon.sh"
start_proxy_daemon "$plugins" "GoProxyTopic:4"
export HOME=$client_daemon_dir
run_tied 240 "$prog" -endpoint "$proxy_addr" -topic GoProxyTopic -group GoPopGroup \
  -n 20 -logdir "$client_daemon_dir/client-logs" \
  -broker "$(awk '$1 == "broker" {print $2}' "$client_daemon_dir/state/listen.addrs")" \
  -txtopic GoTxTopic
