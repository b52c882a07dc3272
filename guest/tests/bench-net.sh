#!/bin/sh
# Network overhead benchmark in the guest: iperf3 server and client on the
# guest's loopback, TCP and UDP, one run per message size. With NS_BENCH_NBD=1
# an nbd device is attached first (its sockets are memalloc sockets), without
# swap on it: the series changes behaviour only while such sockets exist.
# Prints "NETSWAP: bench proto=P size=N bits_per_second=X" lines.
# shellcheck source=guest/lib.sh
. /lib/netswap.sh
# settings from run.conf (rig/netswap/guestenv.py holds their defaults)
SIZES=$(echo "$NS_BENCH_SIZES" | tr , " ")
SECS=$NS_BENCH_SECONDS
n=0
if [ "$NS_BENCH_NBD" = 1 ]; then
	ns_nbd_attach /dev/nbd0 1 >/dev/null 2>&1 ||
		{ echo "NETSWAP: error nbd-client failed"; exit 1; }
fi
echo "NETSWAP: info bench memalloc_sockets=$(cat /proc/sys/vm/memalloc_reserve_sockets 2>/dev/null || echo NA) nbd=${NS_BENCH_NBD:-0}"
for proto in tcp udp; do
	for size in $SIZES; do
		iperf3 -s -D -B 127.0.0.1 -1 >/dev/null 2>&1
		sleep 0.2
		if [ "$proto" = udp ]; then
			opt="-u -b 0"
		else
			opt=""
		fi
		# shellcheck disable=SC2086
		bps=$(iperf3 -c 127.0.0.1 $opt -l "$size" -t "$SECS" -f k 2>/dev/null |
			awk '/receiver/ {v=$7; u=$8} END {m=1; if (u ~ /^M/) m=1000; if (u ~ /^G/) m=1000000; if (u ~ /^K/) m=1; print v*m*1000}')
		echo "NETSWAP: bench proto=$proto size=$size bits_per_second=${bps:-0}"
		n=$((n + 1))
		echo "NETSWAP: progress n=$n"
	done
done
killall iperf3 2>/dev/null
[ "${NS_BENCH_NBD:-0}" = 1 ] && ns_nbd_detach /dev/nbd0 >/dev/null 2>&1
exit 0
