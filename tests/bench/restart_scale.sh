#!/usr/bin/env bash
# Restart figures of docs/benchmarks.md (issue 21 §2): the broker daemon
# restarted on a store made once by topics_scale.sh (SAVE_STOPPED=DIR keeps
# the cleanly stopped state_dir). RUNS clean restarts, then RUNS restarts
# after kill -9 (a send to the last topic before each kill): each the time
# from process start to its listeners up, the time until the first and the
# last topic answer a send, and VmRSS right after and 5 s later. The state
# is used in place (each run leaves it cleanly stopped). SETTLE=S: the RSS
# S s later too (after the background pass over the queues). PERF=FILE: a
# profile of each start's first 4 s. LATENCY=1: send latency during the
# background pass (and after it, with SETTLE). ADMIN=K: after each start's
# figures, K topics created by UPDATE_AND_CREATE_TOPIC and deleted again as
# mqadmin deleteTopic does (DELETE_TOPIC_IN_BROKER, then _IN_NAMESRV), the
# time of each (as cheap at 100,000 topics as at a few?). DELETE_NEWEST=1:
# before each kill -9, instead of that send, a send to a new topic
# CrashDel<pid>r<run>-0 (so it holds the newest queued message) and its deletion
# (DELETE_TOPIC_IN_BROKER + _IN_NAMESRV), then kill -9 at once (issue 21
# §2: that start loaded every queue). LOG_LEVEL=info: the store's recovery
# line after each start. Not a test.
#
# usage: tests/bench/restart_scale.sh BUILD_DIR STATE_DIR N [RUNS]
set -euo pipefail
build=$(cd "$1" && pwd)
state=$(cd "$2" && pwd)
n=$3
runs=${4:-2}
bin=$build/bin
plugins=$build/plugins
dir=$(mktemp -d "${TMPDIR:-/tmp}/rmqrestart.XXXXXX")
# shellcheck source=split_daemons.sh
. "$(dirname "$0")/split_daemons.sh"
start_split_namesrv "$plugins" "$state" "flushDiskType = \"${FLUSH:-ASYNC_FLUSH}\";"

now() { date +%s.%N; }
rss() { awk '/^VmRSS/{printf "%d MB", $2/1024}' "/proc/$dpid/status"; }
# CPU seconds the daemon used so far (user + system, all threads): on a
# loaded machine the wall-clock figures mostly measure the wait for a core
cpu() { awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / t}' "/proc/$dpid/stat"; }
send_one() { # topic: one send; says so when it is not answered SEND_OK
  "$(dirname "$0")/send_one.py" "127.0.0.1:$sport" "$1" >"$dir/send.out" 2>&1 ||
    { echo "send to $1:"; cat "$dir/send.out"; }
}
start() {
  rm -f "$state/listen.addrs"
  t0=$(now)
  "$bin/rmqhostd" -c "$dir/conf.d" >>"$dir/daemon.log" 2>&1 &
  dpid=$!
  # PERF=FILE: a profile of the daemon's first 4 s (start and first answers)
  if [[ -n ${PERF:-} ]]; then perf record -g -o "$PERF" -p "$dpid" -- sleep 4 >/dev/null 2>&1 & fi
  for _ in $(seq 1 12000); do [[ -f $state/listen.addrs ]] && break; sleep 0.005; done
  if [[ ! -f $state/listen.addrs ]]; then cat "$dir/daemon.log"; exit 1; fi
  up=$(echo "$(now) - $t0" | bc)
  upcpu=$(cpu)
  sport=$(awk '$1=="broker"{n=split($2,a,":"); print a[n]}' "$state/listen.addrs")
  send_one "Scale-0"
  first=$(echo "$(now) - $t0" | bc)
  send_one "Scale-$((n - 1))"
  last=$(echo "$(now) - $t0" | bc)
  r0=$(rss)
  # LATENCY=1: send latency to the first topic for 3 s while the background
  # pass loads the queues (it takes the store's locks once per topic)
  if [[ -n ${LATENCY:-} ]]; then
    echo "  sends during the background pass: $("$bin/rmqbench" -a "127.0.0.1:$sport" --mode send \
      --topic Scale-0 --size 100 -c 1 -d 1 -s 3 -w 0 | grep -E '^latency' | tr -s ' ')"
  fi
  sleep 5
  echo "$1: listening ${up} s (CPU ${upcpu} s), first topic answered ${first} s, last ${last} s; VmRSS $r0, 5 s later $(rss) (CPU $(cpu) s); load $(cut -d' ' -f1 /proc/loadavg)"
  if [[ ${LOG_LEVEL:-} == info ]]; then
    echo "  $(grep -o 'store recovered.*' "$dir/daemon.log" | tail -1)"
  fi
  if [[ -n ${ADMIN:-} ]]; then
    echo "  UPDATE_AND_CREATE_TOPIC x $ADMIN: $("$bin/rmqbench" -a "127.0.0.1:$sport" --create-topics "$ADMIN" \
      --create-via-admin --topic Restart --queues 4 --report-every "$ADMIN" | grep -E '^topics' | tr -s ' ')"
    echo "  DELETE_TOPIC x $ADMIN: $("$bin/rmqbench" -a "127.0.0.1:$sport" --delete-topics "$ADMIN" \
      --namesrv "127.0.0.1:$ns" --topic Restart --report-every "$ADMIN" | grep -vE '^$' | tr -s ' ' | tr '\n' ';')"
  fi
  # SETTLE=S: S s more, then the RSS once the background pass is done
  if [[ -n ${SETTLE:-} ]]; then
    sleep "$SETTLE"
    echo "  $SETTLE s more: VmRSS $(rss) (CPU $(cpu) s); $(grep -o 'consume queues of .* in the background in [0-9]* ms' "$dir/daemon.log" | tail -1)"
    if [[ -n ${LATENCY:-} ]]; then
      echo "  sends after it: $("$bin/rmqbench" -a "127.0.0.1:$sport" --mode send \
        --topic Scale-0 --size 100 -c 1 -d 1 -s 3 -w 0 | grep -E '^latency' | tr -s ' ')"
    fi
  fi
}
stop() {
  kill -TERM "$dpid"
  wait "$dpid" 2>/dev/null || true
  dpid=
}
for _ in $(seq 1 "$runs"); do start "clean restart"; stop; done
for run in $(seq 1 "$runs"); do
  start "warm-up"
  if [[ -n ${DELETE_NEWEST:-} ]]; then
    send_one "CrashDel$$r$run-0"
    "$bin/rmqbench" -a "127.0.0.1:$sport" --delete-topics 1 --namesrv "127.0.0.1:$ns" \
      --topic "CrashDel$$r$run" --report-every 1 >"$dir/crashdel.out" 2>&1 ||
      { echo "delete CrashDel$$r$run-0:"; cat "$dir/crashdel.out"; }
  else
    send_one "Scale-$((n - 1))"
  fi
  kill -9 "$dpid"
  wait "$dpid" 2>/dev/null || true
  dpid=
  start "after kill -9${DELETE_NEWEST:+ following DELETE_TOPIC of the newest topic}"
  stop
done
[[ ${LOG_LEVEL:-} == info ]] && grep -E "store recovered|store ready|loaded|ready \(conf|lazy" "$dir/daemon.log" | tail -20
exit 0
