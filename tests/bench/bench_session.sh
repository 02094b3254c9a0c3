# shellcheck shell=bash
# bench_session.sh — what the NameServer benchmark scripts start with: the
# build's paths made absolute (conf.d plugin paths must be), a temp dir, the
# processes killed and the dir removed at exit, and the baseline server on a
# free port. Sourced, never run.
#
# bench_session BUILD_DIR NAME: sets build, bin, plugins, dir
# (/tmp/NAME.XXXXXX) and pids (append every process started), installs the
# EXIT trap, and starts the baseline server (its port in bport, its log in
# $dir/baseline.log). namesrv_daemon.sh's functions are available after.
_bench_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/namesrv_daemon.sh
source "$_bench_here/../support/namesrv_daemon.sh"

bench_session_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}

# shellcheck disable=SC2034 # bin, plugins and bport are for the caller
bench_session() {
  build=$(cd "$1" && pwd)
  bin=$build/bin
  plugins=$build/plugins
  dir=$(mktemp -d "/tmp/$2.XXXXXX")
  pids=()
  trap bench_session_cleanup EXIT
  bport=$(fixed_port)
  "$bin/baseline_server" -l "127.0.0.1:$bport" -t 1 >"$dir/baseline.log" 2>&1 &
  pids+=($!)
}
