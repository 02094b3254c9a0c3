#!/usr/bin/env bash
# Instructions per send of rmqhostd with the store, counted by callgrind on a
# fixed workload (deterministic, unlike CPU time on a shared machine): the
# all-in-one daemon (io_threads 1) under valgrind, one connection sending
# COUNT SEND_MESSAGE_V2 requests of SIZE bytes, one in flight (DEPTH=N for
# more; then how frames batch into reads varies run to run), every answer read.
# Prints Ir per send of the IO thread's frame processing (conn_process_frames,
# inclusive: decode, dispatch, the store's append, the answer) and of the
# whole daemon (two runs, COUNT and 2*COUNT sends, so start and stop cancel).
# Not a test.
#
# usage: tests/bench/callgrind_per_send.sh BUILD_DIR [COUNT] [SIZE] [FLUSH]
#   BUILD_DIR: a Release build (bin/rmqhostd, plugins/); COUNT default 5000;
#   SIZE default 1024; FLUSH ASYNC_FLUSH (default) | SYNC_FLUSH.
#   KEEP=PREFIX keeps each run's callgrind output and annotation.
set -euo pipefail
build=$1 count=${2:-5000} size=${3:-1024} flush=${4:-ASYNC_FLUSH} depth=${DEPTH:-1}
plugins=$(cd "$build/plugins" && pwd)
work=$(mktemp -d /tmp/rmqcgsend.XXXXXX)
dpid=
cleanup() {
  [[ -n $dpid ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=../support/all_in_one_conf.sh
. "$(dirname "$0")/../support/all_in_one_conf.sh"

send_fixed() { # PORT COUNT
  python3 - "$1" "$2" "$size" "$depth" <<'PY'
import json, socket, struct, sys, time
port, count, size, depth = (int(x) for x in sys.argv[1:5])
ext = {"a": "BenchGroup", "b": "BenchTopic", "c": "TBW102", "d": "4", "e": "-1", "f": "0",
       "g": str(int(time.time() * 1000)), "h": "0", "i": "WAIT\x01true\x02TAGS\x01TagA",
       "j": "0", "k": "false", "m": "false"}
body = b"x" * size
def frame(opaque):
    h = json.dumps({"code": 310, "extFields": ext, "flag": 0, "language": "JAVA",
                    "opaque": opaque, "serializeTypeCurrentRPC": "JSON",
                    "version": 409}, separators=(",", ":")).encode()
    return struct.pack(">II", 4 + len(h) + len(body), len(h)) + h + body
s = socket.create_connection(("127.0.0.1", port))
buf = b""
def answers(n):
    global buf
    got = 0
    while got < n:
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">I", buf[:4])[0]:
            t = 4 + struct.unpack(">I", buf[:4])[0]
            hl = struct.unpack(">I", buf[4:8])[0] & 0xFFFFFF
            code = json.loads(buf[8:8 + hl])["code"]
            if code != 0:
                sys.exit("send answered code %d" % code)
            buf = buf[t:]
            got += 1
            if got == n:
                return
        d = s.recv(1 << 16)
        if not d:
            sys.exit("connection closed")
        buf += d
s.sendall(frame(0)); answers(1)  # the topic exists from here on
sent = done = 0
while done < count:
    k = min(depth - (sent - done), count - sent)
    if k > 0:
        s.sendall(b"".join(frame(1 + sent + i) for i in range(k)))
        sent += k
    answers(1); done += 1
PY
}

run() { # COUNT -> "IO_IR TOTAL_IR"
  local n=$1 dir=$work/run$1
  local ns; ns=$(fixed_port)
  write_all_in_one_conf "$dir" "$plugins" "$ns" 1 "flushDiskType = \"$flush\";"
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" \
    "$build/bin/rmqhostd" -c "$dir/conf.d" >"$dir/daemon.log" 2>&1 &
  dpid=$!
  for _ in $(seq 1 600); do [[ -f $dir/state/listen.addrs ]] && break; sleep 0.1; done
  [[ -f $dir/state/listen.addrs ]] || { cat "$dir/daemon.log"; exit 1; }
  local port; port=$(awk '$1=="broker"{n=split($2,a,":"); print a[n]}' "$dir/state/listen.addrs")
  send_fixed "$port" "$n"
  kill -TERM "$dpid"; wait "$dpid" || true; dpid=
  local total io
  callgrind_annotate --inclusive=yes "$dir/cg.out" >"$dir/annotate.txt" 2>/dev/null || true
  total=$(awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1; exit}' "$dir/annotate.txt")
  io=$(awk '/[^_]conn_process_frames/{gsub(",","",$1); print $1; exit}' "$dir/annotate.txt")
  if [[ -n ${KEEP:-} ]]; then cp "$dir/annotate.txt" "$KEEP.$n.txt"; cp "$dir/cg.out" "$KEEP.$n.out"; fi
  echo "$io $total"
}
read -r io1 t1 < <(run "$count")
read -r io2 t2 < <(run $((2 * count)))
python3 - "$count" "$io1" "$io2" "$t1" "$t2" <<'PY'
import sys
n, io1, io2, t1, t2 = (int(x) for x in sys.argv[1:])
print("Ir per send: frame processing (conn_process_frames incl.) %.0f | whole daemon %.0f"
      % ((io2 - io1) / n, (t2 - t1) / n))
PY
