#!/usr/bin/env bash
# The all-in-one daemon (namesrv + broker-client-mgr + filter + store, the
# shipped default's roles) under valgrind: start, a route lookup, a send, a
# pull of what was sent, SIGTERM: no definite or indirect leak, no memory
# error, exit 0. Small commit-log segments keep valgrind fast. With
# "secure", the broker server also speaks TLS (permissive, test-mode
# certificate) and the acl plugin guards it: the calls go over TLS, signed;
# the store then runs SYNC_FLUSH (staged writes, the completer thread).
# usage: all_in_one_valgrind.sh RMQHOSTD PLUGIN_DIR [secure]
set -euo pipefail
daemon=$1 plugins=$2 secure=${3:-}
command -v valgrind >/dev/null || { echo "valgrind not installed: skipped"; exit 77; }
dir=$(mktemp -d /tmp/rmqvg-aio.XXXXXX)
pid=
cleanup() { [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
# shellcheck source=../../support/all_in_one_conf.sh
. "$(dirname "$0")/../../support/all_in_one_conf.sh"
ns=$(free_port)
tls=
flush=ASYNC_FLUSH
if [[ -n $secure ]]; then
  tls='tls = { mode = "permissive"; test_mode = true; };'
  flush=SYNC_FLUSH # the group-commit path too: staged writes, completer thread
fi
write_all_in_one_conf "$dir" "$plugins" "$ns" 2 \
  "mappedFileSizeCommitLog = 1048576; mappedFileSizeConsumeQueue = 12000; flushDiskType = \"$flush\";" \
  'topics = "VgTopic:2";' "$tls"
if [[ -n $secure ]]; then
  mkdir -p "$dir/state"
  cat >"$dir/state/plain_acl.yml" <<YML
accounts:
- accessKey: vgappuser
  secretKey: vg-secret-1
  defaultTopicPerm: DENY
  defaultGroupPerm: DENY
  topicPerms: [VgTopic=PUB|SUB]
  groupPerms: [vg_cg=SUB]
- accessKey: vgbrokeradmin
  secretKey: vg-secret-2
  admin: true
YML
  chmod 600 "$dir/state/plain_acl.yml"
  cat >"$dir/conf.d/50-acl.conf" <<CONF
plugin = { name = "acl-broker"; path = "$plugins/acl.so"; server = "broker";
  settings = { role = "broker"; aclFile = "plain_acl.yml"; }; };
CONF
fi
# rmq_tied (beside rmqhostd): the daemon dies with this script even when a
# SIGKILL or a ctest timeout leaves the EXIT trap no chance to run
"$(dirname "$daemon")/rmq_tied" valgrind --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
  "$daemon" -c "$dir/conf.d" >"$dir/vg.log" 2>&1 &
pid=$!
for _ in $(seq 1 900); do
  [[ -f $dir/state/listen.addrs ]] && break
  kill -0 "$pid" 2>/dev/null || break # it failed to start: say so now
  sleep 0.1
done
[[ -f $dir/state/listen.addrs ]] || { cat "$dir/vg.log"; echo "daemon did not start"; exit 1; }
broker=$(awk '$1=="broker"{n=split($2,a,":"); print a[n]}' "$dir/state/listen.addrs")
python3 - "$ns" "$broker" "$secure" <<'PY'
import base64, hashlib, hmac, json, socket, ssl, struct, sys, time

secure = sys.argv[3] == "secure"

def sign(ext, body):
    # Java's AclClientRPCHook: HMAC-SHA1 over the sorted fields' values + body
    ext = dict(ext, AccessKey="vgappuser")
    content = "".join(ext[k] for k in sorted(ext)).encode() + body
    mac = hmac.new(b"vg-secret-1", content, hashlib.sha1).digest()
    return dict(ext, Signature=base64.b64encode(mac).decode())

def call(port, code, ext, body=b"", broker=False):
    if broker and secure:
        ext = sign(ext, body)
    h = json.dumps({"code": code, "opaque": 1, "flag": 0, "language": "JAVA", "version": 395,
                    "extFields": ext}).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    if broker and secure:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s)
    s.sendall(struct.pack(">II", 4 + len(h) + len(body), len(h)) + h + body)
    buf = b""
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
        chunk = s.recv(65536)
        assert chunk, "connection closed before the answer"
        buf += chunk
    s.close()
    hlen = struct.unpack(">I", buf[4:8])[0] & 0xFFFFFF
    return json.loads(buf[8:8 + hlen]), buf[8 + hlen:]

ns, broker = int(sys.argv[1]), int(sys.argv[2])
deadline = time.time() + 120  # the broker's first registration under valgrind
while True:
    head, _ = call(ns, 105, {"topic": "VgTopic"})
    if head["code"] == 0 or time.time() > deadline:
        break
    time.sleep(0.5)
assert head["code"] == 0, head
now = str(int(time.time() * 1000))
head, _ = call(broker, 10, {"producerGroup": "vg_pg", "topic": "VgTopic", "defaultTopic": "TBW102",
                            "defaultTopicQueueNums": "4", "queueId": "0", "sysFlag": "0",
                            "bornTimestamp": now, "flag": "0", "properties": "KEYS\x01vgkey\x02",
                            "reconsumeTimes": "0", "unitMode": "false", "batch": "false"},
               b"valgrind body", broker=True)
assert head["code"] == 0, head
# sysFlag 4 (FLAG_SUBSCRIPTION): the pull carries its subscription, no heartbeat needed
head, body = call(broker, 11, {"consumerGroup": "vg_cg", "topic": "VgTopic", "queueId": "0",
                               "queueOffset": "0", "maxMsgNums": "32", "sysFlag": "4",
                               "commitOffset": "0", "suspendTimeoutMillis": "0",
                               "subscription": "*", "subVersion": "0", "expressionType": "TAG"},
                  broker=True)
assert head["code"] == 0, head
assert b"valgrind body" in body, body
if secure:  # an unsigned call is refused by the acl plugin
    head, _ = call(broker, 30, {"topic": "VgTopic", "queueId": "0"})
    assert head["code"] != 0, head
print("route, send and pull answered" + (" over TLS, signed" if secure else ""))
PY
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
grep -E "ERROR SUMMARY|definitely lost|indirectly lost|no leaks are possible" "$dir/vg.log" || true
if [[ $status -ne 0 ]]; then cat "$dir/vg.log"; echo "exit status $status"; exit 1; fi
grep -q "ERROR SUMMARY: 0 errors" "$dir/vg.log" || { cat "$dir/vg.log"; exit 1; }
echo "valgrind: clean all-in-one start/stop"
