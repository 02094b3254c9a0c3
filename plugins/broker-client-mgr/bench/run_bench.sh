#!/bin/sh
# Start a broker-only rmqhostd from BUILD (default ../../build), run
# bcm_heartbeat_bench for throughput (1,000 clients, 100 groups) and memory
# (10,000 clients), stop the daemon. Figures go to stdout.
set -eu
build=$(cd "${1:-build}" && pwd)
dir=$(mktemp -d /tmp/bcm-bench.XXXXXX)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/conf.d" "$dir/state"
cat > "$dir/conf.d/host.conf" <<EOC
state_dir = "$dir/state";
admin_socket = "$dir/state/admin.sock";
log_level = "warn";
servers = { broker = { listen = "127.0.0.1:0"; }; };
EOC
cat > "$dir/conf.d/50-bcm.conf" <<EOC
plugin = { name = "broker-client-mgr"; path = "$build/plugins/broker-client-mgr.so";
  server = "broker"; enabled = true;
  settings = { brokerName = "bench"; namesrvAddr = ""; }; };
EOC
"$build/bin/rmqhostd" -c "$dir/conf.d" 2> "$dir/daemon.log" &
pid=$!
i=0
while [ ! -s "$dir/state/listen.addrs" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(sed -n 's/^broker[ =]*[^:]*:\([0-9]*\).*/\1/p' "$dir/state/listen.addrs" | head -1)
[ -n "$port" ] || { cat "$dir/state/listen.addrs" "$dir/daemon.log"; exit 1; }
"$build/bin/bcm_heartbeat_bench" -P "$port" -c 1000 -g 100 -d 10 -p $pid
"$build/bin/bcm_heartbeat_bench" -P "$port" -c 10000 -g 100 -d 0 -p $pid
