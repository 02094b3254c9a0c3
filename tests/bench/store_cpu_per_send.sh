#!/usr/bin/env bash
# CPU time per send of rmqhostd with the store (perf stat task-clock on the
# daemon's pid, total and per thread) next to sends/s and latency, for A/B
# comparisons on a shared machine where sends/s moves with the load but CPU
# per send much less. Fresh store per run, io_threads 1 (IOT=N to change),
# 1 s warm-up, then SECONDS of rmqbench --mode send -c 4 -d 32 (1 KiB).
# Not a test.
#
# usage: tests/bench/store_cpu_per_send.sh BUILD_DIR FLUSH SECONDS [SETTINGS]
#   FLUSH: ASYNC_FLUSH | SYNC_FLUSH; SETTINGS: extra store settings, e.g.
#   "commitLogPageCacheKeep = 67108864;"; STORE_SO=path uses another store.so
#   (e.g. one built from an older commit) with the same daemon.
set -euo pipefail
build=$1 flush=$2 secs=$3 extra=${4:-}
bin=$build/bin
plugins=$(cd "$build/plugins" && pwd)
dir=$(mktemp -d /tmp/rmqcpusend.XXXXXX)
dpid=
cleanup() {
  [[ -n $dpid ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=../support/all_in_one_conf.sh
. "$(dirname "$0")/../support/all_in_one_conf.sh"
ns=$(fixed_port)
write_all_in_one_conf "$dir" "$plugins" "$ns" "${IOT:-1}" "flushDiskType = \"$flush\"; $extra" \
  "" "" "${STORE_SO:-$plugins/store.so}"
"$bin/rmqhostd" -c "$dir/conf.d" >"$dir/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 1 300); do [[ -f $dir/state/listen.addrs ]] && break; sleep 0.1; done
if [[ ! -f $dir/state/listen.addrs ]]; then cat "$dir/daemon.log"; exit 1; fi
port=$(awk '$1=="broker"{n=split($2,a,":"); print a[n]}' "$dir/state/listen.addrs")
"$bin/rmqbench" -a "127.0.0.1:$port" --mode send --topic BenchTopic -c 1 -d 1 -s 0.2 -w 0 \
  >/dev/null 2>&1 || true
"$bin/rmqbench" -a "127.0.0.1:$port" --mode send -c 4 -d 32 -s 1 -w 0 >/dev/null 2>&1 || true
have_perf=0
if command -v perf >/dev/null; then
  have_perf=1
  perf stat --per-thread -e task-clock -p "$dpid" -o "$dir/threads.txt" -- sleep "$secs" &
  p1=$!
  perf stat -e task-clock,syscalls:sys_enter_msync,syscalls:sys_enter_fdatasync -p "$dpid" -o "$dir/total.txt" -- sleep "$secs" &
  p2=$!
fi
"$bin/rmqbench" -a "127.0.0.1:$port" --mode send -c 4 -d 32 -s "$secs" -w 0 --json \
  >"$dir/bench.json" 2>/dev/null
[[ $have_perf == 1 ]] && { wait $p1 || true; wait $p2 || true; }
python3 - "$dir" "$secs" "$have_perf" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, re, sys
d, secs, have_perf, load = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
b = json.load(open(d + "/bench.json"))
n = b["requests_per_sec"] * secs or 1
line = "load %s: sends/s %.0f p50 %.0f us p99 %.0f us" % (
    load, b["requests_per_sec"], b["latency_us"]["p50"], b["latency_us"]["p99"])
if have_perf:
    t = open(d + "/total.txt").read()
    def num(name):
        m = re.search(r"([\d,.]+)\s+(?:msec\s+)?" + re.escape(name), t)
        return float(m.group(1).replace(",", "")) if m else float("nan")
    th = []
    for l in open(d + "/threads.txt"):
        m = re.match(r"\s*(\S+)\s+([\d,.]+)\s+msec", l)
        if m:
            th.append(float(m.group(2).replace(",", "")))
    th.sort(reverse=True)
    # a sync is an msync (commitLogWrite mmap) or an fdatasync (pwrite)
    ms = num("syscalls:sys_enter_msync") + num("syscalls:sys_enter_fdatasync")
    line += " | daemon CPU us/send %.2f (busiest threads %s) sends/sync %.1f" % (
        num("task-clock") * 1000 / n, ", ".join("%.2f" % (x * 1000 / n) for x in th[:3]),
        n / ms if ms == ms and ms > 0 else float("nan"))
print(line)
PY
