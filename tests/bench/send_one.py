#!/usr/bin/env python3
"""One SEND_MESSAGE_V2 (310, JSON header) of 100 bytes to TOPIC queue QID at
HOST:PORT; prints the answer's code and exits 0 when it is SEND_OK (0).
Used by restart_scale.sh to time the first answer after a restart."""
import json
import socket
import struct
import sys
import time

host, port = sys.argv[1].rsplit(":", 1)
topic = sys.argv[2]
qid = sys.argv[3] if len(sys.argv) > 3 else "0"
body = b"x" * 100
hdr = json.dumps({"code": 310, "language": "JAVA", "version": 395, "opaque": 1, "flag": 0,
                  "extFields": {"a": "RestartBench", "b": topic, "c": "TBW102", "d": "4",
                                "e": qid, "f": "0", "g": str(int(time.time() * 1000)),
                                "h": "0", "i": "", "j": "0", "k": "false", "m": "false"}}
                 ).encode()
frame = struct.pack(">II", 4 + len(hdr) + len(body), len(hdr)) + hdr + body
s = socket.create_connection((host, int(port)), timeout=30)
s.sendall(frame)


def read(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise SystemExit("connection closed")
        b += c
    return b


total = struct.unpack(">I", read(4))[0]
rest = read(total)
hl = struct.unpack(">I", rest[:4])[0] & 0xFFFFFF
code = json.loads(rest[4:4 + hl])["code"]
print(code)
sys.exit(0 if code == 0 else 1)
