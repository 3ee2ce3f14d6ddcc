#!/usr/bin/env bash
# Runs one Catch2 test binary and ends with a plain "<suite>: N passed, N failed" line.
# Usage: run-tests.sh SUITE BINARY [catch2 args...]
#
# TEST_JOBS=N (N > 1) runs the test cases that the arguments select N at a time, one process per
# test case, longest first when a durations file from an earlier run is at hand (TEST_DURATIONS,
# default <binary's folder>/<suite>-durations.txt, updated after every parallel run; a fresh build
# starts from the copy committed as tests/<suite>-durations.txt). A test case that fails
# while others run beside it is run once more alone: the suite's verdict is that second run, and
# the summary names every case that passed only alone (a test too sensitive to a loaded machine
# is a defect to fix, reported rather than hidden). Each case process is stopped after
# TEST_CASE_TIMEOUT seconds (default 900; the sanitizer targets give more) and counts as failed,
# so a case that hangs cannot hold the suite. Without TEST_JOBS, or with 1, the binary runs
# once, as it is, in the foreground.
set -uo pipefail
suite=$1; shift
binary=$1; shift
jobs=${TEST_JOBS:-1}
case_timeout=${TEST_CASE_TIMEOUT:-900}

summarize() {  # LOG RC -> prints the summary line, returns RC
  local log=$1 rc=$2 line passed=0 failed=0
  if line=$(grep -E '^test cases:' "$log" | tail -n 1); [ -n "$line" ]; then
    passed=$(echo "$line" | sed -nE 's/.*\| *([0-9]+) passed.*/\1/p'); passed=${passed:-0}
    failed=$(echo "$line" | sed -nE 's/.*\| *([0-9]+) failed.*/\1/p'); failed=${failed:-0}
  elif line=$(grep -E '^All tests passed' "$log" | tail -n 1); [ -n "$line" ]; then
    passed=$(echo "$line" | sed -nE 's/.* in ([0-9]+) test case.*/\1/p')
  fi
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  echo "$suite: $passed passed, $failed failed"
  return "$rc"
}

if [ "$jobs" -le 1 ]; then
  log=$(mktemp)
  "$binary" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  summarize "$log" "$rc"; rc=$?
  rm -f "$log"
  exit "$rc"
fi

# --- parallel: one process per test case -------------------------------------------------------
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
durations=${TEST_DURATIONS:-$(dirname "$binary")/$suite-durations.txt}
seed="$(dirname "$0")/../tests/$suite-durations.txt"
if [ ! -s "$durations" ] && [ -s "$seed" ]; then cp "$seed" "$durations" 2>/dev/null; fi

# Catch2 2.x lists the selected names one per line; a name is given back to it as a test spec,
# where \ [ ] , * ~ " are special, and a leading - would read as an option: each is escaped with
# a backslash.
"$binary" --list-test-names-only "$@" | sed '/^$/d' > "$work/names"
total=$(wc -l < "$work/names")
if [ "$total" -eq 0 ]; then
  echo "$suite: no test case matches: $*"
  echo "$suite: 0 passed, 1 failed"
  exit 1
fi
# Longest first (known durations; unknown ones count as long), so the last to finish are short.
if [ -s "$durations" ]; then
  awk -F'\t' 'NR == FNR { d[$2] = $1; next } { print ((($0) in d) ? d[$0] : 1e9) "\t" $0 }' \
    "$durations" "$work/names" | sort -t$'\t' -k1,1gr -s | cut -f2- > "$work/order"
else
  cp "$work/names" "$work/order"
fi

# Whether a log is of a run of exactly one test case that passed.
ran_one() {
  grep -qE '^(All tests passed .* in 1 test case|test cases: 1 \| 1 passed)' "$1"
}

# run_bounded LOG SPEC: runs the binary on one test spec, output to LOG, under `timeout`, which
# gives it a process group of its own: what the case leaves running when it ends (the servers of
# a test process that died by a signal or an abort, whose destructors did not run) is killed
# with the group, and noted in LOG. Returns the case's exit status.
run_bounded() {
  local log=$1 spec=$2 pid rc
  timeout -k 10 "$case_timeout" "$binary" "$spec" > "$log" 2>&1 &
  pid=$!
  wait "$pid"
  rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "(stopped after ${case_timeout}s: TEST_CASE_TIMEOUT)" >> "$log"
  fi
  if kill -0 -- "-$pid" 2>/dev/null; then
    local left
    left=$(ps -o pid=,args= -g "$pid" 2>/dev/null | head -5 | tr '\n' ';')
    kill -KILL -- "-$pid" 2>/dev/null
    echo "(processes the case left running were killed: $left)" >> "$log"
  fi
  return "$rc"
}

# run_case "INDEX<tab>NAME": runs one case, logs to $work/INDEX.log, records "rc ms name".
run_case() {
  local index=${1%%$'\t'*} name=${1#*$'\t'} spec start rc
  spec=$(printf '%s' "$name" | sed -e 's/[][\\,*~"]/\\&/g; s/^-/\\-/')
  start=$(date +%s%N)
  run_bounded "$work/$index.log" "$spec"
  rc=$?
  # A spec that selected nothing would exit 0 without running the case: count it as a failure.
  if [ "$rc" -eq 0 ] && ! ran_one "$work/$index.log"; then
    rc=99
  fi
  printf '%s\t%s\t%s\n' "$rc" "$((($(date +%s%N) - start) / 1000000))" "$name" > "$work/$index.done"
  if [ "$rc" -ne 0 ]; then echo "[$suite] FAILED (with $jobs at a time): $name"; fi
}
export -f run_case run_bounded ran_one
export binary work suite jobs case_timeout

started=$(date +%s)
awk '{ printf "%d\t%s\n", NR, $0 }' "$work/order" | tr '\n' '\0' |
  xargs -0 -n 1 -P "$jobs" bash -c 'run_case "$1"' _
elapsed=$(( $(date +%s) - started ))

# This run's durations, and the earlier ones of the cases it did not run.
cat "$work"/*.done | awk -F'\t' '{ print $2 "\t" $3 }' > "$work/durations"
if [ -s "$durations" ]; then
  awk -F'\t' 'NR == FNR { ran[$2] = 1; print; next } !($2 in ran)' "$work/durations" \
    "$durations" > "$work/durations.all"
else
  cp "$work/durations" "$work/durations.all"
fi
cp "$work/durations.all" "$durations" 2>/dev/null || true
passed=0; failed=0; flaky=()
for done_file in "$work"/*.done; do
  IFS=$'\t' read -r rc ms name < "$done_file"
  if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); continue; fi
  echo "== [$suite] rerunning alone: $name"
  spec=$(printf '%s' "$name" | sed -e 's/[][\\,*~"]/\\&/g; s/^-/\\-/')
  if run_bounded "$work/rerun.log" "$spec" &&
     ran_one "$work/rerun.log"; then
    passed=$((passed + 1)); flaky+=("$name")
    echo "---- [$suite] what '$name' printed when it failed beside others (last 60 lines):"
    tail -n 60 "${done_file%.done}.log"
  else
    failed=$((failed + 1))
    echo "---- [$suite] output of the failing case '$name' (alone):"
    cat "$work/rerun.log"
  fi
done

echo "$suite: $total test cases, $jobs at a time, ${elapsed}s"
for name in "${flaky[@]+"${flaky[@]}"}"; do
  echo "$suite: failed beside others, passed alone: $name"
done
echo "$suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
