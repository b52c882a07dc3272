#!/bin/bash
# The receive-reserve reproducer: swap over NBD is busy, then free memory is
# held below the GFP_ATOMIC floor for 20 s (the squeeze fixture) while the
# host floods an ordinary UDP socket; stock and series kernels on virtio-net
# and e1000. What each must show is the `rx_squeeze` check
# (rig/netswap/checks.py): with the series, writeback keeps completing below
# the floor, the flood is dropped as pfmemalloc, reclaimers are throttled,
# the workload completes with no page lost and a clean kernel; stock
# virtio-net hangs, stock e1000 stalls while the floor is held.
# TIMEOUT: 2400
. "$(dirname "$0")/../lib.sh"
nics=${RX_SQUEEZE_NICS:-virtio-net e1000}
run_scenario rx-squeeze --matrix variant=stock-squeeze,series-squeeze --matrix "nic=$(echo "$nics" | tr ' ' ',')"
read -ra nic_list <<< "$nics"
RECORDS=$(( 2 * ${#nic_list[@]} ))
verify rx_squeeze || fail "rx squeeze expectations"
pass "series receives through the reserves; stock does not"
