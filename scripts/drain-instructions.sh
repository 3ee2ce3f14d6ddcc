#!/usr/bin/env bash
# Instructions per fill and per pop (callgrind; deterministic, unlike drain-bench.sh's rates):
# fills one key with N members through one pipelined client (redis-cli --pipe), then drains it
# with N single pops, counting the server's instructions (every thread) during each phase only,
# for   sorted set: ZADD / ZPOPMIN     set: SADD / SPOP     list: RPUSH / LPOP
# and prints both figures and fill/drain (issue 10's goal for drains: >= 0.8).
#
# Usage: scripts/drain-instructions.sh SERVER_BINARY PORT [N]
#   SERVER_BINARY  a rockcache-server (or a redis-server: started with --save '' --appendonly yes
#                  --appendfsync everysec)
#   PORT           a free loopback port; the server is started there and stopped (by pid) at exit
#   N              members per key (default 20000; valgrind runs the server ~50x slower)
set -euo pipefail
SERVER=${1:?usage: drain-instructions.sh SERVER_BINARY PORT [N]}
PORT=${2:?usage: drain-instructions.sh SERVER_BINARY PORT [N]}
N=${3:-20000}
TMP=$(mktemp -d /tmp/rockcache-drain-ir-XXXXXX)
PID=

cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  if [ -n "${DRAIN_IR_KEEP:-}" ]; then mkdir -p "$DRAIN_IR_KEEP" && cp "$TMP"/cg.out.* "$DRAIN_IR_KEEP"/; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

case "$(basename "$SERVER")" in
  redis-server*)
    args=(--port "$PORT" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec
          --dir "$TMP")
    ;;
  *)
    # --slowlog-log-slower-than: as in instructions-per-request.sh (callgrind makes every
    # command look slow; natively none is logged).
    args=(--port "$PORT" --bind 127.0.0.1 --dir "$TMP/data" --loglevel warning --metrics-port 0
          --pool-spin-count 0 --pool-max-yield-usec 0 --slowlog-log-slower-than 1000000)
    ;;
esac
valgrind --tool=callgrind --instr-atstart=no --dump-instr=no \
  --callgrind-out-file="$TMP/cg.out" "$SERVER" "${args[@]}" >"$TMP/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 600); do
  redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
  sleep 0.2
done
redis-cli -p "$PORT" ping >/dev/null

# gen CMD KEY KIND: N commands in RESP, one member each (member:00000001, ...), as drain-bench.sh.
gen() {
  awk -v n="$N" -v cmd="$1" -v key="$2" -v kind="$3" 'BEGIN {
    for (i = 0; i < n; i++) {
      m = sprintf("member:%08d", i)
      if (kind == "fill") {
        s = sprintf("%d", i)
        printf "*4\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(cmd), cmd,
               length(key), key, length(s), s, length(m), m
      } else if (kind == "member") {
        printf "*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(cmd), cmd, length(key), key,
               length(m), m
      } else {
        printf "*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(cmd), cmd, length(key), key
      }
    }
  }' >"$TMP/$1.resp"
}

# counted FILE: the server's instructions while FILE goes through one pipelined connection.
counted() {
  callgrind_control -i on "$PID" >/dev/null 2>&1
  redis-cli -p "$PORT" --pipe <"$1" >"$TMP/pipe.out" 2>&1
  sleep 1  # the group's last commit and replies
  callgrind_control -i off "$PID" >/dev/null 2>&1
  local dump
  dump=$(($(find "$TMP" -maxdepth 1 -name 'cg.out.*' | wc -l) + 1))  # (counted runs in a subshell)
  callgrind_control -d "$PID" >/dev/null 2>&1
  # Each dump (cg.out.K) holds the counts since the one before it; it is written asynchronously.
  for _ in $(seq 1 300); do
    grep -q '^totals:' "$TMP/cg.out.$dump" 2>/dev/null && break
    sleep 0.2
  done
  awk '/^totals:/ { print $2 }' "$TMP/cg.out.$dump"
}

printf '%-16s %14s %14s %8s\n' "fill / drain" "fill instr/op" "drain instr/op" "ratio"
run() {
  local label=$1 fill_cmd=$2 fill_kind=$3 drain_cmd=$4 key=$5
  gen "$fill_cmd" "$key" "$fill_kind"
  gen "$drain_cmd" "$key" none
  local f d
  f=$(counted "$TMP/$fill_cmd.resp")
  d=$(counted "$TMP/$drain_cmd.resp")
  awk -v n="$N" -v f="$f" -v d="$d" -v label="$label" \
    'BEGIN { printf "%-16s %14.0f %14.0f %8.2f\n", label, f / n, d / n, f / d }'
}
run "ZADD/ZPOPMIN" ZADD fill ZPOPMIN drain:z
run "SADD/SPOP" SADD member SPOP drain:s
run "RPUSH/LPOP" RPUSH member LPOP drain:l
