#!/bin/bash
# Issue 4 in the guest: attaching nbd with -C 4 grows the reserve by the
# sockets' shares, the admin sysctls refuse bad input and honour the override
# and the cap, and after disconnect every zone's min/low/high are back to their
# exact prior values. The guest script prints one "check" line per claim.
. "$(dirname "$0")/../lib.sh"
run_scenario reserve-watermarks
grep -a "NETSWAP: check\|NETSWAP: info reserve\|NETSWAP: info wmarks" "$RUNDIR/console.log" | sed 's/^.*NETSWAP: //'
n_ok=$(grep -ac "NETSWAP: check .* ok" "$RUNDIR/console.log")
n_fail=$(grep -ac "NETSWAP: check .* FAIL" "$RUNDIR/console.log")
note "guest checks: $n_ok ok, $n_fail failed"
[ "$n_fail" -eq 0 ] || fail "$n_fail guest checks failed"
[ "$n_ok" -ge 15 ] || fail "only $n_ok guest checks ran"
[ "$(result_field "$RESULTS" verdict)" = completed ] || fail "verdict $(result_field "$RESULTS" verdict)"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "reserve follows the memalloc sockets, watermarks restored exactly"
