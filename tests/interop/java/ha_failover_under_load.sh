#!/usr/bin/env bash
# Issue 18's acceptance "promotion and demotion under produce/consume load
# lose no acknowledged message": an operator's failover (README, "Failover
# runbook") of an rmqhost SYNC_MASTER + rmqhost SLAVE pair while Java 4.9.8
# clients (harness RmqInterop) produce and consume the whole time.
#  1. an rmqhost NameServer apart from both brokers; broker-ha's master
#     (brokerId 0, SYNC_MASTER) and slave (brokerId 1, haMasterAddress).
#     A producer JVM sends one message every ~5 ms (the client's retries),
#     writing "i msgId" of each SEND_OK; a consumer JVM (group GLoad) consumes
#     all along, writing each msgId it gets.
#  2. under that load: kill -9 of the master; runbook steps 1-2 on the slave
#     (`rmqhostctl ha`, `rmqhostctl promote`); the producer's sends are SEND_OK
#     again (on the promoted broker: the only one alive).
#  3. still under load: the old master's process starts again on its old
#     store and conf.d (runbook step 4) and `rmqhostctl demote NEW_MASTER_HA`
#     makes it a slave of the promoted broker; it reports to it, which makes
#     the new master register again at once (the restarted old master had
#     taken brokerId 0 in the route, then left it empty as brokerId 1), and
#     `mqadmin clusterList` names it BID 0, the demoted broker BID 1; sends
#     stay SEND_OK.
#  4. the producer stops; GLoad has got every acknowledged msgId (at least
#     once: duplicates are reported, not failed, RocketMQ is at-least-once),
#     and so does a NEW group reading from the start; the demoted broker's
#     commit log ends where the new master's does.
# HA_LOAD_BREAK=1 adds a msgId nobody sent to the expected set (the test
# must then fail: it can fail). Every daemon and JVM runs through rmq_tied
# and is stopped on any exit.
# usage: ha_failover_under_load.sh RMQHOSTD PLUGIN_DIR PEERS_DIR HARNESS_DIR
set -euo pipefail
rmqhostd=$1 plugins=$2 peers=$3 harness_dir=$4
java_dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=ha_lib.sh
. "$java_dir/ha_lib.sh"
ha_init ha_load /tmp/rmq-java-ha-load
sig=$work/signal
mkdir -p "$sig"
topic=TopicJavaHALoad
acked() { if [[ -f $sig/acked ]]; then wc -l <"$sig/acked"; else echo 0; fi; }
received() { if [[ -f $sig/$1.recv ]]; then wc -l <"$sig/$1.recv"; else echo 0; fi; }
# wait_acked N WHY: until N sends were acknowledged (120 s), the producer alive
wait_acked() {
  for _ in $(seq 1 1200); do
    [[ $(acked) -ge $1 ]] && return 0
    kill -0 "$producer_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$work/producer.out"
  fail "$2 (SEND_OK count $(acked), wanted $1)"
}
# java_bg NAME SCENARIO: a harness JVM in the background, output NAME.out; sets jpid
java_bg() {
  RMQ_JAVA_HOME_DIR="$work/java-home-$1" "$RMQ_TIED" sh "$java_dir/java_peer.sh" "$peers" \
    "client-4.9.8:$harness_dir/client-4.9.8" RmqInterop "$ns_addr" ha "$2" >"$work/$1.out" 2>&1 &
  jpid=$!
  started_pids+=("$jpid")
}
# log_end CONF: the broker's commit-log end as `rmqhostctl ha` says (-1: none)
log_end() {
  local v
  v=$("$ctl" -c "$1" ha 2>/dev/null | awk '$1 == "commitLogMaxOffset" { print $2 }') || true
  echo "${v:--1}"
}

start_rmq_namesrv "$rmqhostd" "$work/ns" "$plugins"

mport=$(broker_ports)
rmq_conf "$work/master" "$plugins" "" "$mport" broker-ha "$work/master/store" "" \
  'brokerRole = "SYNC_MASTER"; slaveReadEnable = true;'
start_rmqhostd "$rmqhostd" "$work/master"
master_pid=$rmq_pid
sport=$(broker_ports)
rmq_conf "$work/slave" "$plugins" "" "$sport" broker-ha "$work/slave/store" "brokerId = 1;" \
  "brokerRole = \"SLAVE\"; haMasterAddress = \"127.0.0.1:$((mport + 1))\"; slaveReadEnable = true;"
start_rmqhostd "$rmqhostd" "$work/slave"
slave_pid=$rmq_pid
wait_ha_shows "$work/master" "$HA_REPORTED" 900 || fail "the slave never connected to (and reported to) the master"

# 1. the load: a consumer and a producer, both running to the end
java_bg consumer "loadconsume:$topic:GLoad:$sig:$sig/expected"
consumer_pid=$jpid
java_bg producer "loadproduce:$topic:$sig"
producer_pid=$jpid
wait_acked 300 "the producer's sends were not acknowledged by the SYNC_MASTER"
# the slave copies topic configs every 10 s: it must know the topic (route
# and pulls) before its master goes; GLoad must be consuming
for _ in $(seq 1 900); do
  grep -q $topic "$work/slave/store/config/topics.json" 2>/dev/null && [[ $(received GLoad) -ge 100 ]] && break
  sleep 0.1
done
grep -q $topic "$work/slave/store/config/topics.json" || fail "the slave never copied $topic's config"
[[ $(received GLoad) -ge 100 ]] || fail "GLoad received $(received GLoad) messages, not 100, before the failover"
echo "PASS under load: $(acked) sends SEND_OK, GLoad received $(received GLoad)"

# 2. the master is lost; runbook steps 1 and 2 on the slave
kill -KILL "$master_pid"
wait "$master_pid" 2>/dev/null || true
at_kill=$(acked)
echo "$(date +%T.%3N) master killed (kill -9) after $at_kill acknowledged sends"
sleep 2 # the clients notice: sends fail, GLoad pulls from the slave
"$ctl" -c "$work/slave/conf.d" ha | tee "$work/slave-ha.out"
"$ctl" -c "$work/slave/conf.d" promote | tee "$work/promote.out"
grep -q '^promoted' "$work/promote.out" || fail "rmqhostctl promote did not promote the slave"
at_promote=$(acked)
echo "$(date +%T.%3N) promoted"
wait_acked $((at_promote + 300)) "sends were not SEND_OK again after the promotion"
echo "PASS sends SEND_OK again on the promoted broker ($((at_promote)) -> $(acked))"

# 3. runbook step 4: the old master's process again, its store and conf.d
# as they were, then demoted to a slave of the promoted broker
start_rmqhostd "$rmqhostd" "$work/master"
master_pid=$rmq_pid
echo "$(date +%T.%3N) old master restarted"
"$ctl" -c "$work/master/conf.d" demote "127.0.0.1:$((sport + 1))" | tee "$work/demote.out" ||
  fail "rmqhostctl demote failed"
at_demote=$(acked)
echo "$(date +%T.%3N) demoted"
wait_ha_shows "$work/slave" "$HA_REPORTED" 1200 || {
  "$ctl" -c "$work/master/conf.d" ha
  fail "the demoted broker never reported to the promoted one"
}
"$ctl" -c "$work/master/conf.d" ha | tee "$work/demoted-ha.out"
# The restarted old master registered as brokerId 0 (its conf.d says
# master) in the new master's place, then as brokerId 1 when demoted; the
# new master registers again as soon as the demoted broker first reports to
# it (store's HA master -> broker.info register_now), so the route names it
# again without an operator's step.
# mqadmin clusterList: the new master is BID 0, the demoted broker BID 1
wait_cluster_ids "0=127.0.0.1:$sport 1=127.0.0.1:$mport " '$3 "=" $4' || {
  cat "$work/cluster.out"
  fail "clusterList: broker-ha is ${ids:-none}, not BID 0 127.0.0.1:$sport and BID 1 127.0.0.1:$mport"
}
echo "PASS clusterList: the new master is BID 0, the demoted broker BID 1"
wait_acked $((at_demote + 300)) "sends were not SEND_OK after the demotion"
echo "PASS the old master demoted under load, a slave of the promoted broker; $(acked) sends SEND_OK"

# 4. the producer stops; every acknowledged msgId must reach GLoad and a new group
touch "$sig/stop"
rc=0
wait "$producer_pid" || rc=$?
cat "$work/producer.out"
[[ $rc -eq 0 ]] && grep -q "^PASS loadproduce" "$work/producer.out" || fail "the producer failed"
cp "$sig/acked" "$sig/expected.tmp"
[[ ${HA_LOAD_BREAK:-0} == 1 ]] && echo "999999999 0A0A0A0A0A0A0A0A0A0A0A0A0A0A0A0A0A0A" >>"$sig/expected.tmp"
mv "$sig/expected.tmp" "$sig/expected"
echo "$(wc -l <"$sig/expected") acknowledged sends expected"
rc=0
wait "$consumer_pid" || rc=$?
cat "$work/consumer.out"
[[ $rc -eq 0 ]] && grep -q "^PASS loadconsume:$topic:GLoad" "$work/consumer.out" ||
  fail "GLoad, consuming through the failover, did not get every acknowledged message"
echo "PASS GLoad got every acknowledged message"
java_bg newgroup "loadconsume:$topic:GLoadNew:$sig:$sig/expected"
rc=0
wait "$jpid" || rc=$?
cat "$work/newgroup.out"
[[ $rc -eq 0 ]] && grep -q "^PASS loadconsume:$topic:GLoadNew" "$work/newgroup.out" ||
  fail "a new group reading from the start did not get every acknowledged message"
echo "PASS a new group got every acknowledged message"

# the demoted broker caught up: its log ends where the new master's does
new_end=$(log_end "$work/slave/conf.d")
for _ in $(seq 1 300); do
  [[ $(log_end "$work/master/conf.d") == "$new_end" ]] && break
  sleep 0.1
done
[[ $new_end != -1 && $(log_end "$work/master/conf.d") == "$new_end" ]] ||
  fail "the demoted broker's log ends at $(log_end "$work/master/conf.d"), the new master's at $new_end"
echo "PASS the demoted broker caught up (log end $new_end)"
ls "$work/master/store/ha-setaside" 2>/dev/null | sed 's/^/set aside: /' || true

stop_pid "$master_pid" || fail "the demoted broker did not stop cleanly (status $?)"
stop_pid "$slave_pid" || fail "the promoted broker did not stop cleanly (status $?)"
stop_pid "$ns_pid" || fail "the NameServer did not stop cleanly (status $?)"
failed=0
