#!/usr/bin/env bash
# Deterministic cost of a memtable insert and point read: one round of build/memtable-bench under
# cachegrind, for rockcache's skip list and RocksDB's, with a cache of this machine's per-core
# sizes (L1d 48 KB, L2 1 MB as the last level: a miss there is what a large memtable pays per
# search step). Prints instructions and last-level data misses per operation (a put plus a get),
# the whole run divided by 2N (open/close included, a few percent at the default N).
#
# Usage: scripts/memtable-misses.sh [MEMTABLE_BENCH=build/memtable-bench] [N=200000]
# Environment: MEMTABLES (default "rockcache rocksdb"; also rockcache-skip, rockcache-4k),
# MEMTABLE_BENCH_KEYS=member for a collection's data keys (see memtable_bench.cc).
set -euo pipefail
BENCH=${1:-build/memtable-bench}
N=${2:-200000}
WORK=$(mktemp -d /tmp/memtable-misses-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 1; }
printf '%-10s %12s %14s %14s\n' memtable "instr/op" "D1 misses/op" "LL misses/op"
for memtable in ${MEMTABLES:-rockcache rocksdb}; do
  valgrind --tool=cachegrind --cache-sim=yes --D1=49152,12,64 --LL=1048576,8,64 \
    --cachegrind-out-file="$WORK/cg.$memtable" "$BENCH" "$memtable" "$N" 1 "$WORK/db" \
    >"$WORK/$memtable.log" 2>&1
  awk -v m="$memtable" -v ops=$((2 * N)) '
    /I +refs:/ {gsub(",", "", $4); ir = $4}
    /D1 +misses:/ {gsub(",", "", $4); d1 = $4}
    /LLd misses:/ {gsub(",", "", $4); ll = $4}
    END {printf "%-10s %12.0f %14.1f %14.1f\n", m, ir / ops, d1 / ops, ll / ops}' "$WORK/$memtable.log"
done
