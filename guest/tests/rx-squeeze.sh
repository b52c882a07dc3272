#!/bin/sh
# RX reserve reproducer (runs in the guest, needs the squeeze fixture kernel).
# Keeps swap over NBD busy with swapstress, then holds every zone's free memory
# below the GFP_ATOMIC floor (the fixture's "hold PERMILLE SECONDS") and lets
# the kernel report, once a second, how many writebacks completed and how many
# packets eth0 received. Afterwards the workload must recover and verify.
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
sleep "$HOLD"
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
