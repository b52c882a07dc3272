#!/bin/bash
# nbd reconnects inside the kernel: nbd-server is killed 10 s into the seed
# workload and a fresh one starts on the same port and export 5 s later; the
# device (attached by nbd-swap-attach with in-kernel reconnect) must get its
# connection back by itself, the workload complete with every page intact,
# the reconnect be counted, and the kernel stay clean (no oops, WARN, hung
# task, swap I/O error).
. "$(dirname "$0")/../lib.sh"
run_scenario reconnect
verdict=$(result_field "$RESULTS" verdict)
corrupt=$(result_field "$RESULTS" corrupt)
reconnects=$(result_field "$RESULTS" nbd_reconnects)
lost=$(result_field "$RESULTS" kernel.nbd_conn_lost)
back=$(result_field "$RESULTS" kernel.nbd_reconnected)
echo "verdict=$verdict corrupt=$corrupt reconnects=$reconnects lost=$lost reconnected=$back"
for k in oops warn hung_task swap_io_error nbd_gave_up; do
	n=$(result_field "$RESULTS" "kernel.$k")
	[ "$n" = 0 ] || fail "kernel: $n $k line(s)"
done
[ "$verdict" = completed ] || fail "verdict $verdict, want completed"
[ "$corrupt" = 0 ] || fail "$corrupt corrupt pages"
[ "$lost" -ge 1 ] || fail "the kernel saw no connection die: the restart did not happen?"
[ "$reconnects" -ge 1 ] && [ "$back" -ge 1 ] || fail "no reconnect counted (debugfs reconnects=$reconnects)"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "nbd reconnected by itself after a server restart; no page lost"
