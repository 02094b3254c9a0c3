"""cluster_registration_interop.py -- RocketMQ 5.x's Python client against
rmqhost's proxy plugin in cluster mode (run_cluster_registration.sh starts a
broker daemon and a proxy-only daemon): the proxy registers its clients at
the broker, and the broker's transaction check-back reaches the producer.

- Registration: the broker's GET_PRODUCER_CONNECTION_LIST (204) for the
  producer group (the topic, as 5.x producers have no group of their own)
  and GET_CONSUMER_CONNECTION_LIST (203) for the SimpleConsumer's group list
  the two clients by their client ids (the proxy's HEART_BEAT to the broker,
  sent when the clients heartbeat the proxy).
- Check-back: a half message is sent and neither committed nor rolled back;
  the broker's CHECK_TRANSACTION_STATE goes to the proxy's connection, the
  proxy pushes it to the producer on its Telemetry stream, the checker sees
  the message and answers COMMIT, and the consumer then receives it once.
- Unregistration: after the producer's shutdown (NotifyClientTermination)
  the broker no longer lists it.

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


def listed(broker, code, ext):
    """The client ids a connection list of the broker names (none when the
    broker answers an error)."""
    rc, body = remoting_call(broker, code, ext)
    if rc != 0:
        return set()
    return {c.get("clientId") for c in json.loads(body).get("connectionSet", [])}


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
    checker = Checker()
    producer = Producer(config, (TOPIC,), checker=checker)
    consumer = SimpleConsumer(config, GROUP, {TOPIC: FilterExpression("*")}, await_duration=1)
    try:
        producer.startup()
        consumer.startup()
    except Exception as e:
        fatal(f"producer/consumer startup: {e!r}")

    wait_listed(broker, GET_PRODUCER_CONNECTION_LIST, {"producerGroup": TOPIC},
                producer.client_id, True, "producerConnection of " + TOPIC)
    wait_listed(broker, GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": GROUP},
                consumer.client_id, True, "consumerConnection of " + GROUP)

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
    if checker.seen[:1] != [b"checked-back"]:
        problem(f"the checker saw {checker.seen}, want the half message once at least")
    if [m.body for m in got] != [b"checked-back"]:
        problem(f"after the check-back received {[m.body for m in got]}")
    for m in got:
        try:
            consumer.ack(m)
        except Exception as e:
            problem(f"ack: {e!r}")

    pid = producer.client_id
    try:
        producer.shutdown()
    except Exception as e:
        problem(f"producer shutdown: {e!r}")
    wait_listed(broker, GET_PRODUCER_CONNECTION_LIST, {"producerGroup": TOPIC}, pid, False,
                "producerConnection after the producer's shutdown")
    finish()


if __name__ == "__main__":
    main()
