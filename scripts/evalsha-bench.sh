#!/usr/bin/env bash
# Issue 43's script benchmark in one run: EVALSHA of "INCR + EXPIRE of one spread key" against
# rockcache with script-group-commit no and yes (the same binary twice) and redis-server with
# appendonly yes, appendfsync everysec, side by side, with ratios to redis-server.
#
# Usage: scripts/evalsha-bench.sh BINARY [BASE_PORT] [PIPELINES]
#   BASE_PORT default 7611 (uses three ports from it); PIPELINES default "1 16";
#   N (requests, default 200000). redis-benchmark -r 100000 -c 50, as the issue states.
#   ROUNDS (default 1): the three servers are measured in turn this many times per pipeline
#   and, with more than one, the median of each ratio is printed too (on a noisy machine one
#   round's ratio moves with the moment it ran in).
#   WARMUP (default 1): runs of N requests each server gets first, not measured, so the rounds
#   see servers that already hold the keys (a fresh rockcache's first run also pays its memtables'
#   and caches' first page faults: ~30% below its later runs here). 0: measure from the start.
set -euo pipefail
BIN=${1:?usage: $0 BINARY [BASE_PORT] [PIPELINES]}
BASE=${2:-7611}
PIPES=${3:-"1 16"}
N=${N:-200000}
ROUNDS=${ROUNDS:-1}
WARMUP=${WARMUP:-1}
WORK=$(mktemp -d /tmp/evalsha-bench-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/no" "$WORK/yes" "$WORK/redis"
"$BIN" --port "$BASE" --bind 127.0.0.1 --dir "$WORK/no" --metrics-port 0 \
  --script-group-commit no >"$WORK/no.log" 2>&1 &
PIDS+=($!)
"$BIN" --port $((BASE + 1)) --bind 127.0.0.1 --dir "$WORK/yes" --metrics-port 0 >"$WORK/yes.log" 2>&1 &
PIDS+=($!)
redis-server --port $((BASE + 2)) --bind 127.0.0.1 --save '' --appendonly yes \
  --appendfsync everysec --dir "$WORK/redis" >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
for p in "$BASE" $((BASE + 1)) $((BASE + 2)); do
  for _ in $(seq 1 300); do
    redis-cli -p "$p" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
done
SCRIPT="local v=redis.call('INCR',KEYS[1]) redis.call('EXPIRE',KEYS[1],60) return v"
SHA=""
for p in "$BASE" $((BASE + 1)) $((BASE + 2)); do SHA=$(redis-cli -p "$p" script load "$SCRIPT"); done
rps() {  # port pipeline -> requests per second
  redis-benchmark -p "$1" -n "$N" -r 100000 -c 50 -P "$2" --csv EVALSHA "$SHA" 1 key:__rand_int__ \
    2>/dev/null | awk -F'","' 'NR > 1 {print int($2); exit}'
}
for _ in $(seq 1 "$WARMUP"); do
  for port in "$BASE" $((BASE + 1)) $((BASE + 2)); do rps "$port" 1 >/dev/null; done
done
printf '%-3s %10s %10s %10s %9s %9s\n' P gc-no gc-yes redis-aof yes/aof no/aof
for p in $PIPES; do
  rows=""
  for _ in $(seq 1 "$ROUNDS"); do
    a=$(rps "$BASE" "$p")
    b=$(rps $((BASE + 1)) "$p")
    r=$(rps $((BASE + 2)) "$p")
    row=$(awk -v p="$p" -v a="$a" -v b="$b" -v r="$r" \
      'BEGIN {printf "%-3s %10d %10d %10d %9.2f %9.2f", p, a, b, r, b / r, a / r}')
    echo "$row"
    rows+="$row"$'\n'
  done
  if [ "$ROUNDS" -gt 1 ]; then  # the median of each column's ratios
    printf '%s' "$rows" | awk -v p="$p" '
      { y[NR] = $5; n[NR] = $6 }
      function median(a, k,   i, j, t) {
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
      }
      END { printf "%-3s %32s median of %d: %9.2f %9.2f\n", p, "", NR, median(y, NR), median(n, NR) }'
  fi
done
