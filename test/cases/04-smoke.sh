#!/bin/bash
# End to end: the series kernel boots in QEMU, attaches swap over Debian's
# nbd-server/nbd-client, runs a small swapstress that really swaps, completes,
# and every page comes back intact.
. "$(dirname "$0")/../lib.sh"
out=$(case_out)
"$RUN" run smoke --out "$out" --results "$out/results.jsonl" 2>&1 | sed -u 's/^\[netswap/# [netswap/'
rc=${PIPESTATUS[0]}
assert_nothing_left "$out"
[ -f "$out/results.jsonl" ] || fail "no result line written (runner exit $rc)"
verdict=$(result_field "$out/results.jsonl" verdict)
corrupt=$(result_field "$out/results.jsonl" corrupt)
verified=$(result_field "$out/results.jsonl" verified)
pswpout=$(result_field "$out/results.jsonl" pswpout)
echo "verdict=$verdict corrupt=$corrupt verified=$verified pswpout=$pswpout"
[ "$verdict" = completed ] || fail "verdict $verdict, want completed"
[ "$corrupt" = 0 ] || fail "$corrupt corrupt pages"
[ "$verified" -gt 0 ] || fail "no page verified"
[ "$pswpout" -gt 1000 ] || fail "the workload did not swap (pswpout=$pswpout)"
[ "$rc" -eq 0 ] || fail "runner exit $rc"
pass "series kernel swaps over NBD and loses no page"
