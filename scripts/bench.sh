#!/usr/bin/env bash
# make bench: runs the same redis-benchmark commands against rockcache and redis-server (both on
# free loopback ports, started and stopped here by pid) and prints side-by-side tables with
# ratios; then the worker pool microbenchmark.
#
# Environment: ROCKCACHE_SERVER (binary), POOL_BENCH (binary), BASELINE_SERVER (an older
# rockcache binary, measured in the same run as "before"; BASELINE_SERVERS="NAME=BINARY ..." adds
# more, in the default and drain sections), BENCH_N (requests per test, default
# 50000), BENCH_CLIENTS (default 50), BENCH_TESTS (a -t list; default: every default test),
# BENCH_SECTIONS (default "default drain instructions pool-modes cache pool mlfq bigdata"); the
# mlfq section's sizes: MLFQ_KEYS, MLFQ_ITEMS, MLFQ_N (scripts/mlfq-bench.sh); the bigdata
# section's: KEYS, SECONDS_PER_RUN, CONFIGS, ... (scripts/bench-bigdata.sh; BIGBENCH, ROCKS_REF).
# BENCH_QUICK=1: a reduced run (a few minutes) with the same sections and tables: 5,000 requests
# per test, drains of 10,000 (5,000 under callgrind), instructions per request of SET and GET (miss) at pipeline 1 and
# 16 only, one small cache round, pool-bench --quick, a small mlfq mix, bigdata's QUICK=1. Any variable set
# explicitly still wins. The full run takes well over an hour on 2 cores (each instructions cell
# is two callgrind runs).
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${ROCKCACHE_SERVER:-build/rockcache-server}
POOL_BENCH=${POOL_BENCH:-build/pool-bench}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
  : "${BENCH_N:=5000}" "${DRAIN_N:=10000}" "${DRAIN_IR_N:=5000}" "${BENCH_CACHE_KEYS:=50000}"
  : "${BENCH_CACHE_RANGE:=10000}" "${BENCH_CACHE_N:=50000}" "${BENCH_CACHE_ROUNDS:=1}"
  : "${IPR_TESTS:=set get-miss}" "${N1:=5000}" "${N2:=10000}" "${POOL_BENCH_ARGS:=--quick}"
  : "${MLFQ_KEYS:=100000}" "${MLFQ_ITEMS:=20000}" "${MLFQ_N:=10000}"
  export DRAIN_N DRAIN_IR_N IPR_TESTS N1 N2 MLFQ_KEYS MLFQ_ITEMS MLFQ_N
fi
N=${BENCH_N:-50000}
CLIENTS=${BENCH_CLIENTS:-50}
SECTIONS=${BENCH_SECTIONS:-"default drain instructions pool-modes cache pool mlfq bigdata"}
CACHE_KEYS=${BENCH_CACHE_KEYS:-1000000}   # keys loaded before the cache rounds
CACHE_RANGE=${BENCH_CACHE_RANGE:-100000}  # -r of the GET rounds (the hot set)
CACHE_N=${BENCH_CACHE_N:-2000000}         # requests per GET round
CACHE_ROUNDS=${BENCH_CACHE_ROUNDS:-3}
TMP=$(mktemp -d /tmp/rockcache-bench-XXXXXX)
PIDS=()

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
  local port
  while true; do
    port=$((20000 + RANDOM % 12000))  # below the ephemeral range (32768+) clients use
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
}

wait_ready() {
  local port=$1
  for _ in $(seq 1 200); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "server on port $port did not start" >&2
  return 1
}

# baselines: "NAME=BINARY" for each older rockcache measured in the same run: BASELINE_SERVER
# (named "before") and BASELINE_SERVERS ("NAME=BINARY ...", names made of letters, digits, _).
baselines() {
  [ -n "${BASELINE_SERVER:-}" ] && echo "before=$BASELINE_SERVER"
  local spec
  for spec in ${BASELINE_SERVERS:-}; do echo "$spec"; done
}

# start_rockcache NAME [--option value ...]: starts one rockcache, sets PORT_<NAME>, PID_<NAME>.
start_rockcache() {
  local name=$1; shift
  local port; port=$(free_port)
  "$SERVER" --port "$port" --bind 127.0.0.1 --dir "$TMP/$name" --loglevel warning \
    --metrics-port 0 "$@" \
    >"$TMP/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_ready "$port"
  printf -v "PORT_$name" '%s' "$port"
  printf -v "PID_$name" '%s' "$pid"
}

# start_redis NAME [--option value ...]: a redis-server on a free port; sets PORT_<NAME>, PID_<NAME>.
start_redis_named() {
  local name=$1; shift
  local port; port=$(free_port)
  mkdir -p "$TMP/$name"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --daemonize no --dir "$TMP/$name" \
    "$@" >"$TMP/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_ready "$port"
  printf -v "PORT_$name" '%s' "$port"
  printf -v "PID_$name" '%s' "$pid"
}

start_redis() { start_redis_named redis --appendonly no; }

stop_server() {
  local pid=$1
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# bench PORT ARGS...: prints "test,rps,p50,p99" lines from redis-benchmark --csv.
bench() {
  local port=$1; shift
  redis-benchmark -p "$port" --csv "$@" 2>/dev/null | tail -n +2 | tr -d '"' |
    awk -F, '{ print $1 "," $2 "," $5 "," $7 }'
}

# table TITLE LEFT_NAME RIGHT_NAME LEFT_FILE RIGHT_FILE: side by side with ratios.
table() {
  local title=$1 lname=$2 rname=$3 lfile=$4 rfile=$5
  echo
  echo "== $title"
  printf '%-28s %14s %14s %8s   %9s %9s %8s\n' "test" "$lname rps" "$rname rps" "ratio" \
    "$lname p99" "$rname p99" "p99 ratio"
  paste -d, "$lfile" "$rfile" | awk -F, '{
    ratio = ($6 > 0) ? $2 / $6 : 0; pr = ($8 > 0) ? $4 / $8 : 0;
    printf "%-28s %14.0f %14.0f %7.2fx   %8.3fms %8.3fms %7.2fx\n", $1, $2, $6, ratio, $4, $8, pr }'
}

# matrix_table TITLE FILE...: joins per-target result files (lines "test,rps,p50,p99") by test
# name; ratios are the first target's against each other target, p99 ratio against the second.
matrix_table() {
  local title=$1; shift
  echo
  echo "== $title"
  awk -F, -v names="$MATRIX_NAMES" '
    BEGIN { n = split(names, name, " ") }
    FNR == 1 { f++ }
    { if (f == 1) order[++rows] = $1; rps[f, $1] = $2; p99[f, $1] = $4 }
    END {
      printf "%-34s", "test"
      for (i = 1; i <= n; i++) printf " %12s", name[i] " rps"
      for (i = 2; i <= n; i++) printf " %9s", "/" name[i]
      printf " %9s %9s %7s\n", name[1] " p99", name[2] " p99", "p99x"
      for (r = 1; r <= rows; r++) {
        t = order[r]; printf "%-34s", t
        for (i = 1; i <= n; i++) printf " %12.0f", rps[i, t]
        for (i = 2; i <= n; i++) printf " %8.2fx", (rps[i, t] > 0) ? rps[1, t] / rps[i, t] : 0
        printf " %8.3fms %8.3fms %6.2fx\n", p99[1, t], p99[2, t], (p99[2, t] > 0) ? p99[1, t] / p99[2, t] : 0
      }
    }' "$@"
}

# Every redis-benchmark default test, spread keys (-r 1000000) and one hot key, pipeline 1 and 16,
# against rockcache, redis-server with AOF everysec (the peer with rockcache's crash guarantee)
# and redis-server in memory; BASELINE_SERVER adds an older rockcache binary ("before") to the
# same run. The targets of one (keys, pipeline) block run back to back so they share the noise.
section_default() {
  local targets=(rockcache redis_aof redis_mem)
  start_rockcache rockcache
  start_redis_named redis_aof --appendonly yes --appendfsync everysec
  start_redis_named redis_mem --appendonly no
  local spec
  for spec in $(baselines); do
    SERVER_SAVED=$SERVER; SERVER=${spec#*=}
    start_rockcache "${spec%%=*}"
    SERVER=$SERVER_SAVED
    targets+=("${spec%%=*}")
  done
  MATRIX_NAMES="${targets[*]}"
  local keys pipe target port_var
  for keys in spread hot; do
    for pipe in 1 16; do
      local args=(-n "$N" -c "$CLIENTS" -P "$pipe" ${BENCH_TESTS:+-t "$BENCH_TESTS"})
      [ "$keys" = spread ] && args+=(-r 1000000)
      local files=()
      for target in "${targets[@]}"; do
        port_var="PORT_$target"
        bench "${!port_var}" "${args[@]}" >"$TMP/default.$keys.$pipe.$target"
        files+=("$TMP/default.$keys.$pipe.$target")
      done
      matrix_table "default tests, $keys keys, pipeline $pipe: redis-benchmark ${args[*]}" \
        "${files[@]}"
    done
  done
  for target in "${targets[@]}"; do
    local pid_var="PID_$target"
    stop_server "${!pid_var}"
  done
}

section_pool_modes() {
  local args=(-t set,get -n "$N" -r 1000000 -d 64 -c "$CLIENTS")
  start_rockcache adaptive --pool-mode adaptive
  bench "$PORT_adaptive" "${args[@]}" >"$TMP/pool.adaptive"
  stop_server "$PID_adaptive"
  start_rockcache classic --pool-mode classic
  bench "$PORT_classic" "${args[@]}" >"$TMP/pool.classic"
  stop_server "$PID_classic"
  table "pool modes: redis-benchmark ${args[*]} (pool-mode adaptive vs classic)" adaptive \
    classic "$TMP/pool.adaptive" "$TMP/pool.classic"
}

# cache_hit_ratio PORT: hits/(hits+misses) from INFO cache.
cache_hit_ratio() {
  redis-cli -p "$1" info cache | tr -d '\r' | awk -F: '/^cache_hits:/{h=$2} /^cache_misses:/{m=$2}
    END { if (h + m > 0) printf "%.4f", h / (h + m); else printf "n/a" }'
}

# The seed's experiment: load keys, then GET rounds over a hot subset while the hit ratio
# climbs; rtc-reads yes vs no on the same data, beside redis-server holding the same keys.
section_cache() {
  local load=(-t set -r "$CACHE_KEYS" -n "$CACHE_KEYS" -d 100 -c "$CLIENTS" -P 16)
  local get=(-t get -r "$CACHE_RANGE" -n "$CACHE_N" -c "$CLIENTS")
  echo
  echo "== cache: load redis-benchmark ${load[*]}; then rounds of redis-benchmark ${get[*]} [-P 16]"
  printf '%-10s %-6s %4s %12s %9s %9s %10s\n' target pipe round rps p50_ms p99_ms hit_ratio
  start_redis
  redis-benchmark -p "$PORT_redis" "${load[@]}" -q >/dev/null 2>&1
  for pipe in 1 16; do
    for round in $(seq 1 "$CACHE_ROUNDS"); do
      bench "$PORT_redis" "${get[@]}" -P "$pipe" | awk -F, -v p="$pipe" -v r="$round" \
        '{ printf "%-10s %-6s %4s %12.0f %9.3f %9.3f %10s\n", "redis", p, r, $2, $3, $4, "1" }'
    done
  done
  stop_server "$PID_redis"
  for rtc in yes no; do
    start_rockcache "cache_$rtc" --rtc-reads "$rtc"
    local port_var="PORT_cache_$rtc" pid_var="PID_cache_$rtc"
    redis-benchmark -p "${!port_var}" "${load[@]}" -q >/dev/null 2>&1
    for pipe in 1 16; do
      for round in $(seq 1 "$CACHE_ROUNDS"); do
        local line; line=$(bench "${!port_var}" "${get[@]}" -P "$pipe")
        local ratio; ratio=$(cache_hit_ratio "${!port_var}")
        echo "$line" | awk -F, -v p="$pipe" -v r="$round" -v h="$ratio" -v t="rtc-$rtc" \
          '{ printf "%-10s %-6s %4s %12.0f %9.3f %9.3f %10s\n", t, p, r, $2, $3, $4, h }'
        redis-cli -p "${!port_var}" config resetstat >/dev/null
      done
    done
    stop_server "${!pid_var}"
  done
}

# Fill then drain 100,000 members (ZPOPMIN, SPOP, LPOP): drain speed over fill speed, for
# rockcache (and BASELINE_SERVER) beside redis-server, then instructions per fill and per pop
# (DRAIN_IR_N members, default 20,000). The scripts start each server themselves.
section_drain() {
  local n=${DRAIN_N:-100000} bin
  local spec baseline_bins=()
  for spec in $(baselines); do baseline_bins+=("${spec#*=}"); done
  for bin in "$SERVER" "${baseline_bins[@]}" "$(command -v redis-server)"; do
    echo
    echo "== drain: fill then pop $n: scripts/drain-bench.sh $bin PORT $n"
    DRAIN_TIMEOUT=${DRAIN_TIMEOUT:-60} scripts/drain-bench.sh "$bin" "$(free_port)" "$n" || true
  done
  # The same in instructions (callgrind; deterministic where the rates above move by +-20%).
  local ni=${DRAIN_IR_N:-20000}
  for bin in "$SERVER" "${baseline_bins[@]}" "$(command -v redis-server)"; do
    echo
    echo "== drain instructions: fill then pop $ni: scripts/drain-instructions.sh $bin PORT $ni"
    scripts/drain-instructions.sh "$bin" "$(free_port)" "$ni" || true
  done
}

# Instructions per request under callgrind (deterministic on a noisy machine): SET, GET hit,
# GET miss, INCR, LPUSH, HSET, SADD, ZADD, LRANGE_100, LRANGE_600 (IPR_TESTS) at pipeline 1 and 16, rockcache (and
# BASELINE_SERVER) beside redis-server with AOF everysec, with the ratios to redis.
section_instructions() {
  echo
  echo "== instructions per request (scripts/instructions-table.sh; callgrind, redis-benchmark" \
    "-r 1000000 -c 10; get-hit: 10,000 keys loaded first)"
  IPR_PORT=$(free_port) scripts/instructions-table.sh "$SERVER" ${BASELINE_SERVER:+"$BASELINE_SERVER"}
}

section_pool() {
  if [ -x "$POOL_BENCH" ]; then
    echo
    echo "== worker pool microbenchmark: $POOL_BENCH ${POOL_BENCH_ARGS:-}"
    # shellcheck disable=SC2086
    "$POOL_BENCH" ${POOL_BENCH_ARGS:-}
  fi
}

# Small and big requests together: MLFQ on / off / pool-small-share 50 80 95, beside redis-server.
section_mlfq() {
  scripts/mlfq-bench.sh "$SERVER"
}

# Data bigger than the cache: rockcache at several data-to-memory ratios beside redis-server, and
# RocksDB alone on the same files (its own tables, TSV and SVG under bench-out/).
section_bigdata() {
  local bin
  for bin in "${BIGBENCH:-build/bigbench}" "${ROCKS_REF:-build/rocksdb-reference}"; do
    [ -x "$bin" ] || { echo; echo "== bigdata: skipped ($bin missing; make bench builds it)"; return; }
  done
  echo
  echo "== bigdata: scripts/bench-bigdata.sh"
  ROCKCACHE_SERVER=$SERVER QUICK=${BENCH_QUICK:-${QUICK:-0}} scripts/bench-bigdata.sh
}

echo "rockcache bench: $(nproc) cores, N=$N, clients=$CLIENTS, sections: $SECTIONS${BENCH_QUICK:+ (BENCH_QUICK=$BENCH_QUICK)}"
for section in $SECTIONS; do
  "section_${section//-/_}"
done
