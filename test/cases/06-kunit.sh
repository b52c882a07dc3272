#!/bin/bash
# KUnit suites of the series, built into the guest kernel and run at boot in
# QEMU; the KTAP on the console is parsed with the tree's kunit.py.
. "$(dirname "$0")/../lib.sh"
run_scenario kunit
out=$(dirname "$RESULTS")
rig/kunit-results.sh "$RUNDIR/console.log" "$out/kunit.json" | tee "$out/kunit.txt"
rc=${PIPESTATUS[0]}
summary=$(tail -1 "$out/kunit.txt")
note "$summary"
[ "$rc" -eq 0 ] || fail "KUnit: $summary"
case "$summary" in "kunit: 0 passed"*) fail "no KUnit test ran" ;; esac
pass "$summary"
