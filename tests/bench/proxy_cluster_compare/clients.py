"""clients.py ENDPOINT TOPIC GROUP SECONDS -- two producers of TOPIC (with a
transaction checker that commits) and two SimpleConsumers of GROUP through
the proxy at ENDPOINT, receiving, for SECONDS; prints their client ids.
Used by tests/bench/proxy_cluster_compare.sh."""
import os
import sys
import threading
import time

from rocketmq import (ClientConfiguration, Credentials, FilterExpression, Producer,
                      SimpleConsumer, TransactionChecker)
from rocketmq.grpc_protocol import TransactionResolution


class Commit(TransactionChecker):
    def check(self, message):
        return TransactionResolution.COMMIT


def poll(consumer):
    while True:
        try:
            consumer.receive(1, 10)
        except Exception:
            time.sleep(1)


def main():
    endpoint, topic, group, secs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    cfg = ClientConfiguration(endpoint, Credentials())
    producers = [Producer(cfg, (topic,), checker=Commit()) for _ in range(2)]
    consumers = [SimpleConsumer(cfg, group, {topic: FilterExpression("*")}, await_duration=1)
                 for _ in range(2)]
    for c in producers + consumers:
        c.startup()
    print("producers", [p.client_id for p in producers],
          "consumers", [c.client_id for c in consumers], flush=True)
    for c in consumers:
        threading.Thread(target=poll, args=(c,), daemon=True).start()
    time.sleep(secs)
    os._exit(0)  # the client's threads would keep it alive


if __name__ == "__main__":
    main()
