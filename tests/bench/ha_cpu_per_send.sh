#!/usr/bin/env bash
# CPU time and context switches per send of an rmqhost SYNC_MASTER +
# SLAVE pair (each its own rmqhostd, io_threads 1, as tests/bench/ha_bench.sh),
# next to sends/s and latency: on a shared machine sends/s and p99 follow
# the load, the cost per send much less. perf stat (task-clock,
# context-switches) on both daemons while rmqbench --mode send -c 4 -d 32
# (1 KiB) runs SECONDS after a 1 s warm-up. Prints one line. Not a test.
#
# usage: tests/bench/ha_cpu_per_send.sh BUILD_DIR [SECONDS] [ROLE]
#   ROLE: SYNC_MASTER (default) | ASYNC_MASTER; STORE_SO=path runs both
#   daemons with another store.so (e.g. one built from an older commit);
#   STORE_EXTRA='commitLogWrite = "pwrite";' adds store settings on both daemons;
#   RECORD=PREFIX also writes perf record -g profiles PREFIX.master.data and
#   PREFIX.slave.data of the run.
set -euo pipefail
build=$(cd "$1" && pwd)
secs=${2:-4}
role=${3:-SYNC_MASTER}
bin=$build/bin
plugins=$build/plugins
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/rmqhacpu.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=../support/all_in_one_conf.sh
. "$src/tests/support/all_in_one_conf.sh"
command -v perf >/dev/null || { echo "perf is needed" >&2; exit 1; }

start_rmqhost() { # NAME ROLE HA_PORT [MASTER_HA]
  local name=$1 r=$2 ha=$3 master=${4:-}
  local d=$dir/$name ns
  ns=$(fixed_port)
  local store="brokerRole = \"$r\"; haListenPort = $ha; ${STORE_EXTRA:-}"
  [[ -n $master ]] && store="$store haMasterAddress = \"$master\";"
  write_all_in_one_conf "$d" "$plugins" "$ns" 1 "$store" "brokerName = \"bench-ha\";" "" \
    "${STORE_SO:-$plugins/store.so}"
  "$bin/rmqhostd" -c "$d/conf.d" >"$d/daemon.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 300); do [[ -f $d/state/listen.addrs ]] && return 0; sleep 0.1; done
  cat "$d/daemon.log"
  exit 1
}
ha=$(fixed_port)
start_rmqhost m "$role" "$ha"
mpid=${pids[0]}
start_rmqhost s SLAVE "$(fixed_port)" "127.0.0.1:$ha"
spid=${pids[1]}
mport=$(awk '$1=="broker"{n=split($2,a,":"); print a[n]}' "$dir/m/state/listen.addrs")
for _ in $(seq 1 100); do
  "$bin/rmqhostctl" -c "$dir/m/conf.d" ha | grep -q '^slave ' && break
  sleep 0.1
done
"$bin/rmqbench" -a "127.0.0.1:$mport" --mode send -c 1 -d 1 -s 0.2 -w 0 >/dev/null 2>&1 || true
"$bin/rmqbench" -a "127.0.0.1:$mport" --mode send -c 4 -d 32 -s 1 -w 0 >/dev/null 2>&1 || true
perf stat -e task-clock,context-switches -p "$mpid" -o "$dir/m.txt" -- sleep "$secs" &
p1=$!
perf stat -e task-clock,context-switches -p "$spid" -o "$dir/s.txt" -- sleep "$secs" &
p2=$!
rec=()
if [[ -n ${RECORD:-} ]]; then
  perf record -g -o "$RECORD.master.data" -p "$mpid" -- sleep "$secs" >/dev/null 2>&1 &
  rec+=($!)
  perf record -g -o "$RECORD.slave.data" -p "$spid" -- sleep "$secs" >/dev/null 2>&1 &
  rec+=($!)
fi
"$bin/rmqbench" -a "127.0.0.1:$mport" --mode send --size 1024 -c 4 -d 32 -s "$secs" -w 0 --json \
  >"$dir/bench.json" 2>/dev/null
wait $p1 || true
wait $p2 || true
for r in "${rec[@]}"; do wait "$r" || true; done
python3 - "$dir" "$secs" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, re, sys
d, secs, load = sys.argv[1], float(sys.argv[2]), sys.argv[3]
b = json.load(open(d + "/bench.json"))
n = b["requests_per_sec"] * secs or 1
codes = json.dumps(b.get("responses", {})).replace(" ", "")
def num(f, name):
    m = re.search(r"([\d,.]+)\s+(?:msec\s+)?" + re.escape(name), open(f).read())
    return float(m.group(1).replace(",", "")) if m else float("nan")
print("load %s: sends/s %.0f p50 %.2f ms p99 %.2f ms codes %s | CPU us/send master %.2f slave %.2f"
      " | context switches/send master %.2f slave %.2f" % (
          load, b["requests_per_sec"], b["latency_us"]["p50"] / 1000, b["latency_us"]["p99"] / 1000,
          codes, num(d + "/m.txt", "task-clock") * 1000 / n, num(d + "/s.txt", "task-clock") * 1000 / n,
          num(d + "/m.txt", "context-switches") / n, num(d + "/s.txt", "context-switches") / n))
PY
