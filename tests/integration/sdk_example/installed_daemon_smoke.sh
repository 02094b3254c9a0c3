#!/usr/bin/env bash
# installed_daemon_smoke.sh PREFIX — the installed rmqhostd runs from the
# installed conf.d with no edits: plugins resolve under PREFIX, it becomes
# healthy, and SIGTERM stops it with status 0. Only the listen ports are
# overridden (to ephemeral ones) so the test never takes a fixed port.
set -euo pipefail
P=$1
conf="$P/etc/rmqhost/conf.d"
log="$P/installed-daemon.log"

# Every server declared in the installed host.conf gets port 0.
overrides=()
for s in $(sed -n '/^servers *= *{/,/^};/s/^ *\([A-Za-z0-9_-]*\) *= *{.*listen.*/\1/p' \
           "$conf/host.conf"); do
    overrides+=(-o "servers.$s.listen=127.0.0.1:0")
done
# ... and every VIP listener (the broker's 10909 since the all-in-one default)
if grep -q 'vip_listen' "$conf/host.conf"; then
    for s in $(awk '/^servers *= *{/,/^};/' "$conf/host.conf" | tr '\n' ' ' | sed 's/};/};\n/g' |
               sed -n 's/^ *\([A-Za-z0-9_-]*\) *= *{.*vip_listen.*/\1/p'); do
        overrides+=(-o "servers.$s.vip_listen=127.0.0.1:0")
    done
fi

# RMQ_TIED (the build's rmq_tied, set by ctest): the daemon dies with this
# script even when it is killed before its EXIT trap can stop it
${RMQ_TIED:+"$RMQ_TIED"} "$P/bin/rmqhostd" -c "$conf" "${overrides[@]}" >"$log" 2>&1 &
pid=$!
stop() { kill -TERM "$pid" 2>/dev/null || true; }
trap stop EXIT

healthy=0
for _ in $(seq 100); do   # up to ~10 s, polled
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    if "$P/bin/rmqhostctl" -c "$conf" health >/dev/null 2>&1; then healthy=1; break; fi
    sleep 0.1
done
"$P/bin/rmqhostctl" -c "$conf" list || true
trap - EXIT
kill -TERM "$pid" 2>/dev/null || true
status=0
wait "$pid" || status=$?
if [ "$healthy" != 1 ] || [ "$status" != 0 ]; then
    echo "installed daemon: healthy=$healthy exit=$status; its log:"
    cat "$log"
    exit 1
fi
echo "installed daemon: healthy, stopped with status 0"
