#!/bin/bash
# End to end: the series kernel boots in QEMU, attaches swap over Debian's
# nbd-server, runs a small swapstress that really swaps, completes, every page
# comes back intact, and the kernel reports nothing (no WARN, BUG, lockdep...).
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
run_scenario smoke "$@"
verify completed,no_loss,swapped,kernel_clean || fail "smoke run"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "series kernel swaps over NBD, loses no page, reports nothing"
