#!/usr/bin/env bash
# install_python.sh SRC_DIR OUT_DIR — the fixture of proxy_interop_python:
# a venv at OUT_DIR/venv (python3 -m venv; never the system's site-packages)
# with rocketmq-python-client and its dependencies from PyPI, pinned by
# SRC_DIR/requirements.txt. Idempotent (a venv that already holds exactly
# those pins is kept). A client that cannot be installed fails here, saying
# what it could not get.
set -euo pipefail
src=${1:?usage: install_python.sh SRC_DIR OUT_DIR}
out=${2:?usage: install_python.sh SRC_DIR OUT_DIR}
req=$src/requirements.txt
client=$(grep -E '^rocketmq-python-client==' "$req")
venv=$out/venv
want=$(grep -vE '^(#|$)' "$req" | tr 'A-Z_' 'a-z-' | sort)
if [[ -x $venv/bin/python ]] &&
   [[ $("$venv/bin/python" -m pip freeze 2>/dev/null | tr 'A-Z_' 'a-z-' | sort) == "$want" ]]; then
  echo "proxy python interop: $venv already holds $client"
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "proxy python interop: could not get $client: no python3 (make deps-test installs it)" >&2
  exit 1
fi
rm -rf "$venv"
mkdir -p "$out"
if ! python3 -m venv "$venv" >"$out/venv.log" 2>&1; then
  echo "proxy python interop: could not get $client: python3 -m venv failed" \
       "(Debian: apt-get install python3-venv); it said:" >&2
  tail -n 5 "$out/venv.log" >&2
  exit 1
fi
if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
     -r "$req" >"$out/pip.log" 2>&1; then
  echo "proxy python interop: could not get $client (or a package it needs) from PyPI" \
       "with pip; pip said:" >&2
  tail -n 20 "$out/pip.log" >&2
  exit 1
fi
echo "proxy python interop: installed $client into $venv"
