#!/usr/bin/env python3
"""Benchmark fixture: register a fake broker holding one topic with a
NameServer and keep that connection open, re-registering every 30 s as a
real broker does. A NameServer drops a broker when its registering
connection closes (protocol.md §4.7.3), so a one-shot REGISTER_BROKER would
leave nothing to route. Runs until killed; not a test."""
import argparse
import json
import socket
import struct
import sys
import time


def frame(opaque, ext, body):
    header = json.dumps(
        {"code": 103, "extFields": ext, "flag": 0, "language": "JAVA", "opaque": opaque,
         "serializeTypeCurrentRPC": "JSON", "version": 409},
        separators=(",", ":")).encode()
    return struct.pack(">II", 4 + len(header) + len(body), len(header)) + header + body


def read_frame(sock):
    def exact(n):
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("namesrv closed the connection")
            buf += chunk
        return buf
    length, word = struct.unpack(">II", exact(8))
    rest = exact(length - 4)
    return json.loads(rest[: word & 0xFFFFFF])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-a", default="127.0.0.1:9876", help="NameServer host:port")
    ap.add_argument("--topic", default="TopicTest")
    ap.add_argument("--queues", type=int, default=4)
    ap.add_argument("--period", type=float, default=30.0)
    args = ap.parse_args()
    host, port = args.a.rsplit(":", 1)
    topic = {"order": False, "perm": 6, "readQueueNums": args.queues,
             "topicFilterType": "SINGLE_TAG", "topicName": args.topic, "topicSysFlag": 0,
             "writeQueueNums": args.queues}
    body = json.dumps({"filterServerList": [], "topicConfigSerializeWrapper": {
        "dataVersion": {"counter": 1, "timestamp": int(time.time() * 1000)},
        "topicConfigTable": {args.topic: topic}}}, separators=(",", ":")).encode()
    ext = {"brokerName": "broker-a", "brokerAddr": "127.0.0.1:10911",
           "clusterName": "DefaultCluster", "brokerId": "0",
           "haServerAddr": "127.0.0.1:10912", "compressed": "false"}
    sock = socket.create_connection((host, int(port)))
    opaque = 0
    while True:
        sock.sendall(frame(opaque, ext, body))
        answer = read_frame(sock)
        print("registered %s: code %s" % (args.topic, answer.get("code")), flush=True)
        if answer.get("code") != 0:
            sys.exit(1)
        opaque += 1
        time.sleep(args.period)


if __name__ == "__main__":
    main()
