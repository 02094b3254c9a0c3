#!/bin/sh
# Runs one Java RocketMQ peer of the interop tests in the foreground:
#   java_peer.sh PEERS_DIR SET[:EXTRA_CLASSPATH] MAIN_CLASS [ARGS...]
# SET is a jar directory fetch_java_peers.sh made (client-4.9.8, tools-4.9.8,
# server-4.9.7, client-5.3.3, grpc-client-java-5). It execs java, so the caller's pid is the
# JVM's: a test stops it by that pid (or its process group). The JVM gets a
# ROCKETMQ_HOME whose conf/ holds quiet logback files, and a private user.home
# (RMQ_JAVA_HOME_DIR, default a fresh temporary directory) so nothing lands in
# the real home. RMQ_JAVA_OPTS adds JVM options (e.g. -Xmx).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
peers=${1:?usage: java_peer.sh PEERS_DIR SET[:EXTRA_CP] MAIN_CLASS [ARGS...]}
set_spec=${2:?set}
main=${3:?main class}
shift 3
set_name=${set_spec%%:*}
extra_cp=""
case "$set_spec" in *:*) extra_cp=":${set_spec#*:}" ;; esac
[ -d "$peers/$set_name" ] || { echo "java_peer: no jars in $peers/$set_name (run fetch_java_peers.sh)" >&2; exit 1; }
user_home=${RMQ_JAVA_HOME_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rmq-java-home.XXXXXX")}
# Java 17 closes the JDK internals the 4.x store and Netty reach into
# (mapped-buffer cleaners, direct memory).
opens="--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
--add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED \
--add-opens=java.base/java.lang=ALL-UNNAMED \
--add-opens=java.base/java.util=ALL-UNNAMED"
# shellcheck disable=SC2086
exec java -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 ${RMQ_JAVA_OPTS:--Xmx384m} $opens \
  -Drocketmq.home.dir="$here/home" -Duser.home="$user_home" \
  -Drocketmq.client.logRoot="$user_home/logs" -Drocketmq.client.logLevel=WARN \
  -cp "$peers/$set_name/*$extra_cp" "$main" "$@"
