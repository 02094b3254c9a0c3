"""What the 5.x Python client tests share around their clients: problems
found are recorded and printed as they come, one RESULT line and the exit
status at the end, a hard timeout (run_main: the script's entry with it),
and the clients' configuration and startup (a client that cannot start
ends the test)."""
import os
import sys
import threading
import time

from rocketmq import ClientConfiguration, Credentials

problems = []


def problem(text):
    print("problem:", text, flush=True)
    problems.append(text)


def finish():
    print("RESULT fail " + "; ".join(problems[:5]) if problems else "RESULT ok", flush=True)
    sys.stdout.flush()
    os._exit(1 if problems else 0)  # the client's threads would keep it alive


def fatal(text):
    problem(text)
    finish()


def hard_timeout(seconds=150):
    """Run in a daemon thread: ends the test when it hangs (a client call
    that never returns) before its harness's own timeout kills it."""
    time.sleep(seconds)
    print("RESULT fail hard timeout", flush=True)
    os._exit(3)


def run_main(main, seconds):
    """The script's entry: main() under hard_timeout(seconds); anything main
    lets escape is a failure too."""
    threading.Thread(target=hard_timeout, args=(seconds,), daemon=True).start()
    try:
        main()
    except BaseException as e:  # noqa: B902 -- any escape is a failure
        print(f"RESULT fail uncaught {e!r}", flush=True)
        os._exit(1)


def client_config(endpoint):
    """Plaintext, no credentials: the proxy of these tests."""
    return ClientConfiguration(endpoint, Credentials())


def start(what, *clients):
    """Starts each client in order; the first that fails ends the test,
    named by what."""
    try:
        for client in clients:
            client.startup()
    except Exception as e:
        fatal(f"{what} startup: {e!r}")
