#!/bin/bash
# nbd reconnects below the GFP_ATOMIC floor: free memory is held below it for
# 30 s (the squeeze fixture) and nbd-server is killed 1 s into the hold and
# back 3 s later (the floor must hold from the loss to the reconnect, or the
# check says ERROR); the kernel's reconnect socket is a memalloc socket before
# it connects, so its handshake replies (received into reserve memory) reach
# it and it reconnects inside the hold; the workload completes with no page
# lost. Seen failing: mutation m13 (memalloc only after the handshake)
# reconnected only after the hold ended (docs/results/reconnect.md).
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
run_scenario reconnect-squeeze "$@"
verify reconnect_in_hold,reconnect,kernel_clean || fail "reconnect below the floor"
pass "the kernel reconnected inside the hold, below the GFP_ATOMIC floor"
