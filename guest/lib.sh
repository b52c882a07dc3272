# netswap guest library (busybox sh), installed as /lib/netswap.sh and sourced
# by the init script and by every guest test script. Every line the host parses starts
# with "NETSWAP: " (rig/netswap/console.py).
# shellcheck shell=sh

ns_say() { echo "NETSWAP: $*"; }

# ns_cost_snapshot TAG DEV: one line with the guest's CPU time (the "cpu" line
# of /proc/stat: user nice system idle iowait irq softirq, in USER_HZ ticks)
# and DEV's block-layer counters (/sys/block/DEV/stat: reads merged sectors
# ticks_ms writes merged sectors ticks_ms in_flight io_ticks_ms queue_ms), as
# "NETSWAP: info cost_TAG_cpu=a,b,... cost_TAG_blk=a,b,..."; make bench-swap
# takes the difference between the begin and end lines.
ns_cost_snapshot() {
	_cpu=$(awk '/^cpu /{print $2","$3","$4","$5","$6","$7","$8; exit}' /proc/stat)
	_blk=$(awk '{print $1","$2","$3","$4","$5","$6","$7","$8","$9","$10","$11}' "/sys/block/$2/stat" 2>/dev/null)
	echo "NETSWAP: info cost_$1_cpu=$_cpu cost_$1_blk=${_blk:-NA} cost_dev=$2"
}

# Progress the host's hang detector counts: N must grow while work goes on.
ns_progress() { echo "NETSWAP: progress n=$1"; }

# --- KTAP (Documentation/dev-tools/ktap.rst), on the console as
# "NETSWAP: ktap LINE"; the host's guest_ktap check compares the results
# against the plan.
KTAP_N=0
KTAP_FAILED=0
ktap_plan() { echo "NETSWAP: ktap 1..$1"; }

ktap_result() { # STATUS NAME [DETAIL]   STATUS 0 = ok, anything else = not ok
	KTAP_N=$((KTAP_N + 1))
	if [ "$1" = 0 ]; then
		echo "NETSWAP: ktap ok $KTAP_N $2${3:+ # $3}"
	else
		echo "NETSWAP: ktap not ok $KTAP_N $2${3:+ # $3}"
		KTAP_FAILED=$((KTAP_FAILED + 1))
	fi
}

ktap_skip() { # NAME REASON
	KTAP_N=$((KTAP_N + 1))
	echo "NETSWAP: ktap ok $KTAP_N $1 # SKIP $2"
}

# ktap_test NAME DETAIL COMMAND...: one result, ok when COMMAND succeeds
ktap_test() {
	_name=$1 _detail=$2
	shift 2
	if "$@"; then ktap_result 0 "$_name" "$_detail"; else ktap_result 1 "$_name" "$_detail"; fi
}

ktap_done() { # exit status of the script: 0 when every result was ok
	echo "NETSWAP: ktap # failed $KTAP_FAILED of $KTAP_N"
	[ "$KTAP_FAILED" = 0 ]
}

# --- NBD: the one way the guest attaches and detaches a device. Settings
# come from run.conf (rig/netswap/guestenv.py): NS_NBD_HOST, NS_NBD_PORT,
# NS_NBD_EXPORT, NS_NBD_BS, NS_NBD_TIMEOUT, NS_NBD_CLIENT (attach: our
# tools/nbd-swap-attach; nbd-client: Debian's, netlink, its defaults),
# NS_NBD_RECONNECT (auto, yes, no) and NS_NBD_DEAD_CONN_TIMEOUT.
ns_nbd_attach() { # DEVICE CONNECTIONS [more client arguments]
	_dev=$1 _conns=$2
	shift 2
	if [ "$NS_NBD_CLIENT" = nbd-client ]; then
		set -- -N "$NS_NBD_EXPORT" "$NS_NBD_HOST" "$NS_NBD_PORT" "$_dev" -b "$NS_NBD_BS" "$@"
		[ "$_conns" -gt 1 ] && set -- "$@" -C "$_conns"
		[ "$NS_NBD_TIMEOUT" -gt 0 ] && set -- "$@" -t "$NS_NBD_TIMEOUT"
		nbd-client "$@"
		return
	fi
	if [ "$NS_NBD_CLIENT" = nbd-client-persist ]; then
		# the ioctl path: one connection; nbd-client stays resident (locked
		# in memory by -swap) and connects again itself when it breaks
		[ "$_conns" -gt 1 ] && ns_say "info nbd-client-persist: ioctl path, 1 connection, not $_conns"
		set -- -nonetlink -persist -swap -N "$NS_NBD_EXPORT" "$NS_NBD_HOST" "$NS_NBD_PORT" "$_dev" \
			-b "$NS_NBD_BS" "$@"
		[ "$NS_NBD_TIMEOUT" -gt 0 ] && set -- "$@" -t "$NS_NBD_TIMEOUT"
		nbd-client "$@"
		return
	fi
	set -- -C "$_conns" -b "$NS_NBD_BS" -N "$NS_NBD_EXPORT" -D "$NS_NBD_DEAD_CONN_TIMEOUT" "$@"
	[ "$NS_NBD_TIMEOUT" -gt 0 ] && set -- "$@" -t "$NS_NBD_TIMEOUT"
	[ "$NS_NBD_RECONNECT" = no ] && set -- "$@" --no-reconnect
	nbd-swap-attach "$@" "$NS_NBD_HOST" "$NS_NBD_PORT" "$_dev"
	_rc=$?
	if [ $_rc = 8 ] && [ "$NS_NBD_RECONNECT" = auto ]; then
		# exit 8: this kernel cannot reconnect by itself (stock 6.1)
		ns_say "info nbd_kernel_reconnect=no"
		nbd-swap-attach "$@" --no-reconnect "$NS_NBD_HOST" "$NS_NBD_PORT" "$_dev"
		return
	fi
	[ $_rc = 0 ] && [ "$NS_NBD_RECONNECT" != no ] && ns_say "info nbd_kernel_reconnect=yes"
	return $_rc
}

ns_nbd_detach() { # DEVICE
	if [ "$NS_NBD_CLIENT" != attach ]; then
		nbd-client -d "$1"
	else
		nbd-swap-attach -d "$1"
	fi
}

# successful kernel reconnects of a device (0 when nbd has no such counter)
ns_nbd_reconnects() { # DEVICE-NAME
	grep -qs " /sys/kernel/debug " /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	cat "/sys/kernel/debug/nbd/$1/reconnects" 2>/dev/null || echo 0
}
