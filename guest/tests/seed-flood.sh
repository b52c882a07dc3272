#!/bin/sh
# The seed workload while the host floods an ordinary UDP socket, on any
# kernel (no test fixture): with NS_SINK_RCVBUF/NS_SINK_HOLD the socket
# keeps what it receives, which hangs stock 6.1 on virtio-net at the first
# swap writes (make need, docs/results/need.md).
# shellcheck source=guest/lib.sh
. /lib/netswap.sh
[ -n "${NS_UDP_PORT:-}" ] || { echo "NETSWAP: error scenario has no udp_flood_port"; exit 20; }
# NS_SINK_RCVBUF=BYTES, NS_SINK_HOLD=1: a socket with a large receive
# buffer that nobody reads, which pins the flood's receive memory
set -- -p "$NS_UDP_PORT" -i 5
[ -n "${NS_SINK_RCVBUF:-}" ] && set -- "$@" -b "$NS_SINK_RCVBUF"
[ "${NS_SINK_HOLD:-0}" = 1 ] && set -- "$@" -H
udpsink "$@" &
us=$!
# the seed workload (rig/scenarios/seed.scn: 16 x NCPU processes, 4 x RAM, twice)
swapstress -p "$((16 * $(grep -c ^processor /proc/cpuinfo)))" -s 4x -l 2
rc=$?
kill "$us" 2>/dev/null
exit "$rc"
