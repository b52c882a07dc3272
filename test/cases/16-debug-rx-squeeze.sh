#!/bin/bash
# The receive-reserve reproducer (case 07's series half, virtio-net) on the
# debug kernel: receive from the reserves below the GFP_ATOMIC floor in
# softirq and refill_work contexts, under lockdep, KASAN and the atomic-sleep
# check. Judged by rx_squeeze_reached: the paths were taken (held below the
# floor, received and wrote back there, flood dropped) on a clean kernel; the
# rates rx_squeeze asks of the production config are out of reach of the
# instrumented kernel under TCG (353 pages written back below the floor in
# the first run, against 1000 asked).
# TIMEOUT: 2400
. "$(dirname "$0")/../lib.sh"
run_scenario rx-squeeze "${DEBUG_SETS[@]}" \
	--set max_time=1500 --set hang_after=240
verify rx_squeeze_reached || fail "rx squeeze on the debug kernel"
pass "series-debug receives through the reserves, nothing reported"
