#!/bin/sh
# Fetches the Java RocketMQ peers the interop tests drive (clients, mqadmin,
# broker and NameServer) from Maven Central into OUT/<set>/ (one directory of
# jars per peers/<set>/pom.xml), cached in the user's Maven repository.
# Idempotent: a set whose jars are already there is not fetched again.
# Usage: fetch_java_peers.sh OUT_DIR [SET...]   (default: every set)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: fetch_java_peers.sh OUT_DIR [SET...]}
shift
sets=${*:-$(cd "$here/peers" && ls)}
for tool in java javac mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fetch_java_peers: '$tool' is missing (make deps-test installs default-jdk-headless and maven)" >&2
    exit 1
  fi
done
mkdir -p "$out"
# Absolute: maven resolves a relative outputDirectory against the pom's
# folder, so the jars would land in the source tree.
out=$(cd "$out" && pwd)
for set in $sets; do
  pom="$here/peers/$set/pom.xml"
  [ -f "$pom" ] || { echo "fetch_java_peers: no such set '$set'" >&2; exit 1; }
  dest="$out/$set"
  # The stamp names the pom's content, so an edited set is fetched again.
  sum=$(cksum < "$pom" | cut -d' ' -f1)
  if [ -f "$dest/.fetched" ] && [ "$(cat "$dest/.fetched")" = "$sum" ]; then
    continue
  fi
  rm -rf "$dest"
  mkdir -p "$dest"
  echo "fetch_java_peers: fetching $set from Maven Central"
  if ! mvn -B -q -f "$pom" \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
      -DoutputDirectory="$dest" -DincludeScope=runtime >"$dest.log" 2>&1; then
    echo "fetch_java_peers: could not get the Java peers of set '$set' (artifacts of $pom)" >&2
    echo "fetch_java_peers: is Maven Central reachable? maven said:" >&2
    tail -n 20 "$dest.log" >&2
    exit 1
  fi
  echo "$sum" > "$dest/.fetched"
done
