#!/usr/bin/env bash
# Side-by-side redis-benchmark of two rockcache builds and redis-server (AOF everysec), in one
# run, with ratios. Not `make bench` (fixed ports there); ports here are arguments.
#
# Usage: scripts/compare-servers.sh BEFORE_BINARY AFTER_BINARY [PIPELINES] [TESTS] [BASE_PORT]
#   PIPELINES default "1 16"; TESTS default "set,get,incr,lpush,sadd,hset,zadd,mset";
#   N (requests, default 100000), CLIENTS (default 50), RANGE (redis-benchmark -r, default
#   1000000; RANGE= for one hot key), EXTRA_ARGS (to both rockcache builds),
#   BEFORE_ARGS / AFTER_ARGS (to one of them: the same binary twice with a feature off and on).
# Prints, per pipeline and test: requests/s of before, after, redis-aof, and after/redis-aof,
# after/before.
set -euo pipefail

BEFORE=${1:?usage: $0 BEFORE_BINARY AFTER_BINARY [PIPELINES] [TESTS] [BASE_PORT]}
AFTER=${2:?after binary}
PIPELINES=${3:-"1 16"}
TESTS=${4:-set,get,incr,lpush,sadd,hset,zadd,mset}
BASE=${5:-7400}
N=${N:-100000}
CLIENTS=${CLIENTS:-50}
RANGE=${RANGE-1000000}
EXTRA_ARGS=${EXTRA_ARGS:-}
BEFORE_ARGS=${BEFORE_ARGS:-}
AFTER_ARGS=${AFTER_ARGS:-}
WORK=$(mktemp -d /tmp/compare-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_port() {
  for _ in $(seq 1 200); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "no server on $1" >&2
  return 1
}

P_BEFORE=$BASE P_AFTER=$((BASE + 1)) P_REDIS=$((BASE + 2))
mkdir -p "$WORK/before" "$WORK/after" "$WORK/redis"
# shellcheck disable=SC2086
"$BEFORE" --port "$P_BEFORE" --bind 127.0.0.1 --dir "$WORK/before" --metrics-port 0 $EXTRA_ARGS \
  $BEFORE_ARGS >"$WORK/before.log" 2>&1 &
PIDS+=($!)
# shellcheck disable=SC2086
"$AFTER" --port "$P_AFTER" --bind 127.0.0.1 --dir "$WORK/after" --metrics-port 0 $EXTRA_ARGS \
  $AFTER_ARGS >"$WORK/after.log" 2>&1 &
PIDS+=($!)
redis-server --port "$P_REDIS" --bind 127.0.0.1 --save '' --appendonly yes \
  --appendfsync everysec --dir "$WORK/redis" >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
for p in "$P_BEFORE" "$P_AFTER" "$P_REDIS"; do wait_port "$p"; done

rps() {  # port test pipeline -> requests per second
  # shellcheck disable=SC2046
  redis-benchmark -p "$1" -t "$2" $([ -n "$RANGE" ] && echo -r "$RANGE") -n "$N" -c "$CLIENTS" -P "$3" --csv 2>/dev/null |
    awk -F'","' 'NR > 1 {print int($2); exit}'
}

printf '%-3s %-7s %10s %10s %10s %9s %9s\n' P test before after redis-aof after/aof after/bef
for p in $PIPELINES; do
  IFS=, read -r -a tests <<<"$TESTS"
  for t in "${tests[@]}"; do
    b=$(rps "$P_BEFORE" "$t" "$p")
    a=$(rps "$P_AFTER" "$t" "$p")
    r=$(rps "$P_REDIS" "$t" "$p")
    awk -v p="$p" -v t="$t" -v b="$b" -v a="$a" -v r="$r" \
      'BEGIN {printf "%-3s %-7s %10d %10d %10d %9.2f %9.2f\n", p, t, b, a, r, a / r, a / b}'
  done
done
