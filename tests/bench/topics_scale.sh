#!/usr/bin/env bash
# Topic-creation figures of docs/benchmarks.md (issue 21 §2): one connection
# creates N topics one at a time (rmqbench --create-topics: a 100-byte
# SEND_MESSAGE_V2 to each new topic, auto-created with 4 queues, or
# UPDATE_AND_CREATE_TOPIC with MODE=admin, or with MODE=perqueue a message
# to each of the 4 queues), time per 1,000 as the table
# grows; then the broker daemon's RSS (the NameServer runs in a process of
# its own), a clean stop, the restart time (process start
# to its listeners up), the RSS after it, and sends to the first and last
# topic on the restarted daemon (DELETE=K: then the cost of deleting K
# topics). Not a test.
#
# usage: tests/bench/topics_scale.sh [BUILD_DIR] [N] [send|admin|perqueue] [FLUSH] [REPORT_EVERY]
# SAVE_STOPPED=DIR keeps a copy of the cleanly stopped state_dir
# (tests/bench/restart_scale.sh restarts on it). RMQBENCH=path runs another build's rmqbench (a baseline daemon build
# without the create-topics mode).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
n=${2:-10000}
mode=${3:-send}
flush=${4:-ASYNC_FLUSH}
every=${5:-1000}
bin=$build/bin
rmqbench=${RMQBENCH:-$bin/rmqbench}
plugins=$build/plugins
dir=$(mktemp -d "${TMPDIR:-/tmp}/rmqtopics.XXXXXX")
# shellcheck source=split_daemons.sh
. "$(dirname "$0")/split_daemons.sh"
# STORE_EXTRA: more store settings (libconfig statements); the NameServer
# in a process of its own: the RSS figures are the broker's
start_split_namesrv "$plugins" "$dir/state" "flushDiskType = \"$flush\"; ${STORE_EXTRA:-}"

start() {
  rm -f "$dir/state/listen.addrs"
  local t0
  t0=$(date +%s.%N)
  if [[ -n ${PERF_RESTART:-} && ${1:-} == restart ]]; then
    # PERF_RESTART=FILE: the restart's profile (perf wraps the daemon)
    perf record -g -o "$PERF_RESTART" -- "$bin/rmqhostd" -c "$dir/conf.d" >>"$dir/daemon.log" 2>&1 &
    sleep 0.5
    dpid=$(pgrep -n -f "rmqhostd -c $dir/conf.d")
  else
    "$bin/rmqhostd" -c "$dir/conf.d" >>"$dir/daemon.log" 2>&1 &
    dpid=$!
  fi
  for _ in $(seq 1 6000); do [[ -f $dir/state/listen.addrs ]] && break; sleep 0.01; done
  if [[ ! -f $dir/state/listen.addrs ]]; then cat "$dir/daemon.log"; exit 1; fi
  started=$(echo "$(date +%s.%N) - $t0" | bc)
  sport=$(awk '$1=="broker"{n=split($2,a,":"); print a[n]}' "$dir/state/listen.addrs")
}
stop() {
  local t0
  t0=$(date +%s.%N)
  kill -TERM "$dpid"
  wait "$dpid" 2>/dev/null || while kill -0 "$dpid" 2>/dev/null; do sleep 0.05; done
  dpid=
  stopped=$(echo "$(date +%s.%N) - $t0" | bc)
}
rss() { awk '/^(VmRSS|RssAnon|RssFile)/{printf "%s %d MB  ", $1, $2/1024}' "/proc/$dpid/status"; }
# INSPECT=CMD: runs `CMD PHASE PID STATE_DIR` after creating and after the
# restart (e.g. a script reading /proc/PID/smaps_rollup or malloc_info)
inspect() { if [[ -n ${INSPECT:-} ]]; then $INSPECT "$1" "$dpid" "$dir/state" || true; fi; }

start
args=(-a "127.0.0.1:$sport" --create-topics "$n" --topic Scale --size 100 --queues 4 --report-every "$every")
[[ $mode == admin ]] && args+=(--create-via-admin)
[[ $mode == perqueue ]] && args+=(--per-queue)
if [[ -n ${PERF:-} ]]; then
  "$rmqbench" "${args[@]}" --create-topics "$((n / 2))" --topic Warm >/dev/null
  perf record -g -o "$PERF" -p "$dpid" >/dev/null 2>&1 &
  perfpid=$!
fi
"$rmqbench" "${args[@]}"
[[ -n ${PERF:-} ]] && { kill -INT "$perfpid"; wait "$perfpid" || true; }
echo "after creating: $(rss)"
inspect created
if [[ -n ${THREADS:-} ]]; then ps -L -o comm,time -p "$dpid" | sort -k2 -r | head -12; fi
du -sh "$dir/state/broker-client-mgr" "$dir/state/store/consumequeue" 2>/dev/null | tr '\n' ' '
echo
[[ -n ${KEEP_STATE:-} ]] && cp -a "$dir/state" "$KEEP_STATE"
stop
echo "clean stop: ${stopped} s; topics.json $(stat -c %s "$dir/state/broker-client-mgr/topics.json") bytes, journal $(stat -c %s "$dir/state/broker-client-mgr/topics.journal" 2>/dev/null || echo -) bytes"
# SAVE_STOPPED=DIR: the cleanly stopped state_dir, for restart_scale.sh
[[ -n ${SAVE_STOPPED:-} ]] && cp -a --sparse=always "$dir/state" "$SAVE_STOPPED"
start restart
echo "restart: ${started} s to listening; $(rss)"
sleep 2
echo "2 s later: $(rss)"
inspect restarted
# LOG_LEVEL=info: where the restart's time went
[[ ${LOG_LEVEL:-} == info ]] && grep -E "loaded .*topics.json|topics.journal:|store recovered|store ready|ready \(conf" "$dir/daemon.log" | tail -5
"$rmqbench" -a "127.0.0.1:$sport" --create-topics 1 --topic "Scale-$((n - 1))-again" --size 100 \
  --queues 4 | grep -E "^sends"
"$rmqbench" -a "127.0.0.1:$sport" --mode send --topic "Scale-0" --size 100 -c 1 -d 1 -s 2 -w 0.5 | grep -iE "latency|p50|req" | head -3
"$rmqbench" -a "127.0.0.1:$sport" --mode send --topic "Scale-$((n - 1))" --size 100 -c 1 -d 1 -s 2 -w 0.5 | grep -iE "latency|p50|req" | head -3
# DELETE=K: then delete Scale-0..K-1 as mqadmin deleteTopic does (215 to the
# broker, 216 to the NameServer), timed per DELETE_EVERY (default 1000)
if [[ -n ${DELETE:-} ]]; then
  "$rmqbench" -a "127.0.0.1:$sport" --delete-topics "$DELETE" --namesrv "127.0.0.1:$ns" \
    --topic Scale --report-every "${DELETE_EVERY:-1000}"
  echo "after deleting $DELETE: $(rss)"
fi
stop
