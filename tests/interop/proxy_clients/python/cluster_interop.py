"""cluster_interop.py -- RocketMQ 5.x's Python client against rmqhost's proxy
plugin in cluster mode: a proxy-only daemon forwarding to two brokers of
other processes (run_cluster.sh starts the three).

- Routes: QueryRoute through the proxy shows ClBoth's queues on both brokers
  (waited for: broker B registers with A's NameServer asynchronously).
- Producer: N messages to each of ClTopicA (broker A only), ClTopicB
  (broker B only) and ClBoth (both); every send answers a message id.
- SimpleConsumer (one group, the three topics): every message received once,
  body intact, delivery attempt 1; ClBoth's receipt handles name both
  brokers (the proxy's handle carries the broker name, field 6, as Java's
  proxy's ReceiptHandle carries brokerName). Each is acknowledged as it
  comes, except one of ClTopicA, whose invisible duration is changed to 1 s
  once all are in, and one of ClTopicB, left to expire (15 s): both come
  back with attempt 2 (the
  ack and the change went to the broker that holds each) and are then
  acknowledged; afterwards nothing comes back.
- Transaction on ClTxTopic (broker B only): a half message is not received
  before the commit; after the commit (EndTransaction to broker B through
  the broker name in the transaction id) it is received once.

argv: endpoint brokerA brokerB N. Prints "RESULT ok" or "RESULT fail <why>".
"""
import sys
import threading
import time

import grpc
import pop_receive
from client_run import client_config, fatal, finish, hard_timeout, problem, start
from rocketmq import (FilterExpression, Message, Producer, SimpleConsumer,
                      TransactionChecker)
from rocketmq.grpc_protocol import (TransactionResolution, definition_pb2,
                                    service_pb2, service_pb2_grpc)

INVISIBLE_S = 15


def route_brokers(endpoint, topic):
    """The broker names of topic's queues, by a raw QueryRoute."""
    channel = grpc.insecure_channel(endpoint)
    stub = service_pb2_grpc.MessagingServiceStub(channel)
    host, port = endpoint.rsplit(":", 1)
    req = service_pb2.QueryRouteRequest()
    req.topic.name = topic
    req.endpoints.scheme = definition_pb2.IPv4
    addr = req.endpoints.addresses.add()
    addr.host, addr.port = host, int(port)
    try:
        resp = stub.QueryRoute(req, metadata=[("x-mq-client-id", "py-cluster-raw")], timeout=10)
    finally:
        channel.close()
    if resp.status.code != definition_pb2.OK:
        return set(), resp.status
    return {q.broker.name for q in resp.message_queues}, resp.status


def handle_broker(m):
    fields = (m.receipt_handle or "").split(" ")
    return fields[5] if len(fields) >= 8 else None


class Checker(TransactionChecker):
    def check(self, message):
        return TransactionResolution.COMMIT


def main():
    endpoint, broker_a, broker_b, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    threading.Thread(target=hard_timeout, daemon=True).start()
    want = {"ClTopicA": {broker_a}, "ClTopicB": {broker_b}, "ClBoth": {broker_a, broker_b},
            "ClTxTopic": {broker_b}}
    deadline = time.time() + 40
    for topic, brokers in want.items():
        got, st = set(), None
        while time.time() < deadline:
            got, st = route_brokers(endpoint, topic)
            if got == brokers:
                break
            time.sleep(0.5)
        if got != brokers:
            fatal(f"route of {topic} through the proxy: brokers {sorted(got)}, "
                  f"want {sorted(brokers)} (last status {st})")

    config = client_config(endpoint)
    topics = ("ClTopicA", "ClTopicB", "ClBoth")
    producer = Producer(config, topics)
    start("producer", producer)
    bodies = set()
    for topic in topics:
        for i in range(n):
            msg = Message()
            msg.topic = topic
            msg.body = f"{topic}-{i}".encode()
            msg.tag = "Cl"
            try:
                if not producer.send(msg).message_id:
                    problem(f"send {topic} {i}: no message id")
            except Exception as e:
                fatal(f"send {topic} {i}: {e!r}")
            bodies.add(msg.body)

    consumer = SimpleConsumer(config, "ClGroup", {t: FilterExpression("*") for t in topics},
                              await_duration=1)
    start("consumer", consumer)
    seen = {}
    both_brokers = set()
    changed = expiring = None
    held_since = {}  # body of changed / expiring -> when it was first received
    back = []  # the held messages as they come back with attempt 2
    deadline = time.time() + 40
    while len(seen) < len(bodies) and time.time() < deadline:
        for m in pop_receive.receive_until(consumer, 1, INVISIBLE_S, time.time() + 5, problem):
            first = held_since.get(m.body)
            if first is not None and time.time() - first >= INVISIBLE_S - 1:
                # on a loaded machine this loop can outlast the invisible
                # time: a held message back after it is the expiry checked
                # below, not a duplicate
                back.append(m)
                try:
                    consumer.ack(m)
                except Exception as e:
                    problem(f"ack of {m.body!r} (attempt {m.delivery_attempt}): {e!r}")
                continue
            seen[m.body] = seen.get(m.body, 0) + 1
            if m.delivery_attempt != 1:
                problem(f"{m.body!r}: delivery attempt {m.delivery_attempt} on first receipt")
            if m.topic == "ClBoth":
                both_brokers.add(handle_broker(m))
            try:
                if m.topic == "ClTopicA" and changed is None:
                    changed = m  # its invisible duration changes below
                    held_since[m.body] = time.time()
                elif m.topic == "ClTopicB" and expiring is None:
                    expiring = m  # left to expire after INVISIBLE_S
                    held_since[m.body] = time.time()
                else:
                    consumer.ack(m)
            except Exception as e:
                problem(f"ack/change of {m.body!r}: {e!r}")
    if set(seen) != bodies or any(c != 1 for c in seen.values()):
        problem(f"received {len(seen)} of {len(bodies)} bodies, "
                f"duplicates {[b for b, c in seen.items() if c != 1]}")
    if both_brokers != {broker_a, broker_b}:
        problem(f"ClBoth's receipt handles name brokers {sorted(map(str, both_brokers))}")
    if changed is None or expiring is None:
        fatal("no message of ClTopicA or ClTopicB to leave unacknowledged")

    if changed.body not in [m.body for m in back]:
        try:
            consumer.change_invisible_duration(changed, 1)
        except Exception as e:
            problem(f"change_invisible_duration of {changed.body!r}: {e!r}")
    deadline = time.time() + INVISIBLE_S + 15
    while len(back) < 2 and time.time() < deadline:
        # a short invisible time: an ack that did not take shows below
        for m in pop_receive.receive_until(consumer, 1, 3, deadline, problem):
            back.append(m)
            try:
                consumer.ack(m)
            except Exception as e:
                problem(f"ack of {m.body!r} (attempt {m.delivery_attempt}): {e!r}")
    got = sorted((m.body, m.delivery_attempt) for m in back)
    expect = sorted([(changed.body, 2), (expiring.body, 2)])
    if got != expect:
        problem(f"came back {got}, want {expect}")
    late = pop_receive.receive_until(consumer, 1, INVISIBLE_S, time.time() + 7, problem)
    if late:
        problem(f"after every ack still came back {[m.body for m in late]}")

    # a transaction committed on broker B
    tx_producer = Producer(config, ("ClTxTopic",), checker=Checker())
    tx_consumer = SimpleConsumer(config, "ClTxGroup", {"ClTxTopic": FilterExpression("*")},
                                 await_duration=1)
    start("transaction producer/consumer", tx_producer, tx_consumer)
    msg = Message()
    msg.topic = "ClTxTopic"
    msg.body = b"cluster-tx"
    try:
        tx = tx_producer.begin_transaction()
        receipt = tx_producer.send(msg, tx)
    except Exception as e:
        fatal(f"half message: {e!r}")
    early = pop_receive.receive_until(tx_consumer, 1, INVISIBLE_S, time.time() + 3, problem)
    if early:
        problem(f"the half message was received before the commit: {[m.body for m in early]}")
    try:
        tx.commit()
    except Exception as e:
        problem(f"commit of {receipt.transaction_id}: {e!r}")
    committed = pop_receive.receive_until(tx_consumer, 1, INVISIBLE_S, time.time() + 20, problem)
    if [m.body for m in committed] != [b"cluster-tx"]:
        problem(f"after the commit received {[m.body for m in committed]}")
    elif handle_broker(committed[0]) != broker_b:
        problem(f"the committed message came from {handle_broker(committed[0])}")
    for m in committed:
        try:
            tx_consumer.ack(m)
        except Exception as e:
            problem(f"ack of the committed message: {e!r}")
    finish()


if __name__ == "__main__":
    main()
