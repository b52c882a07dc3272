#!/bin/bash
# The link goes down for 90 s while the seed workload swaps over NBD (tap in a
# private network namespace; nbd-server keeps running). TCP gives up on the
# send side after the link is back (nbd's send returns -EAGAIN), nbd marks the
# connection dead, and the in-kernel reconnect must connect again by itself:
# no I/O fails, the workload completes with every page intact. Tasks waiting
# on swap for the whole outage trip the hung-task detector (60 s), which is
# allowed here and nothing else is. Seen failing: the reconnect patch before
# it queued the reconnect after marking the connection dead (no attempt was
# made, the request timeout failed I/O; docs/results/reconnect.md, G2).
# REQUIRES: root nft tun unshare
# TIMEOUT: 2400
. "$(dirname "$0")/../lib.sh"
run_scenario reconnect --set net=tap --set server_restart=none --set link_outage=10:90 \
	--set max_time=2400 --set hang_after=200 --set kernel_allow=hung_task \
	--set "kernel_allow_reason=swap writers wait out a 90 s link outage, past the 60 s hung-task timeout"
verify reconnect,completed,no_loss,kernel_clean || fail "reconnect after a 90 s link outage"
pass "nbd got its connection back by itself after the link came back; no page lost"
