#!/bin/bash
# nbd's receive loops and the workqueue rescuer, on the debug kernel: with
# worker creation delayed past the mayday timeout (test fixture), four
# connections attached at once are all read from at once, no request times
# out, and lockdep/KASAN report nothing (guest/tests/rescuer.sh). Needs the
# 6.1.y backports in patches/6.1.y/; seen failing without them: stock-wqslow
# and the series without the backport read only connection 0 and timed out
# the other three (docs/debug-kernel.md, "Found: the rescuer").
# TIMEOUT: 1200
. "$(dirname "$0")/../lib.sh"
run_scenario rescuer "${DEBUG_SETS[@]}" \
	--set kernel_args="watchdog_thresh=60 nbd.max_part=0"
verify guest_ktap,completed,kernel_clean || fail "nbd connections attached while the pool waits for workers"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "every nbd connection read from while the pool waited for workers; nothing reported"
