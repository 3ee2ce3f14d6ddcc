#!/usr/bin/env bash
# Drain vs fill: fills one key with N members through one pipelined client (redis-cli --pipe),
# then drains it with N single pops, and prints both rates and their ratio, for
#   sorted set: ZADD / ZPOPMIN     set: SADD / SPOP     list: RPUSH / LPOP
# Issue 10's goal: drain >= 0.8x fill, whatever happened to the key before.
#
# Usage: scripts/drain-bench.sh SERVER_BINARY PORT [N]
#   SERVER_BINARY  a rockcache-server, or a redis-server (started with --save '' --appendonly no)
#   PORT           a free loopback port; the server is started there and stopped (by pid) at exit
#   N              members per key (default 100000)
# Environment: DRAIN_TIMEOUT seconds per phase (default 120; a phase that does not finish is
# reported as such).
set -euo pipefail
SERVER=${1:?usage: drain-bench.sh SERVER_BINARY PORT [N]}
PORT=${2:?usage: drain-bench.sh SERVER_BINARY PORT [N]}
N=${3:-100000}
LIMIT=${DRAIN_TIMEOUT:-120}
TMP=$(mktemp -d /tmp/rockcache-drain-XXXXXX)
PID=

cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

case "$(basename "$SERVER")" in
  redis-server*)
    "$SERVER" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" \
      >"$TMP/server.log" 2>&1 &
    ;;
  *)
    "$SERVER" --port "$PORT" --bind 127.0.0.1 --dir "$TMP/data" --loglevel warning \
      --metrics-port 0 >"$TMP/server.log" 2>&1 &
    ;;
esac
PID=$!
for _ in $(seq 1 200); do
  redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
  sleep 0.05
done
redis-cli -p "$PORT" ping >/dev/null

# gen CMD KEY WITH_SCORE: N commands in RESP, one member each (member:00000001, ...).
gen() {
  awk -v n="$N" -v cmd="$1" -v key="$2" -v scored="$3" 'BEGIN {
    for (i = 0; i < n; i++) {
      m = sprintf("member:%08d", i)
      if (scored == "fill") {
        s = sprintf("%d", i)
        printf "*4\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(cmd), cmd,
               length(key), key, length(s), s, length(m), m
      } else if (scored == "member") {
        printf "*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(cmd), cmd, length(key), key,
               length(m), m
      } else {
        printf "*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(cmd), cmd, length(key), key
      }
    }
  }' >"$TMP/$1.resp"
}

# timed FILE: seconds to push FILE through one pipelined connection ("" when over the limit).
timed() {
  local start end
  start=$(date +%s.%N)
  if ! timeout "$LIMIT" redis-cli -p "$PORT" --pipe <"$1" >"$TMP/pipe.out" 2>&1; then
    echo ""
    return
  fi
  end=$(date +%s.%N)
  echo "$start $end" | awk '{ printf "%.3f", $2 - $1 }'
}

printf '%-16s %12s %12s %8s\n' "fill / drain" "fill ops/s" "drain ops/s" "ratio"
run() {
  local label=$1 fill_cmd=$2 fill_kind=$3 drain_cmd=$4 key=$5
  gen "$fill_cmd" "$key" "$fill_kind"
  gen "$drain_cmd" "$key" none
  local tf td
  tf=$(timed "$TMP/$fill_cmd.resp")
  td=$(timed "$TMP/$drain_cmd.resp")
  if [ -z "$td" ]; then
    printf '%-16s %12.0f %12s %8s\n' "$label" "$(echo "$N / $tf" | bc -l)" ">${LIMIT}s" "<$(echo "scale=3; ($N / $LIMIT) / ($N / $tf)" | bc -l)"
    redis-cli -p "$PORT" del "$key" >/dev/null
    return
  fi
  awk -v n="$N" -v tf="$tf" -v td="$td" -v label="$label" \
    'BEGIN { printf "%-16s %12.0f %12.0f %8.2f\n", label, n / tf, n / td, tf / td }'
}
run "ZADD/ZPOPMIN" ZADD fill ZPOPMIN drain:z
run "SADD/SPOP" SADD member SPOP drain:s
run "RPUSH/LPOP" RPUSH member LPOP drain:l
