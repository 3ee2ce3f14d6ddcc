#!/usr/bin/env bash
# make bench: runs the same redis-benchmark commands against rockcache and redis-server (both on
# free loopback ports, started and stopped here by pid) and prints side-by-side tables with
# ratios; then the worker pool microbenchmark.
#
# Environment: ROCKCACHE_SERVER (binary), POOL_BENCH (binary), BENCH_N (requests per test,
# default 100000), BENCH_CLIENTS (default 50), BENCH_SECTIONS (default "strings types pool").
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${ROCKCACHE_SERVER:-build/rockcache-server}
POOL_BENCH=${POOL_BENCH:-build/pool-bench}
N=${BENCH_N:-100000}
CLIENTS=${BENCH_CLIENTS:-50}
SECTIONS=${BENCH_SECTIONS:-"strings types pool-modes cache pool"}
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

start_redis() {
  local port; port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    --dir "$TMP" >"$TMP/redis.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_ready "$port"
  PORT_redis=$port
  PID_redis=$pid
}

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

section_strings() {
  start_rockcache strings
  start_redis
  local args=(-t set,get,incr,mset -n "$N" -c "$CLIENTS")
  bench "$PORT_strings" "${args[@]}" >"$TMP/strings.rc"
  bench "$PORT_redis" "${args[@]}" >"$TMP/strings.redis"
  table "strings: redis-benchmark ${args[*]} (rockcache vs redis-server)" rockcache redis \
    "$TMP/strings.rc" "$TMP/strings.redis"
  stop_server "$PID_strings"
  stop_server "$PID_redis"
}

section_types() {
  start_rockcache types
  start_redis
  local args=(-n "$N" -c "$CLIENTS")
  bench "$PORT_types" "${args[@]}" >"$TMP/types.rc"
  bench "$PORT_redis" "${args[@]}" >"$TMP/types.redis"
  table "default test list: redis-benchmark ${args[*]} (rockcache vs redis-server)" rockcache \
    redis "$TMP/types.rc" "$TMP/types.redis"
  stop_server "$PID_types"
  stop_server "$PID_redis"
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

section_pool() {
  if [ -x "$POOL_BENCH" ]; then
    echo
    echo "== worker pool microbenchmark: $POOL_BENCH ${POOL_BENCH_ARGS:-}"
    # shellcheck disable=SC2086
    "$POOL_BENCH" ${POOL_BENCH_ARGS:-}
  fi
}

echo "rockcache bench: $(nproc) cores, N=$N, clients=$CLIENTS, sections: $SECTIONS"
for section in $SECTIONS; do
  "section_${section//-/_}"
done
