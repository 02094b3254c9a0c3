#!/bin/sh
# Shared by every interop test: install ali-ons@3.12.0 into DIR/node_modules
# (a folder under the build dir; never global, never committed). Idempotent:
# a present install of that version is kept, so only the first test pays.
set -eu
dir=${1:?usage: install_ali_ons.sh DIR}
mkdir -p "$dir"
if [ -f "$dir/node_modules/ali-ons/package.json" ] &&
   grep -q '"version": "3.12.0"' "$dir/node_modules/ali-ons/package.json"; then
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "npm missing (apt-get install nodejs npm)" >&2; exit 1; }
cd "$dir"
[ -f package.json ] || echo '{"name":"rmqhost-interop","private":true}' > package.json
npm install --no-audit --no-fund --no-save ali-ons@3.12.0
