#!/usr/bin/env bash
# REGISTER_BROKER over the wire: rmqbench --register against the baseline
# server (which answers every frame at once: the cost of moving the frame)
# and rmqhostd, in the same session. Prints one table row per scenario: the
# figures of docs/benchmarks.md ("Registration over the wire"). Not a test.
#
# usage: tests/bench/register_compare.sh [BUILD_DIR] [ROUNDS] [TOPICS...]
# RMQBENCH=path overrides the rmqbench binary (e.g. to drive an older
# daemon build with this rmqbench). The last column is the daemon's CPU time
# (all threads, from schedstat) over the ROUNDS registrations divided by ROUNDS
# (it includes the removal of the previous scenario's broker if that was
# still running):
# unlike the wall times it hardly moves when the machine is busy.
# REPEAT=n runs every scenario n times, each with new broker and topic names
# (so each round 1 is again a first registration, into a daemon that has
# served the earlier ones): the first repetition is the cold case.
set -euo pipefail
build=${1:-build}
rounds=${2:-10}
repeat=${REPEAT:-1}
shift 2 || true
topics=("$@")
[[ ${#topics[@]} -gt 0 ]] || topics=(1000 10000 20000)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench_session.sh
source "$here/bench_session.sh"
bench_session "$build" rmqregister
bench=${RMQBENCH:-$bin/rmqbench}

write_namesrv_conf "$dir" "$plugins"
start_daemon "$bin" "$dir"
dpid=$daemon_pid
pids+=($dpid)
nport=$(listen_port "$dir" namesrv)

# one TARGET ARGS... -> "first median_rereg max_rereg mean probe_max_us"
one() {
  "$bench" -a "$1" --json --rounds "$rounds" "${@:2}" 2>"$dir/err" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); p=d.get("probe",{}); print("%.3f %.3f %.3f %.3f %s" % (d["first_ms"], d["rereg_median_ms"], d["rereg_max_ms"], d["mean_ms"], ("%.0f" % p["max_us"]) if p else "-"))' ||
    { cat "$dir/err" >&2; echo "failed"; }
}

# on-CPU time of every daemon thread (schedstat, ns): finer than the 10 ms
# ticks of /proc/PID/stat
cpu_ms() { cat /proc/"$dpid"/task/*/schedstat 2>/dev/null | awk '{s+=$1} END{printf "%.3f", s/1e6}'; }
echo "| topics | form | server | first ms | re-reg median ms | re-reg max ms | mean of $rounds ms | daemon CPU ms/reg |"
echo "|---|---|---|---|---|---|---|---|"
n=0
for t in "${topics[@]}"; do
  for form in "" "--compressed"; do
    label=${form:+compressed}
    label=${label:-JSON}
    for rep in $(seq 1 "$repeat"); do
    for srv in baseline rmqhostd; do
      port=$bport
      [[ $srv == rmqhostd ]] && port=$nport
      n=$((n + 1))
      c0=$(cpu_ms)
      read -r first med max mean _ < <(one "127.0.0.1:$port" --register "$t" $form --broker-prefix "r$n")
      cpu=-
      [[ $srv == rmqhostd ]] && cpu=$(awk -v a="$c0" -v b="$(cpu_ms)" -v r="$rounds" 'BEGIN{printf "%.2f", (b-a)/r}')
      printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$label" "$srv" "$first" "$med" "$max" "$mean" "$cpu"
      # the daemon drops the broker when the connection closes: let that
      # finish before the next scenario's first registration
      [[ $srv == rmqhostd ]] && sleep 1
    done
    done
  done
done
echo "rmqhostd RSS after the runs: $(awk '/VmRSS/{print $2" kB"}' /proc/$dpid/status)"
