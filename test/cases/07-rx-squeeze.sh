#!/bin/bash
# The receive-reserve reproducer: swap over NBD is busy, then free memory is
# held below the GFP_ATOMIC floor for 20 s (the squeeze fixture) while the
# host floods an ordinary UDP socket; the series kernel on virtio-net and
# e1000. What it must show is the `rx_squeeze` check (rig/netswap/checks.py):
# writeback keeps completing below the floor, the flood is dropped as
# pfmemalloc, reclaimers are throttled, the workload completes with no page
# lost and a clean kernel. Seen failing: on stock 6.1 virtio-net hangs and
# e1000 stalls while the floor is held (test/long/rx-squeeze-stock.sh, make
# test-long; kept out of make test so that the suite needs no stock build,
# docs/results/rx-squeeze.md), and mutation m11 (no throttling) fails its
# throttle criterion (make mutate).
# TIMEOUT: 2400
. "$(dirname "$0")/../lib.sh"
nics=${RX_SQUEEZE_NICS:-virtio-net e1000}
run_scenario rx-squeeze --set variant=series-squeeze --matrix "nic=$(echo "$nics" | tr ' ' ',')" "$@"
read -ra nic_list <<< "$nics"
RECORDS=${#nic_list[@]}
verify rx_squeeze || fail "rx squeeze expectations"
pass "series receives through the reserves below the GFP_ATOMIC floor"
