#!/usr/bin/env bash
# Route lookups (GET_ROUTEINFO_BY_TOPIC against the namesrv plugin) over TLS
# and in plaintext on one permissive server of one rmqhostd, in alternation
# in the same session, 4x32 and 1x1; prints the median of N runs per
# scenario and the TLS/plaintext ratio. The figures issue #10 asks for. Not a
# test.
#
# usage: tests/bench/tls_vs_plaintext.sh [BUILD_DIR] [RUNS] [SECONDS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${2:-3}
secs=${3:-4}
bin=$build/bin
plugins=$build/plugins
dir=$(mktemp -d /tmp/rmqtlsbench.XXXXXX)
dpid=""
cleanup() { [ -n "$dpid" ] && kill "$dpid" 2>/dev/null; cat "$dir/daemon.log" >&2 || true; rm -rf "$dir"; }
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" \
  -days 1 -subj /CN=rmqbench >/dev/null 2>&1
# io_threads 1: on a 2-core machine shared with the load generator a second
# loop only competes with the client (docs/benchmarks.md).
mkdir -p "$dir/conf.d"
cat >"$dir/conf.d/host.conf" <<CONF
state_dir = "$dir/state";
io_threads = 1;
log_level = "warn";
servers = { namesrv = { listen = "127.0.0.1:0";
  tls = { mode = "permissive"; cert_file = "$dir/cert.pem"; key_file = "$dir/key.pem"; }; }; };
CONF
cat >"$dir/conf.d/10-namesrv.conf" <<CONF
plugin = { name = "namesrv"; path = "$plugins/namesrv.so"; server = "namesrv"; };
CONF
"$bin/rmqhostd" -c "$dir/conf.d" >"$dir/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do [ -s "$dir/state/listen.addrs" ] && break; sleep 0.1; done
port=$(awk '$1=="namesrv"{split($2,a,":"); print a[2]}' "$dir/state/listen.addrs")

rate() { "$bin/rmqbench" -a "127.0.0.1:$port" -s "$secs" -w 1 "$@" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_per_sec"])'; }
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

for shape in "-c 4 -d 32" "-c 1 -d 1"; do
  : >"$dir/plain" ; : >"$dir/tls"
  for _ in $(seq "$runs"); do
    rate $shape >>"$dir/plain"
    rate $shape --tls >>"$dir/tls"
  done
  p=$(median <"$dir/plain"); t=$(median <"$dir/tls")
  printf '%-10s plaintext %10.0f req/s   TLS %10.0f req/s   TLS/plaintext %5.1f %%\n' \
    "${shape// /}" "$p" "$t" "$(python3 -c "print(100*$t/$p)")"
done
