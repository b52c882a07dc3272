#!/bin/bash
# Issue 4 in the guest: attaching nbd with -C 4 grows the reserve by the
# sockets' shares, the admin sysctls refuse bad input and honour the override
# and the cap, and after disconnect every zone's min/low/high are back to their
# exact prior values. The guest script prints one "check" line per claim.
. "$(dirname "$0")/../lib.sh"
out=$(case_out)
"$RUN" run reserve-watermarks --out "$out" --results "$out/results.jsonl" 2>&1 | sed -u 's/^\[netswap/# [netswap/'
rc=${PIPESTATUS[0]}
assert_nothing_left "$out"
[ -f "$out/results.jsonl" ] || fail "no result line written"
rundir=$(result_field "$out/results.jsonl" rundir)
case "$rundir" in /*) ;; *) rundir="$NETSWAP_ROOT/$rundir" ;; esac
grep -a "NETSWAP: check\|NETSWAP: info reserve\|NETSWAP: info wmarks" "$rundir/console.log" | sed 's/^.*NETSWAP: //'
n_ok=$(grep -ac "NETSWAP: check .* ok" "$rundir/console.log")
n_fail=$(grep -ac "NETSWAP: check .* FAIL" "$rundir/console.log")
note "guest checks: $n_ok ok, $n_fail failed"
[ "$n_fail" -eq 0 ] || fail "$n_fail guest checks failed"
[ "$n_ok" -ge 15 ] || fail "only $n_ok guest checks ran"
[ "$(result_field "$out/results.jsonl" verdict)" = completed ] || fail "verdict $(result_field "$out/results.jsonl" verdict)"
[ "$rc" -eq 0 ] || fail "runner exit $rc"
pass "reserve follows the memalloc sockets, watermarks restored exactly"
