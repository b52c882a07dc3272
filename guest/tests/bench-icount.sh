#!/bin/sh
# Network cost for runs under instruction counting (scenario bench-icount):
# tools/loopbench on the guest's loopback, TCP and UDP, one message size at a
# time. With NS_BENCH_NBD=1 an nbd device is attached first (its sockets are
# memalloc sockets), without swap on it: the series changes behaviour only
# while such sockets exist. loopbench prints nothing until its repetitions
# are done, and this script lets the console drain before the next one, so
# that no console interrupt lands inside a timed transfer.
# Settings: run.conf (NS_BENCH_SIZES, NS_BENCH_NBD; rig/netswap/guestenv.py)
# and the scenario's env words:
#   NS_LB_PROTOS  protocols, comma-separated (tcp,udp)
#   NS_LB_MSGS    messages per timed repetition ...
#   NS_LB_MAX     ... but at most this many bytes
#   NS_LB_REPS    timed repetitions of each size in this boot
#   NS_LB_WARMUP  untimed bytes first, in quarters of a repetition (1)
#   NS_LB_CPUS    S,R: pin the sender to CPU S and the receiver to R ('' = no)
#   NS_LB_OPTS    more loopbench options, colons for spaces (-B:262144:-P:1,2)
# Prints loopbench's "NETSWAP: bench proto=P size=N rep=I ..." lines.
# shellcheck source=guest/lib.sh
. /lib/netswap.sh
SIZES=$(echo "$NS_BENCH_SIZES" | tr , " ")
PROTOS=$(echo "${NS_LB_PROTOS:-tcp,udp}" | tr , " ")
OPTS=$(echo "${NS_LB_OPTS:-}" | tr : " ")
[ -n "${NS_LB_CPUS:-}" ] && OPTS="$OPTS -c $NS_LB_CPUS"
if [ "$NS_BENCH_NBD" = 1 ]; then
	# Under instruction counting an idle guest's clock jumps to its next
	# timer, so while it waits for the server's replies its connect and
	# request timeouts would expire at once. A busy loop keeps the guest's
	# clock going at the pace it executes until the device has answered a
	# read and whatever the kernel queued at attach has had a second to end.
	( while :; do :; done ) &
	spin=$!
	ok=0
	if ns_nbd_attach /dev/nbd0 1 >/dev/null 2>&1 &&
		dd if=/dev/nbd0 of=/dev/null bs=4096 count=1 2>/dev/null; then
		ok=1
		sleep 1
	fi
	kill "$spin"
	[ "$ok" = 1 ] || { ns_say "error nbd attach failed"; exit 1; }
fi
ns_say "info bench memalloc_sockets=$(cat /proc/sys/vm/memalloc_reserve_sockets 2>/dev/null || echo NA) nbd=${NS_BENCH_NBD:-0} clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource) loopbench_opts=$(echo "$OPTS" | tr ' ' :)"
n=0 rc=0
for proto in $PROTOS; do
	u=""
	[ "$proto" = udp ] && u="-u"
	for size in $SIZES; do
		total=$((size * ${NS_LB_MSGS:-65536}))
		[ "$total" -gt "${NS_LB_MAX:-16777216}" ] && total=${NS_LB_MAX:-16777216}
		sleep 0.2	# the console's last lines leave before the clock starts
		# shellcheck disable=SC2086
		out=$(loopbench $u -s "$size" -t "$total" -w $((total * ${NS_LB_WARMUP:-1} / 4)) -n "${NS_LB_REPS:-3}" $OPTS) ||
			{ ns_say "error loopbench proto=$proto size=$size failed"; rc=1; }
		echo "$out"
		n=$((n + 1))
		ns_progress "$n"
	done
done
if [ "${NS_BENCH_NBD:-0}" = 1 ]; then
	ns_nbd_detach /dev/nbd0 >/dev/null 2>&1
fi
exit $rc
