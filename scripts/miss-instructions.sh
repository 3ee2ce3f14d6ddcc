#!/usr/bin/env bash
# Instructions per request of reads the cache mostly misses, on data bigger than the memory
# given (callgrind counts instructions: deterministic where timings on this machine are not).
#
# Usage: scripts/miss-instructions.sh BINARY [MODE] [DIST] [PIPELINE] [-- SERVER ARGS...]
#   MODE get|mix (default get), DIST uniform|zipf (uniform), PIPELINE (1).
# Loads KEYS (default 1000000) values of VALUE_SIZE (400) bytes with build/bigbench into a fresh
# data directory, cache-maxmemory and rocksdb-block-cache-size a sixth of the data each, waits
# for RocksDB to settle; with MIX_SECONDS (default 10; 0 to skip) it then runs the 90/10 GET/SET
# mix at pipeline 16 for that long, so files written after the load (levels above the last) take
# part, as they do once a server has taken writes. Then the server runs under callgrind with
# instrumentation off until REQUESTS (20000) requests of MODE/DIST/PIPELINE, after a warm-up,
# are sent; it prints their total instructions divided by the requests. The callgrind file stays
# in OUT (default /tmp/miss-instructions) for callgrind_annotate.
# Server arguments after `--` go to every start (e.g. -- --rocksdb-pin-metadata no).
# Ports 7841-7842, free ones assumed; the servers are stopped by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: $0 BINARY [MODE] [DIST] [PIPELINE] [-- SERVER ARGS...]}
shift
POSITIONAL=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do POSITIONAL+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
MODE=${POSITIONAL[0]:-get} DIST=${POSITIONAL[1]:-uniform} PIPE=${POSITIONAL[2]:-1}
KEYS=${KEYS:-1000000} VALUE_SIZE=${VALUE_SIZE:-400} REQUESTS=${REQUESTS:-20000}
MIX_SECONDS=${MIX_SECONDS:-10} OUT=${OUT:-/tmp/miss-instructions}
BIGBENCH=${BIGBENCH:-build/bigbench}
SIXTH=$((KEYS * VALUE_SIZE / 6))
mkdir -p "$OUT"
DIR=$(mktemp -d /tmp/miss-instructions-data-XXXXXX)
PID=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT
ARGS=(--bind 127.0.0.1 --dir "$DIR" --loglevel warning --metrics-port 0
      --cache-maxmemory "$SIXTH" --rocksdb-block-cache-size "$SIXTH" "${EXTRA[@]}")
bench() { "$BIGBENCH" --host 127.0.0.1 --keys "$KEYS" --value-size "$VALUE_SIZE" --clients 20 "$@"; }
wait_port() {
  for _ in $(seq 1 600); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "miss-instructions: the server on port $1 did not start" >&2; exit 1
}
settle() {
  for _ in $(seq 1 180); do
    busy=$(redis-cli -p "$1" info all | tr -d '\r' | awk -F: '/^rocksdb_num_running_(compactions|flushes):|^rocksdb_estimate_pending_compaction_bytes:/ { s += $2 } END { print s + 0 }')
    [ "$busy" = 0 ] && return 0
    sleep 1
  done
}

"$BIN" --port 7841 "${ARGS[@]}" >"$OUT/load.log" 2>&1 &
PID=$!
wait_port 7841
bench --port 7841 --threads 2 --mode load | tail -1
settle 7841
if [ "$MIX_SECONDS" != 0 ]; then
  bench --port 7841 --threads 2 --mode mix --dist uniform --pipeline 16 --seconds "$MIX_SECONDS" \
    --seed 3 | grep '^rps'
  settle 7841
fi
kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""

# Under callgrind every command passes the slow log's 10 ms: logging it would be counted. An
# idle worker's spinning would count too (and depend on timing); blocking does not.
rm -f "$OUT"/callgrind.out.*
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT/callgrind.out.%p" "$BIN" \
  --port 7842 "${ARGS[@]}" --pool-spin-count 0 --pool-max-yield-usec 0 \
  --slowlog-log-slower-than 1000000 >"$OUT/callgrind.log" 2>&1 &
PID=$!
wait_port 7842
bench --port 7842 --threads 1 --mode "$MODE" --dist "$DIST" --pipeline "$PIPE" --requests 20000 \
  --seconds 300 --seed 7 >/dev/null
sleep 2
callgrind_control -i on "$PID" >/dev/null 2>&1
bench --port 7842 --threads 1 --mode "$MODE" --dist "$DIST" --pipeline "$PIPE" \
  --requests "$REQUESTS" --seconds 600 --seed 9 | grep '^rps'
callgrind_control -i off "$PID" >/dev/null 2>&1
kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
FILE=$(ls "$OUT"/callgrind.out.* | head -1)
TOTAL=$(callgrind_annotate "$FILE" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
echo "miss-instructions: $MODE $DIST P$PIPE: $((TOTAL / REQUESTS)) instructions/request" \
  "(${TOTAL} over ${REQUESTS}; $FILE)"
