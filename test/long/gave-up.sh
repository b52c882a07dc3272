#!/bin/bash
# The server stays away longer than the dead-connection timeout: killed 5 s
# after the seed workload has written every page once (its processes only
# read their pages back from then on, so a lost page is a failed swap-in;
# timed from that moment, not from the start, because a loaded host fills
# more slowly) and back 40 s later, with a 20 s dead-connection timeout.
# (Killed while pages are still being written, the workload's swap-outs fail
# and are retried: no process sees an error and none makes progress; that is
# what swap does on any lost device, and not what this case checks.) The kernel must give
# up after 20 s with its one line, the errors must reach the workload (its
# processes killed by SIGBUS on swap-in), and the guest must stay healthy:
# no oops, WARN, hang or panic, and its PID 1 (tools/nsinit, locked in
# memory) reports how the run ended. Seen failing: with a busybox shell as
# PID 1, whose own pages were on the lost device, the kernel panicked
# ("Attempted to kill init"; docs/results/reconnect.md, C2).
# TIMEOUT: 2400
. "$(dirname "$0")/../lib.sh"
run_scenario reconnect --set server_restart=5:40 --set server_clock=verify --set nbd_dead_conn_timeout=20 \
	--set hang_after=150 --set expect=any
verify gave_up_clean || fail "losing the server past the dead-connection timeout"
pass "the kernel gave up cleanly, the workload saw the errors, the guest stayed up"
