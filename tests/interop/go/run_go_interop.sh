#!/usr/bin/env bash
# run_go_interop.sh BIN_DIR PLUGIN_DIR GO_OUT_DIR — the Go client
# (rocketmq-client-go/v2, built by fetch_go_client.sh) against an all-in-one
# rmqhostd: producer, a push consumer with a TAG selector (exactly the
# selected messages, each once) and an orderly consumer (every sharding key's
# messages from one queue, in send order). The program's own checks decide;
# the daemon is stopped whatever they say.
set -euo pipefail
RMQ_BIN=${1:?usage: run_go_interop.sh BIN_DIR PLUGIN_DIR GO_OUT_DIR}
plugins=${2:?plugin dir}
out=${3:?go out dir}
prog=$out/bin/go_interop
if [[ ! -x $prog ]]; then
  echo "go interop: no $prog: the fixture interop_fetch_go_client did not get the Go client" >&2
  exit 1
fi
# shellcheck source=../client_daemon.sh
source "$(dirname "$0")/../client_daemon.sh"
start_client_daemon "$plugins"
run_tied 240 "$prog" -ns "$ns_addr"
