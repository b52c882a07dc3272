#!/bin/sh
# RX reserve reproducer (runs in the guest, needs the squeeze fixture kernel).
# Keeps swap over NBD busy with swapstress, then holds every zone's free memory
# below the GFP_ATOMIC floor (the fixture's "hold PERMILLE SECONDS") and lets
# the kernel report, once a second, how many writebacks completed and how many
# packets eth0 received. Afterwards the workload must recover and verify.
# With NS_NEIGH_FLUSH=N (a scenario env word), N seconds into the hold the
# guest drops its neighbour entries and reports, as KTAP, whether the nbd
# server's address is resolved again while the floor is still held: the
# retransmitted ARP requests come from the neighbour timer in softirq.
# shellcheck source=guest/lib.sh
. /lib/netswap.sh
# settings from run.conf (rig/netswap/guestenv.py holds their defaults)
HOLD=$NS_SQUEEZE_SECONDS
PERMILLE=$NS_SQUEEZE_PERMILLE
EXTRA=$NS_SQUEEZE_EXTRA   # top-up budget in pages (the fixture's EXTRA)
F=/sys/kernel/debug/netswap_squeeze
grep -q " /sys/kernel/debug " /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug
[ -w "$F" ] || { echo "NETSWAP: error kernel has no netswap_squeeze fixture"; exit 20; }

if [ -n "${NS_UDP_PORT:-}" ]; then
	# an ordinary socket that the host floods: during the hold its datagrams
	# arrive in reserve memory and must be dropped, not delivered
	udpsink -p "$NS_UDP_PORT" -i 5 &
	us=$!
fi
swapstress -p 8 -s 2x -d 100000 -w 0.2 -i 2 &
ss=$!
i=0
while [ "$i" -lt 240 ]; do
	out=$(awk '/^pswpout /{print $2}' /proc/vmstat)
	[ "$out" -gt 20000 ] && break
	sleep 1; i=$((i + 1))
done
echo "NETSWAP: squeeze begin permille=$PERMILLE seconds=$HOLD extra=$EXTRA pswpout=$out"
echo "hold $PERMILLE $HOLD $EXTRA" > "$F" || { echo "NETSWAP: error squeeze refused"; kill "$ss"; exit 21; }
neigh=${NS_NEIGH_FLUSH:-0}
if [ "$neigh" -gt 0 ] && [ "$neigh" -lt "$HOLD" ]; then
	sleep "$neigh"
	# No fork and no file of the fixture in this loop: below the floor a
	# fork may fail, and so may a read of a seq_file (its buffer); a read
	# of an empty fifo with a timeout is the shell's own 100 ms sleep.
	rm -f /tmp/neigh.fifo; mkfifo /tmp/neigh.fifo
	exec 3<> /tmp/neigh.fifo
	ip neigh flush dev eth0
	# resolved: the ATF_COM flag (0x2) on the server's entry in /proc/net/arp,
	# looked for until a second before the hold ends
	st=gone flags=none i=0 n=$(( (HOLD - neigh - 1) * 10 ))
	while [ "$i" -lt "$n" ]; do
		i=$((i + 1))
		{ while read -r a _ fl _; do
			[ "$a" = "$NS_NBD_HOST" ] && flags=$fl
		done < /proc/net/arp; } 2>/dev/null
		[ "$flags" = 0x2 ] && { st=resolved; break; }
		# shellcheck disable=SC3045 # busybox ash has read -t and -u
		read -r -t 0.1 -u 3 _
	done
	exec 3<&-
	ms=$((i * 100))
	echo "NETSWAP: neigh flushed $st after_ms=$ms flags=$flags"
	ktap_plan 1
	[ "$st" = resolved ]
	ktap_result $? neigh_resolved_below_floor "$NS_NBD_HOST after about ${ms} ms while the floor was held, flags $flags"
	rest=$((HOLD - neigh - ms / 1000))
	[ "$rest" -gt 0 ] && sleep "$rest"
else
	sleep "$HOLD"
fi
while grep -q state=holding "$F"; do sleep 1; done
echo "NETSWAP: squeeze end $(head -1 "$F")"
# recovery: the workload must go on verifying after the hold
sleep 30
kill -TERM "$ss"
wait "$ss"
rc=$?
echo "NETSWAP: squeeze workload_rc=$rc"
[ -n "${us:-}" ] && kill "$us"
# 6 = stopped by us after verifying everything it read; anything else is a failure
[ "$rc" -eq 6 ] && exit 0
exit "$rc"
