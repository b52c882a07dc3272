#!/bin/bash
# End to end: the series kernel boots in QEMU, attaches swap over Debian's
# nbd-server/nbd-client, runs a small swapstress that really swaps, completes,
# and every page comes back intact.
. "$(dirname "$0")/../lib.sh"
run_scenario smoke
verdict=$(result_field "$RESULTS" verdict)
corrupt=$(result_field "$RESULTS" corrupt)
verified=$(result_field "$RESULTS" verified)
pswpout=$(result_field "$RESULTS" pswpout)
echo "verdict=$verdict corrupt=$corrupt verified=$verified pswpout=$pswpout"
[ "$verdict" = completed ] || fail "verdict $verdict, want completed"
[ "$corrupt" = 0 ] || fail "$corrupt corrupt pages"
[ "$verified" -gt 0 ] || fail "no page verified"
[ "$pswpout" -gt 1000 ] || fail "the workload did not swap (pswpout=$pswpout)"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "series kernel swaps over NBD and loses no page"
