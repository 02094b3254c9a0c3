#!/usr/bin/env bash
# Replication figures (docs/benchmarks.md): rmqbench --mode send, 4
# connections x 32 in flight, 1 KiB bodies, against
#   1. an rmqhost SYNC_MASTER with an rmqhost SLAVE (every answer waits for
#      the slave's ack), and the same pair as ASYNC_MASTER;
#   2. a Java 4.9.7 SYNC_MASTER with a Java SLAVE (the jars of the
#      java_peers fixture: run `ctest -R interop_fetch_java_peers` first).
# Both pairs on this machine, one after the other; median of RUNS. Also
# checks that the answers were SEND_OK (code 0): a SYNC_MASTER answering 11
# would be measuring nothing. Not a test.
#
# Under ASYNC_MASTER the master's view of the slave (rmqhostctl ha: bytes
# behind, its log end minus the slave's last ack) is sampled every 100 ms
# while the sends run: the replication lag at full send rate (on stderr).
#
# usage: tests/bench/ha_bench.sh [BUILD_DIR] [RUNS] [SECONDS]
#   STORE_SO=path runs the rmqhost pair with another store.so (an older
#   commit's: before/after in one run next to the same Java pair).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${2:-3}
secs=${3:-5}
bin=$build/bin
plugins=$build/plugins
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/rmqhabench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=../support/all_in_one_conf.sh
. "$src/tests/support/all_in_one_conf.sh"

wait_file() { for _ in $(seq 1 300); do [[ -f $1 ]] && return 0; sleep 0.1; done; return 1; }
port_of() { awk -v s="$2" '$1==s{n=split($2,a,":"); print a[n]}' "$1/state/listen.addrs"; }

# start_rmqhost NAME ROLE HA_PORT [MASTER_HA]
start_rmqhost() {
  local name=$1 role=$2 ha=$3 master=${4:-}
  local d=$dir/$name ns
  ns=$(fixed_port)
  local store="brokerRole = \"$role\"; haListenPort = $ha;"
  [[ -n $master ]] && store="$store haMasterAddress = \"$master\";"
  write_all_in_one_conf "$d" "$plugins" "$ns" 1 "$store" "brokerName = \"bench-ha\";" "" \
    "${STORE_SO:-$plugins/store.so}"
  setsid "$bin/rmqhostd" -c "$d/conf.d" >"$d/daemon.log" 2>&1 &
  pids+=($!)
  wait_file "$d/state/listen.addrs" || { cat "$d/daemon.log"; exit 1; }
}

one() {
  "$bin/rmqbench" -a "127.0.0.1:$1" --mode send --size 1024 -c 4 -d 32 -s "$secs" -w 1 --json \
    2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); l=d["latency_us"]; print(d["requests_per_sec"], l["p50"], l["p99"], json.dumps(d.get("responses", {})).replace(" ",""))'
}
# lag_sampler CONF_DIR: bytes behind of the first slave every 100 ms into $dir/lag
lag_sampler() {
  while :; do
    "$bin/rmqhostctl" -c "$1" ha 2>/dev/null | awk '$1=="slave"{print $6; exit}' >>"$dir/lag" || true
    sleep 0.1
  done
}
scenario() {
  local label=$1 port=$2 conf=${3:-}
  : >"$dir/rows"
  : >"$dir/lag"
  local sampler=
  if [[ -n $conf ]]; then
    lag_sampler "$conf" &
    sampler=$!
  fi
  for _ in $(seq 1 "$runs"); do one "$port" >>"$dir/rows"; done
  if [[ -n $sampler ]]; then
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    sort -n "$dir/lag" | awk '{b[NR]=$1} END{if (NR) {i=int(NR*0.99); if (i<1) i=1
      printf "ASYNC lag, bytes behind (%d samples): p50 %d p99 %d max %d\n", NR, b[int((NR+1)/2)], b[i], b[NR]}}' >&2
  fi
  sort -n "$dir/rows" | awk -v l="$label" '{a[NR]=$0} END{split(a[int((NR+1)/2)],f," "); printf "| %-40s | %9.0f | %7.1f | %7.1f | %s\n", l, f[1], f[2]/1000, f[3]/1000, f[4]}'
}

echo "| pair | sends/s | p50 ms | p99 ms | answer codes |"
echo "|---|---:|---:|---:|---|"
for role in SYNC_MASTER ASYNC_MASTER; do
  for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null || true; done
  pids=()
  rm -rf "$dir/m" "$dir/s"
  ha=$(fixed_port)
  start_rmqhost m "$role" "$ha"
  start_rmqhost s SLAVE "$(fixed_port)" "127.0.0.1:$ha"
  mport=$(port_of "$dir/m" broker)
  for _ in $(seq 1 100); do
    "$bin/rmqhostctl" -c "$dir/m/conf.d" ha | grep -q '^slave ' && break; sleep 0.1
  done
  "$bin/rmqbench" -a "127.0.0.1:$mport" --mode send -c 1 -d 1 -s 0.2 -w 0 >/dev/null 2>&1 || true
  lagconf=
  [[ $role == ASYNC_MASTER ]] && lagconf=$dir/m/conf.d
  scenario "rmqhost $role + rmqhost SLAVE" "$mport" "$lagconf"
done
for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null || true; done
pids=()

# The Java pair (4.9.7), registering to an rmqhost NameServer.
peers=$build/java-peers
[[ -d $peers/server-4.9.7 ]] || { echo "no Java peers in $peers: run ctest -R interop_fetch_java_peers" >&2; exit 1; }
start_rmqhost ns ASYNC_MASTER "$(fixed_port)"
nsport=$(port_of "$dir/ns" namesrv)
# a Java broker's listen port, its VIP (-2) and HA (+1) ports free, below
# the kernel's ephemeral range (ports.sh)
jport() { port_block -2 -1 0 1; }
start_java() {
  local name=$1 port=$2 extra=$3
  mkdir -p "$dir/$name"
  cat >"$dir/$name/broker.properties" <<PROPS
brokerClusterName=BenchCluster
brokerName=bench-java
listenPort=$port
namesrvAddr=127.0.0.1:$nsport
brokerIP1=127.0.0.1
brokerIP2=127.0.0.1
storePathRootDir=$dir/$name/store
storePathCommitLog=$dir/$name/store/commitlog
autoCreateTopicEnable=true
$extra
PROPS
  RMQ_JAVA_OPTS="-Xmx1g --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED" \
    setsid sh "$src/tests/interop/java/java_peer.sh" "$peers" server-4.9.7 \
    org.apache.rocketmq.broker.BrokerStartup -c "$dir/$name/broker.properties" >"$dir/$name/java.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 600); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0; sleep 0.1; done
  tail -30 "$dir/$name/java.log"; exit 1
}
jm=$(jport)
start_java jm "$jm" $'brokerId=0\nbrokerRole=SYNC_MASTER'
js=$(jport)
start_java js "$js" $'brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:'"$((jm + 1))"
sleep 8 # the Java slave reports 5 s after connecting
"$bin/rmqbench" -a "127.0.0.1:$jm" --mode send -c 1 -d 1 -s 0.5 -w 0 >/dev/null 2>&1 || true
scenario "Java 4.9.7 SYNC_MASTER + Java SLAVE" "$jm"
