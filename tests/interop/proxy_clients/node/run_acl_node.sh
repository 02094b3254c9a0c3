#!/usr/bin/env bash
# run_acl_node.sh BIN_DIR PLUGIN_DIR NODE NODE_MODULES — RocketMQ 5.x's
# Node.js client (rocketmq-client-nodejs, installed from npm by the fixture
# interop_install_rocketmq_client_nodejs) with credentials against the proxy
# plugin of an all-in-one rmqhostd whose broker server is guarded by the acl
# plugin (the plain_acl.yml written here: nodeAclUser may PUB|SUB
# NodeAclTopic and SUB its groups; nodeNoSub may PUB|SUB the topic but its
# groups nothing). acl_interop.js runs twice on one daemon: over plaintext
# and over TLS (the proxy's TLS is permissive; the client trusts the test
# certificate through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH). The daemon and the
# node processes are stopped whatever they say.
set -euo pipefail
RMQ_BIN=${1:?usage: run_acl_node.sh BIN_DIR PLUGIN_DIR NODE NODE_MODULES}
plugins=${2:?plugin dir}
node=${3:?node}
modules=${4:?node_modules dir}
if [[ ! -f $modules/rocketmq-client-nodejs/package.json ]]; then
  echo "proxy node ACL interop: no rocketmq-client-nodejs in $modules: the fixture" \
       "interop_install_rocketmq_client_nodejs did not get it from the npm registry" >&2
  exit 1
fi
proxy_daemon_prepare() {
  local dir=$1
  cat >"$dir/plain_acl.yml" <<'YML'
accounts:
- accessKey: nodeAclUser
  secretKey: nodeAclSecret123
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - NodeAclTopic=PUB|SUB
- accessKey: nodeNoSub
  secretKey: nodeNoSubSecret1
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: DENY
  topicPerms:
  - NodeAclTopic=PUB|SUB
YML
  acl_guards_broker "$dir"
}
# shellcheck source=../proxy_daemon.sh
source "$(dirname "$0")/../proxy_daemon.sh"
# the client's SimpleConsumer awaits 5 s: Java's default minimum polling time
export PROXY_SETTINGS="minLongPollingTimeoutMs = 5000;"
start_proxy_daemon "$plugins" "NodeAclTopic:4"
export HOME=$client_daemon_dir NODE_PATH=$modules
export GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=$client_daemon_dir/proxy-cert.pem
for mode in plain tls; do
  echo "--- over $mode"
  run_tied 180 "$node" "$(dirname "$0")/acl_interop.js" "$proxy_addr" "$mode" \
    nodeAclUser nodeAclSecret123 NodeAclTopic "NodeAclGroup_$mode" nodeNoSub nodeNoSubSecret1 5
done
