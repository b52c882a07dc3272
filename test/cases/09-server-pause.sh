#!/bin/bash
# A server hiccup: nbd-server is stopped (SIGSTOP) 15 s into the seed workload
# on the series kernel and goes on 30 s later. The guest must make progress
# again once the server is back, complete, lose no page, and report nothing.
# Silence while the server is stopped is not judged; hang_after counts from
# SIGCONT.
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
run_scenario server-pause
verify server_pause,completed,no_loss,kernel_clean || fail "server pause"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "the guest went on after a 30 s server stop and lost no page"
