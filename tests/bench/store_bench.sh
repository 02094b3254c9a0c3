#!/usr/bin/env bash
# The message-path figures of docs/benchmarks.md: rmqbench --mode send
# against the baseline server (the ceiling: it answers without storing) and
# against rmqhostd with the store (ASYNC_FLUSH, SYNC_FLUSH, sends on the
# executor instead of inline), then a PULL drain of what was stored, and the
# daemon's RssAnon under load. Median of RUNS. Not a test.
#
# usage: tests/bench/store_bench.sh [BUILD_DIR] [RUNS] [SECONDS]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
secs=${3:-4}
bin=$build/bin
plugins=$(cd "$build/plugins" && pwd)
dir=$(mktemp -d /tmp/rmqstorebench.XXXXXX)
pids=()
dpid=
cleanup() {
  for p in "${pids[@]}" $dpid; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# shellcheck source=../support/all_in_one_conf.sh
. "$(dirname "$0")/../support/all_in_one_conf.sh"
bport=$(fixed_port)
"$bin/baseline_server" -l "127.0.0.1:$bport" -t 1 >"$dir/baseline.log" 2>&1 &
pids+=($!)

# start_daemon FLUSH INLINE: namesrv + broker-client-mgr + filter + store,
# a fresh store each time. io_threads 1: the load generator shares 2 cores.
start_daemon() {
  local flush=$1 inline=$2
  if [[ -n $dpid ]]; then kill "$dpid"; wait "$dpid" || true; dpid=; fi
  rm -rf "$dir/state" "$dir/conf.d"
  local ns
  ns=$(fixed_port)
  write_all_in_one_conf "$dir" "$plugins" "$ns" 1 \
    "flushDiskType = \"$flush\"; sendMessageInline = $inline;"
  "$bin/rmqhostd" -c "$dir/conf.d" >"$dir/daemon.log" 2>&1 &
  dpid=$!
  for _ in $(seq 1 300); do [[ -f $dir/state/listen.addrs ]] && break; sleep 0.1; done
  if [[ ! -f $dir/state/listen.addrs ]]; then cat "$dir/daemon.log"; exit 1; fi
  sport=$(awk '$1=="broker"{n=split($2,a,":"); print a[n]}' "$dir/state/listen.addrs")
  # create the topic (auto-creation from TBW102) before measuring
  "$bin/rmqbench" -a "127.0.0.1:$sport" --mode send --topic BenchTopic -c 1 -d 1 -s 0.2 -w 0 \
    >/dev/null 2>&1 || true
}

one() {
  "$bin/rmqbench" -s "$secs" -w 1 --json "$@" 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); l=d["latency_us"]; print(d["requests_per_sec"], l["p50"], l["p99"], l["p999"], d["messages_per_sec"])'
}
median() { sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}'; }
scenario() {
  local label=$1; shift
  : >"$dir/rows"
  for _ in $(seq 1 "$runs"); do one "$@" >>"$dir/rows"; done
  printf '| %-52s | %10.0f | %7.1f | %7.1f | %7.1f |\n' "$label" \
    "$(cut -d' ' -f1 "$dir/rows" | median)" "$(cut -d' ' -f2 "$dir/rows" | median)" \
    "$(cut -d' ' -f3 "$dir/rows" | median)" "$(cut -d' ' -f4 "$dir/rows" | median)"
}
rss_anon() { awk '/RssAnon/{print $2, $3}' "/proc/$dpid/status"; }

echo "| SEND_MESSAGE_V2, 1 KiB, 4 x 32 (median of $runs x ${secs}s) | sends/s | p50 us | p99 us | p999 us |"
echo "|---|---|---|---|---|"
scenario "baseline_server (answers, stores nothing)" -a "127.0.0.1:$bport" --mode send -c 4 -d 32
start_daemon ASYNC_FLUSH true
scenario "rmqhostd store, ASYNC_FLUSH, sends inline" -a "127.0.0.1:$sport" --mode send -c 4 -d 32
echo "(RssAnon after the ASYNC runs: $(rss_anon))" >"$dir/rss"
# drain what the ASYNC runs stored: 4 queues, a connection each, 32 per pull
drain=$("$bin/rmqbench" -a "127.0.0.1:$sport" --mode pull --queues 4 -c 4 -d 32 --batch 32 -s 60 --json 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.0f msgs/s (%d messages in %.2f s), pulls p99 %.1f us" % (d["messages_per_sec"], d["messages"], d["seconds"], d["latency_us"]["p99"]))')
echo "(RssAnon after the drain: $(rss_anon))" >>"$dir/rss"
start_daemon ASYNC_FLUSH false
scenario "rmqhostd store, ASYNC_FLUSH, sends on the executor" -a "127.0.0.1:$sport" --mode send -c 4 -d 32
start_daemon SYNC_FLUSH true
scenario "rmqhostd store, SYNC_FLUSH (group commit), inline" -a "127.0.0.1:$sport" --mode send -c 4 -d 32
echo "(RssAnon after the SYNC runs: $(rss_anon))" >>"$dir/rss"
echo
echo "PULL drain, 1 KiB, 4 queues, 4 connections x 32 pulls of 32: $drain"
cat "$dir/rss"
