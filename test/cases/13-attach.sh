#!/bin/bash
# nbd-swap-attach in the guest on the series kernel: it says the kernel cannot
# reconnect by itself and refuses without --no-reconnect; with it, attaches -C 2,
# carries a small swapstress, refuses to detach active swap, detaches; already
# connected, not connected, missing export, unreachable server and an index the
# kernel refuses give their exit codes and leave no device behind; --wait stays
# resident until the device is detached. One "check" line per claim.
. "$(dirname "$0")/../lib.sh"
run_scenario attach
grep -a "NETSWAP: check\|NETSWAP: info kernel_reconnect" "$RUNDIR/console.log" | sed 's/^.*NETSWAP: //'
n_ok=$(grep -ac "NETSWAP: check .* ok" "$RUNDIR/console.log")
n_fail=$(grep -ac "NETSWAP: check .* FAIL" "$RUNDIR/console.log")
note "guest checks: $n_ok ok, $n_fail failed"
[ "$n_fail" -eq 0 ] || fail "$n_fail guest checks failed"
[ "$n_ok" -ge 38 ] || fail "only $n_ok guest checks ran"
[ "$(result_field "$RESULTS" verdict)" = completed ] || fail "verdict $(result_field "$RESULTS" verdict)"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "nbd-swap-attach attaches, swaps, detaches and reports every error path in the guest"
