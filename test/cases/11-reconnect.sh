#!/bin/bash
# nbd reconnects inside the kernel: nbd-server is killed 10 s into the seed
# workload and a fresh one starts on the same port and export 5 s later; the
# device (attached by nbd-swap-attach with in-kernel reconnect) must get its
# connection back by itself, with no I/O failing, the workload complete with
# every page intact, and the kernel stay clean. Seen failing: Debian's
# nbd-client on the same kernel (docs/results/reconnect.md, run D).
# TIMEOUT: 2400
. "$(dirname "$0")/../lib.sh"
run_scenario reconnect "$@"
verify reconnect,completed,no_loss,kernel_clean || fail "reconnect after a server restart"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "nbd reconnected by itself after a server restart; no page lost"
