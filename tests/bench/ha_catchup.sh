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
# the master's commit log over one loopback TCP connection into a file, twice:
# "warm" as sessions 8-9 did (the first bytes of the log, read from the page
# cache the catch-up itself filled, written with write(), daemons idle beside
# it), and "fair" (session 10): both daemons stopped, the master's log files
# put back into the page-cache state they had when the slave restarted
# (bin/page_cache_state: what commitLogPageCacheKeep had dropped is dropped
# again), the bytes the catch-up moved (from its first offset), written like
# a slave writes (preallocated file, pwrite, fdatasync every 500 ms as
# flushIntervalCommitLog); and between them "cold": the state put back, the
# same bytes written with write() and no write-back, to tell the two apart.
# Prints two lines. Not a test.
#
# usage: tests/bench/ha_catchup.sh [BUILD_DIR] [MIB]
#   STORE_EXTRA='commitLogWrite = "pwrite";' adds store settings on both daemons;
#   STORE_SO=path runs both daemons with another store.so (e.g. an older commit's);
#   TMPDIR=DIR puts the two stores and the copy under DIR (default /tmp);
#   PERF=FILE also records the slave from its restart to its catch-up with perf record -g into FILE;
#   PERF_MASTER=FILE the same for the master.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
mib=${2:-1024}
bin=$build/bin
plugins=$build/plugins
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rmqhacatchup.XXXXXX")
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
    write_all_in_one_conf "$d" "$plugins" "$(fixed_port)" 1 "$store" "brokerName = \"bench-ha\";" "" \
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

ha=$(fixed_port)
start m ASYNC_MASTER "$ha"
start s SLAVE "$(fixed_port)" "127.0.0.1:$ha"
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
# the files holding log (named by their start offset): not the next one the
# housekeeper pre-created, which a clean stop may remove before the copies
logs=()
for f in $(find "$dir/m" -path '*commitlog/*' -type f | sort); do
  n=$(basename "$f")
  ((10#$n < end)) && logs+=("$f")
done
read -r _ cached0 < <("$bin/page_cache_state" save "$dir/pagecache" "${logs[@]}")
start s SLAVE 0
if [[ -n ${PERF:-} ]]; then
  perf record -g -o "$PERF" -p "${pid[s]}" >/dev/null 2>&1 &
  pid[perf]=$!
fi
if [[ -n ${PERF_MASTER:-} ]]; then
  perf record -g -o "$PERF_MASTER" -p "${pid[m]}" >/dev/null 2>&1 &
  pid[perfm]=$!
fi
# One watcher process samples both daemons: a python3 started per sample
# (as this script did until session 9's catch-up work) cost ~50 ms of CPU
# each, a quarter of this 2-core machine at a sample per 50 ms, taken from
# the pair being measured while the loopback copy below runs alone.
read -r t0 ack0 t_ack t_max cm0 cs0 cm cs mfault < <(python3 - "$bin/rmqhostctl" "$dir" "$end" \
  "${pid[m]}" "${pid[s]}" <<'PY' || true
import json, os, subprocess, sys, time
ctl, d, end, pm, ps = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
hz = os.sysconf("SC_CLK_TCK")
def ha(n):
    return json.loads(subprocess.run([ctl, "--json", "-c", d + "/" + n + "/conf.d", "ha"],
                                     capture_output=True, check=True).stdout)
def ack():  # the master's view: the slave's last report, -1 before it reports
    s = ha("m")["slaves"]
    return s[0]["ackOffset"] if s else -1
def cpu(p):  # user + system seconds so far
    f = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
def majflt(p):  # page faults that found no page in the page cache (read from disk)
    return int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[9])
for _ in range(3000):
    a0 = ack()
    if a0 >= 0:
        t0, cm0, cs0, mf0 = time.time(), cpu(pm), cpu(ps), majflt(pm)
        break
    time.sleep(0.01)
else:
    sys.exit("the slave did not reconnect")
t_ack = None
while True:
    if t_ack is None and ack() >= end:
        t_ack = time.time()
    if t_ack is not None and ha("s")["maxOffset"] >= end:
        t_max = time.time()
        break
    time.sleep(0.05)
print(t0, a0, t_ack, t_max, cm0, cs0, cpu(pm), cpu(ps), majflt(pm) - mf0)
PY
)
[[ -n ${cs:-} ]] || { echo "no catch-up measured" >&2; exit 1; }
if [[ -n ${PERF:-} ]]; then
  kill -INT "${pid[perf]}"
  wait "${pid[perf]}" || true
  unset 'pid[perf]'
fi
if [[ -n ${PERF_MASTER:-} ]]; then
  kill -INT "${pid[perfm]}"
  wait "${pid[perfm]}" || true
  unset 'pid[perfm]'
fi
bytes=$((end - ack0))
load=$(cut -d' ' -f1 /proc/loadavg)
copy=$("$bin/loopback_copy" -n "$bytes" "$dir/copy" "${logs[@]}")
rm -f "$dir/copy"
for p in m s; do kill -TERM "${pid[$p]}"; done
for p in m s; do wait "${pid[$p]}" || true; unset "pid[$p]"; done
"$bin/page_cache_state" restore "$dir/pagecache" "${logs[@]}" >/dev/null
cold=$("$bin/loopback_copy" -n "$bytes" -o "$ack0" "$dir/copy" "${logs[@]}")
rm -f "$dir/copy"
read -r _ _ cached1 < <("$bin/page_cache_state" restore "$dir/pagecache" "${logs[@]}")
fair=$("$bin/loopback_copy" -n "$bytes" -o "$ack0" -f 500 "$dir/copy" "${logs[@]}")
rm -f "$dir/copy"
python3 - "$bytes" "$t0" "$t_ack" "$t_max" "$copy" "$load" \
  "$(echo "$cm - $cm0" | bc)" "$(echo "$cs - $cs0" | bc)" "$fair" "$cached0" "$cached1" "$cold" "$mfault" <<'PY'
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
fb, fs, fmb, fcpu = sys.argv[9].split()
_, _, cmb2, _ = sys.argv[12].split()
print("  log pages cached as before the catch-up (%.0f MB, now %.0f MB): cold copy %s MB/s "
      "(%.0f %%); fair copy (+ written like a slave) %s MB/s (%s s): %.0f %% / %.0f %% | "
      "CPU ms/MB %.2f | the master's major faults during the catch-up: %s" % (
          int(sys.argv[10]) / 1e6, int(sys.argv[11]) / 1e6, cmb2, 100 * ack / float(cmb2), fmb,
          fs, 100 * ack / float(fmb), 100 * rd / float(fmb), 1000 * float(fcpu) / mb,
          sys.argv[13]))
PY
