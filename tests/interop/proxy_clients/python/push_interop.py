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
After both expectations are met the consumers are watched 3 s more: nothing
else may arrive.

argv: endpoint topic N.  Prints "RESULT ok" or "RESULT fail <why>".
"""
import collections
import os
import sys
import threading
import time

from rocketmq import (ClientConfiguration, ConsumeResult, Credentials,
                      FilterExpression, Message, MessageListener, Producer,
                      PushConsumer)
from rocketmq.grpc_protocol import FilterType

FAILURES = 2  # times the listener fails message n = 0


class Recorder(MessageListener):
    def __init__(self, name, fail_n0):
        self.name = name
        self.fail_n0 = fail_n0
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
        if self.fail_n0 and n == 0 and message.delivery_attempt <= FAILURES:
            return ConsumeResult.FAILURE
        return ConsumeResult.SUCCESS

    def snapshot(self):
        with self.lock:
            return {k: list(v) for k, v in self.attempts.items()}, list(self.bad)


def main():
    endpoint, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    config = ClientConfiguration(endpoint, Credentials())
    producer = Producer(config, (topic,))
    producer.startup()
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
    consumers = [
        PushConsumer(config, "PyPushTag", tag, {topic: FilterExpression("A")}),
        PushConsumer(config, "PyPushSql", sql,
                     {topic: FilterExpression(f"n >= {n - 3}", FilterType.SQL)}),
    ]
    for c in consumers:
        c.startup()
    end = time.time() + 60
    while time.time() < end:
        if tag.snapshot()[0] == want_tag and sql.snapshot()[0] == want_sql:
            break
        time.sleep(0.2)
    time.sleep(3)  # anything more would be a duplicate or a filter miss
    problems = []
    for rec, want in ((tag, want_tag), (sql, want_sql)):
        got, bad = rec.snapshot()
        problems += bad
        for k in sorted(set(got) | set(want)):
            if sorted(got.get(k, [])) != want.get(k, []):
                problems.append(f"{rec.name}: n {k} delivered with attempts {sorted(got.get(k, []))}, "
                                f"expected {want.get(k, [])}")
    for c in consumers:
        c.shutdown()
    producer.shutdown()
    print("RESULT fail " + "; ".join(problems[:5]) if problems else "RESULT ok", flush=True)
    os._exit(1 if problems else 0)


if __name__ == "__main__":
    threading.Thread(target=lambda: (time.sleep(150), print("RESULT fail hard timeout", flush=True),
                                     os._exit(3)), daemon=True).start()
    try:
        main()
    except BaseException as e:  # noqa: B902 -- any escape is a failure
        print(f"RESULT fail uncaught {e!r}", flush=True)
        os._exit(1)
