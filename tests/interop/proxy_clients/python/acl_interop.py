"""acl_interop.py -- RocketMQ 5.x's Python client (rocketmq-python-client)
with credentials against rmqhost's proxy plugin while the acl plugin guards
the broker (plain_acl.yml written by run_acl_python.sh). The proxy asks the
acl plugin (service "acl.check") about every gRPC call.

- The right AccessKey/SecretKey: a producer sends N messages to a topic the
  account may PUB|SUB and a SimpleConsumer of a group the account may SUB
  (its defaultGroupPerm) receives and acknowledges each exactly once.
- The right key with a wrong secret: refused UNAUTHORIZED (40100) "Check
  signature failed for accessKey=<AK>" (the client's QueryRoute is refused
  and it says only that it has no route; the same QueryRoute made raw with that key and
  secret shows the code and message).
- A key no account has: UNAUTHORIZED "No acl config for <AK>" (likewise).
- A topic the account may only SUB: sending is refused UNAUTHORIZED "No
  default permission for topic:<topic>".
- Raw calls of the client's own generated stubs, signed here as the client
  signs (HMAC-SHA1 of x-mq-date-time, hex): no authorization at all is "No
  accessKey is configured", a header without a space "authorization header
  is incorrect"; a signed FIFO message (message group) to the NORMAL topic is
  refused MESSAGE_PROPERTY_CONFLICT_WITH_TYPE (40014) "TopicMessageType
  validate failed, the expected type is NORMAL, but actual type is FIFO",
  and a NORMAL one to a topic the broker lacks "... expected type is
  UNSPECIFIED, but actual type is NORMAL" (the proxy checks before routing,
  as Java's); a ReceiveMessage whose deadline leaves less than the proxy's
  minimum polling time is BAD_REQUEST (40000) from a client that says it is
  5.0.2, ILLEGAL_POLLING_TIME (40018) from 5.1.2.

argv: endpoint ak sk topic subonly_topic group N.
Prints "RESULT ok" or "RESULT fail <why>".
"""
import hmac
import sys
import threading
import time
from datetime import datetime
from hashlib import sha1

import grpc
import pop_receive
from client_run import fatal, finish, hard_timeout, problem
from rocketmq import (ClientConfiguration, Credentials, FilterExpression,
                      Message, Producer, SimpleConsumer)
from rocketmq.grpc_protocol import definition_pb2, service_pb2, service_pb2_grpc


def signed(ak, sk, version="5.1.2", authorization=None):
    """Metadata as the client builds it (rocketmq/v5/util/signature.py)."""
    now = datetime.now().strftime("%Y%m%dT%H%M%SZ")
    sig = hmac.new(sk.encode(), now.encode(), sha1).hexdigest()
    md = [("x-mq-client-id", "py-acl-raw"), ("x-mq-client-version", version),
          ("x-mq-date-time", now)]
    if authorization is None:
        authorization = (f"MQv2-HMAC-SHA1 Credential={ak}, SignedHeaders=x-mq-date-time, "
                         f"Signature={sig}")
    if authorization:
        md.append(("authorization", authorization))
    return md


def expect_refusal(what, exc, code, text):
    """A client call refused with `code` and a message containing `text`."""
    s = f"{exc!s} {exc!r}"
    if str(code) not in s or text not in s:
        problem(f"{what}: wanted {code} '{text}', got {s}")
    else:
        print(f"{what}: refused as expected ({code} {text})", flush=True)


def refused_producer(endpoint, ak, sk, topic, code, text, what, raw_sk=None):
    """A producer with these credentials must not get a message through:
    refused with `code` and `text` at its send, or when it cannot get the
    topic's route (the client then says only "failed to fetch topic route":
    the same call, QueryRoute, made raw with the same key and secret shows
    the answer)."""
    producer = Producer(ClientConfiguration(endpoint, Credentials(ak, sk)), (topic,))
    try:
        producer.startup()
        msg = Message()
        msg.topic = topic
        msg.body = b"must-not-pass"
        producer.send(msg)
        problem(f"{what}: the send succeeded")
    except Exception as e:
        if str(code) in str(e) or "route" not in str(e):
            expect_refusal(what, e, code, text)
        else:
            print(f"{what}: the client got no route ({e})", flush=True)
            channel = grpc.insecure_channel(endpoint)
            stub = service_pb2_grpc.MessagingServiceStub(channel)
            resp = stub.QueryRoute(route_request(endpoint, topic), metadata=signed(ak, sk),
                                   timeout=10)
            check_status(f"{what} (raw QueryRoute)", resp.status, code, text)
            channel.close()
    finally:
        try:
            producer.shutdown()
        except Exception:
            pass


def route_request(endpoint, topic):
    route = service_pb2.QueryRouteRequest()
    route.topic.name = topic
    route.endpoints.scheme = definition_pb2.IPv4
    host, port = endpoint.rsplit(":", 1)
    addr = route.endpoints.addresses.add()
    addr.host, addr.port = host, int(port)
    return route


def check_status(what, status, code, text):
    if status.code != code or text not in status.message:
        problem(f"{what}: wanted {code} '{text}', got {status.code} '{status.message}'")
    else:
        print(f"{what}: {status.code} {status.message}", flush=True)


def raw_send(stub, md, topic, group=None):
    req = service_pb2.SendMessageRequest()
    m = req.messages.add()
    m.topic.name = topic
    m.body = b"raw"
    sp = m.system_properties
    sp.message_id = "PYACL%027d" % time.time_ns()
    sp.message_type = definition_pb2.FIFO if group else definition_pb2.NORMAL
    sp.body_encoding = definition_pb2.IDENTITY
    sp.born_timestamp.seconds = int(time.time())
    if group:
        sp.message_group = group
    return stub.SendMessage(req, metadata=md, timeout=10).status


def raw_checks(endpoint, ak, sk, topic, group):
    channel = grpc.insecure_channel(endpoint)
    stub = service_pb2_grpc.MessagingServiceStub(channel)
    route = route_request(endpoint, topic)
    resp = stub.QueryRoute(route, metadata=signed(ak, sk, authorization=""), timeout=10)
    check_status("unsigned QueryRoute", resp.status, definition_pb2.UNAUTHORIZED,
                 "No accessKey is configured")
    resp = stub.QueryRoute(route, metadata=signed(ak, sk, authorization="MQv2-HMAC-SHA1"),
                           timeout=10)
    check_status("QueryRoute with a malformed header", resp.status, definition_pb2.UNAUTHORIZED,
                 "authorization header is incorrect")
    resp = stub.QueryRoute(route, metadata=signed(ak, sk), timeout=10)
    check_status("signed QueryRoute", resp.status, definition_pb2.OK, "")
    check_status("FIFO message to a NORMAL topic", raw_send(stub, signed(ak, sk), topic, "g1"),
                 definition_pb2.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
                 "TopicMessageType validate failed, the expected type is NORMAL, "
                 "but actual type is FIFO")
    check_status("message to a topic the broker lacks",
                 raw_send(stub, signed(ak, sk), "PyAclNoSuchTopic"),
                 definition_pb2.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
                 "the expected type is UNSPECIFIED, but actual type is NORMAL")
    for version, code in (("5.0.2", definition_pb2.BAD_REQUEST),
                          ("5.1.2", definition_pb2.ILLEGAL_POLLING_TIME)):
        rr = service_pb2.ReceiveMessageRequest()
        rr.group.name = group
        rr.message_queue.topic.name = topic
        rr.message_queue.id = -1
        rr.filter_expression.type = definition_pb2.TAG
        rr.filter_expression.expression = "*"
        rr.batch_size = 1
        rr.invisible_duration.seconds = 30
        # 3 s left < the proxy's minimum polling time (Java's default 5 s)
        answers = list(stub.ReceiveMessage(rr, metadata=signed(ak, sk, version), timeout=3))
        st = answers[0].status if answers and answers[0].HasField("status") else None
        if st is None:
            problem(f"ReceiveMessage from {version}: no status in {answers}")
        else:
            check_status(f"short ReceiveMessage from {version}", st, code,
                         "The deadline time remaining is not enough for polling")
    channel.close()


def main():
    endpoint, ak, sk, topic, subonly, group, n = sys.argv[1:8]
    n = int(n)
    threading.Thread(target=hard_timeout, args=(200,), daemon=True).start()

    config = ClientConfiguration(endpoint, Credentials(ak, sk))
    producer = Producer(config, (topic,))
    try:
        producer.startup()
    except Exception as e:
        fatal(f"producer startup with the right key: {e!r}")
    ids = set()
    for i in range(n):
        msg = Message()
        msg.topic = topic
        msg.body = f"acl-{i}".encode()
        try:
            ids.add(producer.send(msg).message_id)
        except Exception as e:
            fatal(f"send {i} with the right key: {e!r}")
    producer.shutdown()
    consumer = SimpleConsumer(config, group, {topic: FilterExpression("*")}, await_duration=10)
    try:
        consumer.startup()
    except Exception as e:
        fatal(f"consumer startup with the right key: {e!r}")
    got = pop_receive.receive_until(consumer, n, 30, time.time() + 60, problem)
    for m in got:
        try:
            consumer.ack(m)
        except Exception as e:
            problem(f"ack: {e!r}")
    if sorted(m.message_id for m in got) != sorted(ids):
        problem(f"received {len(got)} messages, {len({m.message_id for m in got} & ids)} "
                f"of the {n} sent")
    consumer.shutdown()

    refused_producer(endpoint, ak, sk + "-wrong", topic, 40100,
                     f"Check signature failed for accessKey={ak}", "wrong secret key")
    refused_producer(endpoint, "pyNobody", sk, topic, 40100, "No acl config for pyNobody",
                     "unknown access key")
    refused_producer(endpoint, ak, sk, subonly, 40100,
                     f"No default permission for topic:{subonly}", "PUB on a SUB-only topic")
    raw_checks(endpoint, ak, sk, topic, group)
    finish()


if __name__ == "__main__":
    main()
