#!/bin/bash
# Without the protection the guest locks up, and the hang detector says so:
# the series kernel with nbd's memalloc use removed (series-unprotected: nbd's
# sockets are not SOCK_MEMALLOC and it sends without PF_MEMALLOC, the
# pre-2012 state of the mechanism) under the seed workload must be judged
# "hung" from observed lack of progress, with a blocked-task dump saved in the
# console log. Its hung-task reports are allowed (the scenario says so);
# nothing else is. The same on stock 6.1 (`baseline`) is the seed A/B's
# (make experiment); case 04 is the protected side on the same kernel.
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
run_scenario baseline-hang "$@"
verify hung,kernel_clean || fail "unprotected hang"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "without nbd's memalloc sockets the guest hangs and the rig says so, with a blocked-task dump"
