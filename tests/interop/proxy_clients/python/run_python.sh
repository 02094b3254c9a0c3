#!/usr/bin/env bash
# run_python.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR — RocketMQ 5.x's Python client
# (rocketmq-python-client, in the venv install_python.sh made) against the
# proxy plugin of an all-in-one rmqhostd, over plaintext and over TLS (each
# with a topic and group of its own): producer, delay,
# SimpleConsumer receive/ack/change invisible duration/redelivery, FIFO when
# the route accepts it (proxy_interop.py says exactly what it checks); an
# orderly (FIFO) group's assignment and in-order receive (fifo_interop.py); then
# PushConsumers with TAG and SQL92 filters, retries and DLQ (push_interop.py);
# then hot reloads of the proxy and store plugins under the client
# (reload_interop.py) and a kill -9 of the daemon during POP consumption
# (kill9_interop.py). The
# program's own checks decide; the daemon is stopped whatever they say.
set -euo pipefail
# the scripts import pop_receive.py from the source tree: no __pycache__ there
export PYTHONDONTWRITEBYTECODE=1
RMQ_BIN=${1:?usage: run_python.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR}
plugins=${2:?plugin dir}
out=${3:?python out dir}
py=$out/venv/bin/python
if [[ ! -x $py ]] || ! "$py" -c 'import rocketmq' 2>/dev/null; then
  echo "proxy python interop: no rocketmq-python-client in $out/venv: the fixture" \
       "interop_install_python5_client did not get it from PyPI" >&2
  exit 1
fi
# shellcheck source=../proxy_daemon.sh
source "$(dirname "$0")/../proxy_daemon.sh"
start_proxy_daemon "$plugins" "PyProxyTopic:4;PyTlsTopic:4;PyPushTopic:4;PyDlqTopic:1;PyReloadTopic:4;PyKill9Topic:4;PyFifoTopic:1"
# the client logs under ~/logs/rocketmq_python
export HOME=$client_daemon_dir
echo "== plaintext"
run_tied 120 "$py" "$(dirname "$0")/proxy_interop.py" "$proxy_addr" PyProxyTopic PyPopGroup 20
echo "== TLS"
GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=$client_daemon_dir/proxy-cert.pem \
  run_tied 120 "$py" "$(dirname "$0")/proxy_interop.py" "$proxy_addr" PyTlsTopic PyTlsGroup 20 tls
echo "== FIFO (orderly) group: QueryAssignment per queue, ReceiveMessage in order"
broker_addr=$(awk '$1 == "broker" {print $2}' "$client_daemon_dir/state/listen.addrs")
run_tied 120 "$py" "$(dirname "$0")/fifo_interop.py" "$proxy_addr" "$broker_addr" PyFifoTopic \
  PyFifoGroup PyNotFifoGroup
echo "== PushConsumer (TAG and SQL92 filters, retries, DLQ)"
run_tied 240 "$py" "$(dirname "$0")/push_interop.py" "$proxy_addr" PyPushTopic 10 PyDlqTopic
echo "== hot reload of the proxy and store plugins under the client"
run_tied 120 "$py" "$(dirname "$0")/reload_interop.py" "$proxy_addr" PyReloadTopic 10 \
  "$RMQ_BIN/rmqhostctl" "$client_daemon_dir/conf.d"
echo "== kill -9 during POP consumption"
state=$client_daemon_dir/kill9-state.json
run_tied 120 "$py" "$(dirname "$0")/kill9_interop.py" phase1 "$proxy_addr" PyKill9Topic 10 "$state"
kill9_proxy_daemon
launch_proxy_daemon
run_tied 120 "$py" "$(dirname "$0")/kill9_interop.py" phase2 "$proxy_addr" PyKill9Topic 10 "$state"
