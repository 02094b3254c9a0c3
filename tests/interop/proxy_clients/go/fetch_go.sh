#!/usr/bin/env bash
# fetch_go.sh SRC_DIR OUT_DIR — the fixture of proxy_interop_go: copies the
# pinned module (SRC_DIR: go.mod, go.sum, interop/) to OUT_DIR/mod, downloads
# github.com/apache/rocketmq-clients/golang/v5 and its dependencies from the
# Go module proxy into the module cache, and builds
# OUT_DIR/bin/proxy_go_interop. A client that cannot be fetched fails here,
# saying what it could not get.
set -euo pipefail
src=${1:?usage: fetch_go.sh SRC_DIR OUT_DIR}
out=${2:?usage: fetch_go.sh SRC_DIR OUT_DIR}
# shellcheck source=../../go/go_env.sh
source "$(dirname "$0")/../../go/go_env.sh"
client=$(awk '$1 ~ /rocketmq-clients\/golang/ {print $1 "@" $2; exit}' "$src/go.mod")
mkdir -p "$out/mod" "$out/bin"
cp "$src/go.mod" "$src/go.sum" "$out/mod/"
rm -rf "$out/mod/interop" "$out/mod/aclinterop"
cp -r "$src/interop" "$out/mod/interop"
cp -r "$src/aclinterop" "$out/mod/aclinterop"
cd "$out/mod"
echo "proxy go interop: $(go version), module cache $(go env GOMODCACHE), proxy $(go env GOPROXY)"
if ! go mod download >"$out/download.log" 2>&1; then
  echo "proxy go interop: could not get $client (or a module it needs) from the Go module" \
       "proxy $(go env GOPROXY); go said:" >&2
  tail -n 20 "$out/download.log" >&2
  exit 1
fi
go build -o "$out/bin/proxy_go_interop" ./interop
go build -o "$out/bin/proxy_go_acl_interop" ./aclinterop
echo "proxy go interop: built $out/bin/proxy_go_interop against $client"
