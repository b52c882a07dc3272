#!/bin/bash
# nbd-swap-attach in the guest: it attaches -C 2 (asking for in-kernel
# reconnect where the kernel has it, refusing without --no-reconnect where it
# does not), carries a small swapstress, refuses to detach active swap,
# detaches; already connected, not connected, missing export, unreachable
# server and an index the kernel refuses give their exit codes and leave no
# device behind; --wait stays resident until the device is detached. KTAP
# from the guest (its plan after the results: the count depends on the
# kernel). Seen failing: a tool that keeps its negotiation timeouts on the
# sockets (docs/results/attach.md).
# TIMEOUT: 1200
. "$(dirname "$0")/../lib.sh"
run_scenario attach "$@"
verify guest_ktap,completed,kernel_clean || fail "nbd-swap-attach in the guest"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "nbd-swap-attach attaches, swaps, detaches and reports every error path in the guest"
