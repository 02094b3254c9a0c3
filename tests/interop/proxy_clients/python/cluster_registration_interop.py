"""cluster_registration_interop.py -- RocketMQ 5.x's Python client against
rmqhost's proxy plugin in cluster mode (run_cluster_registration.sh starts a
broker daemon and a proxy-only daemon): the proxy registers its clients at
the broker, and the broker's transaction check-back reaches the producer.

- Registration: two producers of the topic and two SimpleConsumers of one
  group, all through the one proxy. The broker's
  GET_PRODUCER_CONNECTION_LIST (204) for the producer group (the topic, as
  5.x producers have no group of their own) and
  GET_CONSUMER_CONNECTION_LIST (203) for the consumers' group list every
  one of them by its client id, with the client's language (PYTHON) and
  version (the MQVersion ordinal of the client's x-mq-client-version), each
  at the proxy's host on a connection of its own (distinct ports): the
  proxy's HEART_BEAT for each client, sent when it heartbeats the proxy.
- Check-back: a half message is sent and neither committed nor rolled back;
  the broker's CHECK_TRANSACTION_STATE goes to the connection of the
  producer the broker chose, the proxy pushes it to that producer on its
  Telemetry stream, the checker sees the message and answers COMMIT, and
  the consumer then receives it once.
- Unregistration per client: after one consumer's and then one producer's
  shutdown (NotifyClientTermination) the broker no longer lists that one
  and still lists the other; a second half message, sent by the remaining
  producer, is then checked back by that producer.
- The gone client's connection goes too: the broker's socket of the
  connection it was listed on (its clientAddr's port, found in
  /proc/net/tcp) is open before the shutdown and closed within 20 s after
  (the proxy closes it after the UNREGISTER_CLIENT, host ABI 1.15; before,
  it stayed until the broker's 120 s idle close), while the remaining
  client's connection stays open.

argv: proxy_endpoint broker_addr. Prints "RESULT ok" or "RESULT fail <why>".
"""
import json
import socket
import struct
import sys
import threading
import time

import pop_receive
from client_run import fatal, finish, hard_timeout, problem
from rocketmq import (ClientConfiguration, Credentials, FilterExpression,
                      Message, Producer, SimpleConsumer, TransactionChecker)
from rocketmq.grpc_protocol import TransactionResolution
from rocketmq.v5.util.version import SDK_VERSION

TOPIC = "RegTxTopic"
GROUP = "RegTxGroup"
GET_CONSUMER_CONNECTION_LIST = 203
GET_PRODUCER_CONNECTION_LIST = 204


def remoting_call(addr, code, ext):
    """One remoting request (JSON header): its response code and body."""
    host, port = addr.rsplit(":", 1)
    header = json.dumps({"code": code, "language": "JAVA", "version": 409, "opaque": 1,
                         "flag": 0, "extFields": ext}).encode()
    frame = struct.pack(">I", len(header)) + header
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(struct.pack(">I", len(frame)) + frame)
        buf = b""
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed")
            buf += chunk
    hlen = struct.unpack(">I", buf[4:8])[0] & 0xFFFFFF
    return json.loads(buf[8:8 + hlen])["code"], buf[8 + hlen:]


def connections(broker, code, ext):
    """The connection list of the broker by client id (empty when the
    broker answers an error)."""
    rc, body = remoting_call(broker, code, ext)
    if rc != 0:
        return {}
    return {c.get("clientId"): c for c in json.loads(body).get("connectionSet", [])}


def listed(broker, code, ext):
    return set(connections(broker, code, ext))


def mq_version(text):
    """MQVersion.Version's ordinal of "a.b.c" (V4_0_0_SNAPSHOT is 212, then a
    SNAPSHOT and a release per version, ten patches per minor, V5_0_0_SNAPSHOT
    right after V4_9_9), as the broker shows a remoting client's version."""
    a, b, c = (int(x) for x in text.split(".")[:3])
    return 212 + (a - 4) * 200 + b * 20 + c * 2 + 1


def check_connections(broker, code, ext, client_ids, what):
    """Every client of client_ids listed, each with the Python client's
    language and version, at 127.0.0.1 (the proxy), each on its own port."""
    deadline = time.time() + 30
    while True:
        conns = connections(broker, code, ext)
        if all(i in conns for i in client_ids) or time.time() > deadline:
            break
        time.sleep(0.5)
    missing = [i for i in client_ids if i not in conns]
    if missing:
        problem(f"{what}: the broker lists {sorted(conns)}; want all of {sorted(client_ids)}")
        return
    want_version = mq_version(SDK_VERSION)
    ports = set()
    for i in client_ids:
        c = conns[i]
        if c.get("language") != "PYTHON" or c.get("version") != want_version:
            problem(f"{what}: {i} listed with language {c.get('language')} version "
                    f"{c.get('version')}; want PYTHON {want_version} (client {SDK_VERSION})")
        host, _, port = (c.get("clientAddr") or "").rpartition(":")
        if host != "127.0.0.1":
            problem(f"{what}: {i} at {c.get('clientAddr')}; want the proxy's 127.0.0.1")
        ports.add(port)
    if len(ports) != len(client_ids):
        problem(f"{what}: {len(client_ids)} clients on {len(ports)} connections of the proxy; "
                f"want one each: {[conns[i].get('clientAddr') for i in client_ids]}")


def broker_socket_open(broker, client_addr):
    """Whether the broker's end of its connection from client_addr
    ("127.0.0.1:port", a proxy connection) is open: ESTABLISHED (01) or
    CLOSE_WAIT (08, the peer closed but the broker has not) in
    /proc/net/tcp."""
    bport = int(broker.rsplit(":", 1)[1])
    cport = int(client_addr.rsplit(":", 1)[1])
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            p = line.split()
            local, remote = int(p[1].split(":")[1], 16), int(p[2].split(":")[1], 16)
            if local == bport and remote == cport and p[3] in ("01", "08"):
                return True
    return False


def check_connection_closed(broker, client_addr, stays_addr, what):
    """The broker's connection from client_addr closes (the gone client's);
    the one from stays_addr (another client's) stays open."""
    deadline = time.time() + 20
    while broker_socket_open(broker, client_addr) and time.time() < deadline:
        time.sleep(0.5)
    if broker_socket_open(broker, client_addr):
        problem(f"{what}: the broker's connection from {client_addr} is still open 20 s after "
                f"the client's shutdown; want it closed by the proxy")
    if not broker_socket_open(broker, stays_addr):
        problem(f"{what}: the broker's connection from {stays_addr} (a client that stays) "
                f"is closed; want it open")


def client_addr_of(broker, code, ext, client_id, what):
    """The connection (clientAddr) the broker lists client_id on, checked
    open at the broker."""
    addr = (connections(broker, code, ext).get(client_id) or {}).get("clientAddr") or ""
    if ":" not in addr:
        fatal(f"{what}: no clientAddr for {client_id}")
    if not broker_socket_open(broker, addr):
        problem(f"{what}: the broker's connection from {client_id}'s {addr} is not open")
    return addr


def wait_listed(broker, code, ext, client_id, present, what):
    deadline = time.time() + 30
    while time.time() < deadline:
        ids = listed(broker, code, ext)
        if (client_id in ids) == present:
            return
        time.sleep(0.5)
    problem(f"{what}: the broker lists {sorted(ids)}; want {client_id} "
            f"{'in' if present else 'not in'} it")


class Checker(TransactionChecker):
    def __init__(self):
        self.seen = []

    def check(self, message):
        self.seen.append(bytes(message.body))
        return TransactionResolution.COMMIT


def main():
    endpoint, broker = sys.argv[1], sys.argv[2]
    threading.Thread(target=hard_timeout, daemon=True).start()
    config = ClientConfiguration(endpoint, Credentials())
    checker, checker2 = Checker(), Checker()
    producer = Producer(config, (TOPIC,), checker=checker)
    producer2 = Producer(config, (TOPIC,), checker=checker2)
    consumer = SimpleConsumer(config, GROUP, {TOPIC: FilterExpression("*")}, await_duration=1)
    consumer2 = SimpleConsumer(config, GROUP, {TOPIC: FilterExpression("*")}, await_duration=1)
    try:
        for c in (producer, producer2, consumer, consumer2):
            c.startup()
    except Exception as e:
        fatal(f"producer/consumer startup: {e!r}")
    print("producers", producer.client_id, producer2.client_id, "consumers",
          consumer.client_id, consumer2.client_id, flush=True)

    check_connections(broker, GET_PRODUCER_CONNECTION_LIST, {"producerGroup": TOPIC},
                      [producer.client_id, producer2.client_id], "producerConnection of " + TOPIC)
    check_connections(broker, GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": GROUP},
                      [consumer.client_id, consumer2.client_id], "consumerConnection of " + GROUP)

    # one consumer leaves: the broker drops it and keeps the other
    c2 = consumer2.client_id
    cext = {"consumerGroup": GROUP}
    c2_addr = client_addr_of(broker, GET_CONSUMER_CONNECTION_LIST, cext, c2, "second consumer")
    c1_addr = client_addr_of(broker, GET_CONSUMER_CONNECTION_LIST, cext, consumer.client_id,
                             "first consumer")
    try:
        consumer2.shutdown()
    except Exception as e:
        problem(f"second consumer shutdown: {e!r}")
    wait_listed(broker, GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": GROUP}, c2, False,
                "consumerConnection after the second consumer's shutdown")
    wait_listed(broker, GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": GROUP},
                consumer.client_id, True, "consumerConnection: the first consumer stays")
    check_connection_closed(broker, c2_addr, c1_addr, "second consumer's connection")

    msg = Message()
    msg.topic = TOPIC
    msg.body = b"checked-back"
    try:
        tx = producer.begin_transaction()
        receipt = producer.send(msg, tx)  # neither committed nor rolled back
    except Exception as e:
        fatal(f"half message: {e!r}")
    print("half message", receipt.message_id, flush=True)
    got = pop_receive.receive_until(consumer, 1, 15, time.time() + 40, problem)
    # the broker asks one producer of the group, the one whose connection
    # it chose: either checker, never neither
    if (checker.seen + checker2.seen)[:1] != [b"checked-back"]:
        problem(f"the checkers saw {checker.seen} / {checker2.seen}, want the half message "
                f"once at least")
    if [m.body for m in got] != [b"checked-back"]:
        problem(f"after the check-back received {[m.body for m in got]}")
    for m in got:
        try:
            consumer.ack(m)
        except Exception as e:
            problem(f"ack: {e!r}")

    pid = producer.client_id
    pext = {"producerGroup": TOPIC}
    p1_addr = client_addr_of(broker, GET_PRODUCER_CONNECTION_LIST, pext, pid, "first producer")
    p2_addr = client_addr_of(broker, GET_PRODUCER_CONNECTION_LIST, pext, producer2.client_id,
                             "second producer")
    try:
        producer.shutdown()
    except Exception as e:
        problem(f"producer shutdown: {e!r}")
    wait_listed(broker, GET_PRODUCER_CONNECTION_LIST, {"producerGroup": TOPIC}, pid, False,
                "producerConnection after the producer's shutdown")
    wait_listed(broker, GET_PRODUCER_CONNECTION_LIST, {"producerGroup": TOPIC},
                producer2.client_id, True, "producerConnection: the second producer stays")
    check_connection_closed(broker, p1_addr, p2_addr, "first producer's connection")

    # the remaining producer's half message is checked back by it
    checker2.seen.clear()
    msg2 = Message()
    msg2.topic = TOPIC
    msg2.body = b"checked-back-2"
    try:
        producer2.send(msg2, producer2.begin_transaction())
    except Exception as e:
        fatal(f"second half message: {e!r}")
    got = pop_receive.receive_until(consumer, 1, 15, time.time() + 40, problem)
    if [m.body for m in got] != [b"checked-back-2"]:
        problem(f"after the second check-back received {[m.body for m in got]}")
    if b"checked-back-2" not in checker2.seen:
        problem(f"the remaining producer's checker saw {checker2.seen}")
    for m in got:
        try:
            consumer.ack(m)
        except Exception as e:
            problem(f"ack: {e!r}")
    finish()


if __name__ == "__main__":
    main()
