#!/bin/bash
# Swap over NBD on the debug kernel (series-debug): the smoke workload
# completes, no page is lost, and lockdep, KASAN, UBSAN, DEBUG_VM/LIST/OBJECTS
# and the atomic-sleep check report nothing. A smaller workload than case 04's
# (1.2 x RAM, 4 processes): the instrumented kernel runs several times slower
# under TCG, and what it checks is the paths taken, not the volume.
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
run_scenario smoke "${DEBUG_SETS[@]}" --set max_time=1500 --set size=1.2x --set procs=4 \
	--set hang_after=240
verify completed,no_loss,swapped,kernel_clean || fail "smoke on the debug kernel"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "series-debug swaps over NBD, loses no page, reports nothing"
