"""The SimpleConsumer receive loop the 5.x Python client tests share."""
import time

# an empty long poll is an answer, not an error (MESSAGE_NOT_FOUND, 40401)
EMPTY = ("MESSAGE_NOT_FOUND", "no new message", "40401")


def receive_until(consumer, want, invisible_s, deadline, problem):
    """Receive until `want` messages or the wall-clock `deadline`; a receive
    failing for another reason than an empty poll goes to problem(text)."""
    got = []
    while len(got) < want and time.time() < deadline:
        msgs = []
        try:
            msgs = consumer.receive(16, invisible_s) or []
        except Exception as e:
            if not any(w in str(e) for w in EMPTY):
                problem(f"receive: {e!r}")
        got.extend(msgs)
        if not msgs:
            time.sleep(0.1)
    return got
