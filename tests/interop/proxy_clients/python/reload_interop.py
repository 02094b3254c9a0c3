"""reload_interop.py -- hot reloads of the proxy and store plugins under
RocketMQ 5.x's Python client (rocketmq-python-client); run_python.sh runs
it after the other programs.

One producer and one SimpleConsumer stay up throughout:
- N messages are sent and all received (20 s invisible); half are
  acknowledged.
- `rmqhostctl reload proxy` and `rmqhostctl reload store`.
- The other half are acknowledged with the receipt handles received before
  the reloads; N more messages are sent through the same producer and each
  is received exactly once, with attempt 1, and acknowledged.
- Once the invisible duration of every receive has passed (plus 2 s),
  nothing comes back: no acknowledgement was lost in the reloads and no message is
  lost or duplicated.

argv: endpoint topic N rmqhostctl conf_dir.
Prints "RESULT ok" or "RESULT fail <why>".
"""
import subprocess
import sys
import time

import pop_receive
from client_run import finish, problems, run_main
from rocketmq import (ClientConfiguration, Credentials, FilterExpression,
                      Message, Producer, SimpleConsumer)

INVISIBLE_S = 20


def receive_until(consumer, want, invisible_s, deadline):
    return pop_receive.receive_until(consumer, want, invisible_s, deadline, problems.append)


def send(producer, topic, first, count):
    ids = {}
    for i in range(first, first + count):
        msg = Message()
        msg.topic = topic
        msg.body = f"reload-{i}".encode()
        msg.tag = "Reload"
        msg.add_property("i", str(i))
        ids[i] = producer.send(msg).message_id
    return ids


def check_once(got, ids, what):
    seen = {}
    for m in got:
        i = int(m.properties.get("i", "-1"))
        seen[i] = seen.get(i, 0) + 1
        if m.message_id != ids.get(i) or m.delivery_attempt != 1:
            problems.append(f"{what}: i {i} id {m.message_id} attempt {m.delivery_attempt}")
    for i in ids:
        if seen.get(i) != 1:
            problems.append(f"{what}: i {i} received {seen.get(i, 0)} times")
    if set(seen) - set(ids):
        problems.append(f"{what}: unexpected {sorted(set(seen) - set(ids))}")


def main():
    endpoint, topic, n, ctl, conf = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                                     sys.argv[4], sys.argv[5])
    config = ClientConfiguration(endpoint, Credentials())
    producer = Producer(config, (topic,))
    producer.startup()
    consumer = SimpleConsumer(config, "PyReloadGroup", {topic: FilterExpression("*")},
                              await_duration=1)
    consumer.startup()

    before = send(producer, topic, 0, n)
    got = receive_until(consumer, n, INVISIBLE_S, time.time() + 30)
    check_once(got, before, "before the reloads")
    for m in got[: n // 2]:
        consumer.ack(m)

    for plugin in ("proxy", "store"):
        r = subprocess.run([ctl, "-c", conf, "reload", plugin], capture_output=True, text=True)
        print(f"reload {plugin}: {r.returncode} {r.stdout.strip()} {r.stderr.strip()}", flush=True)
        if r.returncode != 0:
            problems.append(f"rmqhostctl reload {plugin} exited {r.returncode}")

    for m in got[n // 2:]:
        try:
            consumer.ack(m)
        except Exception as e:
            problems.append(f"ack after the reloads with a receipt handle from before: {e!r}")
    after = send(producer, topic, n, n)
    got2 = receive_until(consumer, n, INVISIBLE_S, time.time() + 30)
    check_once(got2, after, "after the reloads")
    for m in got2:
        consumer.ack(m)

    # every receive so far was before now: an unacknowledged one is back by then
    quiet_until = time.time() + INVISIBLE_S + 2
    back = receive_until(consumer, 1, INVISIBLE_S, quiet_until)
    if back:
        problems.append(f"{len(back)} came back after every ack: "
                        f"{[(m.body, m.delivery_attempt) for m in back][:3]}")
    consumer.shutdown()
    producer.shutdown()
    finish()


if __name__ == "__main__":
    run_main(main, 200)
