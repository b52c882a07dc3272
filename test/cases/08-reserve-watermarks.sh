#!/bin/bash
# The reserve follows the memalloc sockets, in the guest: attaching nbd with
# -C 4 grows the reserve by the sockets' shares, the admin sysctls refuse bad
# input and honour the override and the cap, and after disconnect every
# zone's min/low/high are back to their exact prior values. The guest script
# prints KTAP (guest/lib.sh): every planned result must be there and pass.
# TIMEOUT: 1500
. "$(dirname "$0")/../lib.sh"
run_scenario reserve-watermarks "$@"
grep -a "NETSWAP: info reserve\|NETSWAP: info wmarks" "$RUNDIR/console.log" | sed 's/^.*NETSWAP: /# /'
verify guest_ktap,completed,kernel_clean || fail "reserve watermarks"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "reserve follows the memalloc sockets, watermarks restored exactly"
