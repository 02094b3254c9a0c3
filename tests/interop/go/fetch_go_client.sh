#!/usr/bin/env bash
# fetch_go_client.sh SRC_DIR OUT_DIR — the fixture of the Go interop tests:
# copies the pinned module (SRC_DIR: go.mod, go.sum, interop/) to OUT_DIR/mod,
# downloads github.com/apache/rocketmq-client-go/v2 and its dependencies from
# the Go module proxy into the module cache, and builds OUT_DIR/bin/go_interop.
# The README's Go snippet is later built in the same module. A client that
# cannot be fetched fails here, saying what it could not get.
set -euo pipefail
src=${1:?usage: fetch_go_client.sh SRC_DIR OUT_DIR}
out=${2:?usage: fetch_go_client.sh SRC_DIR OUT_DIR}
# shellcheck source=go_env.sh
source "$(dirname "$0")/go_env.sh"
client=$(awk '$1 == "require" && $2 ~ /rocketmq-client-go/ {print $2 "@" $3}' "$src/go.mod")
mkdir -p "$out/mod" "$out/bin"
cp "$src/go.mod" "$src/go.sum" "$out/mod/"
rm -rf "$out/mod/interop"
cp -r "$src/interop" "$out/mod/interop"
cd "$out/mod"
echo "go interop: $(go version), module cache $(go env GOMODCACHE), proxy $(go env GOPROXY)"
if ! go mod download >"$out/download.log" 2>&1; then
  echo "go interop: could not get $client (or a module it needs) from the Go module proxy" \
       "$(go env GOPROXY); go said:" >&2
  tail -n 20 "$out/download.log" >&2
  exit 1
fi
go build -o "$out/bin/go_interop" ./interop
echo "go interop: built $out/bin/go_interop against $client"
