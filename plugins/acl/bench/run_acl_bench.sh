#!/bin/sh
# run_acl_bench.sh BUILD_DIR [SECONDS [ROUNDS]] — route lookups (GET_ROUTEINFO_BY_TOPIC)
# against one rmqhostd running namesrv + broker-client-mgr (registering
# TopicTest) + acl-namesrv: signed requests through the ACL plugin, then the
# signed frame and the unsigned request with the plugin disabled (rmqhostctl
# disable), for 4x32 and 1x1, ROUNDS times alternating (default 1). Prints
# rmqbench's lines and the daemon's CPU per answer; figures go to
# docs/benchmarks.md.
set -eu
build=${1:?usage: run_acl_bench.sh BUILD_DIR [SECONDS [ROUNDS]]}
secs=${2:-5}
rounds=${3:-1}
build=$(cd "$build" && pwd)
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/conf.d" "$tmp/state"
ns_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$tmp/plain_acl.yml" <<YML
accounts:
- accessKey: benchreader
  secretKey: benchsecret
  admin: false
- accessKey: brokeradmin
  secretKey: brokersecret
  admin: true
YML
chmod 600 "$tmp/plain_acl.yml"
cat > "$tmp/conf.d/host.conf" <<CONF
state_dir = "$tmp/state";
admin_socket = "rmqhost.sock";
log_level = "warn";
servers = {
  namesrv = { listen = "127.0.0.1:$ns_port"; };
  broker = { listen = "127.0.0.1:0"; };
};
CONF
cat > "$tmp/conf.d/10-namesrv.conf" <<CONF
plugin = { name = "namesrv"; path = "$build/plugins/namesrv.so"; server = "namesrv"; enabled = true; };
CONF
cat > "$tmp/conf.d/20-broker.conf" <<CONF
plugin = { name = "broker-client-mgr"; path = "$build/plugins/broker-client-mgr.so"; server = "broker";
  enabled = true; settings = { namesrvAddr = "127.0.0.1:$ns_port"; brokerName = "bench";
  topics = "TopicTest:4"; accessKey = "brokeradmin"; secretKey = "brokersecret"; }; };
CONF
cat > "$tmp/conf.d/30-acl.conf" <<CONF
plugin = { name = "acl-namesrv"; path = "$build/plugins/acl.so"; server = "namesrv"; enabled = true;
  settings = { role = "namesrv"; aclFile = "$tmp/plain_acl.yml"; }; };
CONF
"$build/bin/rmqhostd" -c "$tmp/conf.d" 2> "$tmp/log" &
pid=$!
ctl() { "$build/bin/rmqhostctl" -s "$tmp/state/rmqhost.sock" "$@"; }
# The daemon's CPU time (user+system, clock ticks) — on a shared machine the
# CPU cost per request is steadier than requests/s.
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
tck=$(getconf CLK_TCK)
# run LABEL ARGS...: rmqbench's report plus the daemon's CPU per answer
run() {
  label=$1; shift
  echo "== $label"
  c0=$(cpu)
  "$build/bin/rmqbench" -a 127.0.0.1:$ns_port -s "$secs" -w 0 "$@" > "$tmp/out"
  c1=$(cpu)
  cat "$tmp/out"
  n=$(awk '/^requests:/ {print $4}' "$tmp/out")
  awk -v c=$((c1 - c0)) -v t="$tck" -v n="$n" \
    'BEGIN { if (n > 0) printf "daemon CPU per answer: %.2f us\n", c / t * 1e6 / n }'
}
sig=$(python3 -c 'import hmac,hashlib,base64; print(base64.b64encode(hmac.new(b"benchsecret", b"benchreaderTopicTest", hashlib.sha1).digest()).decode())')
signed="-e topic=TopicTest -e AccessKey=benchreader -e Signature=$sig"
# wait for the broker's signed registration (the route exists)
i=0
until "$build/bin/rmqbench" -a 127.0.0.1:$ns_port -c 1 -d 1 -w 0 -s 0.2 $signed --json 2>/dev/null |
      grep -q '"errors":0' || [ $i -ge 100 ]; do sleep 0.1; i=$((i+1)); done
r=0
while [ $r -lt "$rounds" ]; do
  r=$((r+1))
  for shape in "-c 4 -d 32" "-c 1 -d 1"; do
    run "round $r: signed, through acl-namesrv ($shape)" $shape $signed
    ctl disable acl-namesrv > /dev/null
    # the same signed frame unchecked: what the plugin costs, apart from
    # the two extra header fields every signed request carries
    run "round $r: signed frame, acl-namesrv disabled ($shape)" $shape $signed
    run "round $r: unsigned, acl-namesrv disabled ($shape)" $shape -e topic=TopicTest
    ctl enable acl-namesrv > /dev/null
  done
done
ctl acl-namesrv-stats
