# shellcheck shell=bash
# ha_lib.sh — what the SYNC_MASTER/SLAVE pair tests (ha_pair.sh,
# ha_failover_under_load.sh) share, sourced once they have set rmqhostd,
# plugins, peers, harness_dir and java_dir: java_interop_lib.sh, ha_init
# (tools checked, work directory, EXIT trap), fail, waiting on what
# `rmqhostctl ha` says, and mqadmin clusterList's rows of broker-ha.
# shellcheck source=java_interop_lib.sh
. "$java_dir/java_interop_lib.sh"

# The line `rmqhostctl ha` shows on a master once its slave has reported
# (SYNC_MASTER answers SEND_OK only from then on).
HA_REPORTED='last ack [0-9]+ ms ago'

# ha_init TAG WORK_PREFIX: checks that rmq_tied and rmqhostctl stand beside
# rmqhostd, the mqadmin 4.9.8 jars and the harness are there (a message
# naming TAG and what is missing, exit 1); sets plugins (absolute), bin,
# RMQ_TIED, ctl, work (a new WORK_PREFIX.XXXXXX directory), failed=1, and
# the EXIT trap ha_finish.
ha_init() {
  local tag=$1
  plugins=$(cd "$plugins" && pwd)
  bin=$(cd "$(dirname "$rmqhostd")" && pwd)
  RMQ_TIED=$bin/rmq_tied
  ctl=$bin/rmqhostctl
  [[ -x $RMQ_TIED && -x $ctl ]] || { echo "$tag: rmq_tied or rmqhostctl missing beside $rmqhostd" >&2; exit 1; }
  [[ -f $peers/tools-4.9.8/.fetched ]] || { echo "$tag: no mqadmin 4.9.8 jars in $peers/tools-4.9.8 (fetch_java_peers.sh could not get them)" >&2; exit 1; }
  [[ -f $harness_dir/client-4.9.8/RmqInterop.class ]] || { echo "$tag: no harness client-4.9.8/RmqInterop.class in $harness_dir (the Java client could not be fetched or compiled)" >&2; exit 1; }
  work=$(mktemp -d "$2.XXXXXX")
  failed=1
  trap ha_finish EXIT
}

# ha_finish: stops every daemon and JVM; unless the script set failed=0,
# shows the tail of each log first.
ha_finish() {
  stop_all
  if [[ $failed -ne 0 ]]; then
    for log in "$work"/*/daemon.log "$work"/*/broker.log "$work"/*.out; do
      [[ -f $log ]] && { echo "--- $log"; tail -n 40 "$log"; }
    done
  fi
  rm -rf "$work"
}

fail() {
  echo "FAIL: $*"
  exit 1
}

# ha_shows DIR REGEX: `rmqhostctl ha` of the daemon on DIR/conf.d matches REGEX.
ha_shows() { "$ctl" -c "$1/conf.d" ha 2>/dev/null | grep -Eq "$2"; }

# wait_ha_shows DIR REGEX TENTHS: polls ha_shows every 0.1 s, TENTHS times
# at most; returns its last answer.
wait_ha_shows() {
  for _ in $(seq 1 "$3"); do
    ha_shows "$1" "$2" && return 0
    sleep 0.1
  done
  ha_shows "$1" "$2"
}

# wait_cluster_ids WANT AWK_PRINT: runs mqadmin 4.9.8 clusterList against
# $ns_addr (20 times at most, a second apart) until broker-ha's rows
# ("#Cluster Name  #Broker Name  #BID  #Addr ...", $3 the BID, $4 the
# address), each printed by `awk '{ print AWK_PRINT }'`, sorted and each
# followed by a space, are WANT. Sets ids to the last answer; the last
# output is in $work/cluster.out.
wait_cluster_ids() {
  local want=$1 fields=$2 pid
  for _ in $(seq 1 20); do
    RMQ_JAVA_HOME_DIR="$work/java-home-admin" "$RMQ_TIED" sh "$java_dir/java_peer.sh" "$peers" tools-4.9.8 \
      org.apache.rocketmq.tools.command.MQAdminStartup clusterList -n "$ns_addr" >"$work/cluster.out" 2>&1 &
    pid=$!
    started_pids+=("$pid")
    wait "$pid" || true
    ids=$(awk "\$2 == \"broker-ha\" { print $fields }" "$work/cluster.out" | sort | tr '\n' ' ')
    [[ $ids == "$want" ]] && return 0
    sleep 1
  done
  return 1
}
