"""java_broker_interop.py -- the proxy plugin in cluster mode in front of a
Java 4.9.7 broker (run_cluster_java.sh starts it), driven by RocketMQ 5.x's
Python client and its generated stubs.

- QueryRoute through the proxy names the Java broker for the topic.
- Producer: N messages, each answered with a message id (SEND_MESSAGE_V2 to
  the Java broker).
- PullMessage (raw stub) on every queue from offset 0 returns exactly the N
  bodies; QueryOffset END per queue adds up to N; UpdateOffset then
  GetOffset gives back the committed offset.
- ReceiveMessage (SimpleConsumer) cannot work: a 4.9.7 broker has no POP
  (POP_MESSAGE 200050 is 5.x); the proxy must answer with a status, not
  hang or crash: the receive fails with NOT_IMPLEMENTED (the broker's
  REQUEST_CODE_NOT_SUPPORTED).

argv: endpoint broker topic N. Prints "RESULT ok" or "RESULT fail <why>".
"""
import sys
import threading
import time

import grpc
from client_run import fatal, finish, hard_timeout, problem
from rocketmq import (ClientConfiguration, Credentials, FilterExpression,
                      Message, Producer, SimpleConsumer)
from rocketmq.grpc_protocol import definition_pb2, service_pb2, service_pb2_grpc

META = [("x-mq-client-id", "py-cluster-java-raw")]


def queue(topic, broker, qid):
    mq = definition_pb2.MessageQueue()
    mq.topic.name = topic
    mq.id = qid
    mq.broker.name = broker
    return mq


def main():
    endpoint, broker, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    threading.Thread(target=hard_timeout, args=(110,), daemon=True).start()
    channel = grpc.insecure_channel(endpoint)
    stub = service_pb2_grpc.MessagingServiceStub(channel)
    host, port = endpoint.rsplit(":", 1)
    qids = set()
    deadline = time.time() + 40
    while time.time() < deadline:
        req = service_pb2.QueryRouteRequest()
        req.topic.name = topic
        req.endpoints.scheme = definition_pb2.IPv4
        a = req.endpoints.addresses.add()
        a.host, a.port = host, int(port)
        resp = stub.QueryRoute(req, metadata=META, timeout=10)
        brokers = {q.broker.name for q in resp.message_queues}
        qids = {q.id for q in resp.message_queues}
        if resp.status.code == definition_pb2.OK and brokers == {broker}:
            break
        time.sleep(0.5)
    else:
        fatal(f"route of {topic}: status {resp.status.code} brokers {brokers}, want {broker}")

    producer = Producer(ClientConfiguration(endpoint, Credentials()), (topic,))
    try:
        producer.startup()
    except Exception as e:
        fatal(f"producer startup: {e!r}")
    bodies = set()
    for i in range(n):
        msg = Message()
        msg.topic = topic
        msg.body = f"java-{i}".encode()
        msg.tag = "J"
        try:
            if not producer.send(msg).message_id:
                problem(f"send {i}: no message id")
        except Exception as e:
            fatal(f"send {i}: {e!r}")
        bodies.add(msg.body)

    # the broker indexes a stored message into its consume queue a moment
    # later (ReputMessageService): pull once the queues' ends hold all n
    def end_offset(qid):
        oreq = service_pb2.QueryOffsetRequest()
        oreq.message_queue.CopyFrom(queue(topic, broker, qid))
        oreq.query_offset_policy = definition_pb2.END
        return stub.QueryOffset(oreq, metadata=META, timeout=10)

    deadline = time.time() + 30
    while time.time() < deadline and sum(end_offset(q).offset for q in qids) < n:
        time.sleep(0.2)

    pulled = []
    end_sum = 0
    for qid in sorted(qids):
        preq = service_pb2.PullMessageRequest()
        preq.group.name = "ClJavaGroup"
        preq.message_queue.CopyFrom(queue(topic, broker, qid))
        preq.offset = 0
        preq.batch_size = 32
        preq.filter_expression.type = definition_pb2.TAG
        preq.filter_expression.expression = "*"
        for r in stub.PullMessage(preq, metadata=META, timeout=10):
            kind = r.WhichOneof("content")
            if kind == "status" and r.status.code not in (definition_pb2.OK,
                                                          definition_pb2.MESSAGE_NOT_FOUND):
                problem(f"PullMessage queue {qid}: {r.status}")
            elif kind == "message":
                pulled.append(r.message.body)
        oresp = end_offset(qid)
        if oresp.status.code != definition_pb2.OK:
            problem(f"QueryOffset END queue {qid}: {oresp.status}")
        end_sum += oresp.offset
    if sorted(pulled) != sorted(bodies):
        problem(f"pulled {sorted(pulled)}, sent {sorted(bodies)}")
    if end_sum != n:
        problem(f"QueryOffset END adds up to {end_sum}, sent {n}")

    q0 = min(qids)
    ureq = service_pb2.UpdateOffsetRequest()
    ureq.group.name = "ClJavaGroup"
    ureq.message_queue.CopyFrom(queue(topic, broker, q0))
    ureq.offset = 1
    uresp = stub.UpdateOffset(ureq, metadata=META, timeout=10)
    if uresp.status.code != definition_pb2.OK:
        problem(f"UpdateOffset: {uresp.status}")
    greq = service_pb2.GetOffsetRequest()
    greq.group.name = "ClJavaGroup"
    greq.message_queue.CopyFrom(queue(topic, broker, q0))
    gresp = stub.GetOffset(greq, metadata=META, timeout=10)
    if gresp.status.code != definition_pb2.OK or gresp.offset != 1:
        problem(f"GetOffset after UpdateOffset 1: {gresp.status.code} {gresp.offset}")

    # no POP on a 4.9.7 broker: a status, not a hang
    rreq = service_pb2.ReceiveMessageRequest()
    rreq.group.name = "ClJavaGroup"
    rreq.message_queue.CopyFrom(queue(topic, broker, -1))
    rreq.filter_expression.type = definition_pb2.TAG
    rreq.filter_expression.expression = "*"
    rreq.batch_size = 4
    rreq.invisible_duration.seconds = 10
    rreq.long_polling_timeout.seconds = 1
    codes = [r.status.code for r in stub.ReceiveMessage(rreq, metadata=META, timeout=10)
             if r.WhichOneof("content") == "status"]
    if codes != [definition_pb2.NOT_IMPLEMENTED]:
        problem(f"ReceiveMessage against the 4.9.7 broker answered {codes}, "
                f"want [NOT_IMPLEMENTED ({definition_pb2.NOT_IMPLEMENTED})]")
    channel.close()
    finish()


if __name__ == "__main__":
    main()
