#!/usr/bin/env bash
# Instructions per request, measured with callgrind (deterministic, unlike wall-clock speed).
#
# Usage: scripts/instructions-per-request.sh KIND BINARY [TEST] [PIPELINE] [PORT]
#   KIND      rockcache | redis   (redis: redis-server with appendonly yes, appendfsync everysec)
#   BINARY    the server binary (build/rockcache-server, /usr/bin/redis-server, ...)
#   TEST      a redis-benchmark -t test (default set), or evalsha_incr (EVALSHA of a loaded
#             script doing INCR + EXPIRE of one key)
#   PIPELINE  redis-benchmark -P (default 1)
#   PORT      default 7391
# Prints one line: "KIND TEST P=PIPELINE instructions/request=N".
# Environment: N1, N2 (requests of the two runs, default 20000 and 40000); IPR_RANGE (the -r of
# the measured test, default 1000000); IPR_PREFILL (requests of a SET load run with the same -r
# before the measured test in both runs, default 0: e.g. IPR_RANGE=10000 IPR_PREFILL=100000 for
# GET hits; the load cancels out in the difference); IPR_PREFILL_TEST (the redis-benchmark test
# of that load run, default set).
# LRANGE tests (lrange_100, lrange_300, lrange_500, lrange_600): `redis-benchmark -t lrange_N`
# first runs an LPUSH of as many requests ("needed to benchmark LRANGE"), which would be counted
# too. Instead the list is filled by the prefill (default IPR_PREFILL_TEST=lpush,
# IPR_PREFILL=1000: "LPUSH mylist xxx", as redis-benchmark's) and the measured run sends the
# same command redis-benchmark's test sends, "LRANGE mylist 0 N-1", as a custom command.
#
# Method: the server runs under callgrind twice, driven once with N1=20000 and once with
# N2=40000 requests (redis-benchmark -r IPR_RANGE -c 10); each run's total Ir (every thread, from
# start to clean exit) is read from the callgrind output, and (Ir(N2) - Ir(N1)) / (N2 - N1) is the
# cost of one request, start-up and shutdown cancelling out. rockcache runs with
# --pool-spin-count 0 --pool-max-yield-usec 0: an idle worker's spinning would count as
# instructions and make the figure depend on timing; blocking waits do not.
# IPR_KEEP=DIR: the two callgrind output files are copied there (callgrind_annotate them).
# ROCKCACHE_EXTRA_ARGS: more rockcache options (e.g. "--pool-mlfq no"), split on spaces.
# IPR_MEASURED_ONLY=1: count only while the measured test runs (valgrind --instr-atstart=no,
# then callgrind_control -i on/off around it, after a 3 s pause that lets the prefill's
# background work settle). Without it, a prefill's timing-dependent work (group-commit batch
# sizes, RocksDB flushes) does not cancel out and moves the figure by hundreds of instructions
# from run to run (GET hits at -P 16: 1.7k-2.1k; with it, 1940 +- 1).
set -euo pipefail

KIND=${1:?usage: $0 rockcache|redis BINARY [TEST] [PIPELINE] [PORT]}
BINARY=${2:?binary}
TEST=${3:-set}
PIPE=${4:-1}
PORT=${5:-7391}
N1=${N1:-20000}
N2=${N2:-40000}
RANGE=${IPR_RANGE:-1000000}
PREFILL=${IPR_PREFILL:-0}
PREFILL_TEST=${IPR_PREFILL_TEST:-set}
MEASURED=(-t "$TEST")
case "$TEST" in
  lrange_100 | lrange_300 | lrange_500 | lrange_600)
    PREFILL=${IPR_PREFILL:-1000}
    PREFILL_TEST=${IPR_PREFILL_TEST:-lpush}
    MEASURED=(LRANGE mylist 0 $((${TEST#lrange_} - 1)))
    ;;
  evalsha_incr)  # issue 43's script: INCR + EXPIRE of one spread key, by EVALSHA
    LOAD_SCRIPT="local v=redis.call('INCR',KEYS[1]) redis.call('EXPIRE',KEYS[1],60) return v"
    MEASURED=(EVALSHA "$(printf '%s' "$LOAD_SCRIPT" | sha1sum | cut -d' ' -f1)" 1 key:__rand_int__)
    ;;
esac
MEASURED_ONLY=${IPR_MEASURED_ONLY:-0}
WORK=$(mktemp -d /tmp/ipr-XXXXXX)
trap '[ -n "${IPR_KEEP:-}" ] && cp "$WORK"/callgrind.* "$IPR_KEEP"/ 2>/dev/null; rm -rf "$WORK"' EXIT

wait_port() {
  for _ in $(seq 1 600); do
    if redis-cli -p "$PORT" ping >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "server on port $PORT did not start" >&2
  return 1
}

run_once() {  # $1 = requests; prints total Ir
  local n=$1 out="$WORK/callgrind.$1" dir="$WORK/data.$1"
  mkdir -p "$dir"
  local args
  if [ "$KIND" = redis ]; then
    args=(--port "$PORT" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec
          --dir "$dir")
  else
    # Under callgrind every command's total time (its queueing included) passes the slow log's
    # 10 ms, and logging it (~1.6k instructions) would be counted: natively none is logged.
    args=(--port "$PORT" --bind 127.0.0.1 --dir "$dir" --metrics-port 0
          --pool-spin-count 0 --pool-max-yield-usec 0 --slowlog-log-slower-than 1000000)
    # shellcheck disable=SC2206
    args+=(${ROCKCACHE_EXTRA_ARGS:-})
  fi
  local instr=()
  if [ "$MEASURED_ONLY" = 1 ]; then instr=(--instr-atstart=no); fi
  valgrind --tool=callgrind "${instr[@]}" --callgrind-out-file="$out" "$BINARY" "${args[@]}" \
    >"$WORK/server.$n.log" 2>&1 &
  local pid=$!
  wait_port
  if [ -n "${LOAD_SCRIPT:-}" ]; then redis-cli -p "$PORT" script load "$LOAD_SCRIPT" >/dev/null; fi
  if [ "$PREFILL" -gt 0 ]; then
    redis-benchmark -p "$PORT" -t "$PREFILL_TEST" -r "$RANGE" -n "$PREFILL" -P 16 -c 10 -q \
      >/dev/null
  fi
  if [ "$MEASURED_ONLY" = 1 ]; then
    sleep 3
    callgrind_control -i on "$pid" >/dev/null 2>&1
  fi
  redis-benchmark -p "$PORT" -r "$RANGE" -n "$n" -P "$PIPE" -c 10 -q "${MEASURED[@]}" >/dev/null
  if [ "$MEASURED_ONLY" = 1 ]; then callgrind_control -i off "$pid" >/dev/null 2>&1; fi
  kill -TERM "$pid"
  wait "$pid" || true
  # "totals: N" (or "summary: N") is the sum of Ir over the whole run (with instrumentation
  # toggled, "summary:" is 0 and comes first: prefer "totals:").
  awk '/^totals:/ {t = $2} /^summary:/ {s = $2} END {print (t != "" ? t : s)}' "$out"
}

I1=$(run_once "$N1")
I2=$(run_once "$N2")
echo "$KIND $TEST P=$PIPE instructions/request=$(( (I2 - I1) / (N2 - N1) ))"
