#!/bin/sh
# The reserve follows the memalloc sockets, in the guest: it grows by the
# sockets' shares when nbd connects (-C N), the admin sysctls behave, and after
# disconnect every zone's watermarks are back to their exact prior values.
# Prints KTAP (guest/lib.sh); exits 1 if any result failed.
# shellcheck source=guest/lib.sh
. /lib/netswap.sh
CONNS=$NS_NBD_CONNS
V=/proc/sys/vm
check() { # NAME CONDITION-RESULT DETAIL
	ktap_result "$2" "$1" "$3"
}
wmarks() { awk '/^Node/{z=$4} $1=="min"||$1=="low"||$1=="high"{printf "%s.%s=%s ", z, $1, $2}' /proc/zoneinfo; }
connect() { ns_nbd_attach /dev/nbd0 "$1" >/dev/null 2>&1; }
disconnect() {
	ns_nbd_detach /dev/nbd0 >/dev/null 2>&1
	i=0  # sockets are destroyed asynchronously (TCP close, then a work item)
	while [ "$(cat $V/memalloc_reserve_sockets)" != 0 ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	sleep 0.5
}
progress() { ns_progress "$1"; }

# 1 before connecting, 3 connected, 1 workload, 4 x 2 bad values, 1 read-only,
# 2 after disconnect, 5 override and cap
ktap_plan 21
[ -r $V/memalloc_reserve_kbytes ] || { ktap_result 1 sysctls "no $V/memalloc_reserve_kbytes"; ktap_done; exit 1; }
before=$(wmarks)
echo "NETSWAP: info wmarks_before $before"
check no-reserve-without-sockets "$([ "$(cat $V/memalloc_reserve_kbytes)" = 0 ]; echo $?)" "reserve=$(cat $V/memalloc_reserve_kbytes)"
progress 1

connect "$CONNS" || { echo "NETSWAP: error nbd-client failed"; exit 1; }
during=$(wmarks)
res=$(cat $V/memalloc_reserve_kbytes); req=$(cat $V/memalloc_reserve_requested_kbytes)
socks=$(cat $V/memalloc_reserve_sockets); shares=$(cat $V/memalloc_reserve_shares_kbytes | tr '\t' ' ')
echo "NETSWAP: info reserve_kbytes=$res requested_kbytes=$req sockets=$socks shares=$shares max_kbytes=$(cat $V/memalloc_reserve_max_kbytes)"
echo "NETSWAP: info wmarks_connected $during"
check sockets-counted "$([ "$socks" = "$CONNS" ]; echo $?)" "sockets=$socks conns=$CONNS"
sum=0; for x in $shares; do sum=$((sum + x)); done
check shares-add-up "$([ "$sum" = "$req" ]; echo $?)" "sum=$sum requested=$req"
check reserve-grew "$([ "$res" -gt 0 ] && [ "$during" != "$before" ]; echo $?)" "reserve=$res"
progress 2

# swap a little over it, so that the sockets have really been used
mkswap /dev/nbd0 >/dev/null && swapon /dev/nbd0
swapstress -p 4 -s 1.2x -l 1 -q; rc=$?
check workload-over-reserve "$rc" "swapstress rc=$rc"
swapoff /dev/nbd0
progress 3

# bad input: refused, nothing changes
m0=$(cat $V/memalloc_reserve_max_kbytes); s0=$(cat $V/memalloc_reserve_socket_kbytes)
for bad in -1 abc 99999999999 2147483647; do
	if echo "$bad" > $V/memalloc_reserve_max_kbytes 2>/dev/null; then r=1; else r=0; fi
	check "max-refuses-$bad" "$([ $r = 0 ] && [ "$(cat $V/memalloc_reserve_max_kbytes)" = "$m0" ]; echo $?)" "now=$(cat $V/memalloc_reserve_max_kbytes)"
	if echo "$bad" > $V/memalloc_reserve_socket_kbytes 2>/dev/null; then r=1; else r=0; fi
	check "socket-refuses-$bad" "$([ $r = 0 ] && [ "$(cat $V/memalloc_reserve_socket_kbytes)" = "$s0" ]; echo $?)" "now=$(cat $V/memalloc_reserve_socket_kbytes)"
done
if echo 1 > $V/memalloc_reserve_kbytes 2>/dev/null; then r=1; else r=0; fi
check read-only-refuses-write "$r" ""

disconnect
after=$(wmarks)
echo "NETSWAP: info wmarks_after $after"
check watermarks-restored-exactly "$([ "$after" = "$before" ]; echo $?)" ""
check reserve-zero-after "$([ "$(cat $V/memalloc_reserve_kbytes)" = 0 ] && [ "$(cat $V/memalloc_reserve_sockets)" = 0 ]; echo $?)" "reserve=$(cat $V/memalloc_reserve_kbytes)"
progress 4

# the admin override and the cap
echo 2048 > $V/memalloc_reserve_socket_kbytes
connect 2
check override-per-socket "$([ "$(cat $V/memalloc_reserve_kbytes)" = 4096 ]; echo $?)" "reserve=$(cat $V/memalloc_reserve_kbytes) shares=$(cat $V/memalloc_reserve_shares_kbytes | tr '\t' ' ')"
echo 3000 > $V/memalloc_reserve_max_kbytes
check cap-clips "$([ "$(cat $V/memalloc_reserve_kbytes)" -le 3000 ] && [ "$(cat $V/memalloc_reserve_requested_kbytes)" = 4096 ]; echo $?)" "reserve=$(cat $V/memalloc_reserve_kbytes)"
check cap-warns "$(dmesg | grep -q 'clipped to vm.memalloc_reserve_max_kbytes'; echo $?)" ""
echo "$m0" > $V/memalloc_reserve_max_kbytes
check cap-raise-grants "$([ "$(cat $V/memalloc_reserve_kbytes)" = 4096 ]; echo $?)" "reserve=$(cat $V/memalloc_reserve_kbytes)"
disconnect
echo 0 > $V/memalloc_reserve_socket_kbytes
check restored-after-override "$([ "$(wmarks)" = "$before" ]; echo $?)" ""
progress 5
ktap_done
