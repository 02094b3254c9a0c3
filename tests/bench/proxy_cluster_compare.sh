#!/usr/bin/env bash
# proxy_cluster_compare.sh [BUILD_DIR] — what a broker lists for 5.x clients
# behind a cluster-mode proxy (docs/compat.md, proxy cluster mode): one Java
# RocketMQ 5.3.3 NameServer + broker (Maven Central jars, as
# tests/bench/proxy_bench.sh fetches them), in front of it Java 5.3.3's
# proxy (`-pm cluster`) and rmqhost's proxy plugin (proxyMode = "cluster");
# through each, two Python 5.x producers of a TRANSACTION topic and two
# SimpleConsumers of one group (proxy_cluster_compare/clients.py; the venv of
# the interop_install_python5_client fixture); then mqadmin 5.3.3
# consumerConnection / producerConnection for both. Prints the four
# listings. Not a test: it asserts nothing.
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/rmqproxycompare.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=../support/all_in_one_conf.sh
. "$src/tests/support/all_in_one_conf.sh"
py=$build/proxy-clients/python/venv/bin/python
[[ -x $py ]] || { echo "no Python 5.x client in $py: run ctest -R interop_install_python5_client" >&2; exit 1; }
jars=${RMQ_JAVA5_DIR:-$HOME/.cache/rmqhost/java-server-5.3.3}
if [[ ! -f $jars/.fetched ]]; then
  mkdir -p "$jars"
  mvn -B -q -f "$src/tests/bench/java_server5/pom.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DoutputDirectory="$jars" -DincludeScope=runtime || exit 1
  touch "$jars/.fetched"
fi
jhome=$dir/jhome
mkdir -p "$jhome"
jopts=(-Xms256m -Xmx512m -XX:+UseG1GC --add-exports java.base/jdk.internal.ref=ALL-UNNAMED
       --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED
       -Duser.home="$jhome" -Drocketmq.home.dir="$jhome")
mqadmin() {
  java -Xmx128m -Duser.home="$jhome" -cp "$jars/*" org.apache.rocketmq.tools.command.MQAdminStartup "$@" 2>&1 |
    grep -E -v '^(WARN|SLF4J|\s+at |$)'
}
wait_port() { for _ in $(seq 1 1800); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

ns=$(free_port); br=$(free_port); jpx=$(free_port); jrm=$(free_port)
echo "listenPort=$ns" >"$dir/namesrv.conf"
java "${jopts[@]}" -cp "$jars/*" org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" \
  >"$dir/ns.log" 2>&1 &
pids+=($!)
cat >"$dir/broker.conf" <<B
brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
namesrvAddr=127.0.0.1:$ns
listenPort=$br
brokerIP1=127.0.0.1
storePathRootDir=$dir/jstore
storePathCommitLog=$dir/jstore/commitlog
mappedFileSizeCommitLog=67108864
B
wait_port "$ns" || { echo "the NameServer did not start" >&2; exit 1; }
java "${jopts[@]}" -cp "$jars/*" org.apache.rocketmq.broker.BrokerStartup -c "$dir/broker.conf" \
  >"$dir/broker.log" 2>&1 &
pids+=($!)
wait_port "$br" || { echo "the broker did not start" >&2; tail "$dir/broker.log" >&2; exit 1; }
printf '{"rocketMQClusterName":"DefaultCluster","grpcServerPort":%s,"remotingListenPort":%s,"namesrvAddr":"127.0.0.1:%s"}\n' \
  "$jpx" "$jrm" "$ns" >"$dir/proxy.json"
java "${jopts[@]}" -cp "$jars/*" org.apache.rocketmq.proxy.ProxyStartup -pm cluster -pc "$dir/proxy.json" \
  >"$dir/proxy.log" 2>&1 &
pids+=($!)
wait_port "$jpx" || { echo "Java's proxy did not start" >&2; tail "$dir/proxy.log" >&2; exit 1; }
mkdir -p "$dir/p/conf.d" "$dir/p/state"
cat >"$dir/p/conf.d/host.conf" <<C
state_dir = "$dir/p/state";
io_threads = 1;
servers = { proxy = { listen = "127.0.0.1:0"; protocol = "grpc"; }; };
C
cat >"$dir/p/conf.d/50-proxy.conf" <<C
plugin = { name = "proxy"; path = "$build/plugins/proxy.so"; server = "proxy";
           settings = { proxyMode = "cluster"; namesrvAddr = "127.0.0.1:$ns"; }; };
C
"$build/bin/rmqhostd" -c "$dir/p/conf.d" >"$dir/p/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [[ -s $dir/p/state/listen.addrs ]] && break; sleep 0.1; done
rpx=$(awk '$1 == "proxy" {print $2}' "$dir/p/state/listen.addrs")
sleep 8 # the broker registers with its NameServer
for t in JTopic RTopic; do
  mqadmin updateTopic -n "127.0.0.1:$ns" -c DefaultCluster -t $t -a +message.type=TRANSACTION >/dev/null
done
mqadmin updateTopic -n "127.0.0.1:$ns" -c DefaultCluster -t %RETRY%JGroup >/dev/null
HOME=$dir "$py" "$src/tests/bench/proxy_cluster_compare/clients.py" "127.0.0.1:$jpx" JTopic JGroup 90 \
  >"$dir/jclients.log" 2>&1 &
pids+=($!)
HOME=$dir "$py" "$src/tests/bench/proxy_cluster_compare/clients.py" "$rpx" RTopic RGroup 90 \
  >"$dir/rclients.log" 2>&1 &
pids+=($!)
sleep 45 # Java's proxy sends its transaction heartbeat every 20 s
for side in "Java 5.3.3 proxy:127.0.0.1:$jpx:J" "rmqhost proxy:$rpx:R"; do
  IFS=: read -r name host port k <<<"$side"
  echo "== $name (cluster mode) at $host:$port"
  grep producers "$dir/${k,,}clients.log"
  echo "-- mqadmin consumerConnection -g ${k}Group"
  mqadmin consumerConnection -n "127.0.0.1:$ns" -g "${k}Group"
  echo "-- mqadmin producerConnection -g ${k}Topic -t ${k}Topic"
  mqadmin producerConnection -n "127.0.0.1:$ns" -g "${k}Topic" -t "${k}Topic"
done
