#!/usr/bin/env python3
"""Runs every applicable mqadmin 4.9.8 subcommand against one all-in-one
rmqhostd (namesrv + broker-client-mgr + filter + store + ACL on the broker)
in one JVM (MqadminBatch.java), then checks each output (check_outputs.py).

Usage: run_mqadmin_test.py --rmqhostd BIN --plugin-dir DIR --peers DIR
                           --java-peer SCRIPT [--work DIR] [--keep]
Exit 0 when every step's output is as expected. The daemon and the JVM are
stopped whatever happens.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_outputs  # noqa: E402

ADMIN_KEY, ADMIN_SECRET = "mqaAdmin", "mqaAdminSecret1"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def write(path, text, mode=None):
    with open(path, "w") as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, mode)


def configure(work, plugins, ns_port):
    conf = os.path.join(work, "conf.d")
    state = os.path.join(work, "state")
    os.makedirs(conf)
    os.makedirs(state)
    acl = os.path.join(work, "plain_acl.yml")
    # loopback is a global white address: 4.9.8's client signs QUERY_MESSAGE's
    # _UNIQUE_KEY_QUERY field, which 4.9.8's broker (and rmqhost, as it) leaves
    # out of the signature, so a signed queryMsgByKey is refused by both
    write(acl, "globalWhiteRemoteAddresses:\n- 127.0.0.1\naccounts:\n"
          "- accessKey: %s\n  secretKey: %s\n  admin: true\n" % (ADMIN_KEY, ADMIN_SECRET), 0o600)
    write(os.path.join(conf, "host.conf"),
          'state_dir = "%s";\nio_threads = 2;\nlog_level = "info";\n'
          'servers = { namesrv = { listen = "127.0.0.1:%d"; };\n'
          '            broker = { listen = "127.0.0.1:0"; }; };\n' % (state, ns_port))
    write(os.path.join(conf, "10-namesrv.conf"),
          'plugin = { name = "namesrv"; path = "%s/namesrv.so"; server = "namesrv"; };\n' % plugins)
    write(os.path.join(conf, "20-bcm.conf"),
          'plugin = { name = "broker-client-mgr"; path = "%s/broker-client-mgr.so"; '
          'server = "broker";\n  settings = { namesrvAddr = "127.0.0.1:%d"; brokerIP1 = "127.0.0.1"; '
          'brokerClusterName = "MqaCluster"; brokerName = "broker-mqa";\n'
          '    traceTopicEnable = true; }; };\n' % (plugins, ns_port))
    write(os.path.join(conf, "30-filter.conf"),
          'plugin = { name = "filter"; path = "%s/filter.so"; server = "broker"; };\n' % plugins)
    # a 5 s put-latency window: brokerStatus shows a closed one within the run
    write(os.path.join(conf, "40-store.conf"),
          'plugin = { name = "store"; path = "%s/store.so"; server = "broker";\n'
          '  settings = { mappedFileSizeCommitLog = 4194304; putStatsWindowMillis = 5000; }; };\n'
          % plugins)
    write(os.path.join(conf, "50-acl.conf"),
          'plugin = { name = "acl-broker"; path = "%s/acl.so"; server = "broker";\n'
          '  settings = { role = "broker"; aclFile = "%s"; }; };\n' % (plugins, acl))
    return conf, state


def broker_port(state, deadline):
    path = os.path.join(state, "listen.addrs")
    while time.time() < deadline:
        if os.path.exists(path):
            for line in open(path):
                parts = line.split()
                if len(parts) == 2 and parts[0] == "broker":
                    return int(parts[1].rsplit(":", 1)[1])
        time.sleep(0.1)
    return None


def tools_home(work):
    home = os.path.join(work, "home")
    os.makedirs(os.path.join(home, "conf"))
    write(os.path.join(home, "conf", "tools.yml"),
          "accessKey: %s\nsecretKey: %s\n" % (ADMIN_KEY, ADMIN_SECRET))
    # mqadmin's own logging to stderr, errors only: stdout is what is checked
    write(os.path.join(home, "conf", "logback_tools.xml"),
          '<configuration><appender name="E" class="ch.qos.logback.core.ConsoleAppender">'
          '<target>System.err</target><encoder><pattern>%-5level %logger{20} - %msg%n</pattern>'
          '</encoder></appender><root level="ERROR"><appender-ref ref="E"/></root>'
          '</configuration>\n')
    return home


def stop(proc, name):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        print("%s did not stop on SIGTERM: killed" % name)
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rmqhostd", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--peers", required=True)
    ap.add_argument("--java-peer", required=True)
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    for k in ("rmqhostd", "plugin_dir", "peers", "java_peer"):
        setattr(a, k, os.path.abspath(getattr(a, k)))

    tools = os.path.join(a.peers, "tools-4.9.8")
    if not os.path.isdir(tools):
        print("FAIL: no mqadmin jars in %s (the java_peers fixture, fetch_java_peers.sh, "
              "could not get rocketmq-tools 4.9.8)" % tools)
        return 1
    work = os.path.abspath(a.work or tempfile.mkdtemp(prefix="rmq-mqadmin-"))
    os.makedirs(work, exist_ok=True)
    daemon = jvm = None
    log = open(os.path.join(work, "rmqhostd.log"), "w")
    try:
        classes = os.path.join(work, "classes")
        os.makedirs(classes)
        subprocess.run(["javac", "-nowarn", "-cp", os.path.join(tools, "*"), "-d", classes,
                        os.path.join(HERE, "MqadminBatch.java")], check=True)
        ns_port = free_port()
        conf, state = configure(work, a.plugin_dir, ns_port)
        daemon = subprocess.Popen([a.rmqhostd, "-c", conf], stdout=log, stderr=log,
                                  start_new_session=True)
        port = broker_port(state, time.time() + 20)
        if port is None:
            print("FAIL: rmqhostd did not bind its broker server (log: %s)" % log.name)
            return 1
        home = tools_home(work)
        out = os.path.join(work, "out")
        env = dict(os.environ)
        values = {"NS": "127.0.0.1:%d" % ns_port, "BROKER": "127.0.0.1:%d" % port,
                  "OUT_DIR": out, "HOME_DIR": home}
        env["RMQ_JAVA_OPTS"] = "-Xmx384m -Djava.security.manager=allow " + " ".join(
            "-Dmqa.%s=%s" % kv for kv in values.items())
        env["RMQ_JAVA_HOME_DIR"] = os.path.join(work, "user-home")
        os.makedirs(env["RMQ_JAVA_HOME_DIR"])
        jvm = subprocess.Popen(["sh", a.java_peer, a.peers, "tools-4.9.8:" + classes,
                                "MqadminBatch", os.path.join(HERE, "steps.tsv"), out, home],
                               env=env, start_new_session=True,
                               cwd=work)  # consumerStatus -s writes <time>/<client> here
        try:
            jvm.wait(timeout=1500)
        except subprocess.TimeoutExpired:
            print("FAIL: the mqadmin batch JVM ran past 1500 s")
            return 1
        if jvm.returncode != 0:
            print("FAIL: the mqadmin batch JVM exited %d" % jvm.returncode)
            return 1
        failures = check_outputs.check(out, values)
        for f in failures:
            print("FAIL " + f)
        steps = check_outputs.read_index(out)
        print("%d steps run, %d checked expectations failed" % (len(steps), len(failures)))
        return 1 if failures else 0
    finally:
        stop(jvm, "the JVM")
        stop(daemon, "rmqhostd")
        global DAEMON_STATUS
        DAEMON_STATUS = daemon.returncode if daemon is not None else None
        log.close()
        if daemon is not None and daemon.returncode not in (0, None):
            print("rmqhostd exited %s; its log's tail:" % daemon.returncode)
            print("".join(open(log.name).readlines()[-30:]))
        if a.keep or a.work:
            print("outputs kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def run():
    """main(), failed as well when the daemon did not stop cleanly (under
    ASan a leak makes its exit status non-zero)."""
    rc = main()
    if DAEMON_STATUS not in (0, None):
        print("FAIL: rmqhostd exit status %s" % DAEMON_STATUS)
        return 1
    return rc


DAEMON_STATUS = None

if __name__ == "__main__":
    sys.exit(run())
