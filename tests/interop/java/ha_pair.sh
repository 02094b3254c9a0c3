#!/usr/bin/env bash
# Java 4.9.8 clients driving a SYNC_MASTER/SLAVE pair (issue 18), one of the
# three pairs (PAIR, default rmqhost):
#   rmqhost      an rmqhost master and an rmqhost slave;
#   java-master  a Java 4.9.7 master and an rmqhost slave;
#   java-slave   an rmqhost master and a Java 4.9.7 slave.
# (The Java broker is 4.9.7: 4.9.8's is not on Maven Central.)
#  1. an rmqhost NameServer (apart from both brokers: it outlives the
#     master); broker-ha's master (brokerId 0, SYNC_MASTER) and slave
#     (brokerId 1, haMasterAddress), slaveReadEnable on rmqhost's.
#     `mqadmin clusterList` (4.9.8) lists broker-ha with BID 0 and BID 1.
#  2. once the slave acknowledges, a harness JVM (rocketmq-client 4.9.8)
#     sends N messages, each SEND_OK (SYNC_MASTER: the slave holds each),
#     and writes the msgId each send was answered with;
#  3. kill -9 of the master; a second harness JVM's NEW consumer group
#     (DefaultMQPushConsumer) gets each of the N messages exactly once, body,
#     key, tag and msgId as sent, from the slave alone, and nothing else;
#  4. when the slave is rmqhost's: `rmqhostctl promote` on it, and the first
#     JVM's producer, still the same, gets SEND_OK again on broker-ha once
#     its route names the promoted broker, for 10 more sends. (A Java slave
#     is promoted only by a restart: not tested.)
# Every daemon and JVM runs through rmq_tied and is stopped on any exit.
# usage: ha_pair.sh RMQHOSTD PLUGIN_DIR PEERS_DIR HARNESS_DIR [PAIR]
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3 harness_dir=$4 pair=${5:-rmqhost}
case $pair in rmqhost | java-master | java-slave) ;; *) echo "ha_pair: unknown pair $pair" >&2; exit 2 ;; esac
java_dir=$(cd "$(dirname "$0")" && pwd)
plugins=$(cd "$plugins" && pwd)
bin=$(cd "$(dirname "$rmqhostd")" && pwd)
RMQ_TIED=$bin/rmq_tied
ctl=$bin/rmqhostctl
# shellcheck source=java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"
[[ -x $RMQ_TIED && -x $ctl ]] || { echo "ha_pair: rmq_tied or rmqhostctl missing beside $rmqhostd" >&2; exit 1; }
[[ -f $harness_dir/client-4.9.8/RmqInterop.class ]] || { echo "ha_pair: no harness client-4.9.8/RmqInterop.class in $harness_dir (the Java client could not be fetched or compiled)" >&2; exit 1; }
[[ $pair == rmqhost || -f $peers/server-4.9.7/.fetched ]] || { echo "ha_pair: no Java 4.9.7 broker jars in $peers/server-4.9.7 (fetch_java_peers.sh could not get them)" >&2; exit 1; }
[[ -f $peers/tools-4.9.8/.fetched ]] || { echo "ha_pair: no mqadmin 4.9.8 jars in $peers/tools-4.9.8 (fetch_java_peers.sh could not get them)" >&2; exit 1; }
N=${HA_PAIR_N:-200}
work=$(mktemp -d /tmp/rmq-java-ha.XXXXXX)
failed=1
finish() {
  stop_all
  if [[ $failed -ne 0 ]]; then
    for log in "$work"/*/daemon.log "$work"/*/broker.log "$work"/*.out; do
      [[ -f $log ]] && { echo "--- $log"; tail -n 40 "$log"; }
    done
  fi
  rm -rf "$work"
}
trap finish EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

# The NameServer (rmqhostd with the namesrv role alone).
ns_port=$(free_port)
ns_addr=127.0.0.1:$ns_port
mkdir -p "$work/ns/conf.d"
cat >"$work/ns/conf.d/host.conf" <<CONF
state_dir = "$work/ns/state";
io_threads = 1;
log_level = "warn";
servers = { namesrv = { listen = "$ns_addr"; }; };
CONF
cat >"$work/ns/conf.d/10-namesrv.conf" <<CONF
plugin = { name = "namesrv"; path = "$plugins/namesrv.so"; server = "namesrv"; };
CONF
start_rmqhostd "$rmqhostd" "$work/ns"
ns_pid=$rmq_pid

# start_java_broker DIR PORT PROPS: a Java 4.9.7 broker-ha on PORT (HA port
# PORT + 1, VIP port PORT - 2: broker_ports keeps them free) whose store is
# DIR/store, commit-log files as large as rmq_conf's; sets rmq_pid.
start_java_broker() {
  local dir=$1 port=$2 props=$3
  mkdir -p "$dir"
  cat >"$dir/broker.conf" <<CONF
brokerClusterName=DefaultCluster
brokerName=broker-ha
brokerIP1=127.0.0.1
brokerIP2=127.0.0.1
listenPort=$port
namesrvAddr=$ns_addr
storePathRootDir=$dir/store
storePathCommitLog=$dir/store/commitlog
mappedFileSizeCommitLog=67108864
autoCreateTopicEnable=true
$props
CONF
  RMQ_JAVA_HOME_DIR="$dir/home" "$RMQ_TIED" sh "$java_dir/java_peer.sh" "$peers" server-4.9.7 \
    org.apache.rocketmq.broker.BrokerStartup -c "$dir/broker.conf" >"$dir/broker.log" 2>&1 &
  rmq_pid=$!
  started_pids+=("$rmq_pid")
  wait_port "$port" "$rmq_pid" "the Java 4.9.7 broker (server-4.9.7 jars)" "$dir/broker.log"
}

# The master (HA port: its port + 1, which broker_ports keeps free) and the slave.
mport=$(broker_ports)
if [[ $pair == java-master ]]; then
  start_java_broker "$work/master" "$mport" $'brokerId=0\nbrokerRole=SYNC_MASTER'
else
  rmq_conf "$work/master" "$plugins" "" "$mport" broker-ha "$work/master/store" "" \
    'brokerRole = "SYNC_MASTER"; slaveReadEnable = true;'
  start_rmqhostd "$rmqhostd" "$work/master"
fi
master_pid=$rmq_pid
sport=$(broker_ports)
if [[ $pair == java-slave ]]; then
  start_java_broker "$work/slave" "$sport" \
    "brokerId=1"$'\n'"brokerRole=SLAVE"$'\n'"haMasterAddress=127.0.0.1:$((mport + 1))"
else
  rmq_conf "$work/slave" "$plugins" "" "$sport" broker-ha "$work/slave/store" "brokerId = 1;" \
    "brokerRole = \"SLAVE\"; haMasterAddress = \"127.0.0.1:$((mport + 1))\"; slaveReadEnable = true;"
  start_rmqhostd "$rmqhostd" "$work/slave"
fi
slave_pid=$rmq_pid

# SYNC_MASTER answers SEND_OK once its slave reports: an rmqhost master
# shows the slave's first report (a Java slave reports ~5 s after it
# connects); an rmqhost slave reports as soon as it is connected.
if [[ $pair == java-master ]]; then
  ha_ready() { "$ctl" -c "$work/slave/conf.d" ha 2>/dev/null | grep -q '(connected)'; }
else
  ha_ready() { "$ctl" -c "$work/master/conf.d" ha 2>/dev/null | grep -Eq 'last ack [0-9]+ ms ago'; }
fi
for _ in $(seq 1 900); do
  ha_ready && break
  sleep 0.1
done
ha_ready || fail "the slave never connected to (and reported to) the master"

# mqadmin clusterList: both brokers of the pair, BID 0 and 1 (registrations
# arrive within a few seconds of the start)
cluster_ok=0
for _ in $(seq 1 20); do
  RMQ_JAVA_HOME_DIR="$work/java-home" "$RMQ_TIED" sh "$java_dir/java_peer.sh" "$peers" tools-4.9.8 \
    org.apache.rocketmq.tools.command.MQAdminStartup clusterList -n "$ns_addr" >"$work/cluster.out" 2>&1 &
  pid=$!
  started_pids+=("$pid")
  wait "$pid" || true
  # "#Cluster Name  #Broker Name  #BID  #Addr ..." rows
  ids=$(awk '$2 == "broker-ha" { print $3 }' "$work/cluster.out" | sort | tr '\n' ' ')
  if [[ $ids == "0 1 " ]]; then cluster_ok=1; break; fi
  sleep 1
done
[[ $cluster_ok -eq 1 ]] || { cat "$work/cluster.out"; fail "mqadmin clusterList did not list broker-ha with BID 0 and 1 (got: ${ids:-none})"; }
echo "PASS clusterList: broker-ha BID 0 and 1"

# The producer JVM: N sends, then it waits for the promotion. A Java slave
# is not promoted: its producer JVM sends the N and ends.
mkdir -p "$work/signal"
if [[ $pair == java-slave ]]; then
  harness client-4.9.8 ha "produce:TopicJavaHA:broker-ha:0:$N:$work/signal/ids" >"$work/producer.out" || true
  grep -q "^PASS produce:" "$work/producer.out" && touch "$work/signal/sent"
else
  RMQ_JAVA_HOME_DIR="$work/java-home" "$RMQ_TIED" sh "$java_dir/java_peer.sh" "$peers" \
    "client-4.9.8:$harness_dir/client-4.9.8" RmqInterop "$ns_addr" ha \
    "failover:TopicJavaHA:broker-ha:$N:$work/signal" >"$work/producer.out" 2>&1 &
  producer_pid=$!
  started_pids+=("$producer_pid")
  for _ in $(seq 1 1200); do
    [[ -f $work/signal/sent ]] && break
    kill -0 "$producer_pid" 2>/dev/null || break
    sleep 0.1
  done
fi
[[ -f $work/signal/sent ]] || { cat "$work/producer.out"; fail "the producer did not get SEND_OK for its $N sends"; }
echo "PASS $N sends SEND_OK on the SYNC_MASTER"

# The slave copies topic configs every 10 s (rmqhost's and Java's): it
# must serve TopicJavaHA before its master goes
for _ in $(seq 1 900); do
  grep -q TopicJavaHA "$work/slave/store/config/topics.json" 2>/dev/null && break
  sleep 0.1
done
grep -q TopicJavaHA "$work/slave/store/config/topics.json" || fail "the slave never copied TopicJavaHA's config"

kill -KILL "$master_pid"
wait "$master_pid" 2>/dev/null || true
echo "master killed (kill -9)"

# A new consumer group reads exactly the N messages from the slave alone.
harness client-4.9.8 ha "consume:TopicJavaHA:GJavaHA:0:$N:$work/signal/ids" >"$work/consumer.out" || true
cat "$work/consumer.out"
grep -q "^PASS consume:TopicJavaHA:GJavaHA:0:$N" "$work/consumer.out" || fail "the consumer did not get the $N messages from the slave"
echo "PASS a new consumer group got the $N acknowledged messages once each from the slave"

if [[ $pair == java-slave ]]; then
  stop_pid "$slave_pid" || true # a JVM ends with 143 on SIGTERM
  stop_pid "$ns_pid" || fail "the NameServer did not stop cleanly (status $?)"
  failed=0
  exit 0
fi

"$ctl" -c "$work/slave/conf.d" promote | tee "$work/promote.out"
grep -q '^promoted' "$work/promote.out" || fail "rmqhostctl promote did not promote the slave"
touch "$work/signal/promoted"
rc=0
wait "$producer_pid" || rc=$?
cat "$work/producer.out"
[[ $rc -eq 0 && -f $work/signal/resent ]] || fail "the producer's sends did not succeed after the promotion"
grep -q "^PASS failover:TopicJavaHA" "$work/producer.out" || fail "no PASS line from the producer"
echo "PASS sends SEND_OK again on the promoted broker"
# the promoted broker and the NameServer stop cleanly (a sanitizer's report
# would make the exit status non-zero)
stop_pid "$slave_pid" || fail "the promoted broker did not stop cleanly (status $?)"
stop_pid "$ns_pid" || fail "the NameServer did not stop cleanly (status $?)"
failed=0
