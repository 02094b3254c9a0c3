#!/usr/bin/env bash
# run_acl_go.sh BIN_DIR PLUGIN_DIR GO_OUT_DIR — RocketMQ 5.x's Go client
# with credentials (aclinterop, built by fetch_go.sh) against the proxy
# plugin of an all-in-one rmqhostd whose broker server is guarded by the acl
# plugin (the plain_acl.yml written here: one account, PUB|SUB on
# GoAclTopic, SUB only on GoAclSubOnly, its groups SUB by default, no white
# address). aclinterop says what it checks; the daemon is stopped whatever
# it says.
set -euo pipefail
RMQ_BIN=${1:?usage: run_acl_go.sh BIN_DIR PLUGIN_DIR GO_OUT_DIR}
plugins=${2:?plugin dir}
out=${3:?go out dir}
prog=$out/bin/proxy_go_acl_interop
if [[ ! -x $prog ]]; then
  echo "proxy go ACL interop: no $prog: the fixture interop_fetch_go5_client did not get" \
       "github.com/apache/rocketmq-clients/golang/v5" >&2
  exit 1
fi
proxy_daemon_prepare() {
  local dir=$1
  cat >"$dir/plain_acl.yml" <<'YML'
accounts:
- accessKey: goAclUser
  secretKey: goAclSecret123
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - GoAclTopic=PUB|SUB
  - GoAclSubOnly=SUB
YML
  acl_guards_broker "$dir"
}
# shellcheck source=../proxy_daemon.sh
source "$(dirname "$0")/../proxy_daemon.sh"
start_proxy_daemon "$plugins" "GoAclTopic:4;GoAclSubOnly:4"
export HOME=$client_daemon_dir
run_tied 180 "$prog" -endpoint "$proxy_addr" -ak goAclUser -sk goAclSecret123 -topic GoAclTopic \
  -subonly GoAclSubOnly -group GoAclGroup -n 5 -logdir "$client_daemon_dir/client-logs"
