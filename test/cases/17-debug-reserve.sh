#!/bin/bash
# The reserve bookkeeping (case 08) on the debug kernel: memalloc sockets set
# and cleared by nbd connect/disconnect, shares given back on socket
# destruction (softirq and work items), sysctl writes, under lockdep,
# DEBUG_OBJECTS_WORK and KASAN.
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
run_scenario reserve-watermarks "${DEBUG_SETS[@]}" \
	--set max_time=1500
verify guest_ktap,completed,kernel_clean || fail "reserve watermarks on the debug kernel"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "reserve bookkeeping on the debug kernel, nothing reported"
