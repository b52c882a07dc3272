#!/bin/sh
# Per-call cost of the allocation fast paths the series changes, on a kernel
# that carries the fast-path fixture (variants stock-bench, series-bench;
# test/fixtures/fastpath-bench.patch). Writes "ROUNDS BATCH" to its debugfs
# file NS_FP_REPS times and prints what it read back, each line tagged with
# its repetition: "NETSWAP: fastpath rep=I name=... ns_per_call=...".
# Settings: the scenario's env words NS_FP_ROUNDS, NS_FP_BATCH, NS_FP_REPS.
# shellcheck source=guest/lib.sh
. /lib/netswap.sh
F=/sys/kernel/debug/netswap_fastpath
grep -qs " /sys/kernel/debug " /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug
if [ ! -e "$F" ]; then
	ns_say "error no $F: this kernel lacks the fast-path fixture"
	exit 1
fi
ns_say "info fastpath clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
i=1
while [ "$i" -le "${NS_FP_REPS:-3}" ]; do
	sleep 0.2	# the console's last lines leave before the clock starts
	if ! echo "${NS_FP_ROUNDS:-2000} ${NS_FP_BATCH:-64}" > "$F"; then
		ns_say "error fastpath run $i failed"
		sed "s/^NETSWAP: fastpath /NETSWAP: fastpath rep=$i /" "$F"
		exit 1
	fi
	sed "s/^NETSWAP: fastpath /NETSWAP: fastpath rep=$i /" "$F"
	ns_progress "$i"
	i=$((i + 1))
done
exit 0
