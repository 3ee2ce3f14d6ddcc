#!/usr/bin/env bash
# Instructions per request (callgrind, scripts/instructions-per-request.sh) for the write and read
# tests issue 10 tracks, at pipeline 1 and 16, for rockcache, an optional older rockcache
# ("before") and redis-server with AOF everysec; prints one table with the ratios to redis.
#
# Usage: scripts/instructions-table.sh ROCKCACHE_BINARY [BEFORE_BINARY]
# Environment: IPR_TESTS (default "set get-hit get-miss incr lpush hset sadd zadd lrange_100
# lrange_600"; get-hit loads 10,000 keys first and reads among them, get-miss reads keys never
# written, lrange_N reads the first N of a list of 1,000 (instructions-per-request.sh)),
# IPR_PIPELINES (default "1 16"), REDIS_SERVER (default: redis-server on PATH; "none" leaves the
# redis column out, e.g. to add a rockcache column to an earlier table), IPR_PORT (first
# port tried, default 7391), N1/N2 as in instructions-per-request.sh.
# Each cell is two callgrind runs of the server (about 30 s for rockcache): the full table is
# ~25 minutes with a "before" binary.
set -euo pipefail
cd "$(dirname "$0")/.."
ROCK=${1:?usage: $0 ROCKCACHE_BINARY [BEFORE_BINARY]}
BEFORE=${2:-}
REDIS=${REDIS_SERVER:-$(command -v redis-server)}
TESTS=${IPR_TESTS:-"set get-hit get-miss incr lpush hset sadd zadd lrange_100 lrange_600"}
PIPES=${IPR_PIPELINES:-"1 16"}
PORT=${IPR_PORT:-7391}

free_port() {
  local port=$PORT
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}

# cell KIND BINARY TEST PIPE: instructions per request (a number).
cell() {
  local kind=$1 bin=$2 test=$3 pipe=$4 env=()
  case "$test" in
    get-hit) env=(IPR_RANGE=10000 IPR_PREFILL=100000); test=get ;;
    get-miss) test=get ;;
  esac
  env "${env[@]}" scripts/instructions-per-request.sh "$kind" "$bin" "$test" "$pipe" \
    "$(free_port)" | sed 's/.*instructions\/request=//'
}

header="$(printf '%-10s %3s %10s' test P rockcache)"
[ -n "$BEFORE" ] && header+="$(printf ' %10s' before)"
header+="$(printf ' %10s %9s' redis-aof rock/redis)"
[ -n "$BEFORE" ] && header+="$(printf ' %11s' before/redis)"
echo "$header"
for test in $TESTS; do
  for pipe in $PIPES; do
    rock=$(cell rockcache "$ROCK" "$test" "$pipe")
    line="$(printf '%-10s %3s %10s' "$test" "$pipe" "$rock")"
    if [ -n "$BEFORE" ]; then
      before=$(cell rockcache "$BEFORE" "$test" "$pipe")
      line+="$(printf ' %10s' "$before")"
    fi
    if [ "$REDIS" = none ]; then
      echo "$line"
      continue
    fi
    redis=$(cell redis "$REDIS" "$test" "$pipe")
    line+="$(printf ' %10s %8.2fx' "$redis" "$(echo "$rock $redis" | awk '{ print $1 / $2 }')")"
    if [ -n "$BEFORE" ]; then
      line+="$(printf ' %10.2fx' "$(echo "$before $redis" | awk '{ print $1 / $2 }')")"
    fi
    echo "$line"
  done
done
