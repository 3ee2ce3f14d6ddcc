#!/usr/bin/env bash
# make bench-bigdata (and make bench's "bigdata" section): the regime users choose rockcache for,
# data bigger than the memory it is given. KEYS keys of VALUE_SIZE bytes are loaded into
# rockcache under several memory configurations (the "data-to-memory ratio": data bytes over
# cache-maxmemory + rocksdb-block-cache-size) and once into redis-server (in memory, the
# reference that holds everything); then each runs the same matrix of build/bigbench runs,
# {get, mix (90% GET / 10% SET)} x {uniform, zipf (hottest 1% of keys ~80% of requests)} x
# {pipeline 1, 16}, SECONDS_PER_RUN each. The workloads that write (AOF_WORKLOADS, default "mix";
# empty to skip) also run against a redis-server with appendonly yes / appendfsync everysec, the
# peer with rockcache's crash guarantee (table column rc/aof). Configurations (CONFIGS):
#   default  cache-maxmemory and rocksdb-block-cache-size as shipped (256mb; a quarter of it)
#   sixth    both at 1/6 of the data size (ratio 3)
#   large    both at twice the data size: everything fits (ratio 0.25)
# After each rockcache run: the cache's hit ratio over the run (cache_hits / cache_misses deltas
# of INFO) and RocksDB's block cache hit ratio (rocksdb_block_cache_hits / _misses, n/a when INFO
# lacks them), RSS of both servers (anonymous memory: RssAnon). After a configuration's runs rockcache is stopped and
# build/rocksdb-reference reads its data directory read-only with the same block cache (RocksDB
# alone, no network or cache: the physical limit of uniform point reads); rockcache's uniform GET
# rate is printed as a fraction of it. Note: the data files stay in the OS page cache (nothing
# here drops it), so a block cache miss costs a copy and an LZ4 decompression, not a disk read.
#
# Output: the table on stdout and, under BENCH_OUT (default bench-out/bigdata-<date>/):
# table.txt, results.tsv, reference.tsv, bigdata.svg (rps ratio rockcache/redis and p99 against
# the data-to-memory ratio, one line per workload x dist x pipeline), logs/ (every run's output).
#
# Usage: scripts/bench-bigdata.sh
# Environment: ROCKCACHE_SERVER (default build/rockcache-server), BIGBENCH (build/bigbench),
# ROCKS_REF (build/rocksdb-reference), KEYS (1000000; BIG=1: 5000000), VALUE_SIZE (400),
# SECONDS_PER_RUN (10), CLIENTS (50), THREADS (bigbench threads, 2), CONFIGS ("default sixth
# large"), ROCKCACHE_ARGS (extra server flags, after the configuration's: they win), BENCH_OUT.
# QUICK=1: KEYS=200000, SECONDS_PER_RUN=3, CONFIGS="default sixth" (a couple of minutes; at that
# size the defaults hold everything). Servers run on free loopback ports in 7700-7799, each with
# its own temporary directory, and are stopped by pid.
set -euo pipefail
cd "$(dirname "$0")/.."

SERVER=${ROCKCACHE_SERVER:-build/rockcache-server}
BIGBENCH=${BIGBENCH:-build/bigbench}
ROCKS_REF=${ROCKS_REF:-build/rocksdb-reference}
if [ "${QUICK:-0}" = 1 ]; then
  : "${KEYS:=200000}" "${SECONDS_PER_RUN:=3}" "${CONFIGS:=default sixth}"
fi
[ "${BIG:-0}" = 1 ] && : "${KEYS:=5000000}"
KEYS=${KEYS:-1000000}
VALUE_SIZE=${VALUE_SIZE:-400}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
CLIENTS=${CLIENTS:-50}
THREADS=${THREADS:-2}
CONFIGS=${CONFIGS:-"default sixth large"}
read -r -a EXTRA_ARGS <<<"${ROCKCACHE_ARGS:-}"
OUT=${BENCH_OUT:-bench-out/bigdata-$(date +%Y%m%d-%H%M%S)}
DATA_BYTES=$((KEYS * VALUE_SIZE))
WORKLOADS="get mix"
DISTS="uniform zipf"
PIPELINES="1 16"
AOF_WORKLOADS=${AOF_WORKLOADS-mix}

for bin in "$SERVER" "$BIGBENCH" "$ROCKS_REF"; do
  [ -x "$bin" ] || { echo "bench-bigdata: $bin is missing (make bench-bigdata builds it)" >&2; exit 1; }
done
mkdir -p "$OUT/logs"
TMP=$(mktemp -d /tmp/rockcache-bigdata-XXXXXX)
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# free_port: sets PORT to a port in 7700-7799 nothing listens on and this run has not used.
USED_PORTS=" "
free_port() {
  local tries
  for tries in $(seq 1 500); do
    PORT=$((7700 + RANDOM % 100))
    [[ $USED_PORTS == *" $PORT "* ]] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
      USED_PORTS+="$PORT "
      return 0
    fi
  done
  echo "bench-bigdata: no free port in 7700-7799" >&2
  return 1
}

wait_ready() {
  local port=$1 pid=$2
  for _ in $(seq 1 600); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "bench-bigdata: the server on port $port did not start" >&2
  return 1
}

# start_server NAME COMMAND...: starts COMMAND (its port is $PORT, set by free_port first) in the
# background; sets SPID.
start_server() {
  local name=$1; shift
  "$@" >"$OUT/logs/$name.log" 2>&1 &
  SPID=$!
  PIDS+=("$SPID")
  wait_ready "$PORT" "$SPID" || { tail -20 "$OUT/logs/$name.log" >&2; exit 1; }
}

stop_server() {
  local pid=$1 kept=() p
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  for p in "${PIDS[@]}"; do [ "$p" != "$pid" ] && kept+=("$p"); done
  PIDS=("${kept[@]}")
}

# alive PID NAME: exits with the server's log when it died.
alive() {
  if ! kill -0 "$1" 2>/dev/null; then
    echo "bench-bigdata: $2 (pid $1) is gone; its log ends:" >&2
    tail -30 "$OUT/logs/$2.log" >&2
    exit 1
  fi
}

# A process's own memory (RssAnon): not the file pages it maps, which are the OS page cache that
# pread reads fill as well (rockcache maps its SST files: rocksdb-mmap-reads).
rss_mb() { awk '/^RssAnon:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

# info PORT FIELD...: the fields' values from INFO all, one per line ("na" when absent).
info() {
  local port=$1; shift
  redis-cli -p "$port" info all | tr -d '\r' | awk -F: -v want="$*" '
    { v[$1] = $2 }
    END { n = split(want, w, " "); for (i = 1; i <= n; i++) print ((w[i] in v) ? v[w[i]] : "na") }'
}

# hit_pct HITS0 MISSES0 HITS1 MISSES1: the hit percentage between two snapshots, or n/a.
hit_pct() {
  awk -v h0="$1" -v m0="$2" -v h1="$3" -v m1="$4" 'BEGIN {
    if (h0 == "na" || h1 == "na" || m0 == "na" || m1 == "na") { print "n/a"; exit }
    h = h1 - h0; m = m1 - m0
    if (h + m > 0) printf "%.1f\n", 100 * h / (h + m); else print "n/a" }'
}

# wait_settled PORT: waits (up to 180 s) until RocksDB runs no flush or compaction and has none
# pending, so the runs after a load do not measure its compactions.
wait_settled() {
  local port=$1 start=$SECONDS
  while [ $((SECONDS - start)) -lt 180 ]; do
    local busy
    busy=$(info "$port" rocksdb_num_running_compactions rocksdb_num_running_flushes \
      rocksdb_estimate_pending_compaction_bytes | awk '$1 != 0 && $1 != "na" { b = 1 } END { print b + 0 }')
    [ "$busy" = 0 ] && { echo "  settled after $((SECONDS - start)) s"; return 0; }
    sleep 1
  done
  echo "  still compacting after 180 s; measuring anyway"
}

# bigbench NAME PORT ARGS...: runs bigbench (its output in logs/NAME.txt); prints
# "rps p50_ms p99_ms errors requests" from its machine-readable line.
bigbench() {
  local name=$1 port=$2; shift 2
  "$BIGBENCH" --host 127.0.0.1 --port "$port" --keys "$KEYS" --value-size "$VALUE_SIZE" \
    --clients "$CLIENTS" --threads "$THREADS" "$@" >"$OUT/logs/$name.txt" 2>&1 || true
  awk '/^rps=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                 r = v["rps"] " " v["p50_ms"] " " v["p99_ms"] " " v["errors"] " " v["requests"] }
       END { print (r == "" ? "0 0 0 failed 0" : r) }' "$OUT/logs/$name.txt"
  grep -m1 '^bigbench: error' "$OUT/logs/$name.txt" >&2 || true
}

load() {
  local name=$1 port=$2
  local r; r=$(bigbench "$name.load" "$port" --mode load)
  read -r rps _ _ errors _ <<<"$r"
  printf '  load: %s keys of %s bytes at %.0f keys/s, %s errors\n' "$KEYS" "$VALUE_SIZE" "$rps" \
    "$errors"
}

# config_args NAME: the configuration's server flags.
config_args() {
  case $1 in
    default) ;;
    sixth) echo "--cache-maxmemory $((DATA_BYTES / 6)) --rocksdb-block-cache-size $((DATA_BYTES / 6))" ;;
    large) echo "--cache-maxmemory $((DATA_BYTES * 2)) --rocksdb-block-cache-size $((DATA_BYTES * 2))" ;;
    *) echo "bench-bigdata: unknown configuration $1 (default, sixth, large)" >&2; exit 1 ;;
  esac
}

echo "bench-bigdata: $(nproc) cores; $KEYS keys x $VALUE_SIZE bytes = $((DATA_BYTES / 1000000)) MB" \
  "of values; ${SECONDS_PER_RUN}s a run; $CLIENTS clients, $THREADS bigbench threads;" \
  "configurations: $CONFIGS; output in $OUT"

# seed WORKLOAD DIST PIPE: the cell's bigbench seed. Each cell of the matrix has its own, so a run
# does not replay the key sequence of the run before it (which the cache would still hold); the
# same cell sends the same sequence to every server.
seed() {
  local i=0 w d p
  for w in $WORKLOADS; do for d in $DISTS; do for p in $PIPELINES; do
    i=$((i + 1))
    [ "$w $d $p" = "$1 $2 $3" ] && { echo $((1000 + i)); return; }
  done; done; done
}

# ---- redis-server: loaded once, the same matrix ----
declare -A REDIS
free_port
mkdir -p "$TMP/redis"
start_server redis redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --daemonize no --dir "$TMP/redis"
REDIS_PID=$SPID REDIS_PORT=$PORT
echo
echo "== redis-server (in memory), port $REDIS_PORT"
load redis "$REDIS_PORT"
REDIS_RSS_LOAD=$(rss_mb "$REDIS_PID")
echo "  RSS after load: $REDIS_RSS_LOAD MB"
for workload in $WORKLOADS; do
  for dist in $DISTS; do
    for pipe in $PIPELINES; do
      r=$(bigbench "redis.$workload.$dist.p$pipe" "$REDIS_PORT" --mode "$workload" --dist "$dist" \
        --pipeline "$pipe" --seconds "$SECONDS_PER_RUN" --seed "$(seed "$workload" "$dist" "$pipe")")
      alive "$REDIS_PID" redis
      REDIS["$workload $dist $pipe"]="$r $(rss_mb "$REDIS_PID")"
      printf '  %-4s %-7s P%-3s %s\n' "$workload" "$dist" "$pipe" "$r"
    done
  done
done
REDIS_RSS_RUNS=$(rss_mb "$REDIS_PID")
echo "  RSS after the runs: $REDIS_RSS_RUNS MB"
stop_server "$REDIS_PID"

# ---- redis-server with appendonly everysec (the peer with rockcache's crash guarantee): the
# workloads that write (AOF_WORKLOADS), loaded the same way ----
declare -A REDIS_AOF
if [ -n "$AOF_WORKLOADS" ]; then
  free_port
  mkdir -p "$TMP/redis-aof"
  start_server redis-aof redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly yes \
    --appendfsync everysec --daemonize no --dir "$TMP/redis-aof"
  AOF_PID=$SPID AOF_PORT=$PORT
  echo
  echo "== redis-server (appendonly yes, appendfsync everysec), port $AOF_PORT"
  load redis-aof "$AOF_PORT"
  for workload in $AOF_WORKLOADS; do
    for dist in $DISTS; do
      for pipe in $PIPELINES; do
        r=$(bigbench "redis-aof.$workload.$dist.p$pipe" "$AOF_PORT" --mode "$workload" \
          --dist "$dist" --pipeline "$pipe" --seconds "$SECONDS_PER_RUN" \
          --seed "$(seed "$workload" "$dist" "$pipe")")
        alive "$AOF_PID" redis-aof
        REDIS_AOF["$workload $dist $pipe"]=$r
        printf '  %-4s %-7s P%-3s %s\n' "$workload" "$dist" "$pipe" "$r"
      done
    done
  done
  stop_server "$AOF_PID"
fi

# ---- rockcache, one configuration at a time ----
TSV=$OUT/results.tsv
REF_TSV=$OUT/reference.tsv
printf 'config\tdata_to_memory\tcache_bytes\tblock_cache_bytes\tworkload\tdist\tpipeline\trc_rps\trc_p50_ms\trc_p99_ms\trc_errors\tredis_rps\tredis_p50_ms\tredis_p99_ms\tredis_errors\tratio\tcache_hit_pct\tblock_cache_hit_pct\trc_rss_mb\tredis_rss_mb\tcache_hits\tcache_misses\tblock_cache_hits\tblock_cache_misses\tredis_aof_rps\tratio_aof\n' >"$TSV"
printf 'config\tdata_to_memory\tblock_cache_bytes\tref_get_1t\tref_get_2t\tref_multiget_1t\tref_multiget_2t\tnotfound\trc_get_uniform_p1\trc_get_uniform_p16\n' >"$REF_TSV"
for config in $CONFIGS; do
  read -r -a cfg_args <<<"$(config_args "$config")"
  free_port
  dir=$TMP/rockcache-$config
  start_server "rockcache-$config" "$SERVER" --port "$PORT" --bind 127.0.0.1 --dir "$dir" \
    --loglevel warning --metrics-port 0 "${cfg_args[@]}" "${EXTRA_ARGS[@]}"
  RC_PID=$SPID RC_PORT=$PORT
  mapfile -t mem < <(info "$RC_PORT" cache_maxmemory rocksdb_block_cache_capacity)
  cache_bytes=${mem[0]} block_bytes=${mem[1]}
  ratio=$(awk -v d="$DATA_BYTES" -v c="$cache_bytes" -v b="$block_bytes" \
    'BEGIN { printf "%.2f", (c + b > 0) ? d / (c + b) : 0 }')
  echo
  echo "== rockcache $config: cache-maxmemory $cache_bytes, rocksdb-block-cache-size $block_bytes" \
    "(data-to-memory ratio $ratio), port $RC_PORT${cfg_args[*]:+, flags ${cfg_args[*]}}"
  load "rockcache-$config" "$RC_PORT"
  wait_settled "$RC_PORT"
  echo "  RSS after load: $(rss_mb "$RC_PID") MB (redis-server: $REDIS_RSS_LOAD MB)"
  declare -A UNIFORM_GET=()
  for workload in $WORKLOADS; do
    for dist in $DISTS; do
      for pipe in $PIPELINES; do
        fields="cache_hits cache_misses rocksdb_block_cache_hits rocksdb_block_cache_misses"
        mapfile -t before < <(info "$RC_PORT" $fields)
        r=$(bigbench "rockcache-$config.$workload.$dist.p$pipe" "$RC_PORT" --mode "$workload" \
          --dist "$dist" --pipeline "$pipe" --seconds "$SECONDS_PER_RUN" \
          --seed "$(seed "$workload" "$dist" "$pipe")")
        alive "$RC_PID" "rockcache-$config"
        mapfile -t after < <(info "$RC_PORT" $fields)
        cache_hit=$(hit_pct "${before[0]}" "${before[1]}" "${after[0]}" "${after[1]}")
        block_hit=$(hit_pct "${before[2]}" "${before[3]}" "${after[2]}" "${after[3]}")
        read -r rps p50 p99 errors _ <<<"$r"
        read -r r_rps r_p50 r_p99 r_errors _ r_rss <<<"${REDIS["$workload $dist $pipe"]}"
        [ "$workload $dist" = "get uniform" ] && UNIFORM_GET[$pipe]=$rps
        printf '  %-4s %-7s P%-3s %s  hit %%: cache %s, block cache %s\n' "$workload" "$dist" \
          "$pipe" "$r" "$cache_hit" "$block_hit"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' \
          "$config" "$ratio" "$cache_bytes" "$block_bytes" "$workload" "$dist" "$pipe" "$rps" \
          "$p50" "$p99" "$errors" "$r_rps" "$r_p50" "$r_p99" "$r_errors" \
          "$(awk -v a="$rps" -v b="$r_rps" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')" \
          "$cache_hit" "$block_hit" "$(rss_mb "$RC_PID")" "$r_rss" >>"$TSV"
        for i in 0 1 2 3; do  # the counters' deltas over the run
          awk -v a="${before[$i]}" -v b="${after[$i]}" \
            'BEGIN { printf "\t%s", (a == "na" || b == "na") ? "na" : b - a }' >>"$TSV"
        done
        read -r a_rps _ <<<"${REDIS_AOF["$workload $dist $pipe"]:-na}"
        awk -v a="$rps" -v b="$a_rps" \
          'BEGIN { if (b == "na" || b <= 0) print "\tna\tna"; else printf "\t%s\t%.3f\n", b, a / b }' >>"$TSV"
      done
    done
  done
  echo "  RSS after the runs: $(rss_mb "$RC_PID") MB (redis-server: $REDIS_RSS_RUNS MB)"
  stop_server "$RC_PID"

  # RocksDB alone on the same files and block cache size.
  if ! "$ROCKS_REF" --dir "$dir" --keys "$KEYS" --seconds "$SECONDS_PER_RUN" \
    --block-cache-bytes "$block_bytes" >"$OUT/logs/reference-$config.txt" 2>&1; then
    echo "  rocksdb-reference FAILED (its figures below are 0):" \
      "$(tail -1 "$OUT/logs/reference-$config.txt")"
  fi
  mapfile -t ref < <(awk '/^reference=/ {
      split($3, o, "="); split($4, n, "="); ops[++k] = o[2]; nf += n[2] }
    END { for (i = 1; i <= 4; i++) print (i in ops) ? ops[i] : 0; print nf + 0 }' \
    "$OUT/logs/reference-$config.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$config" "$ratio" "$block_bytes" \
    "${ref[@]}" "${UNIFORM_GET[1]:-0}" "${UNIFORM_GET[16]:-0}" >>"$REF_TSV"
  awk -v g1="${UNIFORM_GET[1]:-0}" -v g16="${UNIFORM_GET[16]:-0}" -v get2="${ref[1]}" \
    -v mg2="${ref[3]}" -v get1="${ref[0]}" -v mg1="${ref[2]}" -v nf="${ref[4]}" 'BEGIN {
    printf "  rocksdb-reference: get %.0f/s (1 thread) %.0f/s (2), multiget %.0f/s (1) %.0f/s (2), %d not found\n", get1, get2, mg1, mg2, nf
    for (p = 1; p <= 2; p++) {
      v = (p == 1) ? g1 : g16
      printf "  rockcache uniform GET P%-2d %.0f rps = %.2f of the 2-thread Get, %.2f of the 2-thread MultiGet\n", (p == 1) ? 1 : 16, v, (get2 > 0) ? v / get2 : 0, (mg2 > 0) ? v / mg2 : 0
    } }'
done

# ---- The table, the reference table and the plot ----
{
  echo "== bigdata: $KEYS keys x $VALUE_SIZE bytes, ${SECONDS_PER_RUN}s runs, $CLIENTS clients" \
    "(rps in thousands, latencies in ms, RSS in MB after the run)"
  awk -F'\t' 'NR == 1 {
      printf "%-8s %5s %-4s %-7s %3s | %8s %7s %7s | %8s %7s %7s | %6s | %6s %6s | %9s\n",
        "config", "d/mem", "work", "dist", "P", "rc krps", "p50", "p99", "redis", "p50", "p99",
        "rc/red", "hit%", "bc hit%", "RSS rc/red", "aof krps", "rc/aof"; next }
    { printf "%-8s %5.2f %-4s %-7s %3s | %8.1f %7.3f %7.3f | %8.1f %7.3f %7.3f | %5.2fx | %6s %6s | %4s/%-4s | %8s %6s\n",
        $1, $2, $5, $6, $7, $8 / 1000, $9, $10, $12 / 1000, $13, $14, $16, $17, $18, $19, $20,
        ($25 == "na") ? "-" : sprintf("%.1f", $25 / 1000), ($26 == "na") ? "-" : sprintf("%.2fx", $26) }' "$TSV"
  echo
  echo "== rocksdb-reference (RocksDB alone, read-only, same block cache; ops/s) against" \
    "rockcache's uniform GET"
  awk -F'\t' 'NR == 1 {
      printf "%-8s %5s %10s %10s %10s %10s %9s | %10s %6s %6s | %10s %6s %6s\n", "config", "d/mem",
        "get 1t", "get 2t", "mget 1t", "mget 2t", "notfound", "rc GET P1", "/get2", "/mget2",
        "rc GET P16", "/get2", "/mget2"; next }
    { printf "%-8s %5.2f %10.0f %10.0f %10.0f %10.0f %9s | %10.0f %6.2f %6.2f | %10.0f %6.2f %6.2f\n",
        $1, $2, $4, $5, $6, $7, $8, $9, ($5 > 0) ? $9 / $5 : 0, ($7 > 0) ? $9 / $7 : 0,
        $10, ($5 > 0) ? $10 / $5 : 0, ($7 > 0) ? $10 / $7 : 0 }' "$REF_TSV"
} | tee "$OUT/table.txt"

# The plot: two panels against the data-to-memory ratio (log scale), one line per workload x
# dist x pipeline. Standard library only (no matplotlib here): raw SVG.
/usr/bin/python3 - "$TSV" "$OUT/bigdata.svg" "$KEYS" "$VALUE_SIZE" <<'PY'
import csv, math, sys
tsv, out, keys, value_size = sys.argv[1:5]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
series = {}
for r in rows:
    name = f"{r['workload']} {r['dist']} P{r['pipeline']}"
    series.setdefault(name, []).append(
        (float(r["data_to_memory"]), float(r["ratio"]), float(r["rc_p99_ms"])))
for pts in series.values():
    pts.sort()
colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
W, H, PW, PH, L, T = 1100, 500, 420, 320, 80, 60  # canvas, panel size, left / top margins
xs = [p[0] for pts in series.values() for p in pts] or [1]
xlo, xhi = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
       f'font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W / 2}" y="24" text-anchor="middle" font-size="16">rockcache, data bigger '
       f'than memory: {keys} keys x {value_size} B; x: data / (cache-maxmemory + block cache), log'
       '</text>']

def panel(ox, title, ylabel, idx, log_y):
    vals = [p[idx] for pts in series.values() for p in pts if p[idx] > 0] or [1]
    if log_y:
        ylo, yhi = math.floor(math.log10(min(vals))), math.ceil(math.log10(max(vals)))
        if ylo == yhi:
            yhi += 1
        ty = lambda v: math.log10(max(v, 10 ** ylo))
        ticks = [10 ** e for e in range(ylo, yhi + 1)]
    else:
        ylo, yhi = 0, max(1.0, max(vals) * 1.1)
        ty = lambda v: v
        step = 0.25 if yhi <= 1.5 else 0.5 if yhi <= 4 else 1 if yhi <= 10 else 5
        ticks = [i * step for i in range(int(yhi / step) + 1)]
    X = lambda x: ox + (math.log10(x) - xlo) / (xhi - xlo) * PW
    Y = lambda v: T + PH - (ty(v) - ylo) / (yhi - ylo) * PH
    svg.append(f'<rect x="{ox}" y="{T}" width="{PW}" height="{PH}" fill="none" stroke="black"/>')
    svg.append(f'<text x="{ox + PW / 2}" y="{T - 8}" text-anchor="middle">{title}</text>')
    svg.append(f'<text transform="translate({ox - 50},{T + PH / 2}) rotate(-90)" '
               f'text-anchor="middle">{ylabel}</text>')
    for t in ticks:
        svg.append(f'<line x1="{ox}" x2="{ox + PW}" y1="{Y(t):.1f}" y2="{Y(t):.1f}" '
                   f'stroke="#ddd"/><text x="{ox - 6}" y="{Y(t) + 4:.1f}" '
                   f'text-anchor="end">{t:g}</text>')
    for x in sorted(set(xs)):
        svg.append(f'<line x1="{X(x):.1f}" x2="{X(x):.1f}" y1="{T}" y2="{T + PH}" stroke="#eee"/>'
                   f'<text x="{X(x):.1f}" y="{T + PH + 16}" text-anchor="middle">{x:g}</text>')
    svg.append(f'<text x="{ox + PW / 2}" y="{T + PH + 34}" text-anchor="middle">'
               f'data-to-memory ratio</text>')
    for i, (name, pts) in enumerate(sorted(series.items())):
        c = colors[i % len(colors)]
        dash = ' stroke-dasharray="5,3"' if name.startswith("mix") else ""
        path = " ".join(f"{X(p[0]):.1f},{Y(p[idx]):.1f}" for p in pts)
        svg.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for p in pts:
            svg.append(f'<circle cx="{X(p[0]):.1f}" cy="{Y(p[idx]):.1f}" r="3" fill="{c}"/>')

panel(L, "throughput: rockcache / redis-server", "rps ratio", 1, False)
panel(L + PW + 120, "rockcache p99 latency", "p99 (ms, log)", 2, True)
for i, name in enumerate(sorted(series)):
    x, y = L + (i % 4) * 240, T + PH + 62 + (i // 4) * 22
    dash = ' stroke-dasharray="5,3"' if name.startswith("mix") else ""
    svg.append(f'<line x1="{x}" x2="{x + 30}" y1="{y}" y2="{y}" stroke="{colors[i % len(colors)]}" '
               f'stroke-width="2"{dash}/><text x="{x + 36}" y="{y + 4}">{name}</text>')
svg.append("</svg>")
open(out, "w").write("\n".join(svg) + "\n")
PY
echo
echo "bench-bigdata: wrote $OUT/table.txt, $OUT/results.tsv, $OUT/reference.tsv, $OUT/bigdata.svg"
