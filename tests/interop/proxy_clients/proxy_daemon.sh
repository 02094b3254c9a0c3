# shellcheck shell=bash
# proxy_daemon.sh — sourced by the 5.x client tests (run_go.sh,
# run_python.sh): an all-in-one rmqhostd (namesrv + broker-client-mgr +
# filter + store, as `make run`) plus the proxy plugin on a gRPC server of
# its own, every port an ephemeral loopback one. The gRPC server's TLS is
# `permissive` (as Java's proxy by default) with a self-signed P-256
# certificate for 127.0.0.1 made here ($client_daemon_dir/proxy-cert.pem): the
# Go client always dials TLS (it skips the certificate check), the Python
# client speaks either (it trusts the certificate through
# GRPC_DEFAULT_SSL_ROOTS_FILE_PATH), the raw stubs plaintext.
# The daemon dies with the test however it ends (rmq_tied, EXIT trap); the
# helpers free_port, write_all_in_one_conf and run_tied come from
# client_daemon.sh.
# The sourcing script sets RMQ_BIN (the build's bin/: rmqhostd, rmq_tied).

# shellcheck source=../client_daemon.sh
source "$(dirname "${BASH_SOURCE[0]}")/../client_daemon.sh"

# The EXIT trap: stops the daemon (TERM, then KILL after 10 s) and fails the
# test, whatever the clients said, when it did not exit 0 or its log holds a
# sanitizer report (the ASan build runs these tests too); then removes its
# directory unless RMQ_TEST_KEEP is set.
proxy_daemon_cleanup() {
  local rc=$? st=0
  if [[ -n $client_daemon_pid ]]; then
    kill -TERM "$client_daemon_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$client_daemon_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$client_daemon_pid" 2>/dev/null || true
    wait "$client_daemon_pid" 2>/dev/null || st=$?
  fi
  wait 2>/dev/null || true
  local log=$client_daemon_dir/daemon.log
  if [[ $st -ne 0 ]] || grep -qE 'Sanitizer|runtime error:' "$log" 2>/dev/null; then
    echo "rmqhostd exited with status $st or reported a sanitizer error; its log:" >&2
    tail -n 60 "$log" >&2
    rc=1
  fi
  if [[ -n $client_daemon_dir && -z ${RMQ_TEST_KEEP:-} ]]; then
    rm -rf "$client_daemon_dir"
  fi
  exit "$rc"
}

# start_proxy_daemon PLUGIN_DIR TOPICS
# TOPICS: broker-client-mgr's `topics` setting ("Name:queues;..."), the
# topics the clients use (5.x clients need a route before they start).
# Optional: PROXY_SETTINGS (the proxy plugin's settings, default the 500 ms
# minimum polling time below), and a function proxy_daemon_prepare the
# sourcing script may define: called with the daemon's directory (conf.d/
# written, daemon not started yet) to add files, e.g. an acl plugin.
# Sets client_daemon_dir, client_daemon_pid, ns_addr and proxy_addr
# (127.0.0.1:PORT of the gRPC server); fails with the daemon's log when it
# does not come up. kill9_proxy_daemon then launch_proxy_daemon restart it
# after a SIGKILL on the same state.
start_proxy_daemon() {
  local bin=$RMQ_BIN plugins=$1 topics=$2
  trap proxy_daemon_cleanup EXIT
  trap 'exit 143' TERM INT
  client_daemon_dir=$(mktemp -d "${TMPDIR:-/tmp}/rmq-proxy-test.XXXXXX")
  local ns
  ns=$(free_port)
  write_all_in_one_conf "$client_daemon_dir" "$plugins" "$ns" 2 \
    "mappedFileSizeCommitLog = 16777216; transactionCheckInterval = 1000; transactionTimeOut = 1000;" \
    "topics = \"$topics\";"
  local cert=$client_daemon_dir/proxy-cert.pem key=$client_daemon_dir/proxy-key.pem
  if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -subj /CN=rmqhost-proxy-test -addext subjectAltName=IP:127.0.0.1 -keyout "$key" -out "$cert" >/dev/null 2>&1; then
    echo "openssl could not make the proxy's test certificate" >&2
    return 1
  fi
  cat >"$client_daemon_dir/conf.d/host.conf" <<CONF
state_dir = "$client_daemon_dir/state";
io_threads = 2;
log_level = "warn";
servers = { namesrv = { listen = "127.0.0.1:$ns"; };
            broker = { listen = "127.0.0.1:0"; };
            proxy = { listen = "127.0.0.1:0"; protocol = "grpc";
                      tls = { mode = "permissive"; cert_file = "$cert"; key_file = "$key"; }; }; };
CONF
  cat >"$client_daemon_dir/conf.d/50-proxy.conf" <<CONF
plugin = { name = "proxy"; path = "$plugins/proxy.so"; server = "proxy";
           # the clients here poll with 1 s awaits; Java's 5 s minimum (the
           # default) answers those ILLEGAL_POLLING_TIME, as Java's proxy does
           settings = { ${PROXY_SETTINGS:-minLongPollingTimeoutMs = 500;} }; };
CONF
  if declare -F proxy_daemon_prepare >/dev/null; then
    proxy_daemon_prepare "$client_daemon_dir"
  fi
  ns_addr="127.0.0.1:$ns"
  launch_proxy_daemon
}

# acl_guards_broker DIR: the acl plugin (acl.so) on DIR's broker server,
# reading DIR/plain_acl.yml (the caller's proxy_daemon_prepare wrote it;
# made private here, as the acl plugin wants its secrets file).
acl_guards_broker() {
  local dir=$1
  chmod 600 "$dir/plain_acl.yml"
  cat >"$dir/conf.d/60-acl.conf" <<CONF
plugin = { name = "acl-broker"; path = "$plugins/acl.so"; server = "broker"; optional = false;
           settings = { role = "broker"; aclFile = "$dir/plain_acl.yml"; }; };
CONF
}

# launch_proxy_daemon: starts rmqhostd on the conf.d start_proxy_daemon wrote
# (appending to its log) and waits for its listen.addrs; sets
# client_daemon_pid and proxy_addr.
launch_proxy_daemon() {
  local bin=$RMQ_BIN
  local addrs=$client_daemon_dir/state/listen.addrs
  rm -f "$addrs"
  "$bin/rmq_tied" "$bin/rmqhostd" -c "$client_daemon_dir/conf.d" \
    >>"$client_daemon_dir/daemon.log" 2>&1 &
  client_daemon_pid=$!
  for _ in $(seq 1 100); do
    [[ -f $addrs ]] && break
    kill -0 "$client_daemon_pid" 2>/dev/null || break
    sleep 0.1
  done
  proxy_addr=$(awk '$1 == "proxy" {print $2}' "$addrs" 2>/dev/null || true)
  if [[ -z $proxy_addr ]]; then
    echo "rmqhostd did not start with its proxy server; its log:" >&2
    cat "$client_daemon_dir/daemon.log" >&2
    return 1
  fi
}

# kill9_proxy_daemon: SIGKILL, no clean stop; launch_proxy_daemon brings it
# back on the same state (the proxy gets a new ephemeral port).
kill9_proxy_daemon() {
  kill -KILL "$client_daemon_pid" 2>/dev/null || true
  wait "$client_daemon_pid" 2>/dev/null || true
  client_daemon_pid=""
}
