# rockcache build. `make run` and `make test` are the quick start; see README.md.
#
# Objects go under $(BUILD) (build/ by default; build/asan and build/tsan for sanitizer builds).
# Every module folder's *.cc is compiled; tests/unit/**/*_test.cc form build/unit-tests and
# tests/integration/*_test.cc with the fixtures' sources in tests/support/*.cc form
# build/integration-tests (tests/support/*.h: the fixtures both programs include). By default a
# unity build: see UNITY.

# Parallel by default: one job per CPU (JOBS=N to choose); a -j on the command line wins. Only
# the top-level make sets it: a recursive make shares its parent's job slots (GNU make 4.3 does
# not show the parent's -j to the sub-make's parse, and forcing one there resets the jobserver).
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(MAKELEVEL),0)
  MAKEFLAGS += -j$(JOBS)
endif

# Test cases run this many at a time, one process each (scripts/run-tests.sh: a case that fails
# beside others is run again alone and named in the summary). TEST_JOBS=1: one process.
TEST_JOBS  ?= $(shell echo $$(( $(JOBS) + 1 )))

CXX        ?= g++
BUILD      ?= build
OPT        ?= -O2 -g
# The test programs' own code (not the library they link, built with OPT): -Og compiles a test
# file in about a fifth of -O2's time (Catch2's macros are heavy to optimize), and runs the same.
TEST_OPT   ?= -Og -g
SANFLAGS   ?=
PKGS        = libevent libevent_pthreads spdlog rocksdb
# Lua 5.1 for scripting (server/scripting/): Debian's build of it as C++ (a Lua error unwinds
# C++ frames as an exception, running their destructors), with lua-cjson and lua-bitop; all
# three linked statically, so the server needs no Lua package at run time.
LUA_CFLAGS  = $(shell pkg-config --cflags lua5.1 2>/dev/null)
LUA_LIBS    = -Wl,-Bstatic -llua5.1-cjson -llua5.1-bitop -llua5.1-c++ -Wl,-Bdynamic -ldl
CPPFLAGS   += -I. -MMD -MP $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(LUA_CFLAGS)
CXXFLAGS   += -std=c++17 $(OPT) -Wall -Wextra -Wno-unused-parameter -pthread $(SANFLAGS)
LDLIBS     += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lrocksdb -lfmt $(LUA_LIBS) -pthread
LDFLAGS    += $(SANFLAGS)

MODULES     = config pool cache storage server
CORE_SRCS   = $(foreach m,$(MODULES),$(wildcard $(m)/*.cc $(m)/*/*.cc))
CORE_OBJS   = $(CORE_SRCS:%.cc=$(BUILD)/%.o)
UNIT_SRCS   = $(wildcard tests/unit/*.cc tests/unit/*/*.cc)
UNIT_OBJS   = $(UNIT_SRCS:%.cc=$(BUILD)/%.o)
# The shared test fixtures' sources (TestServer, the differential peer, the Prometheus text
# parser): compiled into the integration tests (the unit tests' fixtures are header-only).
SUPPORT_SRCS = $(wildcard tests/support/*.cc)
INTEG_SRCS  = $(wildcard tests/integration/*.cc) $(SUPPORT_SRCS)
INTEG_OBJS  = $(INTEG_SRCS:%.cc=$(BUILD)/%.o)
BENCH_SRCS  = $(wildcard tests/bench/*.cc)

# Unity ("jumbo") build, the default: the library's, the unit tests' and the integration tests'
# sources are compiled a chunk at a time, each chunk one translation unit that #includes up to
# UNITY_SIZE .cc files of one folder (scripts/unity-chunks.sh writes them under $(BUILD)/unity).
# The heavy headers (RocksDB, spdlog, Catch2) are then parsed and their templates emitted once
# per chunk instead of once per file: a fresh build takes about half the CPU time. An edit to
# one .cc rebuilds its whole chunk; UNITY=0 (one object per file) suits editing one file at a
# time. The tests' main.cc files (CATCH_CONFIG_MAIN) and cmd/main.cc stay their own units.
UNITY      ?= 1
UNITY_SIZE ?= 10
UNITY_DIR   = $(BUILD)/unity
# Chunks are written only for goals that compile (not for clean, help, format, lint, tsa, deps).
NO_BUILD_GOALS = clean help format lint tsa deps compose-test
ifeq ($(UNITY),1)
ifneq ($(filter-out $(NO_BUILD_GOALS),$(or $(MAKECMDGOALS),all)),)
  unity_chunks = $(or $(patsubst %.cc,%.o,$(shell UNITY_SIZE=$(UNITY_SIZE) \
                   scripts/unity-chunks.sh $(UNITY_DIR) $(1) $(2))), \
                   $(error scripts/unity-chunks.sh wrote no $(1) chunks (UNITY=0 builds without it)))
  CORE_OBJS  := $(call unity_chunks,core,$(CORE_SRCS))
  UNIT_OBJS  := $(BUILD)/tests/unit/main.o \
                $(call unity_chunks,unit,$(filter-out tests/unit/main.cc,$(UNIT_SRCS)))
  INTEG_OBJS := $(BUILD)/tests/integration/main.o \
                $(call unity_chunks,integration,$(filter-out tests/integration/main.cc,$(INTEG_SRCS)))
endif
endif

# An OPT given on the command line (the sanitizer and fuzz builds) applies to the tests too.
$(UNIT_OBJS) $(INTEG_OBJS): OPT = $(TEST_OPT)

SERVER      = $(BUILD)/rockcache-server
UNIT_TESTS  = $(BUILD)/unit-tests
INTEG_TESTS = $(BUILD)/integration-tests
POOL_BENCH  = $(BUILD)/pool-bench
# The mlfq bench's heavy load generator (scripts/mlfq-bench.sh): a plain socket client.
HEAVY_CLIENT = $(BUILD)/heavy-client
MEMTABLE_BENCH = $(BUILD)/memtable-bench
# The "data bigger than the cache" bench (scripts/bench-bigdata.sh): its load client (hiredis
# only) and RocksDB alone reading a rockcache data directory read-only. Not part of `build`.
BIGBENCH    = $(BUILD)/bigbench
ROCKS_REF   = $(BUILD)/rocksdb-reference

DEB_PACKAGES = g++ make pkg-config libevent-dev librocksdb-dev libspdlog-dev libfmt-dev \
               libhiredis-dev catch2 redis-tools liblua5.1-0-dev lua-cjson-dev lua-bitop-dev
# redis-server is the reference `make bench` compares against and the one the differential test
# ([differential]) checks replies against; installed by bench and test, which start their own
# redis-server processes (the test on a free port, stopped by pid). On a systemd machine the
# package also starts a service on 6379, which would collide with `make run`'s default port
# (`systemctl disable --now redis-server` stops it); elsewhere the package starts nothing.
BENCH_PACKAGES = redis-server valgrind
# Debian's python3-redis and python3-rq: real clients the integration tests drive with
# /usr/bin/python3 (tests/clients/, tests/integration/python_clients_test.cc).
TEST_PACKAGES = redis-server redis-sentinel python3-redis python3-rq

.PHONY: all build deps run test unit-test integration-test bench bench-bigdata format lint asan \
        tsan fuzz clean compose-test help test-build

all: build
# Everything: the server, both test programs and the benchmark programs.
build: test-build $(POOL_BENCH) $(HEAVY_CLIENT) $(MEMTABLE_BENCH) $(BIGBENCH) $(ROCKS_REF)
# What `make test` runs, and nothing else.
test-build: $(SERVER) $(UNIT_TESTS) $(INTEG_TESTS)

help:
	@echo "make run            install missing packages, build, start the server (ARGS=... to pass flags)"
	@echo "make test           build and run the unit and integration tests"
	@echo "make unit-test      unit tests only (make integration-test: the integration tests)"
	@echo "make build          the server, the tests and the benchmark programs"
	@echo "make bench          redis-benchmark matrix beside redis-server (scripts/bench.sh)"
	@echo "make bench-bigdata  data bigger than memory beside redis-server (scripts/bench-bigdata.sh)"
	@echo "make asan | tsan    the tests under AddressSanitizer+UBSan | ThreadSanitizer (build/asan, build/tsan)"
	@echo "make fuzz           libFuzzer on the RESP parser, DUMP payloads and the dispatcher (FUZZ_SECONDS=60)"
	@echo "make format | lint  clang-format the sources | check format, thread-safety (make tsa), clang-tidy"
	@echo "make compose-test   build the Docker images and check every compose profile (needs Docker)"
	@echo "make clean          remove build/"
	@echo "Sources compile as a unity build: up to UNITY_SIZE (10) .cc files of a folder as one"
	@echo "unit, about half the CPU time of a fresh build. UNITY=0 compiles one object per file,"
	@echo "which suits editing one file at a time (an edit rebuilds one file, not its chunk)."
	@echo "Builds run one job per CPU; JOBS=N or -jN to change it. Test cases run JOBS+1 at a"
	@echo "time, one process each; TEST_JOBS=N to change it (1: one process). The tests' own code"
	@echo "compiles with TEST_OPT (-Og -g), the library with OPT (-O2 -g)."

# Installs the Debian packages that are missing (apt-get update runs once, only when needed).
deps:
	@./scripts/install-deps.sh $(DEB_PACKAGES)

$(BUILD)/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

$(UNITY_DIR)/%.o: $(UNITY_DIR)/%.cc
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

# A chunk file removed after make read this Makefile (`make clean all`) is written again.
$(UNITY_DIR)/core-%.cc:
	@UNITY_SIZE=$(UNITY_SIZE) scripts/unity-chunks.sh $(UNITY_DIR) core $(CORE_SRCS) >/dev/null
$(UNITY_DIR)/unit-%.cc:
	@UNITY_SIZE=$(UNITY_SIZE) scripts/unity-chunks.sh $(UNITY_DIR) unit \
	  $(filter-out tests/unit/main.cc,$(UNIT_SRCS)) >/dev/null
$(UNITY_DIR)/integration-%.cc:
	@UNITY_SIZE=$(UNITY_SIZE) scripts/unity-chunks.sh $(UNITY_DIR) integration \
	  $(filter-out tests/integration/main.cc,$(INTEG_SRCS)) >/dev/null

$(BUILD)/librockcache.a: $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(SERVER): $(BUILD)/cmd/main.o $(BUILD)/librockcache.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(UNIT_TESTS): $(UNIT_OBJS) $(BUILD)/librockcache.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(INTEG_TESTS): $(INTEG_OBJS)
	$(CXX) $(LDFLAGS) $^ -o $@ -lhiredis -pthread

$(POOL_BENCH): $(BENCH_SRCS:%.cc=$(BUILD)/%.o) $(BUILD)/librockcache.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(HEAVY_CLIENT): $(BUILD)/tests/bench/heavy_client/heavy_client.o
	$(CXX) $(LDFLAGS) $^ -o $@

$(MEMTABLE_BENCH): $(BUILD)/tests/bench/memtable/memtable_bench.o $(BUILD)/librockcache.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BIGBENCH): $(BUILD)/tests/bench/bigdata/bigbench.o
	$(CXX) $(LDFLAGS) $^ -o $@ -lhiredis -pthread

$(ROCKS_REF): $(BUILD)/tests/bench/bigdata/rocksdb_reference.o $(BUILD)/librockcache.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

run: deps
	@$(MAKE) --no-print-directory $(SERVER)
	$(SERVER) $(ARGS)

test: deps
	@./scripts/install-deps.sh $(TEST_PACKAGES)
	@$(MAKE) --no-print-directory test-build
	@$(MAKE) --no-print-directory unit-test integration-test

unit-test: $(UNIT_TESTS)
	TEST_JOBS=$(TEST_JOBS) ./scripts/run-tests.sh unit $(UNIT_TESTS)

integration-test: $(SERVER) $(INTEG_TESTS)
	ROCKCACHE_SERVER=$(abspath $(SERVER)) TEST_JOBS=$(TEST_JOBS) \
	  ./scripts/run-tests.sh integration $(INTEG_TESTS)

bench: deps
	@./scripts/install-deps.sh $(BENCH_PACKAGES)
	@$(MAKE) --no-print-directory $(SERVER) $(POOL_BENCH) $(HEAVY_CLIENT) $(BIGBENCH) $(ROCKS_REF)
	ROCKCACHE_SERVER=$(abspath $(SERVER)) POOL_BENCH=$(abspath $(POOL_BENCH)) \
	  HEAVY_CLIENT=$(abspath $(HEAVY_CLIENT)) BIGBENCH=$(abspath $(BIGBENCH)) \
	  ROCKS_REF=$(abspath $(ROCKS_REF)) ./scripts/bench.sh

# Data bigger than the cache: rockcache at several data-to-memory ratios beside redis-server, and
# RocksDB alone on the same files (scripts/bench-bigdata.sh; QUICK=1 for a short run).
bench-bigdata: deps
	@./scripts/install-deps.sh $(BENCH_PACKAGES)
	@$(MAKE) --no-print-directory $(SERVER) $(BIGBENCH) $(ROCKS_REF)
	ROCKCACHE_SERVER=$(abspath $(SERVER)) BIGBENCH=$(abspath $(BIGBENCH)) \
	  ROCKS_REF=$(abspath $(ROCKS_REF)) ./scripts/bench-bigdata.sh

# ASan holds freed memory back (256 MB by default) to catch use after free; the hostile tests'
# RSS bounds would count it, so the quarantine is kept small.
asan: deps
	@ROCKCACHE_SANITIZER=address TEST_CASE_TIMEOUT=3600 \
	  UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" \
	  ASAN_OPTIONS="quarantine_size_mb=8" \
	  $(MAKE) --no-print-directory BUILD=build/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  SANFLAGS="-fsanitize=address,undefined" test-only

# TSan: Debian's RocksDB and libstdc++ are not instrumented, so RocksDB's write group (a leader
# thread copies its followers' batches and wakes them with its own atomics) shows up as races on
# heap blocks; ignore_noninstrumented_modules drops accesses made inside those libraries.
# The deadlock detector is on: the key stripes (FLUSHALL holds all 4096, past its 64-lock limit)
# are shown to it as one reader-writer lock in this build (cache/key_locks.cc, "TSan").
tsan: deps
	@ROCKCACHE_SANITIZER=thread TEST_CASE_TIMEOUT=3600 \
	  TSAN_OPTIONS="suppressions=$(abspath tests/tsan.supp) halt_on_error=1 detect_deadlocks=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1" \
	  $(MAKE) --no-print-directory BUILD=build/tsan OPT="-O1 -g" SANFLAGS="-fsanitize=thread" \
	  test-only

.PHONY: test-only
test-only: test-build
	@$(MAKE) --no-print-directory unit-test integration-test

# libFuzzer targets, built with clang, ASan and UBSan (objects in build/fuzz): the RESP parser,
# and the dispatcher (random command sequences against an in-process server). Each runs
# FUZZ_SECONDS (default 60); the corpora grow under tests/fuzz/corpus*. clang, libFuzzer and
# the sanitizer runtimes come from Debian (installed when missing).
FUZZ_PACKAGES = clang libclang-rt-14-dev
FUZZ_BUILD    = build/fuzz
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CXX      = clang++ -std=c++17 -O1 -g -fno-omit-frame-pointer -I. $(FUZZ_SAN)
FUZZ_SECONDS ?= 60
.PHONY: fuzz-build
fuzz: deps
	@./scripts/install-deps.sh $(FUZZ_PACKAGES)
	@$(MAKE) --no-print-directory fuzz-build
	@mkdir -p tests/fuzz/corpus tests/fuzz/corpus-dispatcher tests/fuzz/corpus-rdb
	$(FUZZ_BUILD)/fuzz-resp-parser -max_total_time=$(FUZZ_SECONDS) tests/fuzz/corpus tests/fuzz/seeds
	$(FUZZ_BUILD)/fuzz-rdb-payload -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=1024 \
	  tests/fuzz/corpus-rdb tests/fuzz/seeds-rdb
	$(FUZZ_BUILD)/fuzz-dispatcher -max_total_time=$(FUZZ_SECONDS) -timeout=120 -rss_limit_mb=4096 \
	  tests/fuzz/corpus-dispatcher

# Builds the Docker images (debian:12 bases from debootstrap when no registry answers) and checks
# every docker compose profile through its published ports; needs a Docker daemon, not `make test`.
compose-test:
	./scripts/compose-test.sh

fuzz-build:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CXX=clang++ \
	  OPT="-O1 -g -fno-omit-frame-pointer" SANFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
	  $(FUZZ_BUILD)/librockcache.a
	$(FUZZ_CXX) -fsanitize=fuzzer tests/fuzz/resp_parser_fuzz.cc server/protocol/resp_parser.cc \
	  config/split_args.cc -o $(FUZZ_BUILD)/fuzz-resp-parser
	$(FUZZ_CXX) -fsanitize=fuzzer tests/fuzz/rdb_payload_fuzz.cc server/rdb/rdb_codec.cc \
	  server/rdb/listpack.cc server/rdb/ziplist.cc server/rdb/value_codec.cc \
	  -o $(FUZZ_BUILD)/fuzz-rdb-payload
	$(FUZZ_CXX) -fsanitize=fuzzer $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
	  tests/fuzz/dispatcher_fuzz.cc $(FUZZ_BUILD)/librockcache.a -o $(FUZZ_BUILD)/fuzz-dispatcher \
	  $(LDLIBS)

# clang-format and clang-tidy come from Debian (installed when missing).
LINT_PACKAGES = clang-format clang-tidy
CLANG_FORMAT ?= clang-format
FORMAT_FILES = $(shell git ls-files '*.cc' '*.h' 2>/dev/null)
format:
	@./scripts/install-deps.sh $(LINT_PACKAGES)
	$(CLANG_FORMAT) -i $(FORMAT_FILES)

lint:
	@./scripts/install-deps.sh $(LINT_PACKAGES)
	@$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES)
	@$(MAKE) --no-print-directory tsa
	clang-tidy --quiet $(filter-out tests/%,$(filter %.cc,$(FORMAT_FILES))) -- \
	  -std=c++17 -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(LUA_CFLAGS)

# Thread-safety analysis (config/thread_annotations.h, config/mutex.h): clang's -Wthread-safety
# as errors over every non-test .cc file, syntax only (no objects), JOBS files at a time. Part of
# `make lint`; clang (14 on Debian 12) is installed when missing.
TSA_PACKAGES = clang
TSA_SRCS = $(filter-out tests/%,$(filter %.cc,$(FORMAT_FILES)))
.PHONY: tsa
tsa:
	@./scripts/install-deps.sh $(TSA_PACKAGES)
	@printf '%s\n' $(TSA_SRCS) | xargs -P $(JOBS) -n 1 clang++ -std=c++17 -fsyntax-only \
	  -Wthread-safety -Werror=thread-safety -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
	  $(LUA_CFLAGS)
	@echo "tsa: $(words $(TSA_SRCS)) files, -Wthread-safety clean"

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
