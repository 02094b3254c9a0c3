#!/usr/bin/env bash
# Runs rmqbench against the baseline server and rmqhostd in alternation, in
# the same session, and prints the median of N runs per scenario: the
# figures docs/benchmarks.md and the issue notes quote. Not a test.
#
# usage: tests/bench/compare_with_baseline.sh [BUILD_DIR] [RUNS] [SECONDS]
set -euo pipefail
build=${1:-build}
runs=${2:-5}
secs=${3:-4}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench_session.sh
source "$here/bench_session.sh"
bench_session "$build" rmqcompare

# the NameServer plus a canned route (hosttest) on a second server
write_namesrv_conf "$dir" "$plugins" "" 'main = { listen = "127.0.0.1:0"; };'
cat >"$dir/conf.d/20-hosttest.conf" <<CONF
plugin = { name = "hosttest"; path = "$plugins/hosttest.so"; server = "main"; };
CONF
start_daemon "$bin" "$dir"
dpid=$daemon_pid
pids+=($dpid)
nport=$(listen_port "$dir" namesrv)
mport=$(listen_port "$dir" main)
python3 "$here/hold_broker_registration.py" -a "127.0.0.1:$nport" --topic TopicTest \
  >"$dir/hold.log" 2>&1 &
pids+=($!)
sleep 1

# run NAME ARGS... -> one line "rps p50 p99 p999" (JSON output of rmqbench)
one() {
  "$bin/rmqbench" -s "$secs" -w 1 --json "$@" 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); l=d["latency_us"]; print(d["requests_per_sec"], l["p50"], l["p99"], l["p999"])'
}
median() { sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}'; }

scenario() {
  local label=$1; shift
  local target=$1; shift
  : >"$dir/rows"
  for _ in $(seq 1 "$runs"); do one -a "$target" "$@" >>"$dir/rows"; done
  local rps p50 p99 p999
  rps=$(cut -d' ' -f1 "$dir/rows" | median)
  p50=$(cut -d' ' -f2 "$dir/rows" | median)
  p99=$(cut -d' ' -f3 "$dir/rows" | median)
  p999=$(cut -d' ' -f4 "$dir/rows" | median)
  printf '| %-44s | %12.0f | %7.1f | %7.1f | %7.1f |\n' "$label" "$rps" "$p50" "$p99" "$p999"
}

echo "| scenario (median of $runs x ${secs}s) | requests/s | p50 us | p99 us | p999 us |"
echo "|---|---|---|---|---|"
for depth in "4 32" "1 1"; do
  set -- $depth
  scenario "baseline, $1 x $2" "127.0.0.1:$bport" -c "$1" -d "$2" --code 105 -e topic=TopicTest
  scenario "rmqhostd canned route (hosttest 7009), $1 x $2" "127.0.0.1:$mport" -c "$1" -d "$2" --code 7009
  scenario "rmqhostd namesrv route found, $1 x $2" "127.0.0.1:$nport" -c "$1" -d "$2" --code 105 -e topic=TopicTest
done
scenario "baseline, 4 x 32, ROCKETMQ headers" "127.0.0.1:$bport" -c 4 -d 32 --rocketmq --code 105 -e topic=TopicTest
scenario "rmqhostd namesrv found, 4 x 32, ROCKETMQ" "127.0.0.1:$nport" -c 4 -d 32 --rocketmq --code 105 -e topic=TopicTest
scenario "rmqhostd namesrv not found (17), 4 x 32" "127.0.0.1:$nport" -c 4 -d 32 --code 105 -e topic=NoSuchTopic
echo
echo "rmqhostd RSS after the runs: $(awk '/VmRSS/{print $2, $3}' /proc/$dpid/status)"
