#!/usr/bin/env bash
# Instructions of rmqhostd per message on the RocketMQ 5.x (gRPC) path,
# counted by callgrind (deterministic where CPU time on a shared machine is
# not): the daemon as proxy_bench.sh starts it (conf.d, the proxy plugin on
# its gRPC server, TLS permissive) runs under valgrind; the Go 5.x client of
# tests/bench/proxy5 sends N 1 KiB messages from C goroutines (counters
# zeroed before, dumped after: "send"), then receives and acknowledges them
# with C SimpleConsumers, ACKC Acks at a time (zeroed again before, dumped
# after: "recv"). Prints Ir of the whole daemon (every thread) per message
# for each phase. Each phase's window includes its clients' connections and
# TLS handshakes, the same for every build. Not a test.
#
# usage: tests/bench/proxy_callgrind.sh BUILD_DIR [N] [C] [ACKC]
#   defaults N=4000 C=32 ACKC=1. KEEP=PREFIX keeps PREFIX.send.out and
#   PREFIX.recv.out (callgrind_annotate them).
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR [N] [C] [ACKC]}" && pwd)
n=${2:-4000} c=${3:-32} ackc=${4:-1}
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/rmqproxycg.XXXXXX)
dpid=
cleanup() {
  [[ -n $dpid ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=../support/all_in_one_conf.sh
. "$src/tests/support/all_in_one_conf.sh"
# shellcheck source=../interop/go/go_env.sh
. "$src/tests/interop/go/go_env.sh"
mkdir -p "$dir/go/bench"
cp "$src/tests/interop/proxy_clients/go/go.mod" "$src/tests/interop/proxy_clients/go/go.sum" "$dir/go/"
cp "$src/tests/bench/proxy5/main.go" "$dir/go/bench/"
(cd "$dir/go" && go build -o "$dir/proxy5bench" ./bench)

br=$(port_block -2 0 1 2 3)
vip=$((br - 2)) ns=$((br + 2)) px=$((br + 3))
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=bench \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$dir/key.pem" -out "$dir/cert.pem" >/dev/null 2>&1
(cd "$src" && exec valgrind --tool=callgrind --callgrind-out-file="$dir/cg.%p.out" \
  "$build/bin/rmqhostd" -c conf.d -o "state_dir=$dir/rmq" -o "admin_socket=$dir/rmq.sock" \
  -o "servers.namesrv.listen=127.0.0.1:$ns" -o "servers.broker.listen=127.0.0.1:$br" \
  -o "servers.broker.vip_listen=127.0.0.1:$vip" -o "servers.proxy.listen=127.0.0.1:$px" \
  -o "plugins.broker-client-mgr.settings.namesrvAddr=127.0.0.1:$ns" \
  -o servers.proxy.tls.mode=permissive -o "servers.proxy.tls.cert_file=$dir/cert.pem" \
  -o "servers.proxy.tls.key_file=$dir/key.pem" -o log_level=warn >"$dir/rmq.log" 2>&1) &
dpid=$!
for _ in $(seq 1 1200); do (exec 3<>"/dev/tcp/127.0.0.1/$px") 2>/dev/null && break; sleep 0.1; done
(exec 3<>"/dev/tcp/127.0.0.1/$px") 2>/dev/null || { echo "rmqhostd did not start:"; tail "$dir/rmq.log"; exit 1; }

# the topic (8 queues) by UPDATE_AND_CREATE_TOPIC (17) on the broker port
python3 - "$br" <<'PY'
import json, socket, struct, sys
ext = {"topic": "BenchCg5", "defaultTopic": "TBW102", "readQueueNums": "8", "writeQueueNums": "8",
       "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}
h = json.dumps({"code": 17, "extFields": ext, "flag": 0, "language": "JAVA", "opaque": 1,
                "serializeTypeCurrentRPC": "JSON", "version": 409}).encode()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=120)
s.sendall(struct.pack(">II", 4 + len(h), len(h)) + h)
b = b""
while len(b) < 8 or len(b) < 4 + struct.unpack(">I", b[:4])[0]:
    d = s.recv(65536)
    if not d:
        sys.exit("topic creation: connection closed")
    b += d
code = json.loads(b[8:8 + (struct.unpack(">I", b[4:8])[0] & 0xFFFFFF)])["code"]
if code != 0:
    sys.exit("topic creation answered code %d" % code)
PY
sleep 2 # the route reaches the NameServer role

total() { # DUMP_FILE -> its Ir
  awk '/^totals:/{t = $2} /^summary:/{s = $2} END{print (t != "" ? t : s) + 0}' "$1"
}
phase() { # NAME CLIENT_ARGS...
  local name=$1; shift
  rm -f "$dir"/cg.*.out.*
  callgrind_control -z "$dpid" >/dev/null 2>&1
  "$dir/proxy5bench" -endpoint "127.0.0.1:$px" -topic BenchCg5 -group GBenchCg5 -n "$n" -c "$c" \
    -ackc "$ackc" -logdir "$dir" "$@" >"$dir/client.$name" 2>&1 || { cat "$dir/client.$name"; exit 1; }
  callgrind_control -d "$dpid" >/dev/null 2>&1
  local f; f=$(ls "$dir"/cg.*.out.* | tail -1)
  [[ -n ${KEEP:-} ]] && cp "$f" "$KEEP.$name.out"
  echo "$name $(total "$f") $(grep -E '^(send|recv) ' "$dir/client.$name")"
}
s=$(phase send -recv=false)
r=$(phase recv -send=false)
python3 - "$n" "$s" "$r" <<'PY'
import sys
n = int(sys.argv[1])
for line in sys.argv[2:]:
    name, ir, client = line.split(" ", 2)
    print("%s: Ir per message %.0f (total %s) | client: %s" % (name, int(ir) / n, ir, client))
PY
