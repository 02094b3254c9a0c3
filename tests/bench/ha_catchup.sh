#!/usr/bin/env bash
# Slave catch-up speed after being down for MIB MiB (default 1 GiB) (docs/benchmarks.md), and
# the ceiling it is compared with: an rmqhost ASYNC_MASTER + SLAVE pair (each
# its own rmqhostd, io_threads 1, as ha_bench.sh); the slave replicates a
# first send, is stopped (SIGTERM), the master takes MIB MiB of 1 KiB sends
# (rmqbench --mode send -c 4 -d 32), the slave starts again. Measured from
# the moment the master lists the reconnected slave until its acknowledged
# offset reaches the master's end (ack: bytes in the slave's page cache) and
# until the slave's own max offset (records dispatched to its consume queues,
# readable) does. Then bin/loopback_copy moves the same number of bytes of
# the master's commit log over one loopback TCP connection into a file.
# Prints one line. Not a test.
#
# usage: tests/bench/ha_catchup.sh [BUILD_DIR] [MIB]
#   STORE_EXTRA='commitLogWrite = "pwrite";' adds store settings on both daemons;
#   STORE_SO=path runs both daemons with another store.so (e.g. an older commit's);
#   PERF=FILE also records the slave's catch-up with perf record -g into FILE.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
mib=${2:-1024}
bin=$build/bin
plugins=$build/plugins
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/rmqhacatchup.XXXXXX)
declare -A pid
cleanup() {
  for p in "${pid[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=../support/all_in_one_conf.sh
. "$src/tests/support/all_in_one_conf.sh"

start() { # NAME ROLE HA_PORT [MASTER_HA]; the conf is written once
  local name=$1 role=$2 ha=$3 master=${4:-}
  local d=$dir/$name
  if [[ ! -d $d/conf.d ]]; then
    local store="brokerRole = \"$role\"; haListenPort = $ha; ${STORE_EXTRA:-}"
    [[ -n $master ]] && store="$store haMasterAddress = \"$master\";"
    write_all_in_one_conf "$d" "$plugins" "$(free_port)" 1 "$store" "brokerName = \"bench-ha\";" "" \
      "${STORE_SO:-$plugins/store.so}"
  fi
  rm -f "$d/state/listen.addrs"
  "$bin/rmqhostd" -c "$d/conf.d" >>"$d/daemon.log" 2>&1 &
  pid[$name]=$!
  for _ in $(seq 1 300); do [[ -f $d/state/listen.addrs ]] && return 0; sleep 0.1; done
  cat "$d/daemon.log"
  exit 1
}
ha_json() { "$bin/rmqhostctl" --json -c "$dir/$1/conf.d" ha; }
# master: "END ACK" (ACK -1 without a slave); slave: its max offset
master_state() {
  ha_json m | python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["slaves"]
print(d["maxOffset"], s[0]["ackOffset"] if s else -1)'
}
slave_max() { ha_json s | python3 -c 'import json,sys; print(json.load(sys.stdin)["maxOffset"])'; }
now() { date +%s.%N; }
# CPU seconds (user + system) the process has used so far
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }

ha=$(free_port)
start m ASYNC_MASTER "$ha"
start s SLAVE "$(free_port)" "127.0.0.1:$ha"
mport=$(awk '$1=="broker"{n=split($2,a,":"); print a[n]}' "$dir/m/state/listen.addrs")
"$bin/rmqbench" -a "127.0.0.1:$mport" --mode send --size 1024 -c 1 -d 1 -s 0.2 -w 0 >/dev/null 2>&1
for _ in $(seq 1 100); do
  read -r end ack < <(master_state)
  [[ $ack -ge $end && $end -gt 0 ]] && break
  sleep 0.1
done
kill -TERM "${pid[s]}"
wait "${pid[s]}" || true
read -r from _ < <(master_state)
target=$((from + mib * 1048576))
while read -r end _ < <(master_state) && [[ $end -lt $target ]]; do
  "$bin/rmqbench" -a "127.0.0.1:$mport" --mode send --size 1024 -c 4 -d 32 -s 2 -w 0 >/dev/null 2>&1
done
read -r end _ < <(master_state)
sync
start s SLAVE 0
t0= ack0=
for _ in $(seq 1 3000); do
  read -r _ ack < <(master_state)
  if [[ $ack -ge 0 ]]; then
    t0=$(now) ack0=$ack
    cm0=$(cpu_of "${pid[m]}") cs0=$(cpu_of "${pid[s]}")
    break
  fi
  sleep 0.01
done
[[ -n $t0 ]] || { echo "the slave did not reconnect" >&2; exit 1; }
if [[ -n ${PERF:-} ]]; then
  perf record -g -o "$PERF" -p "${pid[s]}" >/dev/null 2>&1 &
  pid[perf]=$!
fi
t_ack= t_max=
while [[ -z $t_max ]]; do
  read -r _ ack < <(master_state)
  [[ -z $t_ack && $ack -ge $end ]] && t_ack=$(now)
  [[ -n $t_ack && $(slave_max) -ge $end ]] && t_max=$(now)
  sleep 0.05
done
cm=$(cpu_of "${pid[m]}") cs=$(cpu_of "${pid[s]}")
if [[ -n ${PERF:-} ]]; then
  kill -INT "${pid[perf]}"
  wait "${pid[perf]}" || true
  unset 'pid[perf]'
fi
bytes=$((end - ack0))
copy=$("$bin/loopback_copy" -n "$bytes" "$dir/copy" $(find "$dir/m" -path '*commitlog/*' -type f | sort))
rm -f "$dir/copy"
python3 - "$bytes" "$t0" "$t_ack" "$t_max" "$copy" "$(cut -d' ' -f1 /proc/loadavg)" \
  "$(echo "$cm - $cm0" | bc)" "$(echo "$cs - $cs0" | bc)" <<'PY'
import sys
b, t0, ta, tm = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
cb, cs, cmb, ccpu = sys.argv[5].split()
mcpu, scpu = float(sys.argv[7]), float(sys.argv[8])
ack, rd = b / (ta - t0) / 1e6, b / (tm - t0) / 1e6
mb = b / 1e6
print("load %s: catch-up of %.0f MB: acked %.1f MB/s (%.1f s), readable on the slave %.1f MB/s "
      "(%.1f s); loopback copy %s MB/s (%s s): %.0f %% / %.0f %% | CPU ms/MB: master %.2f "
      "slave %.2f, loopback copy %.2f" % (
          sys.argv[6], mb, ack, ta - t0, rd, tm - t0, cmb, cs, 100 * ack / float(cmb),
          100 * rd / float(cmb), 1000 * mcpu / mb, 1000 * scpu / mb, 1000 * float(ccpu) / mb))
PY
