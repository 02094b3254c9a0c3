# cluster_daemons.sh — sourced by the proxy cluster-mode tests (run_cluster.sh,
# run_cluster_registration.sh): several rmqhostd under rmq_tied in $dir, each
# stopped by the EXIT trap however the script ends; a daemon that exits
# non-zero or logs a sanitizer report fails the test. The sourcing script
# sets RMQ_BIN and dir (a fresh temporary directory, removed at the end
# unless RMQ_TEST_KEEP is set) first.
pids=()
names=()
cleanup() {
  local rc=$? i st
  for i in "${!pids[@]}"; do
    kill -TERM "${pids[$i]}" 2>/dev/null || true
  done
  for i in "${!pids[@]}"; do
    st=0
    for _ in $(seq 1 100); do
      kill -0 "${pids[$i]}" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || st=$?
    local log=$dir/${names[$i]}/daemon.log
    if [[ $st -ne 0 ]] || grep -qE 'Sanitizer|runtime error:' "$log" 2>/dev/null; then
      echo "rmqhostd ${names[$i]} exited with status $st or reported a sanitizer error; its log:" >&2
      tail -n 40 "$log" >&2
      rc=1
    fi
  done
  if [[ $rc -ne 0 ]]; then
    for i in "${!names[@]}"; do
      echo "---- ${names[$i]} log (tail)" >&2
      tail -n 20 "$dir/${names[$i]}/daemon.log" >&2 || true
    done
  fi
  [[ -n ${RMQ_TEST_KEEP:-} ]] || rm -rf "$dir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# launch NAME SERVER: starts rmqhostd on $dir/NAME/conf.d (in the sourcing
# shell: the trap must see its pid) and sets launched_addr to the address
# listen.addrs gives SERVER
launch() {
  local name=$1 server=$2 addrs=$dir/$1/state/listen.addrs
  "$RMQ_BIN/rmq_tied" "$RMQ_BIN/rmqhostd" -c "$dir/$name/conf.d" >"$dir/$name/daemon.log" 2>&1 &
  pids+=($!)
  names+=("$name")
  for _ in $(seq 1 100); do
    [[ -f $addrs ]] && break
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  local a
  a=$(awk -v s="$server" '$1 == s {print $2}' "$addrs" 2>/dev/null || true)
  if [[ -z $a ]]; then
    echo "rmqhostd $name did not start its $server server; its log:" >&2
    cat "$dir/$name/daemon.log" >&2
    return 1
  fi
  launched_addr=$a
}
