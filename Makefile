# The front door: `make run` and `make test` work on a fresh Debian 12 machine.
# This file only orchestrates: dependency checks, cmake configure/build/install,
# ctest and fuzz runs. What gets built and how lives in the CMakeLists.txt files.

BUILD_DIR  ?= build
ASAN_DIR   ?= build-asan
CLANG_DIR  ?= build-clang
FUZZ_DIR   ?= build-fuzz
PREFIX     ?= /usr/local
CONF_DIR   ?= conf.d
ARGS       ?=
JOBS       ?= 2
FUZZ_SECONDS ?= 30
FUZZ_FLAGS ?=
CMAKE      ?= cmake
CTEST      ?= ctest

# Debian packages. Some tools are handled apart, by command: nodesource's
# nodejs ships npm and conflicts with Debian's npm package, and a machine may
# already have a JDK, Maven or Go that did not come from Debian; each is
# installed (as the package after the '=') only when its command is missing.
BUILD_DEBS := libuv1-dev libconfig-dev libjansson-dev libcmocka-dev zlib1g-dev liburcu-dev \
              libyaml-dev libssl-dev libdeflate-dev pkg-config cmake make gcc \
              libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev
# clang catches a different set of warnings than gcc; the test target builds
# the whole tree with it too.
# python3-venv: the 5.x Python client test installs rocketmq-python-client
# from PyPI into a venv of the build tree.
TEST_DEBS  := $(BUILD_DEBS) nodejs clang clang-format valgrind python3 python3-venv openssl
# The interop tests drive the Java clients, mqadmin and a Java broker (fetched
# from Maven Central by tests/interop/java/fetch_java_peers.sh).
# The Go interop test builds github.com/apache/rocketmq-client-go/v2 (pinned
# in tests/interop/go/go.mod) with the go command; the upstream tarball's
# /usr/local/go/bin counts as installed (it is appended to PATH below).
TEST_CMDS  := npm=npm java=default-jdk-headless javac=default-jdk-headless mvn=maven go=golang-go
FUZZ_DEBS  := $(BUILD_DEBS) clang libclang-rt-14-dev
export PATH := $(PATH):/usr/local/go/bin

# LIBDIR is pinned to lib: the install layout contract is PREFIX/lib/... and
# the daemon bakes PREFIX/lib/rmqhost/plugins in as its default plugin dir.
# Every configure passes it so `make run` and `make install` builds agree.
CONFIGURE_COMMON := -DCMAKE_INSTALL_LIBDIR=lib
RELEASE_FLAGS := -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG"
# -O1 -g: readable sanitizer stack traces without the -O0 slowdown.
ASAN_FLAGS := -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DRMQ_SANITIZE=ON

UBSAN_ENV := UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: all deps deps-test deps-fuzz configure build run test test-release test-asan \
        build-clang install fuzz clean format check-format help

all: build

help:
	@echo "make run      build (Release) and run $(BUILD_DIR)/bin/rmqhostd -c $(CONF_DIR) \$$ARGS"
	@echo "make test     Release suite, ASan+UBSan suite, clang build"
	@echo "make install  PREFIX=$(PREFIX): daemon, plugins, conf.d, SDK headers, pkg-config, CMake packages, test kit, rmqhost-replay"
	@echo "make fuzz     libFuzzer targets, FUZZ_SECONDS=$(FUZZ_SECONDS) each"
	@echo "make format / check-format / clean"

# ensure_debs(packages, command=package pairs): install what is missing as
# root, otherwise print the exact command and stop with status 2.
define ensure_debs
	@set -e; \
	if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "deps: dpkg-query not found (not Debian?); assuming dependencies are present"; \
	  exit 0; \
	fi; \
	missing=""; \
	for p in $(1); do \
	  st=$$(dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null || true); \
	  case "$$st" in *"ok installed"*) ;; *) missing="$$missing $$p" ;; esac; \
	done; \
	for cp in $(2); do \
	  command -v "$${cp%%=*}" >/dev/null 2>&1 || case " $$missing " in \
	    *" $${cp#*=} "*) ;; *) missing="$$missing $${cp#*=}" ;; esac; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "deps: installing$$missing"; \
	  apt-get update; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	else \
	  echo "deps: missing Debian packages:$$missing"; \
	  echo "run:  sudo apt-get install -y$$missing"; \
	  exit 2; \
	fi
endef

deps:
	$(call ensure_debs,$(BUILD_DEBS),)

deps-test:
	$(call ensure_debs,$(TEST_DEBS),$(TEST_CMDS))

deps-fuzz:
	$(call ensure_debs,$(FUZZ_DEBS),)

configure: deps
	$(CMAKE) -S . -B $(BUILD_DIR) $(RELEASE_FLAGS) $(CONFIGURE_COMMON)

build: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS)

run: build
	exec $(BUILD_DIR)/bin/rmqhostd -c $(CONF_DIR) $(ARGS)

# Both suites always run, so one failure does not hide the other's; the
# target fails if either suite or the clang build failed.
test: deps-test
	@rc=0; \
	$(MAKE) --no-print-directory test-release || rc=1; \
	$(MAKE) --no-print-directory test-asan || rc=1; \
	$(MAKE) --no-print-directory build-clang || rc=1; \
	$(MAKE) --no-print-directory check-format || rc=1; \
	if [ $$rc -ne 0 ]; then echo "make test: FAILED (see above)"; exit 1; fi; \
	echo "make test: Release suite, ASan+UBSan suite, clang build and format check all passed"

test-release:
	$(CMAKE) -S . -B $(BUILD_DIR) $(RELEASE_FLAGS) $(CONFIGURE_COMMON) -DRMQ_BUILD_TESTS=ON
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS)
	$(UBSAN_ENV) $(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

# LeakSanitizer needs ptrace, which some containers forbid; probe it with a
# tiny leak-free program and fall back to detect_leaks=0 only when it cannot run.
test-asan:
	$(CMAKE) -S . -B $(ASAN_DIR) $(ASAN_FLAGS) $(CONFIGURE_COMMON) -DRMQ_BUILD_TESTS=ON
	$(CMAKE) --build $(ASAN_DIR) -j$(JOBS)
	@set -e; probe=$(ASAN_DIR)/lsan_probe; \
	printf 'int main(void){return 0;}\n' > $$probe.c; \
	leaks=0; \
	if cc -fsanitize=address $$probe.c -o $$probe 2>/dev/null && \
	   ASAN_OPTIONS=detect_leaks=1 "$$probe" >/dev/null 2>&1; then leaks=1; fi; \
	[ $$leaks = 1 ] || echo "test-asan: LeakSanitizer unavailable here; running with detect_leaks=0"; \
	ASAN_OPTIONS=detect_leaks=$$leaks:abort_on_error=0 $(UBSAN_ENV) \
	  $(CTEST) --test-dir $(ASAN_DIR) --output-on-failure -j$(JOBS)

build-clang:
	@if ! command -v clang >/dev/null 2>&1; then \
	  echo "build-clang: clang not installed"; exit 1; fi
	$(CMAKE) -S . -B $(CLANG_DIR) -DCMAKE_C_COMPILER=clang $(RELEASE_FLAGS) $(CONFIGURE_COMMON) \
	  -DRMQ_BUILD_TESTS=ON
	$(CMAKE) --build $(CLANG_DIR) -j$(JOBS)

install: deps
	$(CMAKE) -S . -B $(BUILD_DIR) $(RELEASE_FLAGS) $(CONFIGURE_COMMON) \
	  -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS)
	$(CMAKE) --install $(BUILD_DIR)

# The libFuzzer targets are the fuzz_* executables that link libFuzzer
# (tests/fuzz/targets/list_fuzz_targets.sh; the fuzz_*_corpus_replay
# programs of every build are not targets). A target's seed corpus, if
# any, is a directory next to its source (tests/fuzz/<area>/): corpus/<target>,
# <target>_corpus, <target>.corpus, or corpus/ beside <target>.c. Seeds are
# read only; new inputs go to $(FUZZ_DIR)/corpus/<target> so the source tree
# stays clean.
fuzz: deps-fuzz
	$(CMAKE) -S . -B $(FUZZ_DIR) -DCMAKE_C_COMPILER=clang -DRMQ_FUZZ=ON \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CONFIGURE_COMMON)
	$(CMAKE) --build $(FUZZ_DIR) -j$(JOBS)
	@set -e; root=$$(pwd); fdir=$(FUZZ_DIR); \
	case "$$fdir" in /*) ;; *) fdir="$$root/$$fdir" ;; esac; \
	targets=$$(sh tests/fuzz/targets/list_fuzz_targets.sh "$$fdir"); \
	if [ -z "$$targets" ]; then echo "fuzz: no libFuzzer targets were built"; exit 1; fi; \
	failed=""; \
	for t in $$targets; do \
	  name=$$(basename "$$t"); \
	  seeds=""; \
	  src=$$(find tests/fuzz -name "$$name.c" 2>/dev/null | head -n1); \
	  for c in $$(find tests/fuzz -type d \( -path "*/corpus/$$name" -o -name "$${name}_corpus" \
	              -o -name "$$name.corpus" \) 2>/dev/null); do seeds="$$seeds $$root/$$c"; done; \
	  if [ -z "$$seeds" ] && [ -n "$$src" ] && [ -d "$$(dirname "$$src")/corpus" ]; then \
	    seeds="$$root/$$(dirname "$$src")/corpus"; fi; \
	  work="$$fdir/corpus/$$name"; mkdir -p "$$work" "$$fdir/artifacts"; \
	  echo "fuzz: $$name for $(FUZZ_SECONDS)s, seeds:$${seeds:- none}"; \
	  if ! (cd "$$fdir" && $(UBSAN_ENV) "$$t" -max_total_time=$(FUZZ_SECONDS) \
	        -artifact_prefix="$$fdir/artifacts/$$name-" $(FUZZ_FLAGS) "$$work" $$seeds); then \
	    failed="$$failed $$name"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed (inputs in $$fdir/artifacts)"; exit 1; fi; \
	echo "fuzz: all targets ran $(FUZZ_SECONDS)s without a finding"

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(CLANG_DIR) $(FUZZ_DIR)

# Our sources only: tracked .c/.h outside contrib/ (third-party code keeps its style).
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' | grep -v '^contrib/')

format:
	clang-format -i $(FORMAT_FILES)

check-format:
	clang-format --dry-run -Werror $(FORMAT_FILES)
