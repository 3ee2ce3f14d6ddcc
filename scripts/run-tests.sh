#!/usr/bin/env bash
# Runs one Catch2 test binary and ends with a plain "<suite>: N passed, N failed" line.
# Usage: run-tests.sh SUITE BINARY [catch2 args...]
set -uo pipefail
suite=$1; shift
binary=$1; shift
log=$(mktemp)
"$binary" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
passed=0; failed=0
if line=$(grep -E '^test cases:' "$log" | tail -n 1); [ -n "$line" ]; then
  passed=$(echo "$line" | sed -nE 's/.*\| *([0-9]+) passed.*/\1/p'); passed=${passed:-0}
  failed=$(echo "$line" | sed -nE 's/.*\| *([0-9]+) failed.*/\1/p'); failed=${failed:-0}
elif line=$(grep -E '^All tests passed' "$log" | tail -n 1); [ -n "$line" ]; then
  passed=$(echo "$line" | sed -nE 's/.* in ([0-9]+) test case.*/\1/p')
fi
rm -f "$log"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$suite: $passed passed, $failed failed"
exit "$rc"
