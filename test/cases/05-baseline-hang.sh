#!/bin/bash
# The hang detector works: the baseline kernel (nbd without memalloc, the
# pre-2012 state) under the seed workload must be judged "hung" from observed
# lack of progress, with a blocked-task dump saved in the console log.
. "$(dirname "$0")/../lib.sh"
run_scenario baseline-hang
verdict=$(result_field "$RESULTS" verdict)
tth=$(result_field "$RESULTS" time_to_hang_s)
echo "verdict=$verdict time_to_hang_s=$tth"
[ "$verdict" = hung ] || fail "verdict $verdict, want hung"
grep -q "sysrq: Show Blocked State" "$RUNDIR/console.log" || fail "no blocked-task dump in $RUNDIR/console.log"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "baseline hangs and the rig says so, with a blocked-task dump"
