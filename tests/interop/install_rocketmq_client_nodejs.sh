#!/bin/sh
# Installs rocketmq-client-nodejs (Apache RocketMQ's 5.x Node.js client,
# gRPC, npm) into DIR/node_modules for the gRPC tests; it brings
# @grpc/grpc-js, which the grpc_echo test drives directly. A folder under the
# build dir; never global, never committed. Idempotent. Fails, saying what
# it could not get, when npm or the registry is unreachable.
set -eu
dir=${1:?usage: install_rocketmq_client_nodejs.sh DIR}
version=1.0.8
mkdir -p "$dir"
if [ -f "$dir/node_modules/rocketmq-client-nodejs/package.json" ] &&
   grep -q "\"version\": \"$version\"" "$dir/node_modules/rocketmq-client-nodejs/package.json" &&
   [ -f "$dir/node_modules/@grpc/grpc-js/package.json" ]; then
  exit 0
fi
command -v npm >/dev/null 2>&1 || {
  echo "cannot get rocketmq-client-nodejs@$version: npm missing (apt-get install nodejs npm)" >&2
  exit 1
}
cd "$dir"
[ -f package.json ] || echo '{"name":"rmqhost-grpc-interop","private":true}' > package.json
if ! npm install --no-audit --no-fund --no-save "rocketmq-client-nodejs@$version"; then
  echo "cannot get rocketmq-client-nodejs@$version from the npm registry (see npm's output above)" >&2
  exit 1
fi
