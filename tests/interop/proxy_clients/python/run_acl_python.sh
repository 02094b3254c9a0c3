#!/usr/bin/env bash
# run_acl_python.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR — RocketMQ 5.x's Python
# client with credentials against the proxy plugin of an all-in-one rmqhostd
# whose broker server is guarded by the acl plugin (a plain_acl.yml written
# here: one account, PUB|SUB on PyAclTopic, SUB only on PyAclSubOnly, PUB on
# PyAclNoSuchTopic which the broker lacks, its
# groups SUB by default, no white address). acl_interop.py says what it
# checks; the daemon is stopped whatever it says.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1
RMQ_BIN=${1:?usage: run_acl_python.sh BIN_DIR PLUGIN_DIR PY_OUT_DIR}
plugins=${2:?plugin dir}
out=${3:?python out dir}
py=$out/venv/bin/python
if [[ ! -x $py ]] || ! "$py" -c 'import rocketmq' 2>/dev/null; then
  echo "proxy python ACL interop: no rocketmq-python-client in $out/venv: the fixture" \
       "interop_install_python5_client did not get it from PyPI" >&2
  exit 1
fi
# the proxy's default minimum polling time (Java's 5 s): the raw short
# ReceiveMessage checks need a deadline under it
export PROXY_SETTINGS="minLongPollingTimeoutMs = 5000;"
proxy_daemon_prepare() {
  local dir=$1
  cat >"$dir/plain_acl.yml" <<'YML'
accounts:
- accessKey: pyAclUser
  secretKey: pyAclSecret123
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - PyAclTopic=PUB|SUB
  - PyAclSubOnly=SUB
  - PyAclNoSuchTopic=PUB
YML
  acl_guards_broker "$dir"
}
# shellcheck source=../proxy_daemon.sh
source "$(dirname "$0")/../proxy_daemon.sh"
start_proxy_daemon "$plugins" "PyAclTopic:4;PyAclSubOnly:4"
export HOME=$client_daemon_dir
run_tied 180 "$py" "$(dirname "$0")/acl_interop.py" "$proxy_addr" pyAclUser pyAclSecret123 \
  PyAclTopic PyAclSubOnly PyAclGroup 5
