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
# shellcheck source=ha_lib.sh
. "$java_dir/ha_lib.sh"
ha_init ha_pair /tmp/rmq-java-ha
[[ $pair == rmqhost || -f $peers/server-4.9.7/.fetched ]] || { echo "ha_pair: no Java 4.9.7 broker jars in $peers/server-4.9.7 (fetch_java_peers.sh could not get them)" >&2; exit 1; }
N=${HA_PAIR_N:-200}

start_rmq_namesrv "$rmqhostd" "$work/ns" "$plugins"

# start_java_ha_broker DIR PORT PROPS: a Java 4.9.7 broker-ha on PORT (from
# broker_ports) whose store is DIR/store, commit-log files as large as
# rmq_conf's; sets rmq_pid.
start_java_ha_broker() {
  start_java_broker "$1" "$2" broker-ha "$1/store" "brokerIP2=127.0.0.1
mappedFileSizeCommitLog=67108864
autoCreateTopicEnable=true
$3"
  rmq_pid=$java_pid
}

# The master (HA port: its port + 1, which broker_ports keeps free) and the slave.
mport=$(broker_ports)
if [[ $pair == java-master ]]; then
  start_java_ha_broker "$work/master" "$mport" $'brokerId=0\nbrokerRole=SYNC_MASTER'
else
  rmq_conf "$work/master" "$plugins" "" "$mport" broker-ha "$work/master/store" "" \
    'brokerRole = "SYNC_MASTER"; slaveReadEnable = true;'
  start_rmqhostd "$rmqhostd" "$work/master"
fi
master_pid=$rmq_pid
sport=$(broker_ports)
if [[ $pair == java-slave ]]; then
  start_java_ha_broker "$work/slave" "$sport" \
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
  wait_ha_shows "$work/slave" '\(connected\)' 900 || fail "the slave never connected to the master"
else
  wait_ha_shows "$work/master" "$HA_REPORTED" 900 || fail "the slave never connected to (and reported to) the master"
fi

# mqadmin clusterList: both brokers of the pair, BID 0 and 1 (registrations
# arrive within a few seconds of the start)
wait_cluster_ids "0 1 " '$3' ||
  { cat "$work/cluster.out"; fail "mqadmin clusterList did not list broker-ha with BID 0 and 1 (got: ${ids:-none})"; }
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
