#!/usr/bin/env bash
# run_acl_java.sh BIN_DIR PLUGIN_DIR PEERS_DIR — RocketMQ 5.x's Java client
# (rocketmq-client-java, the jar set grpc-client-java-5 that the fixture
# interop_fetch_java_peers gets from Maven Central) with credentials against
# the proxy plugin of an all-in-one rmqhostd whose broker server is guarded
# by the acl plugin (the plain_acl.yml written here: javaAclUser may PUB|SUB
# JavaAclTopic and SUB its groups; javaNoSub may PUB|SUB the topic but its
# groups nothing). AclInterop5 runs twice on one daemon: over plaintext and
# over TLS (the proxy's TLS is permissive; the client's enableSsl trusts any
# certificate). The daemon and the JVMs are stopped whatever they say.
set -euo pipefail
RMQ_BIN=${1:?usage: run_acl_java.sh BIN_DIR PLUGIN_DIR PEERS_DIR}
plugins=${2:?plugin dir}
peers=${3:?java peers dir}
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -f $peers/grpc-client-java-5/.fetched ]]; then
  echo "proxy java ACL interop: no rocketmq-client-java jars in $peers/grpc-client-java-5: the" \
       "fixture interop_fetch_java_peers did not get them from Maven Central" >&2
  exit 1
fi
for tool in java javac; do
  command -v "$tool" >/dev/null || { echo "proxy java ACL interop: '$tool' is missing" >&2; exit 1; }
done
proxy_daemon_prepare() {
  local dir=$1
  cat >"$dir/plain_acl.yml" <<'YML'
accounts:
- accessKey: javaAclUser
  secretKey: javaAclSecret123
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - JavaAclTopic=PUB|SUB
- accessKey: javaNoSub
  secretKey: javaNoSubSecret1
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: DENY
  topicPerms:
  - JavaAclTopic=PUB|SUB
YML
  acl_guards_broker "$dir"
}
# shellcheck source=../proxy_daemon.sh
source "$here/../proxy_daemon.sh"
# the client's SimpleConsumer awaits 5 s: Java's default minimum polling time
export PROXY_SETTINGS="minLongPollingTimeoutMs = 5000;"
start_proxy_daemon "$plugins" "JavaAclTopic:4"
export HOME=$client_daemon_dir RMQ_JAVA_HOME_DIR=$client_daemon_dir/java-home
mkdir -p "$client_daemon_dir/classes"
javac -nowarn -encoding UTF-8 --release 11 -cp "$peers/grpc-client-java-5/*" \
  -d "$client_daemon_dir/classes" "$here/AclInterop5.java"
for mode in plain tls; do
  echo "--- over $mode"
  run_tied 240 sh "$here/../../java/java_peer.sh" "$peers" "grpc-client-java-5:$client_daemon_dir/classes" \
    AclInterop5 "$proxy_addr" "$mode" javaAclUser javaAclSecret123 JavaAclTopic "JavaAclGroup_$mode" \
    javaNoSub javaNoSubSecret1 5
done
