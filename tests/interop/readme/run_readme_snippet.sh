#!/usr/bin/env bash
# run_readme_snippet.sh LANG README BIN_DIR PLUGIN_DIR CLIENT_DIR WORK_DIR
# Runs the README's client snippet for LANG (java | go | js) — the fenced
# block right after the line `<!-- snippet: LANG -->` — against an all-in-one
# rmqhostd of its own, and expects it to exit 0 having printed
# `received hello` (the body it sent). The snippet is run as written except
# for its NameServer address, 127.0.0.1:9876, replaced by the daemon's.
# CLIENT_DIR is where the client was fetched: the Java peers (java), the Go
# interop module (go), the ali-ons install (js).
set -euo pipefail
lang=${1:?usage: run_readme_snippet.sh LANG README BIN_DIR PLUGIN_DIR CLIENT_DIR WORK_DIR}
readme=${2:?README}
RMQ_BIN=${3:?bin dir}
plugins=${4:?plugin dir}
client=${5:?client dir}
work=${6:?work dir}
here=$(cd "$(dirname "$0")" && pwd)
expect="received hello"

snippet=$(awk -v marker="<!-- snippet: $lang -->" '
  $0 == marker { armed = 1; next }
  armed && !inside && /^```/ { inside = 1; next }
  inside && /^```/ { exit }
  inside { print }' "$readme")
if [[ -z $snippet ]]; then
  echo "readme snippet: $readme has no code block after '<!-- snippet: $lang -->'" >&2
  exit 1
fi
if [[ $snippet != *127.0.0.1:9876* ]]; then
  echo "readme snippet: the $lang snippet does not name 127.0.0.1:9876 (make run's NameServer)" >&2
  exit 1
fi

# shellcheck source=../client_daemon.sh
source "$here/../client_daemon.sh"
rm -rf "$work"
mkdir -p "$work"
daemon_args=()
# ali-ons does not create topics on first send: declared as README says
[[ $lang == js ]] && daemon_args=(-o plugins.broker-client-mgr.settings.topics=DemoTopic:4)
start_client_daemon "$plugins" "${daemon_args[@]}"
snippet=${snippet//127.0.0.1:9876/$ns_addr}

case $lang in
  java)
    set_dir=$client/client-4.9.8
    if [[ ! -d $set_dir ]]; then
      echo "readme snippet: no Java client jars in $set_dir: the fixture interop_fetch_java_peers" \
           "did not get rocketmq-client 4.9.8" >&2
      exit 1
    fi
    printf '%s\n' "$snippet" >"$work/Demo.java"
    javac -cp "$set_dir/*" -d "$work/classes" "$work/Demo.java"
    cmd=(sh "$here/../java/java_peer.sh" "$client" "client-4.9.8:$work/classes" Demo)
    ;;
  go)
    # shellcheck source=../go/go_env.sh
    source "$here/../go/go_env.sh"
    if [[ ! -f $client/mod/go.mod ]]; then
      echo "readme snippet: no Go module in $client/mod: the fixture interop_fetch_go_client" \
           "did not get rocketmq-client-go/v2" >&2
      exit 1
    fi
    rm -rf "$client/mod/readme_snippet"
    mkdir -p "$client/mod/readme_snippet"
    printf '%s\n' "$snippet" >"$client/mod/readme_snippet/main.go"
    (cd "$client/mod" && go build -o "$work/demo" ./readme_snippet)
    cmd=("$work/demo")
    ;;
  js)
    if [[ ! -d $client/node_modules/ali-ons ]]; then
      echo "readme snippet: no ali-ons in $client/node_modules: the fixture interop_install_ali_ons" \
           "did not get it from npm" >&2
      exit 1
    fi
    printf '%s\n' "$snippet" >"$work/demo.js"
    export NODE_PATH=$client/node_modules
    cmd=(node "$work/demo.js")
    ;;
  *)
    echo "readme snippet: unknown language '$lang'" >&2
    exit 2
    ;;
esac

status=0
run_tied 180 "${cmd[@]}" >"$work/output.log" 2>&1 || status=$?
# the clients' own logging is noise unless the snippet failed
grep -v '^time=' "$work/output.log" | tail -n 40 || true
if [[ $status -ne 0 ]]; then
  echo "readme snippet: the $lang snippet exited with status $status" >&2
  exit 1
fi
if ! grep -qx "$expect" "$work/output.log"; then
  echo "readme snippet: the $lang snippet did not print '$expect'" >&2
  exit 1
fi
echo "readme snippet: the $lang snippet sent and received through rmqhostd"
