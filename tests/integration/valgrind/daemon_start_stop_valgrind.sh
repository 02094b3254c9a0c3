#!/usr/bin/env bash
# The daemon's start, a little traffic and SIGTERM stop under valgrind:
# no definite or indirect leak, no memory error, exit 0.
# usage: daemon_start_stop_valgrind.sh RMQHOSTD PLUGIN_DIR
set -euo pipefail
daemon=$1 plugins=$2
command -v valgrind >/dev/null || { echo "valgrind not installed: skipped"; exit 77; }
dir=$(mktemp -d /tmp/rmqvg.XXXXXX)
pid=
cleanup() { [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
mkdir -p "$dir/conf.d"
cat >"$dir/conf.d/host.conf" <<CONF
state_dir = "$dir/state";
io_threads = 2;
servers = { namesrv = { listen = "127.0.0.1:0"; }; main = { listen = "127.0.0.1:0"; }; };
CONF
cat >"$dir/conf.d/10-hosttest.conf" <<CONF
plugin = { name = "hosttest"; path = "$plugins/hosttest.so"; server = "main"; };
CONF
cat >"$dir/conf.d/20-namesrv.conf" <<CONF
plugin = { name = "namesrv"; path = "$plugins/namesrv.so"; server = "namesrv"; };
CONF
# rmq_tied (beside rmqhostd): the daemon dies with this script even when a
# SIGKILL or a ctest timeout leaves the EXIT trap no chance to run
"$(dirname "$daemon")/rmq_tied" valgrind --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
  "$daemon" -c "$dir/conf.d" >"$dir/vg.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do [[ -f $dir/state/listen.addrs ]] && break; sleep 0.1; done
[[ -f $dir/state/listen.addrs ]] || { cat "$dir/vg.log"; echo "daemon did not start"; exit 1; }
port=$(awk '$1=="main"{split($2,a,":"); print a[2]}' "$dir/state/listen.addrs")
# One echo request (code 7001) with a raw JSON frame, answer read back.
python3 - "$port" <<'PY'
import json, socket, struct, sys
h = json.dumps({"code": 7001, "opaque": 1, "flag": 0, "extFields": {"msg": "vg"}}).encode()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(struct.pack(">II", 4 + len(h), len(h)) + h)
assert len(s.recv(4)) == 4
PY
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
cat "$dir/vg.log" | grep -E "ERROR SUMMARY|definitely lost|indirectly lost|no leaks are possible" || true
if [[ $status -ne 0 ]]; then cat "$dir/vg.log"; echo "exit status $status"; exit 1; fi
grep -q "ERROR SUMMARY: 0 errors" "$dir/vg.log" || { cat "$dir/vg.log"; exit 1; }
echo "valgrind: clean start/stop"
