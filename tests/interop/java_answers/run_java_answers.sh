#!/bin/sh
# run_java_answers.sh PEERS_DIR JAVA_PEER_SH TEST_PROGRAM — runs the raw-frame
# expectations of test_store_java_answers (Java 4.9.8's answers, issue 21)
# against a real Java broker: 4.9.7's, the newest on Maven Central, whose
# send, pull, query, transaction and admin processors are 4.9.8's (only ACL
# admin code differs). A fresh store on free ports; the JVM is stopped
# whatever happens. Fails when the broker cannot be started.
set -eu
peers=$1
peer_sh=$2
prog=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/rmq-java-answers.XXXXXX")
pid=""
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# listenPort P; the broker also binds P-2 (VIP channel) and P+1 (HA)
port_free() { ! ss -ltn 2>/dev/null | awk '{print $4}' | grep -q ":$1\$"; }
port=""
for try in $(seq 1 50); do
  # below the kernel's ephemeral range (32768+): no port the kernel hands out
  # (nor a port-0 daemon's derived HA port, its port + 1) lands here
  p=$(( 10002 + ($$ * 7 + try * 131) % 22000 ))
  if port_free $((p - 2)) && port_free "$p" && port_free $((p + 1)); then port=$p; break; fi
done
[ -n "$port" ] || { echo "java_answers: no free port triple for the Java broker"; exit 1; }

cat > "$work/broker.conf" <<CONF
brokerClusterName=TestCluster
brokerName=broker-t
brokerId=0
listenPort=$port
brokerIP1=127.0.0.1
storePathRootDir=$work/store
storePathCommitLog=$work/store/commitlog
autoCreateTopicEnable=true
autoCreateSubscriptionGroup=true
namesrvAddr=127.0.0.1:1
mappedFileSizeCommitLog=10485760
mappedFileSizeConsumeQueue=60000
CONF
RMQ_JAVA_HOME_DIR="$work/home" \
RMQ_JAVA_OPTS="-Xmx256m --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED" \
  setsid sh "$peer_sh" "$peers" server-4.9.7 org.apache.rocketmq.broker.BrokerStartup \
  -c "$work/broker.conf" > "$work/broker.log" 2>&1 &
pid=$!
i=0
until ! port_free "$port"; do
  if ! kill -0 "$pid" 2>/dev/null || [ $i -ge 600 ]; then
    echo "java_answers: the Java 4.9.7 broker did not start (log follows)"
    tail -40 "$work/broker.log"
    exit 1
  fi
  sleep 0.2
  i=$((i + 1))
done
echo "java_answers: Java broker listening on $port"
RMQ_ANSWERS_JAVA_PORT=$port "$prog" ${RMQ_ANSWERS_FILTER:-}
