#!/bin/bash
# A server that breaks the protocol in the transmission phase while the
# smoke workload swaps on it (test/fixtures/hostile-nbd-server.py, started
# by the rig in nbd-server's place): after 2000 requests it answers one with
# a wrong reply magic, a handle that is not in flight, or half a reply header
# before closing; a reconnect is served correctly. The kernel must notice,
# and then fail or resend the requests in flight, but never crash, hang,
# return a wrong page or print a fatal report (the survived_hostile check).
# Seen failing: a kernel that ignores the broken reply (the check's first
# result needs nbd's own error line).
# TIMEOUT: 2400
. "$(dirname "$0")/../lib.sh"
srv="$NETSWAP_ROOT/test/fixtures/hostile-nbd-server.py"
for mode in bad-magic unknown-handle truncate; do
	echo "# mode $mode"
	NETSWAP_HOSTILE=$mode run_scenario smoke --set nbd_server="$srv" --set expect=any \
		--set hang_after=180
	verify survived_hostile || fail "hostile server ($mode)"
	cp "$RESULTS" "$NETSWAP_OUT/test/hostile-server-$mode.jsonl"
	cp "$RUNDIR/console.log" "$NETSWAP_OUT/test/hostile-server-$mode.console.log"
done
pass "a server breaking the protocol costs requests at most, never the kernel"
