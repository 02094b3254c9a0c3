# shellcheck shell=bash
# java_interop_lib.sh — sourced by the Java interop tests (client_suite.sh,
# store_cluster.sh, ha_lib.sh, ...): ports, rmqhostd conf.d pieces, starting
# and stopping rmqhostd (a NameServer alone too) and Java brokers. Every
# process started here is recorded in started_pids; stop_all (the scripts'
# EXIT trap) kills them all, so a failing test leaves no daemon or JVM
# behind. A script that sets RMQ_TIED (the build's rmq_tied) also ties each
# of them to itself (PR_SET_PDEATHSIG): they die even when the script is
# killed and no trap runs.
# shellcheck source=../../support/namesrv_daemon.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../support/namesrv_daemon.sh"

started_pids=()
# A signal (ctest's timeout) ends the script through exit, so its EXIT trap
# (stop_all) still runs.
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

stop_all() {
  local pid
  for pid in "${started_pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
  for pid in "${started_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}

# stop_pid PID: SIGTERM, then SIGKILL after 20 s; returns the exit status.
stop_pid() {
  local pid=$1 rc=0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || rc=$?
  return $rc
}

# broker_ports: prints P such that P (listen), P-2 (Java's VIP port) and
# P+1 (a Java broker's HA port) are free on loopback, below the kernel's
# ephemeral range (ports.sh's port_block): a port the kernel hands out (an
# outgoing connection, a daemon listening on port 0 — and that daemon's
# derived HA port, its port + 1) never lands there, and a Java broker, which
# fails to start when its HA port is taken, keeps its triple.
broker_ports() { port_block -2 0 1; }

# rmq_conf DIR PLUGINS NS_LISTEN BROKER_PORT BROKER_NAME STORE_ROOT [EXTRA_BCM [EXTRA_STORE]]
# rmqhostd's conf.d in DIR: a NameServer on NS_LISTEN (empty: none, the
# broker registers to $ns_addr) and a broker (broker-client-mgr, filter,
# store) on BROKER_PORT with its VIP port at BROKER_PORT-2, whose store and
# config files live in STORE_ROOT (one Java-layout store directory). Delay
# levels 1 s 2 s 1 s ... keep retries short; transaction checks every second.
rmq_conf() {
  local dir=$1 plugins=$2 ns_listen=$3 port=$4 name=$5 root=$6 bcm=${7:-} store=${8:-}
  local ns_server=""
  mkdir -p "$dir/conf.d" "$dir/state"
  [[ -n $ns_listen ]] && ns_server="namesrv = { listen = \"$ns_listen\"; };"
  cat >"$dir/conf.d/host.conf" <<CONF
state_dir = "$dir/state";
io_threads = 1;
log_level = "warn";
servers = { $ns_server
            broker = { listen = "127.0.0.1:$port"; vip_listen = "127.0.0.1:$((port - 2))"; }; };
CONF
  if [[ -n $ns_listen ]]; then
    cat >"$dir/conf.d/10-namesrv.conf" <<CONF
plugin = { name = "namesrv"; path = "$plugins/namesrv.so"; server = "namesrv"; };
CONF
  fi
  cat >"$dir/conf.d/20-bcm.conf" <<CONF
plugin = { name = "broker-client-mgr"; path = "$plugins/broker-client-mgr.so"; server = "broker";
  settings = { namesrvAddr = "$ns_addr"; brokerIP1 = "127.0.0.1"; brokerName = "$name";
               brokerClusterName = "DefaultCluster"; storePathRootDir = "$root"; $bcm }; };
CONF
  cat >"$dir/conf.d/30-filter.conf" <<CONF
plugin = { name = "filter"; path = "$plugins/filter.so"; server = "broker";
  settings = { enablePropertyFilter = true; }; };
CONF
  cat >"$dir/conf.d/40-store.conf" <<CONF
plugin = { name = "store"; path = "$plugins/store.so"; server = "broker";
  settings = { storePathRootDir = "$root"; mappedFileSizeCommitLog = 67108864;
               messageDelayLevel = "$DELAY_LEVELS";
               transactionCheckInterval = 1000; transactionTimeOut = 1000; $store }; };
CONF
}
DELAY_LEVELS="1s 2s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s"

# start_rmqhostd RMQHOSTD DIR: starts it on DIR/conf.d (log DIR/daemon.log),
# sets rmq_pid; waits until it listens (listen.addrs), fails with its log.
start_rmqhostd() {
  local bin=$1 dir=$2
  rm -f "$dir/state/listen.addrs"
  ${RMQ_TIED:+"$RMQ_TIED"} "$bin" -c "$dir/conf.d" >"$dir/daemon.log" 2>&1 &
  rmq_pid=$!
  started_pids+=("$rmq_pid")
  for _ in $(seq 1 300); do
    [[ -f $dir/state/listen.addrs ]] && return 0
    kill -0 "$rmq_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "rmqhostd did not start:" >&2
  cat "$dir/daemon.log" >&2
  return 1
}

# start_rmq_namesrv RMQHOSTD DIR PLUGINS: rmqhostd with the namesrv role
# alone on DIR/conf.d (namesrv_daemon.sh's conf), on a port the kernel picks
# (nothing can take it between choosing and binding); sets ns_addr (from
# DIR/state/listen.addrs) and ns_pid.
start_rmq_namesrv() {
  write_namesrv_conf "$2" "$3"
  start_rmqhostd "$1" "$2"
  ns_pid=$rmq_pid
  ns_addr=127.0.0.1:$(listen_port "$2" namesrv)
}

# start_java_broker DIR PORT NAME STORE_ROOT [PROPS]: a Java 4.9.7 broker
# NAME of DefaultCluster on PORT (take it from broker_ports: the VIP port
# PORT-2 and the HA port PORT+1 must be free too), registering to $ns_addr,
# its commit log under STORE_ROOT; PROPS: more broker.conf lines. Its
# broker.conf, broker.log and user.home are in DIR; sets java_pid and
# returns once PORT accepts (fails with the log's tail).
start_java_broker() {
  local dir=$1 port=$2 name=$3 root=$4 props=${5:-}
  mkdir -p "$dir"
  cat >"$dir/broker.conf" <<CONF
brokerClusterName=DefaultCluster
brokerName=$name
brokerIP1=127.0.0.1
listenPort=$port
namesrvAddr=$ns_addr
storePathRootDir=$root
storePathCommitLog=$root/commitlog
$props
CONF
  RMQ_JAVA_HOME_DIR="$dir/home" ${RMQ_TIED:+"$RMQ_TIED"} sh "$java_dir/java_peer.sh" "$peers" server-4.9.7 \
    org.apache.rocketmq.broker.BrokerStartup -c "$dir/broker.conf" >"$dir/broker.log" 2>&1 &
  java_pid=$!
  started_pids+=("$java_pid")
  wait_port "$port" "$java_pid" "the Java 4.9.7 broker $name (server-4.9.7 jars)" "$dir/broker.log"
}

# end_rmqhostd_run RC DIR WHAT: after a client's run (RC its exit status,
# WHAT what it ran) against the rmqhostd on DIR (rmq_pid): fails with the
# daemon's log when it died during the run, with its tail when RC is not 0,
# and when it does not stop cleanly on SIGTERM (a sanitizer's report makes
# its exit status non-zero).
end_rmqhostd_run() {
  local rc=$1 dir=$2 what=$3
  if ! kill -0 "$rmq_pid" 2>/dev/null; then
    echo "rmqhostd died during $what:" >&2
    cat "$dir/daemon.log" >&2
    exit 1
  fi
  if [[ $rc -ne 0 ]]; then
    echo "--- rmqhostd log:"
    tail -n 40 "$dir/daemon.log"
    exit 1
  fi
  stop_pid "$rmq_pid" || { echo "rmqhostd exited with $? on SIGTERM:" >&2; cat "$dir/daemon.log" >&2; exit 1; }
}

# javac_peer TAG SET OUT_DIR SRC...: compiles SRC against the jars of the
# Java peer set SET (fetch_java_peers.sh) into OUT_DIR; without those jars
# fails the test (exit 1) with a message naming TAG.
javac_peer() {
  local tag=$1 set=$2 out=$3
  shift 3
  [[ -f $peers/$set/.fetched ]] || {
    echo "$tag: no jars of set $set in $peers (fetch_java_peers.sh could not get them)" >&2
    exit 1
  }
  mkdir -p "$out"
  javac -nowarn -encoding UTF-8 --release 11 -cp "$peers/$set/*" -d "$out" "$@"
}

# wait_port PORT PID WHAT LOG: until PORT accepts on loopback (90 s), or
# PID died: fails with LOG's tail.
wait_port() {
  local port=$1 pid=$2 what=$3 log=$4
  for _ in $(seq 1 900); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$what did not start listening on $port:" >&2
  tail -n 40 "$log" >&2
  return 1
}

# harness SET ARGS...: one harness JVM (client set SET) against $ns_addr;
# its PASS/FAIL lines go to stdout; returns its exit status.
harness() {
  local set=$1
  shift
  RMQ_JAVA_HOME_DIR="$work/java-home" ${RMQ_TIED:+"$RMQ_TIED"} sh "$java_dir/java_peer.sh" \
    "$peers" "$set:$harness_dir/$set" RmqInterop "$ns_addr" "$@" &
  local pid=$!
  started_pids+=("$pid")
  wait "$pid"
}
