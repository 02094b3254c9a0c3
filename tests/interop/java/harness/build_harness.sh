#!/bin/sh
# Compiles RmqInterop.java against each client set's jars (fetched by
# fetch_java_peers.sh) into OUT/<set>/, so one source serves the 4.9.8 and
# the 5.x remoting client. Idempotent: recompiled only when the source or
# the jars changed.
# Usage: build_harness.sh PEERS_DIR OUT_DIR [SET...]   (default client-4.9.8 client-5.3.3)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
peers=${1:?usage: build_harness.sh PEERS_DIR OUT_DIR [SET...]}
out=${2:?out dir}
shift 2
sets=${*:-client-4.9.8 client-5.3.3}
command -v javac >/dev/null 2>&1 || { echo "build_harness: 'javac' is missing (make deps-test installs a JDK)" >&2; exit 1; }
for set in $sets; do
  [ -f "$peers/$set/.fetched" ] || { echo "build_harness: no jars of $set in $peers (fetch_java_peers.sh could not get them)" >&2; exit 1; }
  dest="$out/$set"
  stamp=$(cat "$here/RmqInterop.java" "$peers/$set/.fetched" | cksum | cut -d' ' -f1)
  if [ -f "$dest/.built" ] && [ "$(cat "$dest/.built")" = "$stamp" ]; then
    continue
  fi
  rm -rf "$dest"
  mkdir -p "$dest"
  javac -nowarn -encoding UTF-8 --release 11 -cp "$peers/$set/*" -d "$dest" "$here/RmqInterop.java"
  echo "$stamp" > "$dest/.built"
done
