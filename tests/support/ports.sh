# shellcheck shell=bash
# ports.sh — loopback ports for the test and bench scripts (sourced through
# all_in_one_conf.sh, java_interop_lib.sh).
#
# A server that listens on port 0 and reports what it bound (rmqhostd's
# state_dir/listen.addrs) needs none of this. A port that must be known
# before its server starts (any Java server; an rmqhostd NameServer whose
# brokers start from the same conf) is chosen, then bound later by another
# process: in between the port is free for anyone. free_port asks the
# kernel, so its answer lies in the ephemeral range (ip_local_port_range),
# where every outgoing connection (a JVM's, mvn's, a client's) and every
# port-0 listener also gets its local port: one of them can take it before
# the server binds it (BindException, "Address already in use").
# port_block chooses below that range, where the kernel never hands out a
# port by itself; only another script choosing the same way can collide,
# one chance in ~20,000.

# free_port: a free port the kernel chooses (ephemeral range): for a server
# that binds it at once, or in tests whose daemons all bind at start.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# port_block OFFSET...: prints P such that P+OFFSET is free on 127.0.0.1
# for every OFFSET (e.g. -2 0 1: a Java broker's VIP, listen and HA ports),
# each of them below the kernel's ephemeral range.
port_block() {
  python3 - "$@" <<'PY'
import random, socket, sys
offsets = [int(a) for a in sys.argv[1:]] or [0]
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except OSError:
    low = 32768
lo, hi = 10000 - min(offsets + [0]), low - 1 - max(offsets + [0])
for _ in range(400):
    p = random.randrange(lo, max(lo + 1, hi))
    held = []
    try:
        for q in offsets:
            o = socket.socket(); o.bind(("127.0.0.1", p + q)); held.append(o)
    except OSError:
        continue
    finally:
        [o.close() for o in held]
    print(p); break
else:
    sys.exit("port_block: no free block of ports below %d" % low)
PY
}

# fixed_port: port_block 0, a free port for a server told its port before
# it starts.
fixed_port() { port_block 0; }
