#!/bin/bash
# The hang detector works: the baseline kernel (nbd without memalloc, the
# pre-2012 state) under the seed workload must be judged "hung" from observed
# lack of progress, with a blocked-task dump saved in the console log. Its
# hung-task reports are allowed (the scenario says so); nothing else is.
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
run_scenario baseline-hang
verify hung,kernel_clean || fail "baseline hang"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "baseline hangs and the rig says so, with a blocked-task dump"
