#!/bin/bash
# KUnit suites of the series, built into the guest kernel and run at boot in
# QEMU; the KTAP on the console is parsed with the tree's kunit.py.
. "$(dirname "$0")/../lib.sh"
out=$(case_out)
"$RUN" run kunit --out "$out" --results "$out/results.jsonl" 2>&1 | sed -u 's/^\[netswap/# [netswap/'
assert_nothing_left "$out"
[ -f "$out/results.jsonl" ] || fail "no result line written"
rundir=$(result_field "$out/results.jsonl" rundir)
case "$rundir" in /*) ;; *) rundir="$NETSWAP_ROOT/$rundir" ;; esac
rig/kunit-results.sh "$rundir/console.log" "$out/kunit.json" | tee "$out/kunit.txt"
rc=${PIPESTATUS[0]}
summary=$(tail -1 "$out/kunit.txt")
note "$summary"
[ "$rc" -eq 0 ] || fail "KUnit: $summary"
case "$summary" in "kunit: 0 passed"*) fail "no KUnit test ran" ;; esac
pass "$summary"
