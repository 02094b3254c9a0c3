"""kill9_interop.py -- a kill -9 of rmqhostd during POP consumption by
RocketMQ 5.x's Python client (rocketmq-python-client); run_python.sh runs
phase 1, kills the daemon with SIGKILL, starts it again on the same state
and runs phase 2 against the proxy's new address.

phase 1: N messages are sent and all received (a 10 s invisible duration),
  each once with attempt 1; the even ones are acknowledged; the message ids
  of both halves go to STATE_FILE.
phase 2: a new SimpleConsumer of the same group receives exactly the odd
  (unacknowledged) ones, each once, with attempt 2, and acknowledges them;
  once their invisible duration has passed (plus 2 s) nothing else comes
  back: no acknowledgement was lost, no unacknowledged message either.

argv: phase1|phase2 endpoint topic N STATE_FILE.
Prints "RESULT ok" or "RESULT fail <why>".
"""
import json
import sys
import time

import pop_receive
from client_run import finish, problems, run_main
from rocketmq import (ClientConfiguration, Credentials, FilterExpression,
                      Message, Producer, SimpleConsumer)

INVISIBLE_S = 10
GROUP = "PyKill9Group"


def receive_until(consumer, want, invisible_s, deadline):
    return pop_receive.receive_until(consumer, want, invisible_s, deadline, problems.append)


def consumer_of(config, topic):
    # the topic's route comes back with the restarted broker's registration
    end = time.time() + 30
    while True:
        c = SimpleConsumer(config, GROUP, {topic: FilterExpression("*")}, await_duration=1)
        try:
            c.startup()
            return c
        except Exception as e:
            if time.time() > end:
                raise e
            time.sleep(0.5)


def phase1(config, topic, n, state_file):
    producer = Producer(config, (topic,))
    producer.startup()
    ids = {}
    for i in range(n):
        msg = Message()
        msg.topic = topic
        msg.body = f"kill9-{i}".encode()
        msg.add_property("i", str(i))
        ids[i] = producer.send(msg).message_id
    consumer = consumer_of(config, topic)
    got = receive_until(consumer, n, INVISIBLE_S, time.time() + 30)
    seen = {}
    for m in got:
        i = int(m.properties.get("i", "-1"))
        seen[i] = seen.get(i, 0) + 1
        if m.message_id != ids.get(i) or m.delivery_attempt != 1:
            problems.append(f"i {i} id {m.message_id} attempt {m.delivery_attempt}")
        if i % 2 == 0:
            consumer.ack(m)
    if seen != {i: 1 for i in range(n)}:
        problems.append(f"received {seen}, expected each of {n} once")
    with open(state_file, "w") as f:
        json.dump({"acked": [ids[i] for i in range(0, n, 2)],
                   "unacked": [ids[i] for i in range(1, n, 2)]}, f)
    # no shutdown: the daemon is killed under this client's session


def phase2(config, topic, n, state_file):
    with open(state_file) as f:
        state = json.load(f)
    consumer = consumer_of(config, topic)
    want = set(state["unacked"])
    got = receive_until(consumer, len(want), 60, time.time() + 60)
    ids = [m.message_id for m in got]
    if sorted(ids) != sorted(want):
        problems.append(f"after kill -9: received {len(ids)} ({len(set(ids) & want)} of the "
                        f"{len(want)} unacknowledged, {len(set(ids) & set(state['acked']))} "
                        f"acknowledged ones)")
    for m in got:
        if m.delivery_attempt != 2:
            problems.append(f"{m.body!r} came back with attempt {m.delivery_attempt}")
        consumer.ack(m)
    back = receive_until(consumer, 1, 60, time.time() + INVISIBLE_S + 2)
    if back:
        problems.append(f"{len(back)} more came back: "
                        f"{[(m.body, m.delivery_attempt) for m in back][:3]}")
    consumer.shutdown()


def main():
    phase, endpoint, topic, n, state_file = sys.argv[1:6]
    config = ClientConfiguration(endpoint, Credentials())
    (phase1 if phase == "phase1" else phase2)(config, topic, int(n), state_file)
    finish()


if __name__ == "__main__":
    run_main(main, 150)
