"""push_interop.py -- RocketMQ 5.x's Python client's PushConsumer
(rocketmq-python-client, gRPC: QueryAssignment, ReceiveMessage, AckMessage,
ChangeInvisibleDuration) against rmqhost's proxy plugin; run_python.sh runs
it after proxy_interop.py.

N messages alternate tag A / B and carry a user property n = 0..N-1.
- A consumer of group PyPushTag with the TAG filter "A" gets exactly the
  A messages, each once, except n = 0, which its listener fails twice: it
  comes back (the client changes its invisible duration to the backoff the
  server's settings give) with delivery attempts 1, 2, 3 and is then
  consumed.
- A consumer of group PyPushSql with the SQL92 filter "n >= N-3" gets exactly
  those three messages, each once.
- A consumer of group PyPushDlq (on a topic of its own) fails its one
  message every time: it is delivered with attempts 1 .. 17 (the group's
  retryMaxTimes, 16, plus one), then goes to %DLQ%PyPushDlq, where a
  SimpleConsumer receives it once.
After all expectations are met the consumers are watched 3 s more: nothing
else may arrive.

argv: endpoint topic N dlq_topic.  Prints "RESULT ok" or "RESULT fail <why>".
"""
import collections
import os
import sys
import threading
import time

from client_run import run_main
from rocketmq import (ClientConfiguration, ConsumeResult, Credentials,
                      FilterExpression, Message, MessageListener, Producer,
                      PushConsumer, SimpleConsumer)
from rocketmq.grpc_protocol import FilterType

FAILURES = 2  # times the listener fails message n = 0
MAX_ATTEMPTS = 17  # a group's default retryMaxTimes (16) + 1


class Recorder(MessageListener):
    def __init__(self, name, fail_n0, fail_all=False):
        self.name = name
        self.fail_n0 = fail_n0
        self.fail_all = fail_all
        self.lock = threading.Lock()
        self.attempts = collections.defaultdict(list)  # n -> delivery attempts
        self.bad = []

    def consume(self, message):
        try:
            n = int(message.properties.get("n"))
        except (TypeError, ValueError):
            with self.lock:
                self.bad.append(f"{self.name}: a message without n: {message.body!r}")
            return ConsumeResult.SUCCESS
        with self.lock:
            self.attempts[n].append(message.delivery_attempt)
            if message.body != f"push-{n}".encode():
                self.bad.append(f"{self.name}: n {n} body {message.body!r}")
        if self.fail_all or (self.fail_n0 and n == 0 and message.delivery_attempt <= FAILURES):
            return ConsumeResult.FAILURE
        return ConsumeResult.SUCCESS

    def snapshot(self):
        with self.lock:
            return {k: list(v) for k, v in self.attempts.items()}, list(self.bad)


def dead_letters(config, group):
    """What a SimpleConsumer of %DLQ%<group> receives: exactly push-0."""
    dlq_topic = f"%DLQ%{group}"
    reader = None
    end = time.time() + 30
    while reader is None and time.time() < end:  # the route comes with the topic
        c = SimpleConsumer(config, "PyDlqReader", {dlq_topic: FilterExpression("*")},
                           await_duration=1)
        try:
            c.startup()
            reader = c
        except Exception:
            time.sleep(0.5)
    if reader is None:
        return [f"no route to {dlq_topic}"]
    got = []
    end = time.time() + 30
    while time.time() < end and not got:
        got += reader.receive(16, 30) or []
        time.sleep(0.1)
    time.sleep(1)
    got += reader.receive(16, 30) or []
    for m in got:
        reader.ack(m)
    reader.shutdown()
    if [m.body for m in got] != [b"push-0"]:
        return [f"{dlq_topic} holds {[m.body for m in got]}"]
    return []


def main():
    endpoint, topic, n, dlq_topic = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    config = ClientConfiguration(endpoint, Credentials())
    producer = Producer(config, (topic, dlq_topic))
    producer.startup()
    msg = Message()
    msg.topic = dlq_topic
    msg.body = b"push-0"
    msg.tag = "D"
    msg.add_property("n", "0")
    producer.send(msg)
    for i in range(n):
        msg = Message()
        msg.topic = topic
        msg.body = f"push-{i}".encode()
        msg.tag = "A" if i % 2 == 0 else "B"
        msg.add_property("n", str(i))
        producer.send(msg)

    tag = Recorder("tag", True)
    sql = Recorder("sql", False)
    want_tag = {i: [1] for i in range(0, n, 2)}
    want_tag[0] = list(range(1, FAILURES + 2))
    want_sql = {i: [1] for i in range(n - 3, n)}
    dlq = Recorder("dlq", False, fail_all=True)
    want_dlq = {0: list(range(1, MAX_ATTEMPTS + 1))}
    consumers = [
        PushConsumer(config, "PyPushTag", tag, {topic: FilterExpression("A")}),
        PushConsumer(config, "PyPushSql", sql,
                     {topic: FilterExpression(f"n >= {n - 3}", FilterType.SQL)}),
        PushConsumer(config, "PyPushDlq", dlq, {dlq_topic: FilterExpression("*")}),
    ]
    for c in consumers:
        c.startup()
    end = time.time() + 90
    while time.time() < end:
        if (tag.snapshot()[0] == want_tag and sql.snapshot()[0] == want_sql
                and dlq.snapshot()[0] == want_dlq):
            break
        time.sleep(0.2)
    time.sleep(3)  # anything more would be a duplicate or a filter miss
    problems = []
    for rec, want in ((tag, want_tag), (sql, want_sql), (dlq, want_dlq)):
        got, bad = rec.snapshot()
        problems += bad
        for k in sorted(set(got) | set(want)):
            if sorted(got.get(k, [])) != want.get(k, []):
                problems.append(f"{rec.name}: n {k} delivered with attempts {sorted(got.get(k, []))}, "
                                f"expected {want.get(k, [])}")
    problems += dead_letters(config, "PyPushDlq")
    for c in consumers:
        c.shutdown()
    producer.shutdown()
    print("RESULT fail " + "; ".join(problems[:5]) if problems else "RESULT ok", flush=True)
    os._exit(1 if problems else 0)


if __name__ == "__main__":
    run_main(main, 200)
