#!/usr/bin/env bash
# RocketMQ 5.x clients' figures (docs/benchmarks.md): the Go 5.x client
# (rocketmq-clients/golang/v5, the version tests/interop/proxy_clients/go
# pins; tests/bench/proxy5/main.go) sends N 1 KiB messages from C
# goroutines, then C SimpleConsumers receive them in batches of 32 and
# acknowledge each, against
#   1. rmqhost as `make run` starts it (conf.d/, the proxy plugin on its
#      gRPC server, TLS permissive with a certificate made here, as Java's
#      proxy serves it by default);
#   2. Java RocketMQ 5.3.3: NameServer + broker with the proxy in "local"
#      mode (one JVM, as Java's quick start runs it), from Maven Central
#      (tests/bench/java_server5/pom.xml).
# Same client, same machine, one after the other, ROUNDS times; each round
# uses a topic of its own (8 queues, created with mqadmin 5.3.3 on both).
# Reports per server and round: send and receive+ack rates and p50/p99 of a
# send / a Receive call / an Ack call as the client saw them (the
# receive+ack rate runs until the last message is acknowledged; tail_secs is
# how long the consumers' idle long polls took to be cancelled after), the
# server's CPU time
# (user+sys ticks of its process over both phases: on a loaded machine the
# honest figure), the client's (client_cpu_s: user+sys of the client
# processes; on 2 cores the client and the server share the CPU) and the
# server's RSS after the round (rss_mb; rss_anon_mb without the mapped
# store files). Not a test.
#
# usage: tests/bench/proxy_bench.sh [BUILD_DIR] [ROUNDS] [N] [C] [ACKC]
# CLIENT_PROCS=K runs K client processes at once, each on a topic of its
# own with N/K messages and C/K goroutines (rates: all messages over the
# slowest process's time); GOMAXPROCS passes to the client as to any Go
# program.
# CLIENT=rmqbench runs rmqbench --grpc (tests/bench/grpc_*.c: a C 5.x client
# on nghttp2 + protobuf-c, one thread, far less CPU per message than the Go
# client) instead of the Go client, with the same topics, groups, N, C and
# ACKC and the same report columns; CLIENT_TLS=0 makes it speak h2c
# (plaintext) instead of TLS. The Go client stays the default.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-2}
n=${3:-20000}
c=${4:-32}
ackc=${5:-1}
procs=${CLIENT_PROCS:-1}
client=${CLIENT:-go}
[[ $client == go || $client == rmqbench ]] || { echo "CLIENT must be go or rmqbench"; exit 2; }
client_tls=()
[[ ${CLIENT_TLS:-1} == 0 ]] || client_tls=(--tls)
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/rmqproxybench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=../support/all_in_one_conf.sh
. "$src/tests/support/all_in_one_conf.sh"

# --- the client, built against the pinned Go module -------------------------
if [[ $client == go ]]; then
  # shellcheck source=../interop/go/go_env.sh
  . "$src/tests/interop/go/go_env.sh"
  mkdir -p "$dir/go/bench"
  cp "$src/tests/interop/proxy_clients/go/go.mod" "$src/tests/interop/proxy_clients/go/go.sum" "$dir/go/"
  cp "$src/tests/bench/proxy5/main.go" "$dir/go/bench/"
  (cd "$dir/go" && go build -o "$dir/proxy5bench" ./bench)
fi

# --- Java 5.3.3 jars ----------------------------------------------------------
jars=${RMQ_JAVA5_DIR:-$HOME/.cache/rmqhost/java-server-5.3.3}
if [[ ! -f $jars/.fetched ]]; then
  mkdir -p "$jars"
  mvn -B -q -f "$src/tests/bench/java_server5/pom.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DoutputDirectory="$jars" -DincludeScope=runtime
  touch "$jars/.fetched"
fi
jhome=$dir/java-home
mkdir -p "$jhome"
jopts=(-Xms1g -Xmx1g -XX:+UseG1GC --add-exports java.base/jdk.internal.ref=ALL-UNNAMED
       --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED
       -Duser.home="$jhome" -Drocketmq.home.dir="$jhome")
mqadmin() { java -Xmx128m -Duser.home="$jhome" -cp "$jars/*" org.apache.rocketmq.tools.command.MQAdminStartup "$@"; }

wait_port() { for _ in $(seq 1 1800); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# --- rmqhost ------------------------------------------------------------------
# Every port is told to its server before it starts: chosen below the
# kernel's ephemeral range (ports.sh's port_block), where no outgoing
# connection (mvn's, the JVMs', the Go client's) takes it in between; the
# broker's +1 (HA) and -2 (VIP) kept free as for Java's.
r_br=$(port_block -2 0 1 2 3)
r_vip=$((r_br - 2)) r_ns=$((r_br + 2)) r_px=$((r_br + 3))
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=bench \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$dir/key.pem" -out "$dir/cert.pem" >/dev/null 2>&1
(cd "$src" && exec "$build/bin/rmqhostd" -c conf.d -o "state_dir=$dir/rmq" -o "admin_socket=$dir/rmq.sock" \
  -o "servers.namesrv.listen=127.0.0.1:$r_ns" -o "servers.broker.listen=127.0.0.1:$r_br" \
  -o "servers.broker.vip_listen=127.0.0.1:$r_vip" -o "servers.proxy.listen=127.0.0.1:$r_px" \
  -o "plugins.broker-client-mgr.settings.namesrvAddr=127.0.0.1:$r_ns" \
  -o servers.proxy.tls.mode=permissive -o "servers.proxy.tls.cert_file=$dir/cert.pem" \
  -o "servers.proxy.tls.key_file=$dir/key.pem" -o log_level=warn >"$dir/rmq.log" 2>&1) &
r_pid=$!
pids+=("$r_pid")
wait_port "$r_px" || { echo "rmqhostd did not start:"; tail "$dir/rmq.log"; exit 1; }

# --- Java 5.3.3 -----------------------------------------------------------------
# the broker's listenPort - 2 (fast/VIP) and + 1 (HA) are Java's own choice
j_br=$(port_block -2 0 1 2 3 4)
j_ns=$((j_br + 2)) j_px=$((j_br + 3)) j_rm=$((j_br + 4))
echo "listenPort=$j_ns" >"$dir/namesrv.conf"
java "${jopts[@]}" -cp "$jars/*" org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" \
  >"$dir/ns.log" 2>&1 &
pids+=("$!")
cat >"$dir/broker.conf" <<EOF
brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
namesrvAddr=127.0.0.1:$j_ns
listenPort=$j_br
brokerIP1=127.0.0.1
storePathRootDir=$dir/jstore
storePathCommitLog=$dir/jstore/commitlog
flushDiskType=ASYNC_FLUSH
EOF
printf '{"rocketMQClusterName":"DefaultCluster","grpcServerPort":%s,"remotingListenPort":%s,"namesrvAddr":"127.0.0.1:%s"}\n' \
  "$j_px" "$j_rm" "$j_ns" >"$dir/proxy.json"
java "${jopts[@]}" -cp "$jars/*" org.apache.rocketmq.proxy.ProxyStartup -pm local \
  -bc "$dir/broker.conf" -pc "$dir/proxy.json" >"$dir/proxy.log" 2>&1 &
j_pid=$!
pids+=("$j_pid")
wait_port "$j_px" || { echo "Java proxy did not start:"; tail "$dir/proxy.log" "$dir/ns.log" "$jhome"/logs/rocketmqlogs/proxy.log; exit 1; }
sleep 5 # the broker registers with its NameServer

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
echo "proxy_bench: CLIENT=$client${client_tls[*]:+ (TLS)} N=$n C=$c ACKC=$ackc CLIENT_PROCS=$procs GOMAXPROCS=${GOMAXPROCS:-default}, load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for r in $(seq 1 "$rounds"); do
  for s in rmqhost java; do
    if [[ $s == rmqhost ]]; then ep=$r_px ns=$r_ns pid=$r_pid; else ep=$j_px ns=$j_ns pid=$j_pid; fi
    topic=Bench5_${r}_$s
    for k in $(seq 1 "$procs"); do
      mqadmin updateTopic -n "127.0.0.1:$ns" -c DefaultCluster -t "${topic}_$k" -r 8 -w 8 >/dev/null
    done
    t0=$(ticks "$pid")
    cpids=()
    for k in $(seq 1 "$procs"); do
      # bash's time: the client's user+sys, with no other tool
      if [[ $client == go ]]; then
        ( TIMEFORMAT='client_cpu %U %S'
          time "$dir/proxy5bench" -endpoint "127.0.0.1:$ep" -topic "${topic}_$k" -group "G_${topic}_$k" \
            -n $((n / procs)) -c $((c / procs)) -ackc "$ackc" -logdir "$dir" ) >"$dir/client.$k" 2>&1 &
      else
        ( TIMEFORMAT='client_cpu %U %S'
          time "$build/bin/rmqbench" --grpc "127.0.0.1:$ep" "${client_tls[@]}" --topic "${topic}_$k" \
            --group "G_${topic}_$k" -n $((n / procs)) -c $((c / procs)) --ackc "$ackc" ) >"$dir/client.$k" 2>&1 &
      fi
      cpids+=("$!")
    done
    for p in "${cpids[@]}"; do wait "$p" || true; done # "incomplete" says why
    out=$(cat "$dir"/client.* | awk '
      /^(send|recv) / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = kv[2] }
                        ph[$1] = 1; cnt[$1] += v[$1, "n"]; if (v[$1, "secs"] > secs[$1]) secs[$1] = v[$1, "secs"]
                        line[$1] = $0 }
      /^incomplete/ { print }
      /^client_cpu / { cpu += $2 + $3 }
      END { for (p in ph) {
              if (procs == 1) { print line[p] } else {
                printf "%s n=%d secs=%.2f rate=%.0f (%d processes; one of them: %s)\n", p, cnt[p], secs[p],
                  cnt[p] / secs[p], procs, line[p] } }
            printf "client_cpu_s=%.2f\n", cpu }' procs="$procs" | sort -r | tr '\n' ' ')
    rm -f "$dir"/client.*
    t1=$(ticks "$pid")
    rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
    # RssAnon: the process's own memory (heap, stacks), without the mapped
    # store files the page cache holds for it
    rss_anon=$(awk '/RssAnon/{print $2}' "/proc/$pid/status")
    echo "round $r $s: $out server_cpu_s=$(awk -v t=$((t1 - t0)) 'BEGIN{printf "%.2f", t/100}') rss_mb=$((rss / 1024)) rss_anon_mb=$((rss_anon / 1024)) load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
