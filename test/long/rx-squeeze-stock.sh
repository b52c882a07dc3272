#!/bin/bash
# The receive-reserve reproducer (case 07) on stock 6.1 and the series side by
# side, virtio-net and e1000: stock virtio-net hangs (refill_work waits in
# direct reclaim for swap I/O that needs its own ring), stock e1000 stalls
# while the floor is held; the series receives through the reserves (the
# `rx_squeeze` check judges each record by its kernel). Kept out of make test
# because it needs a stock build of its own (~14 min cold on 2 cores).
# TIMEOUT: 3600
. "$(dirname "$0")/../lib.sh"
nics=${RX_SQUEEZE_NICS:-virtio-net e1000}
run_scenario rx-squeeze --matrix variant=stock-squeeze,series-squeeze --matrix "nic=$(echo "$nics" | tr ' ' ',')"
read -ra nic_list <<< "$nics"
RECORDS=$(( 2 * ${#nic_list[@]} ))
verify rx_squeeze || fail "rx squeeze expectations"
pass "series receives through the reserves; stock does not"
