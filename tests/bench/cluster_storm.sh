#!/usr/bin/env bash
# A big cluster against one rmqhostd: BROKERS brokers x TOPICS topics each
# re-register every PERIOD seconds (Java brokers: every 30 s; scaled down so
# a run takes a minute) while clients look routes up. Prints: route lookups
# per second quiet vs during the storm (and the baseline server's, same run),
# the daemon's RSS growth per (topic, broker), the registrations' latency,
# and the lookups' latency while every broker expires at once. Not a test.
# The latency probe looks up once per millisecond: flat out, its own load on
# the daemon's I/O thread would count against the storm's throughput.
#
# usage: tests/bench/cluster_storm.sh [BUILD_DIR] [BROKERS] [TOPICS] [PERIOD] [SECONDS] [EXPIRE_MS] [--shared]
#   EXPIRE_MS: the brokers' heartbeatTimeoutMillis (default 90000); it must
#   outlast the first storm (every broker's first registration), or the
#   first brokers expire — and close the shared connection — before their
#   re-registration
#   --shared: every broker registers the same TOPICS topic names (default:
#   each broker its own, i.e. BROKERS x TOPICS topics)
set -euo pipefail
build=${1:-build}
brokers=${2:-100}
topics=${3:-10000}
period=${4:-10}
secs=${5:-40}
expire_ms=${6:-90000}
distinct=--distinct
[[ ${7:-} == --shared ]] && distinct=
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench_session.sh
source "$here/bench_session.sh"
bench_session "$build" rmqstorm
# expiry scans every second so that the run sees the brokers go
write_namesrv_conf "$dir" "$plugins" "scanNotActiveBrokerInterval = 1000;"
start_daemon "$bin" "$dir"
dpid=$daemon_pid
pids+=($dpid)
nport=$(listen_port "$dir" namesrv)
python3 "$here/hold_broker_registration.py" -a "127.0.0.1:$nport" --topic TopicTest \
  >"$dir/hold.log" 2>&1 &
pids+=($!)
sleep 1

rss() { awk '/VmRSS/{print $2}' "/proc/$dpid/status"; }
lookups() { # TARGET SECONDS -> requests/s
  "$bin/rmqbench" -a "$1" -c 4 -d 32 -w 1 -s "$2" --json -e topic=TopicTest 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.0f" % d["requests_per_sec"])'
}

quiet_base=$(lookups "127.0.0.1:$bport" 5)
quiet=$(lookups "127.0.0.1:$nport" 5)
rss0=$(rss)
"$bin/rmqbench" -a "127.0.0.1:$nport" --register "$topics" --brokers "$brokers" $distinct \
  --period "$period" -s "$secs" --expire-ms "$expire_ms" --probe-every-us 1000 --broker-prefix storm \
  >"$dir/storm.out" 2>"$dir/storm.err" &
spid=$!
pids+=($spid)
# wait for the first storm to be in (RSS stops growing), then measure lookups
peak=$rss0
last=0
for _ in $(seq 1 600); do
  sleep 1
  kill -0 "$spid" 2>/dev/null || break # a small storm may never grow 10 MB
  r=$(rss)
  ((r > peak)) && peak=$r
  if ((r - last < 1024 && r - rss0 > 10240)); then break; fi
  last=$r
done
during=$(lookups "127.0.0.1:$nport" 10)
during_base=$(lookups "127.0.0.1:$bport" 5)
r=$(rss)
((r > peak)) && peak=$r
wait "$spid" || true
r=$(rss)
((r > peak)) && peak=$r

pairs=$((brokers * topics))
names="shared topic names"
[[ -n $distinct ]] && names="distinct topic names"
echo "brokers $brokers x topics $topics ($names), re-registration every $period s for $secs s"
echo "| | route lookups/s (4 x 32) | baseline server, same moment |"
echo "|---|---|---|"
echo "| quiet | $quiet | $quiet_base |"
echo "| during the storm | $during | $during_base |"
awk -v q="$quiet" -v d="$during" -v qb="$quiet_base" -v db="$during_base" \
  'BEGIN{printf "storm/quiet: rmqhostd %.0f %%, baseline %.0f %%\n", 100*d/q, 100*db/qb}'
awk -v a="$rss0" -v b="$peak" -v n="$pairs" \
  'BEGIN{printf "RSS %.1f MB -> peak %.1f MB: %.0f bytes per (topic, broker)\n", a/1024, b/1024, (b-a)*1024/n}'
cat "$dir/storm.out"
[[ -s $dir/storm.err ]] && cat "$dir/storm.err"
echo "RSS after expiry: $(awk '/VmRSS/{print $2" kB"}' "/proc/$dpid/status")"
# the brokers' connections close when rmqbench exits; the next expiry scans
# (every second here) return the freed heap to the OS (heapTrimAfterRemovalMb)
sleep 3
echo "RSS 3 s later: $(awk '/VmRSS/{print $2" kB"}' "/proc/$dpid/status")"
