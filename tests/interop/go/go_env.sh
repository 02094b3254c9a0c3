# shellcheck shell=bash
# go_env.sh — sourced by the Go interop scripts: finds the go command (PATH,
# then /usr/local/go/bin, where the upstream tarball installs it) and sets
# the environment every go call of the tests uses:
#   GOFLAGS=-mod=mod  go.mod/go.sum of tests/interop/go pin every module;
#   GOTOOLCHAIN=local never fetch another Go toolchain behind the test's back;
#   the module cache is the user's default (GOMODCACHE, ~/go/pkg/mod).
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  PATH=$PATH:/usr/local/go/bin
fi
if ! command -v go >/dev/null 2>&1; then
  echo "go interop: could not get the 'go' command (not in PATH nor /usr/local/go/bin);" \
       "make deps-test installs golang-go" >&2
  exit 1
fi
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
