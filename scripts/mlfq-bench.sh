#!/usr/bin/env bash
# MLFQ bench (make bench section "mlfq", or run alone): light clients (redis-benchmark -t get,set
# -r 1000000 -c 50) alone, then beside 4 heavy clients looping KEYS * over MLFQ_KEYS keys,
# HGETALL / LRANGE 0 -1 / ZRANGE 0 -1 of MLFQ_ITEMS-element collections, against rockcache with
# pool-mlfq yes and no (same binary, CONFIG SET), then pool-small-share 50 / 80 / 95, and the same
# light and light+heavy runs against redis-server. The light+heavy run with the MLFQ on is made
# twice: with the heavy lane (pool-heavy-lane yes, the default) and without. Prints light
# throughput and p99 against the light-alone run of the same server, how many heavy commands
# completed (each reply's length is checked), the share of contended worker time level 0 got
# (INFO pool), and under each row where the CPU went during the light run (the server's threads
# by name, the heavy clients, the rest).
#
# Usage: scripts/mlfq-bench.sh [SERVER]   (default build/rockcache-server)
# Environment (defaults are the issue's sizes; a quick run: MLFQ_KEYS=100000 MLFQ_ITEMS=20000
# MLFQ_N=50000): MLFQ_KEYS (1000000), MLFQ_ITEMS (200000), MLFQ_N (light requests per test,
# 200000), MLFQ_CLIENTS (50), MLFQ_POOL_THREADS (pool-threads, default auto), MLFQ_TARGETS
# ("rockcache redis"), MLFQ_SHARES ("50 80 95"), MLFQ_ROUNDS (3).
# Rounds: on a 2-core machine one light-alone run differs from the next by up to +-25%, so the
# goal's comparison (light alone against light+heavy with the defaults: MLFQ on, heavy lane,
# share 80) is made MLFQ_ROUNDS times, each round a light-alone run followed by a light+heavy
# run; each round's ratios are printed, and their median is the summary line.
# Heavy clients are build/heavy-client (HEAVY_CLIENT), which checks replies without printing them.
# Servers run on free loopback ports and are stopped by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${1:-${ROCKCACHE_SERVER:-build/rockcache-server}}
HEAVY_CLIENT=${HEAVY_CLIENT:-build/heavy-client}
KEYS=${MLFQ_KEYS:-1000000}
ITEMS=${MLFQ_ITEMS:-200000}
N=${MLFQ_N:-200000}
CLIENTS=${MLFQ_CLIENTS:-50}
TARGETS=${MLFQ_TARGETS:-"rockcache redis"}
SHARES=${MLFQ_SHARES:-"50 80 95"}
ROUNDS=${MLFQ_ROUNDS:-3}
TMP=$(mktemp -d /tmp/rockcache-mlfq-XXXXXX)
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
    port=$((20000 + RANDOM % 12000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
}

wait_ready() {
  for _ in $(seq 1 400); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "server on port $1 did not start" >&2
  return 1
}

# start NAME: starts the target, sets PORT and PID.
start() {
  PORT=$(free_port)
  mkdir -p "$TMP/$1"
  if [ "$1" = redis ]; then
    redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
      --dir "$TMP/$1" >"$TMP/$1.log" 2>&1 &
  else
    local extra=()
    [ -n "${MLFQ_POOL_THREADS:-}" ] && extra+=(--pool-threads "$MLFQ_POOL_THREADS")
    "$SERVER" --port "$PORT" --bind 127.0.0.1 --dir "$TMP/$1" --loglevel warning \
      --metrics-port 0 "${extra[@]}" >"$TMP/$1.log" 2>&1 &
  fi
  PID=$!
  PIDS+=("$PID")
  wait_ready "$PORT"
}

stop() {
  kill "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
}

# RESP for redis-cli --pipe: the data set (keys k:N, and three collections of ITEMS elements).
load() {
  awk -v keys="$KEYS" -v items="$ITEMS" 'function cmd(n, a,   i, s) {
      s = "*" n "\r\n"; for (i = 1; i <= n; i++) s = s "$" length(a[i]) "\r\n" a[i] "\r\n"
      printf "%s", s }
    BEGIN {
      for (i = 0; i < keys; i++) { a[1] = "SET"; a[2] = "k:" i; a[3] = "v"; cmd(3, a) }
      for (i = 0; i < items; i++) {
        a[1] = "HSET"; a[2] = "bighash"; a[3] = "f" i; a[4] = i; cmd(4, a)
        a[1] = "RPUSH"; a[2] = "biglist"; a[3] = i; cmd(3, a)
        a[1] = "ZADD"; a[2] = "bigzset"; a[3] = i; a[4] = "m" i; cmd(4, a)
      }
    }' | redis-cli -p "$PORT" --pipe >/dev/null
}

# Heavy clients: one heavy-client each (tests/bench/heavy_client), repeating its command on one
# connection, so the server sees one client whose commands are all big. It checks each reply's
# element count and framing without formatting it (redis-cli spent more CPU printing a KEYS *
# reply than the server spent producing it). Stopped by pid; prints "complete bad".
HEAVY_PIDS=()
heavy() {  # heavy NAME EXPECTED_ELEMENTS ARGS...
  local name=$1; shift
  "$HEAVY_CLIENT" "$PORT" "$@" >"$TMP/heavy.$name" 2>/dev/null &
  HEAVY_PIDS+=($!)
}
start_heavy() {
  heavy keys $((KEYS + 3)) KEYS '*'
  heavy hgetall $((2 * ITEMS)) HGETALL bighash
  heavy lrange "$ITEMS" LRANGE biglist 0 -1
  heavy zrange "$ITEMS" ZRANGE bigzset 0 -1
  sleep 1  # let them get going
}

# stop_heavy: stops the loops. Each client finishes the reply it is reading (a KEYS * that had
# only started when the light run ended still has to arrive whole). HEAVY holds the replies
# completed during the light run per client, keys/hgetall/lrange/zrange; BAD_REPLIES counts
# wrong replies and replies cut off (must stay 0).
stop_heavy() {
  local pid name c a b  # complete during the run, finished after the stop, bad
  for pid in "${HEAVY_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${HEAVY_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  HEAVY_PIDS=()
  HEAVY=""
  for name in keys hgetall lrange zrange; do
    read -r c a b <"$TMP/heavy.$name" || { c=0; a=0; b=1; }
    HEAVY="$HEAVY${HEAVY:+/}$c"
    BAD_REPLIES=$((BAD_REPLIES + ${b:-0}))
  done
}
BAD_REPLIES=0

# light: "get_rps get_p99 set_rps set_p99" from redis-benchmark --csv.
light() {
  redis-benchmark -p "$PORT" -t get,set -r 1000000 -n "$N" -c "$CLIENTS" --dbnum 1 --csv \
    2>/dev/null |
    tr -d '"' | awk -F, '$1 == "SET" { sr = $2; sp = $7 } $1 == "GET" { gr = $2; gp = $7 }
      END { print gr, gp, sr, sp }'
}

level0_share() {
  redis-cli -p "$PORT" info pool | tr -d '\r' | awk -F: '/^pool_level0_contended_share:/ { print $2 }'
}

# cpu_ticks: clock ticks used so far, "net pool rocksdb server_other heavy busy all": the
# server's threads by name (rc-net-*, rc-pool-* with the heavy lane's rc-heavy-*, rocksdb:*, the
# rest), the heavy clients, and the machine (/proc/stat: busy and all ticks summed over every core).
cpu_ticks() {
  local stats=() pid
  for pid in "${HEAVY_PIDS[@]}"; do [ -r "/proc/$pid/stat" ] && stats+=("/proc/$pid/stat"); done
  {
    for f in /proc/"$PID"/task/*/stat; do [ -r "$f" ] && echo "S $(cat "$f" 2>/dev/null)"; done
    for f in "${stats[@]}"; do echo "H $(cat "$f" 2>/dev/null)"; done
    head -1 /proc/stat
  } | awk '$1 == "cpu" { for (i = 2; i <= NF; i++) all += $i; busy = all - $5 - $6; next }
    { who = $1; comm = $0; sub(/^[^(]*\(/, "", comm); name = comm; sub(/\).*$/, "", name)
      sub(/^[^)]*\) /, "", comm); split(comm, f, " "); t = f[12] + f[13]
      if (who == "H") heavy += t; else if (name ~ /^rc-net-/) net += t
      else if (name ~ /^rc-(pool|heavy)-/) pool += t; else if (name ~ /^rocksdb:/) rdb += t; else other += t }
    END { print net + 0, pool + 0, rdb + 0, other + 0, heavy + 0, busy, all }'
}

# cpu_row BEFORE AFTER: where the machine's CPU went between two cpu_ticks, in % of all cores
# (rest = every other process: redis-benchmark, the shell, the kernel's own threads).
cpu_row() {
  echo "$1 $2" | awk '{ all = $14 - $7; if (all <= 0) exit
    net = $8 - $1; pool = $9 - $2; rdb = $10 - $3; oth = $11 - $4
    hv = $12 - $5; busy = $13 - $6; rest = busy - net - pool - rdb - oth - hv
    printf "%-10s %-24s cpu %% of all cores: net %.0f, pool %.0f, rocksdb %.0f, server other %.0f, heavy clients %.0f, rest %.0f, idle %.0f\n",
      "", "", 100 * net / all, 100 * pool / all, 100 * rdb / all, 100 * oth / all, 100 * hv / all,
      100 * rest / all, 100 * (all - busy) / all }'
}

# measured_light: light(), with the CPU breakdown of the run in CPU_ROW.
measured_light() {
  local before after
  before=$(cpu_ticks)
  MEASURED=$(light)
  after=$(cpu_ticks)
  CPU_ROW=$(cpu_row "$before" "$after")
}

# ratios RES BASE: "get_ratio get_p99x set_ratio set_p99x" of a run against a light-alone run.
ratios() {
  echo "$1 $2" | awk '{ printf "%.3f %.3f %.3f %.3f\n", ($5 > 0 ? $1 / $5 : 0), ($6 > 0 ? $2 / $6 : 0),
    ($7 > 0 ? $3 / $7 : 0), ($8 > 0 ? $4 / $8 : 0) }'
}
ROUND_RATIOS=()  # one "get getp99x set setp99x" per round (rockcache, defaults)

BASE=""
row() {  # row TARGET SCENARIO "get_rps get_p99 set_rps set_p99" HEAVY SHARE
  local target=$1 scenario=$2 res=$3 heavy=$4 share=$5
  [ "$scenario" = "light alone" ] && BASE=$res
  echo "$res $BASE" | awk -v t="$target" -v s="$scenario" -v h="$heavy" -v sh="$share" '{
    printf "%-10s %-24s %9.0f %6.2fx %8.3f %6.2fx   %9.0f %6.2fx %8.3f %6.2fx   %-22s %s\n",
      t, s, $1, ($5 > 0 ? $1 / $5 : 0), $2, ($6 > 0 ? $2 / $6 : 0),
      $3, ($7 > 0 ? $3 / $7 : 0), $4, ($8 > 0 ? $4 / $8 : 0), h, sh }'
}

echo
echo "== mlfq: redis-benchmark -t get,set -r 1000000 -n $N -c $CLIENTS, alone and beside 4 heavy"
echo "   clients (KEYS * over $KEYS keys; HGETALL, LRANGE 0 -1, ZRANGE 0 -1 of $ITEMS elements);"
echo "   light in database 1 (--dbnum 1); ratios against the same server's light-alone run;"
echo "   heavy = complete replies per client"
echo "   during the light run (keys/hgetall/lrange/zrange); l0 share = INFO pool level-0 contended share"
printf '%-10s %-24s %9s %7s %8s %7s   %9s %7s %8s %7s   %-22s %s\n' target scenario "get rps" \
  ratio "p99 ms" "p99x" "set rps" ratio "p99 ms" "p99x" heavy "l0 share"
for target in $TARGETS; do
  start "$target"
  load
  measured_light
  row "$target" "light alone" "$MEASURED" "-" "-"
  echo "$CPU_ROW"
  if [ "$target" = redis ]; then
    start_heavy
    measured_light
    stop_heavy
    row "$target" "light+heavy" "$MEASURED" "$HEAVY" "-"
    echo "$CPU_ROW"
  else
    # mlfq yes: big work on the heavy lane (idle-priority threads, the default); lane no: the
    # workers run it at normal priority; mlfq no: one FIFO level.
    for mode in "yes yes" "yes no" "no yes"; do
      set -- $mode
      redis-cli -p "$PORT" config set pool-mlfq "$1" >/dev/null
      redis-cli -p "$PORT" config set pool-heavy-lane "$2" >/dev/null
      redis-cli -p "$PORT" config resetstat >/dev/null
      start_heavy
      measured_light
      stop_heavy
      local_label="light+heavy mlfq $1"
      [ "$1" = yes ] && [ "$2" = no ] && local_label="light+heavy mlfq, no lane"
      row "$target" "$local_label" "$MEASURED" "$HEAVY" "$(level0_share)"
      echo "$CPU_ROW"
      [ "$mode" = "yes yes" ] && ROUND_RATIOS+=("$(ratios "$MEASURED" "$BASE")")
    done
    redis-cli -p "$PORT" config set pool-mlfq yes >/dev/null
    redis-cli -p "$PORT" config set pool-heavy-lane yes >/dev/null
    for share in $SHARES; do
      redis-cli -p "$PORT" config set pool-small-share "$share" >/dev/null
      redis-cli -p "$PORT" config resetstat >/dev/null
      start_heavy
      measured_light
      stop_heavy
      row "$target" "light+heavy share $share" "$MEASURED" "$HEAVY" "$(level0_share)"
      echo "$CPU_ROW"
    done
    redis-cli -p "$PORT" config set pool-small-share 80 >/dev/null
    # Rounds 2..ROUNDS of the goal's comparison (round 1 is the first two rows above).
    for round in $(seq 2 "$ROUNDS"); do
      measured_light
      row "$target" "light alone, round $round" "$MEASURED" "-" "-"
      BASE=$MEASURED
      redis-cli -p "$PORT" config resetstat >/dev/null
      start_heavy
      measured_light
      stop_heavy
      row "$target" "light+heavy, round $round" "$MEASURED" "$HEAVY" "$(level0_share)"
      echo "$CPU_ROW"
      ROUND_RATIOS+=("$(ratios "$MEASURED" "$BASE")")
    done
    printf '%s\n' "${ROUND_RATIOS[@]}" | awk -v n="${#ROUND_RATIOS[@]}" '
      { g[NR] = $1; gp[NR] = $2; s[NR] = $3; sp[NR] = $4 }
      function median(a, m,   i, j, t) {
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
      END { printf "%-10s median of %d rounds (light+heavy, MLFQ on, lane, share 80, against each round'"'"'s light alone): GET %.2fx p99 %.2fx, SET %.2fx p99 %.2fx\n",
        "rockcache", n, median(g, n), median(gp, n), median(s, n), median(sp, n) }'
  fi
  stop
done
if [ "$BAD_REPLIES" -ne 0 ]; then
  echo "heavy clients got $BAD_REPLIES incomplete or wrong replies" >&2
  exit 1
fi
