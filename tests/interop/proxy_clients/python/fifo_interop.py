"""fifo_interop.py -- FIFO (orderly) consumer groups through rmqhost's proxy
plugin, with the generated gRPC stubs of RocketMQ 5.x's Python client
(rocketmq-python-client) and one remoting call; run_python.sh starts the
daemon.

- The group is made orderly as a 5.x admin does: UPDATE_AND_CREATE_
  SUBSCRIPTIONGROUP (200) with consumeMessageOrderly true, over remoting to
  the broker address.
- QueryAssignment: the orderly group gets one assignment per readable queue
  (ids 0..n-1), another group one with queue id -1, as Java's RouteActivity.
- ReceiveMessage on a one-queue topic holding three messages: the orderly
  group gets m0 and then nothing while m0 is unacknowledged (the queue is
  blocked), m1 once m0 is acknowledged, m1 again (attempt 2, not m2) after
  its invisible duration is changed to 0; the other group gets m0 then m1
  without acknowledging anything.
- attempt_id, as the client's PushConsumer sends it: an orderly group's
  receive repeating the attempt_id of the batch in flight gets that batch
  again at once (same delivery attempt), another attempt_id gets nothing.
- A group the proxy has already answered for as not orderly, made orderly
  afterwards, gets one assignment per queue within 10 s (the proxy reads a
  copy of the group table at most 1 s old: docs/compat.md).

argv: proxy_endpoint broker_addr topic(1 queue) fifo_group normal_group.
Prints "RESULT ok" or "RESULT fail <why>".
"""
import json
import socket
import struct
import sys
import time

import grpc
from rocketmq.grpc_protocol import definition_pb2, service_pb2, service_pb2_grpc

META = [("x-mq-client-id", "py-fifo-raw")]
problems = []


def problem(text):
    problems.append(text)
    print("problem:", text, flush=True)


def remoting_call(addr, code, body):
    """One remoting request (JSON header) and its response code."""
    host, port = addr.rsplit(":", 1)
    header = json.dumps({"code": code, "language": "JAVA", "version": 0, "opaque": 1,
                         "flag": 0, "extFields": {}}).encode()
    frame = struct.pack(">I", len(header)) + header + body
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(struct.pack(">I", len(frame)) + frame)
        buf = b""
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed")
            buf += chunk
    hlen = struct.unpack(">I", buf[4:8])[0] & 0xFFFFFF
    return json.loads(buf[8:8 + hlen])["code"]


def assignment_ids(stub, endpoint, topic, group):
    host, port = endpoint.rsplit(":", 1)
    req = service_pb2.QueryAssignmentRequest()
    req.topic.name = topic
    req.group.name = group
    req.endpoints.scheme = definition_pb2.IPv4
    a = req.endpoints.addresses.add()
    a.host, a.port = host, int(port)
    resp = stub.QueryAssignment(req, metadata=META, timeout=10)
    if resp.status.code != definition_pb2.OK:
        raise RuntimeError(f"QueryAssignment {group}: {resp.status}")
    return sorted(x.message_queue.id for x in resp.assignments)


def send(stub, topic, body):
    req = service_pb2.SendMessageRequest()
    m = req.messages.add()
    m.topic.name = topic
    m.body = body.encode()
    sp = m.system_properties
    sp.message_id = "PYFIFO%026d" % time.time_ns()
    sp.message_type = definition_pb2.NORMAL
    sp.body_encoding = definition_pb2.IDENTITY
    sp.born_timestamp.seconds = int(time.time())
    resp = stub.SendMessage(req, metadata=META, timeout=10)
    if resp.status.code != definition_pb2.OK:
        raise RuntimeError(f"SendMessage: {resp.status}")


def receive(stub, topic, group, invisible_s=30, attempt_id=None):
    """One ReceiveMessage (batch 1, 1 s long poll): the message or None."""
    req = service_pb2.ReceiveMessageRequest()
    if attempt_id:
        req.attempt_id = attempt_id
    req.group.name = group
    req.message_queue.topic.name = topic
    req.message_queue.id = -1
    req.filter_expression.type = definition_pb2.TAG
    req.filter_expression.expression = "*"
    req.batch_size = 1
    req.invisible_duration.seconds = invisible_s
    req.long_polling_timeout.seconds = 1
    got = None
    for resp in stub.ReceiveMessage(req, metadata=META, timeout=10):
        if resp.HasField("message"):
            got = resp.message
    return got


def ack(stub, topic, group, m):
    req = service_pb2.AckMessageRequest()
    req.group.name = group
    req.topic.name = topic
    e = req.entries.add()
    e.message_id = m.system_properties.message_id
    e.receipt_handle = m.system_properties.receipt_handle
    resp = stub.AckMessage(req, metadata=META, timeout=10)
    if resp.status.code != definition_pb2.OK:
        raise RuntimeError(f"AckMessage: {resp.status}")


def change_invisible(stub, topic, group, m, seconds):
    req = service_pb2.ChangeInvisibleDurationRequest()
    req.group.name = group
    req.topic.name = topic
    req.receipt_handle = m.system_properties.receipt_handle
    req.invisible_duration.seconds = seconds
    req.message_id = m.system_properties.message_id
    resp = stub.ChangeInvisibleDuration(req, metadata=META, timeout=10)
    if resp.status.code != definition_pb2.OK:
        raise RuntimeError(f"ChangeInvisibleDuration: {resp.status}")


def body(m):
    return m.body.decode() if m is not None else None


def receive_until(stub, topic, group, deadline_s=30, attempt_id=None):
    end = time.time() + deadline_s
    while time.time() < end:
        m = receive(stub, topic, group, attempt_id=attempt_id)
        if m is not None:
            return m
    return None


def group_config(group, orderly):
    return json.dumps({"groupName": group, "consumeEnable": True, "consumeFromMinEnable": True,
                       "consumeBroadcastEnable": True, "consumeMessageOrderly": orderly,
                       "retryQueueNums": 1, "retryMaxTimes": 16, "brokerId": 0,
                       "whichBrokerWhenConsumeSlowly": 1,
                       "notifyConsumerIdsChangedEnable": True}).encode()


def repeated_attempt(endpoint, broker, stub, topic, group):
    """The client's PushConsumer repeats a FIFO receive whose answer it did
    not get with the same attempt_id (a uuid per receive): that receive
    gets the batch again at once, with the same delivery attempt, while
    another attempt_id is still blocked by it."""
    code = remoting_call(broker, 200, group_config(group, True))
    if code != 0:
        problem(f"UPDATE_AND_CREATE_SUBSCRIPTIONGROUP {group} answered {code}")
        return
    end = time.time() + 10  # the proxy sees the group orderly within 1 s (docs/compat.md)
    while assignment_ids(stub, endpoint, topic, group) != [0] and time.time() < end:
        time.sleep(0.2)
    first = receive_until(stub, topic, group, attempt_id="py-attempt-1")
    if body(first) != "fifo-0":
        problem(f"{group} attempt 1 got {body(first)}, want fifo-0")
        return
    other = receive(stub, topic, group, attempt_id="py-attempt-2")
    if other is not None:
        problem(f"{group} another attempt_id got {body(other)} while fifo-0 is in flight")
    again = receive(stub, topic, group, attempt_id="py-attempt-1")
    if body(again) != "fifo-0" or again.system_properties.delivery_attempt != 1:
        problem(f"{group} repeated attempt_id got {body(again)} attempt "
                f"{again.system_properties.delivery_attempt if again else None}, "
                "want fifo-0 attempt 1 at once")
        return
    ack(stub, topic, group, again)
    nxt = receive_until(stub, topic, group, attempt_id="py-attempt-1")
    if body(nxt) != "fifo-1":
        problem(f"{group} after the ack, the same attempt_id got {body(nxt)}, want fifo-1")


def turned_orderly(stub, endpoint, broker, topic, group):
    """The group, answered for while not orderly, then made orderly: its
    assignments within 10 s (the proxy's copy of the group table)."""
    code = remoting_call(broker, 200, group_config(group, False))
    if code != 0:
        problem(f"UPDATE_AND_CREATE_SUBSCRIPTIONGROUP {group} answered {code}")
        return
    ids = assignment_ids(stub, endpoint, topic, group)
    if ids != [-1]:
        problem(f"{group} before it is orderly: assignment queue ids {ids}, want [-1]")
    code = remoting_call(broker, 200, group_config(group, True))
    if code != 0:
        problem(f"making {group} orderly answered {code}")
        return
    end = time.time() + 10
    while ids != [0] and time.time() < end:
        time.sleep(0.2)
        ids = assignment_ids(stub, endpoint, topic, group)
    if ids != [0]:
        problem(f"{group} made orderly: assignment queue ids still {ids} after 10 s, want [0]")


def main():
    endpoint, broker, topic, fifo_group, normal_group = sys.argv[1:6]
    code = remoting_call(broker, 200, group_config(fifo_group, True))
    if code != 0:
        print(f"RESULT fail UPDATE_AND_CREATE_SUBSCRIPTIONGROUP answered {code}", flush=True)
        sys.exit(1)
    channel = grpc.insecure_channel(endpoint)
    stub = service_pb2_grpc.MessagingServiceStub(channel)
    ids = assignment_ids(stub, endpoint, topic, fifo_group)
    if ids != [0]:
        problem(f"orderly group's assignment queue ids {ids}, want [0]")
    ids = assignment_ids(stub, endpoint, topic, normal_group)
    if ids != [-1]:
        problem(f"other group's assignment queue ids {ids}, want [-1]")
    for i in range(3):
        send(stub, topic, f"fifo-{i}")
    m0 = receive_until(stub, topic, fifo_group)
    if body(m0) != "fifo-0":
        problem(f"orderly group first got {body(m0)}, want fifo-0")
    else:
        blocked = receive(stub, topic, fifo_group)
        if blocked is not None:
            problem(f"orderly group got {body(blocked)} while fifo-0 is unacknowledged")
        ack(stub, topic, fifo_group, m0)
        m1 = receive_until(stub, topic, fifo_group)
        if body(m1) != "fifo-1" or m1.system_properties.delivery_attempt != 1:
            problem(f"after the ack of fifo-0: {body(m1)}, want fifo-1 attempt 1")
        else:
            change_invisible(stub, topic, fifo_group, m1, 0)
            again = receive_until(stub, topic, fifo_group)
            if body(again) != "fifo-1" or again.system_properties.delivery_attempt != 2:
                problem(f"after fifo-1 came back: {body(again)} attempt "
                        f"{again.system_properties.delivery_attempt if again else None}, want fifo-1 attempt 2")
    n0 = receive_until(stub, topic, normal_group)
    n1 = receive_until(stub, topic, normal_group)
    if [body(n0), body(n1)] != ["fifo-0", "fifo-1"]:
        problem(f"other group got {[body(n0), body(n1)]} without acks, want fifo-0, fifo-1")
    turned_orderly(stub, endpoint, broker, topic, normal_group + "Late")
    repeated_attempt(endpoint, broker, stub, topic, fifo_group + "Attempt")
    channel.close()
    print("RESULT ok" if not problems else "RESULT fail " + "; ".join(problems), flush=True)
    sys.exit(0 if not problems else 1)


if __name__ == "__main__":
    main()
