#!/bin/sh
# nbd's receive loops and the workqueue rescuer. With the creation of every
# worker of an unbound high-priority pool delayed past the mayday timeout
# (test fixture workqueue.test_create_delay_ms, in series-debug and
# stock-wqslow), attach one connection per CPU and read one block through
# each: a reader pinned to CPU i goes to blk-mq hardware queue i, which is
# nbd's connection i. Each read must complete within NS_RESCUER_WAIT seconds
# (well inside the request timeout) and no request may time out. 6.1's
# rescuer takes every pending receive loop and runs only the first, for the
# life of its connection: the other connections' replies are not read until
# their requests time out (patches/6.1.y fixes it). The scenario boots with
# nbd.max_part=0: a partition scan at the first open would hold every reader
# behind one connection's read.
# Prints KTAP (guest/lib.sh); exits 1 if any result failed.
# shellcheck source=guest/lib.sh
. /lib/netswap.sh
P=/sys/module/workqueue/parameters/test_create_delay_ms
DELAY=${NS_RESCUER_DELAY_MS:-500}
WAIT=${NS_RESCUER_WAIT:-20}
ncpu=$(grep -c ^processor /proc/cpuinfo)
uptime_cs() { awk '{split($1, a, "."); print a[1] * 100 + a[2]}' /proc/uptime; }

ktap_plan $((ncpu + 3))
if [ ! -w $P ]; then
	ktap_result 1 fixture "no $P: kernel without the wq-slow-create fixture"
	ktap_done
	exit 1
fi
echo "$DELAY" > $P
ktap_result 0 fixture "worker creation delayed by $(cat $P) ms"
ns_progress 1
ns_nbd_attach /dev/nbd0 "$ncpu"
rc=$?
ktap_result $rc attach "-C $ncpu, rc=$rc"
if [ $rc != 0 ]; then
	echo 0 > $P
	ktap_done
	exit 1
fi
ns_progress 2
# the attach queued one receive work per connection; the pool is now
# creating workers one at a time, each DELAY ms late
start=$(uptime_cs)
i=0
while [ $i -lt "$ncpu" ]; do
	(taskset -c $i dd if=/dev/nbd0 of=/dev/null bs=4096 count=1 skip=$((i * 256 + 7)) iflag=direct 2>/dev/null
	 echo "$? $(( $(uptime_cs) - start ))" > /tmp/rescuer-read.$i) &
	i=$((i + 1))
done
t=0
reads_done() { _n=0; for _f in /tmp/rescuer-read.*; do [ -f "$_f" ] && _n=$((_n + 1)); done; echo $_n; }
while [ "$(reads_done)" -lt "$ncpu" ] && [ $t -lt $((WAIT * 5)) ]; do
	sleep 0.2
	t=$((t + 1))
done
ns_progress 3
i=0
while [ $i -lt "$ncpu" ]; do
	if [ -f /tmp/rescuer-read.$i ]; then
		read -r rrc cs < /tmp/rescuer-read.$i
		ktap_result "$rrc" "read-connection-$i" "rc=$rrc after $((cs / 100)).$((cs % 100 / 10)) s"
	else
		ktap_result 1 "read-connection-$i" "no reply read within $WAIT s"
	fi
	i=$((i + 1))
done
echo 0 > $P
# the readers that are left finish at the request timeout (requeued to a
# connection that is read); then no request may have timed out
wait
ns_progress 4
n=$(dmesg | grep -c "nbd0: .*timed out")
ktap_result "$([ "$n" = 0 ]; echo $?)" no-request-timeout "$n request timeouts"
ns_nbd_detach /dev/nbd0
ktap_done
