#!/bin/bash
# The rx-squeeze reproducer (case 07) on e1000e at MTU 9000, over a tap in a
# private network namespace (QEMU's user-mode networking cannot carry jumbo
# frames). At this MTU e1000e receives into packet-split pages
# (e1000_alloc_rx_buffers_ps: PAGE_USE_COUNT(9000) = 3), which stock 6.1
# allocates with plain GFP_ATOMIC: below the floor they cannot be refilled and
# receive stops for the rest of the hold. e1000e.copybreak=0 makes every packet
# with data take its page (with copybreak, a small packet's data is copied and
# its page stays in the ring, so fewer refills are needed). The ring starts
# with 256 descriptors of up to three pages each, so stock keeps receiving for
# seconds after the squeeze begins; a top-up budget of 40000 pages (the
# fixture's default is 16384, which stock's fast early writeback used up in two
# of four runs before the ring ran dry) keeps the floor held until it does.
# With the series (patch "e1000e: let receive buffers use the pfmemalloc
# reserves") the pages come from the reserves: writeback keeps completing below
# the floor, the flood to an ordinary socket is dropped, and the workload
# completes with no page lost (the rx_squeeze_jumbo check).
# REQUIRES: root nft tun unshare
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
run_scenario rx-squeeze --set net=tap --set mtu=9000 --set nic=e1000e \
	--set kernel_args=e1000e.copybreak=0 --set squeeze_extra=40000 \
	--matrix variant=stock-squeeze,series-squeeze
RECORDS=2 verify rx_squeeze_jumbo || fail "jumbo rx squeeze expectations"
pass "e1000e packet-split receive reaches the reserves with the series; stock stalls"
