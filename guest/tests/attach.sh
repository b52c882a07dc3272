#!/bin/sh
# nbd-swap-attach in the guest, for real: on a kernel without in-kernel
# reconnect it says so and refuses unless --no-reconnect is given; it attaches
# with -C 2, the device carries swap through a small swapstress, detaches; and
# the errors that need a kernel (already connected, active swap, not
# connected, missing export, unreachable server, an index the kernel refuses)
# give their documented exit codes and leave no device configured.
# Prints KTAP (guest/lib.sh), its plan after the last result (the number of
# checks depends on whether the kernel reconnects by itself); exits 1 if any
# result failed.
# shellcheck source=guest/lib.sh
. /lib/netswap.sh
T=nbd-swap-attach
H=$NS_NBD_HOST P=$NS_NBD_PORT E=$NS_NBD_EXPORT
V=/proc/sys/vm
check() { # NAME CONDITION-RESULT DETAIL
	ktap_result "$2" "$1" "$3"
}
progress() { ns_progress "$1"; }
# run the tool: sets rc and out (stdout and stderr), echoes the output for the log
run() {
	out=$("$T" "$@" 2>&1); rc=$?
	echo "$out" | sed "s/^/NETSWAP: info tool rc=$rc: /"
}
has() { echo "$out" | grep -q -- "$1"; }
connected() { [ -e "/sys/block/$1/pid" ] && [ "$(cat "/sys/block/$1/size")" != 0 ]; }
# sockets leave the memalloc reserve asynchronously after a disconnect
wait_sockets() { # COUNT
	i=0
	while [ "$(cat $V/memalloc_reserve_sockets 2>/dev/null || echo "$1")" != "$1" ] && [ $i -lt 50 ]; do
		sleep 0.2; i=$((i + 1))
	done
}

command -v $T >/dev/null || { check tool-present 1 "no $T in the initramfs"; ktap_plan 1; exit 1; }
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
progress 1

# --- 1. a dry run in the guest: what the server offers (flags, compared with the kernel's below)
run -n -C 2 -N "$E" "$H" "$P" /dev/nbd0
check dry-run "$rc" "rc=$rc"
flags=$(echo "$out" | sed -n 's/^server_flags=\(0x[0-9a-f]*\).*/\1/p')
check dry-run-configures-nothing "$(! connected nbd0; echo $?)" ""

# --- without --no-reconnect: refused on a kernel that cannot reconnect by itself
run -T 3 -C 2 -N "$E" "$H" "$P" /dev/nbd0
reconnect=no
if [ "$rc" = 0 ]; then
	reconnect=yes
	check kernel-has-reconnect 0 "attached with in-kernel reconnect"
	has "reconnect in kernel"; check says-reconnect-in-kernel $? ""
else
	check refused-without-no-reconnect "$([ "$rc" = 8 ]; echo $?)" "rc=$rc"
	has "cannot reconnect by itself"; check says-cannot-reconnect $? ""
	has "no-reconnect"; check names-the-flag $? ""
	check nothing-configured-after-refusal "$(! connected nbd0; echo $?)" ""
fi
echo "NETSWAP: info kernel_reconnect=$reconnect"
progress 2

# --- 2. attach with -C 2
# (-T 3: the negotiation's socket timeouts are 3 s; the kernel must not inherit them)
if [ "$reconnect" = no ]; then
	run -T 3 -C 2 --no-reconnect -N "$E" "$H" "$P" /dev/nbd0
	check attach-no-reconnect "$rc" "rc=$rc"
	has "attaching without reconnect"; check says-attaching-without $? ""
fi
check no-privilege-warnings-as-root "$(! has "mlockall\|IO_FLUSHER"; echo $?)" ""
connected nbd0; check device-connected $? "size=$(cat /sys/block/nbd0/size 2>/dev/null)"
[ -r $V/memalloc_reserve_sockets ] &&
	check two-memalloc-sockets "$([ "$(cat $V/memalloc_reserve_sockets)" = 2 ]; echo $?)" "sockets=$(cat $V/memalloc_reserve_sockets)"
d=/sys/kernel/debug/nbd/nbd0
if [ -d $d ]; then
	check debugfs-blocksize "$([ "$(cat $d/blocksize_bits)" = 12 ]; echo $?)" "blocksize_bits=$(cat $d/blocksize_bits)"
	check debugfs-size "$([ "$(cat $d/size_bytes)" = "$(($(cat /sys/block/nbd0/size) * 512))" ]; echo $?)" "size_bytes=$(cat $d/size_bytes)"
	# the request timeout in jiffies: 60 s at one of the HZ choices
	to=$(cat $d/timeout)
	check debugfs-timeout-60s "$(case $to in 6000|15000|18000|60000) echo 0 ;; *) echo 1 ;; esac)" "timeout=$to jiffies"
	kflags=$(sed -n 's/^Hex: \(0x[0-9a-f]*\).*/\1/p' $d/flags)
	check debugfs-server-flags "$([ -n "$flags" ] && [ $((kflags)) = $((flags)) ]; echo $?)" "kernel=$kflags server=$flags"
fi
# idle longer than the negotiation's timeouts, then read: the connections must still live
sleep 5
dd if=/dev/nbd0 of=/dev/null bs=4096 count=1 skip=54321 2>/dev/null
check read-after-idle $? ""
check connections-survive-idle "$(! dmesg | grep -q 'nbd0: Receive control failed\|nbd0: Dead connection'; echo $?)" \
	"$(dmesg | grep 'nbd0: Receive control failed\|nbd0: Dead connection' | tail -1)"
progress 3

# --- 3. busy: the same device again
run -C 2 --no-reconnect -N "$E" "$H" "$P" /dev/nbd0
check busy-already-connected "$([ "$rc" = 9 ]; echo $?)" "rc=$rc"
has "already connected"; check says-already-connected $? ""
connected nbd0; check still-connected-after-busy $? ""
progress 4

# --- 4. swap over it
mkswap /dev/nbd0 >/dev/null && swapon /dev/nbd0
check swapon $? "$(grep nbd0 /proc/swaps | tr -s ' \t' ' ')"
out0=$(awk '/^pswpout/{print $2}' /proc/vmstat)
swapstress -p 4 -s 1.2x -l 1; src=$?
check swapstress "$src" "rc=$src"
out1=$(awk '/^pswpout/{print $2}' /proc/vmstat)
# the four workers have no start barrier: when they happen to run one after
# another, each fits in RAM and nothing is swapped. Then keep all four mapped
# at once for a while (duration mode), which must swap.
if [ $((out1 - out0)) -le 10000 ]; then
	echo "NETSWAP: info swapstress -l 1 swapped out $((out1 - out0)) pages; again with all workers mapped at once"
	swapstress -p 4 -s 1.2x -d 15; src=$?
	check swapstress-duration "$src" "rc=$src"
	out1=$(awk '/^pswpout/{print $2}' /proc/vmstat)
fi
check swapped-out-to-nbd "$([ $((out1 - out0)) -gt 10000 ]; echo $?)" "pswpout+=$((out1 - out0))"
run -d /dev/nbd0
check detach-refused-while-swap "$([ "$rc" = 9 ]; echo $?)" "rc=$rc"
has "is active swap"; check says-active-swap $? ""
connected nbd0; check still-connected-after-refused-detach $? ""
swapoff /dev/nbd0
check swapoff $? ""
progress 5

# --- 5. detach, and detach again
run -d /dev/nbd0
check detach "$rc" "rc=$rc"
check disconnected "$(! connected nbd0; echo $?)" ""
wait_sockets 0
[ -r $V/memalloc_reserve_sockets ] &&
	check sockets-released "$([ "$(cat $V/memalloc_reserve_sockets)" = 0 ]; echo $?)" "sockets=$(cat $V/memalloc_reserve_sockets)"
run -d nbd0
check detach-not-connected "$([ "$rc" = 12 ]; echo $?)" "rc=$rc"
progress 6

# --- 6. errors before the kernel is touched leave nothing behind
NR=""; [ "$reconnect" = no ] && NR=--no-reconnect
run $NR -N no-such-export "$H" "$P" /dev/nbd1
check missing-export "$([ "$rc" = 4 ]; echo $?)" "rc=$rc"
check nothing-after-missing-export "$(! connected nbd1; echo $?)" ""
run $NR -T 5 -N "$E" "$H" 1 /dev/nbd1
check unreachable "$([ "$rc" = 3 ]; echo $?)" "rc=$rc"
check nothing-after-unreachable "$(! connected nbd1; echo $?)" ""
run $NR -C 2 -N "$E" "$H" "$P" /dev/nbd40000
check kernel-refuses-index "$([ "$rc" = 11 ]; echo $?)" "rc=$rc"
wait_sockets 0
[ -r $V/memalloc_reserve_sockets ] &&
	check no-sockets-after-kernel-refusal "$([ "$(cat $V/memalloc_reserve_sockets)" = 0 ]; echo $?)" "sockets=$(cat $V/memalloc_reserve_sockets)"
progress 7

# --- 7. --wait stays until the device is detached
"$T" $NR -w -N "$E" "$H" "$P" /dev/nbd1 > /tmp/wait.log 2>&1 &
wpid=$!
i=0; while ! connected nbd1 && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
sleep 1
kill -0 $wpid 2>/dev/null; check wait-stays-resident $? ""
check wait-oom-protected "$([ "$(cat /proc/$wpid/oom_score_adj 2>/dev/null)" = -1000 ]; echo $?)" "oom_score_adj=$(cat /proc/$wpid/oom_score_adj 2>/dev/null)"
check wait-memory-locked "$(grep -q 'VmLck:[[:space:]]*[1-9]' /proc/$wpid/status; echo $?)" "$(grep VmLck /proc/$wpid/status | tr -s ' \t' ' ')"
run -d /dev/nbd1
check wait-detach "$rc" "rc=$rc"
i=0; while kill -0 $wpid 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
check wait-exits-after-detach "$(! kill -0 $wpid 2>/dev/null; echo $?)" ""
wait $wpid; wrc=$?
check wait-exit-code "$wrc" "rc=$wrc"
sed 's/^/NETSWAP: info wait: /' /tmp/wait.log
grep -q "nbd1: disconnected; exiting" /tmp/wait.log; check wait-logs-disconnect $? ""
progress 8

ktap_plan "$KTAP_N"
ktap_done
