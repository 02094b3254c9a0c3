"""proxy_interop.py -- RocketMQ 5.x's Python client (rocketmq-python-client,
gRPC) against rmqhost's proxy plugin; run_python.sh starts the daemon and
runs it with the venv's python.

- Producer, normal messages: N bodies with a tag, two keys and user
  properties; every send has a message id, all distinct.
- SimpleConsumer: each of the N is received exactly once with its body, tag,
  keys, properties, message id and delivery attempt 1, not corrupted (the
  client checks the body digest); all but one are acknowledged; the last
  one's invisible duration is changed to 1 s and it comes back once with
  attempt 2, then is acknowledged.
- A message received with a 2 s invisible duration and not acknowledged
  comes back once with attempt 2 (from the store's POP retry topic), under
  the topic and with the tag it was sent with, and its ack works.
- Delay: a message with a delivery timestamp 3 s ahead is received exactly
  once, carrying that timestamp, not before its time less the store's
  timerPrecisionMs (1 s). Through the client's own API when the route
  accepts DELAY messages; otherwise the client must refuse it, and so must
  the proxy a raw SendMessage of the client's generated stubs
  (MESSAGE_PROPERTY_CONFLICT_WITH_TYPE "TopicMessageType validate failed,
  the expected type is NORMAL, but actual type is DELAY", as Java's proxy
  with enableTopicMessageTypeCheck).
- FIFO: when the route accepts FIFO messages, messages with a message group
  are received exactly once with that group; otherwise the client must
  refuse them.
- After everything is acknowledged nothing comes back.

argv: endpoint topic group N [tls].  With tls the client speaks TLS (it
trusts the roots grpc reads from GRPC_DEFAULT_SSL_ROOTS_FILE_PATH), else
plaintext; the raw stubs speak plaintext (the test server is permissive).
Prints "RESULT ok" or "RESULT fail <why>".
"""
import sys
import threading
import time

import grpc
import pop_receive
from client_run import fatal, finish, hard_timeout, problem
from rocketmq import (ClientConfiguration, Credentials, FilterExpression,
                      Message, Producer, SimpleConsumer)
from rocketmq.grpc_protocol import definition_pb2, service_pb2, service_pb2_grpc

TIMER_PRECISION_MS = 1000  # the store's default timerPrecisionMs


def receive_until(consumer, want, invisible_s, deadline_s):
    return pop_receive.receive_until(consumer, want, invisible_s, time.time() + deadline_s,
                                     problem)


def raw_stub(endpoint):
    channel = grpc.insecure_channel(endpoint)
    return channel, service_pb2_grpc.MessagingServiceStub(channel)


def accepted_types(endpoint, topic):
    """The message types the topic's queues accept, by a raw QueryRoute."""
    channel, stub = raw_stub(endpoint)
    host, port = endpoint.rsplit(":", 1)
    req = service_pb2.QueryRouteRequest()
    req.topic.name = topic
    req.endpoints.scheme = definition_pb2.IPv4
    addr = req.endpoints.addresses.add()
    addr.host, addr.port = host, int(port)
    resp = stub.QueryRoute(req, metadata=[("x-mq-client-id", "py-interop-raw")], timeout=10)
    channel.close()
    if resp.status.code != definition_pb2.OK:
        fatal(f"QueryRoute {topic}: {resp.status}")
    return {t for q in resp.message_queues for t in q.accept_message_types}


def raw_timer_send(endpoint, topic, at_s):
    """One message with a delivery timestamp through a raw SendMessage: its
    status."""
    channel, stub = raw_stub(endpoint)
    req = service_pb2.SendMessageRequest()
    m = req.messages.add()
    m.topic.name = topic
    m.body = b"py5-timer"
    m.user_properties["idx"] = "timer"
    sp = m.system_properties
    sp.tag = "Timer"
    sp.message_id = "PYTIMER%025d" % time.time_ns()
    sp.message_type = definition_pb2.DELAY
    sp.body_encoding = definition_pb2.IDENTITY
    sp.born_timestamp.seconds = int(time.time())
    sp.delivery_timestamp.seconds = at_s
    resp = stub.SendMessage(req, metadata=[("x-mq-client-id", "py-interop-raw")], timeout=10)
    channel.close()
    return resp.status


def main():
    endpoint, topic, group, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    tls = len(sys.argv) > 5 and sys.argv[5] == "tls"
    threading.Thread(target=hard_timeout, args=(200,), daemon=True).start()
    config = ClientConfiguration(endpoint, Credentials())
    producer = Producer(config, (topic,), tls_enable=tls)
    try:
        producer.startup()
    except Exception as e:
        fatal(f"producer startup: {e!r}")
    sent_ids = {}
    for i in range(n):
        msg = Message()
        msg.topic = topic
        msg.body = f"py5-body-{i}".encode()
        msg.tag = f"Tag{i % 2}"
        msg.keys = f"py5-key-{i}"
        msg.keys = "py5-common"
        msg.add_property("idx", str(i))
        msg.add_property("lang", "python")
        try:
            sent_ids[i] = producer.send(msg).message_id
        except Exception as e:
            fatal(f"send {i}: {e!r}")
    if len(set(sent_ids.values())) != n or not all(sent_ids.values()):
        problem(f"{len(set(sent_ids.values()))} distinct message ids for {n} sends")

    consumer = SimpleConsumer(config, group, {topic: FilterExpression("*")}, await_duration=1,
                              tls_enable=tls)
    try:
        consumer.startup()
    except Exception as e:
        fatal(f"consumer startup: {e!r}")

    first = receive_until(consumer, n, 60, 40)
    seen = {}
    last = None
    for m in first:
        try:
            i = int(m.properties.get("idx"))
        except (TypeError, ValueError):
            problem(f"a message without idx: {m.body!r}")
            continue
        seen[i] = seen.get(i, 0) + 1
        if m.body != f"py5-body-{i}".encode():
            problem(f"idx {i} body {m.body!r}")
        if m.tag != f"Tag{i % 2}":
            problem(f"idx {i} tag {m.tag}")
        if sorted(m.keys) != sorted([f"py5-key-{i}", "py5-common"]):
            problem(f"idx {i} keys {m.keys}")
        if dict(m.properties) != {"idx": str(i), "lang": "python"}:
            problem(f"idx {i} user properties {dict(m.properties)}")
        if m.message_id != sent_ids.get(i):
            problem(f"idx {i} message id {m.message_id}, sent as {sent_ids.get(i)}")
        if m.delivery_attempt != 1:
            problem(f"idx {i} delivery attempt {m.delivery_attempt}")
        if m.corrupted:
            problem(f"idx {i} corrupted (body digest mismatch)")
        if i == n - 1:
            last = m
        else:
            try:
                consumer.ack(m)
            except Exception as e:
                problem(f"ack idx {i}: {e!r}")
    for i in range(n):
        if seen.get(i) != 1:
            problem(f"idx {i} received {seen.get(i, 0)} times")

    # change_invisible_duration: the last one comes back with attempt 2
    if last is not None:
        try:
            consumer.change_invisible_duration(last, 1)
        except Exception as e:
            problem(f"change_invisible_duration: {e!r}")
        again = receive_until(consumer, 1, 60, 30)
        if len(again) != 1:
            problem(f"after change_invisible_duration {len(again)} messages came back")
        else:
            m = again[0]
            if m.message_id != last.message_id or m.delivery_attempt != 2:
                problem(f"came back: {m.message_id} attempt {m.delivery_attempt}, "
                        f"expected {last.message_id} attempt 2")
            consumer.ack(m)

    # not acknowledged: back after its invisible duration with attempt 2
    msg = Message()
    msg.topic = topic
    msg.body = b"py5-expire"
    msg.tag = "Expire"
    msg.add_property("idx", "expire")
    expire_id = producer.send(msg).message_id
    got = receive_until(consumer, 1, 2, 30)
    if len(got) != 1 or got[0].message_id != expire_id or got[0].delivery_attempt != 1:
        problem(f"expire message first receive: {len(got)} messages")
    else:
        back = receive_until(consumer, 1, 60, 30)
        if len(back) != 1 or back[0].message_id != expire_id:
            problem(f"unacknowledged message: {len(back)} came back")
        else:
            if back[0].delivery_attempt != 2:
                problem(f"unacknowledged message came back with attempt {back[0].delivery_attempt}")
            # the store's copy in %RETRY%<group>_<topic>: shown under the
            # topic received from, with its tag (Java's proxy does the same)
            if back[0].topic != topic or back[0].tag != "Expire" or back[0].body != b"py5-expire":
                problem(f"unacknowledged message came back as topic {back[0].topic!r} "
                        f"tag {back[0].tag!r} body {back[0].body!r}")
            consumer.ack(back[0])

    types = accepted_types(endpoint, topic)
    print(f"route of {topic} accepts {sorted(definition_pb2.MessageType.Name(t) for t in types)}",
          flush=True)

    # delay / timer (the client sends delivery_timestamp in seconds)
    at_s = int(time.time()) + 3
    msg = Message()
    msg.topic = topic
    msg.body = b"py5-timer"
    msg.tag = "Timer"
    msg.add_property("idx", "timer")
    msg.delivery_timestamp = at_s
    err, timer_id = None, None
    try:
        timer_id = producer.send(msg).message_id
    except Exception as e:
        err = e
    if definition_pb2.DELAY in types:
        if err is not None:
            fatal(f"delay send on a route that accepts DELAY: {err!r}")
    else:
        if err is None or "message type not match" not in str(err):
            problem(f"delay send on a route without DELAY: {err!r}, expected the client's refusal")
        # the proxy checks the type too (Java's enableTopicMessageTypeCheck)
        status = raw_timer_send(endpoint, topic, at_s)
        want = "the expected type is NORMAL, but actual type is DELAY"
        if status.code != definition_pb2.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE or \
                want not in status.message:
            problem(f"raw timer SendMessage to a NORMAL topic: {status}, expected "
                    f"MESSAGE_PROPERTY_CONFLICT_WITH_TYPE '{want}'")
        print("note: the route accepts no DELAY messages; the client and the proxy refused the "
              "timer", flush=True)
    got = receive_until(consumer, 1, 60, 30) if timer_id else []
    now_ms = int(time.time() * 1000)
    if not timer_id:
        pass
    elif len(got) != 1 or got[0].message_id != timer_id:
        problem(f"timer message: {len(got)} received")
    else:
        m = got[0]
        if now_ms < at_s * 1000 - TIMER_PRECISION_MS:
            problem(f"timer message received {at_s * 1000 - now_ms} ms before its time")
        if m.delivery_timestamp != at_s * 1000:
            problem(f"timer message delivery timestamp {m.delivery_timestamp}, sent {at_s * 1000}")
        if m.body != b"py5-timer" or m.delivery_attempt != 1:
            problem(f"timer message body {m.body!r} attempt {m.delivery_attempt}")
        consumer.ack(m)

    # FIFO with a message group
    fifo_n, fifo_err = 4, None
    for i in range(fifo_n):
        msg = Message()
        msg.topic = topic
        msg.body = f"py5-fifo-{i}".encode()
        msg.tag = "Fifo"
        msg.add_property("idx", f"fifo-{i}")
        msg.message_group = "py5-group"
        try:
            producer.send(msg)
        except Exception as e:
            fifo_err = e
            break
    if definition_pb2.FIFO in types:
        if fifo_err is not None:
            problem(f"FIFO send on a route that accepts FIFO: {fifo_err!r}")
        got = receive_until(consumer, fifo_n, 60, 30)
        if len(got) != fifo_n:
            problem(f"FIFO: {len(got)} of {fifo_n} received")
        for m in got:
            if m.message_group != "py5-group":
                problem(f"FIFO message {m.body!r} group {m.message_group}")
            consumer.ack(m)
    else:
        if fifo_err is None or "message type not match" not in str(fifo_err):
            problem(f"FIFO send on a route without FIFO: {fifo_err!r}, expected the client's refusal")
        print("note: the route accepts no FIFO messages; the client refused them", flush=True)

    after = receive_until(consumer, 1, 1, 3)
    if after:
        problem(f"{len(after)} messages came back after every ack "
                f"(first: {after[0].body!r} attempt {after[0].delivery_attempt})")
    try:
        consumer.shutdown()
        producer.shutdown()
    except Exception as e:
        problem(f"shutdown: {e!r}")
    finish()


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException as e:  # noqa: B902 -- any escape is a failure
        fatal(f"uncaught {e!r}")
