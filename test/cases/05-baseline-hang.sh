#!/bin/bash
# The hang detector works: the baseline kernel (nbd without memalloc, the
# pre-2012 state) under the seed workload must be judged "hung" from observed
# lack of progress, with a blocked-task dump saved in the console log.
. "$(dirname "$0")/../lib.sh"
out=$(case_out)
"$RUN" run baseline-hang --out "$out" --results "$out/results.jsonl" 2>&1 | sed -u 's/^\[netswap/# [netswap/'
rc=${PIPESTATUS[0]}
assert_nothing_left "$out"
[ -f "$out/results.jsonl" ] || fail "no result line written (runner exit $rc)"
verdict=$(result_field "$out/results.jsonl" verdict)
tth=$(result_field "$out/results.jsonl" time_to_hang_s)
rundir=$(result_field "$out/results.jsonl" rundir)
case "$rundir" in /*) ;; *) rundir="$NETSWAP_ROOT/$rundir" ;; esac
echo "verdict=$verdict time_to_hang_s=$tth"
[ "$verdict" = hung ] || fail "verdict $verdict, want hung"
grep -q "sysrq: Show Blocked State" "$rundir/console.log" || fail "no blocked-task dump in $rundir/console.log"
[ "$rc" -eq 0 ] || fail "runner exit $rc"
pass "baseline hangs and the rig says so, with a blocked-task dump"
