#!/bin/bash
# nbd's kernel reconnect uapi in the guest: the family's maxattr covers
# NBD_ATTR_EXPORT_NAME; a name without addresses, addresses without a name,
# either without a dead connection timeout, an address on one socket of two,
# a non-inet, short-port, wrong-length or IPv6 address (no IPv6 in the guest)
# and an over-long name are refused with the documented errno and extack
# message, leaving nbd0 unconfigured.
. "$(dirname "$0")/../lib.sh"
run_scenario nbd-uapi
grep -a "NETSWAP: check" "$RUNDIR/console.log" | sed 's/^.*NETSWAP: //'
n_ok=$(grep -ac "NETSWAP: check .* ok" "$RUNDIR/console.log")
n_fail=$(grep -ac "NETSWAP: check .* FAIL" "$RUNDIR/console.log")
note "guest checks: $n_ok ok, $n_fail failed"
[ "$n_fail" -eq 0 ] || fail "$n_fail guest checks failed"
[ "$n_ok" -ge 11 ] || fail "only $n_ok guest checks ran"
[ "$(result_field "$RESULTS" verdict)" = completed ] || fail "verdict $(result_field "$RESULTS" verdict)"
pass "partial or malformed reconnect information refused with errno and extack"
