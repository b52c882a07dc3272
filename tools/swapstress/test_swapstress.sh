#!/bin/sh
# Host tests of the swapstress binary: options, exit codes, corruption detection.
# Usage: test_swapstress.sh PATH/TO/swapstress     (prints TAP, exits non-zero on failure)
set -u
S=${1:?usage: test_swapstress.sh BINARY}
n=0; fail=0
t() { # DESCRIPTION EXPECTED_RC GREP_PATTERN -- ARGS
	desc=$1 want=$2 pat=$3; shift 4
	out=$("$S" "$@" 2>&1); rc=$?
	n=$((n + 1))
	if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || printf '%s\n' "$out" | grep -q -- "$pat"; }; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc (rc=$rc want=$want, pattern '$pat')"; printf '%s\n' "$out" | sed 's/^/# /' | tail -5
		fail=$((fail + 1))
	fi
}
t "completes and verifies every page" 0 "done result=completed .*verified=8192 corrupt=0" -- -p 4 -s 16M -l 2 -q
t "Nx size is relative to MemTotal" 0 "start procs=2" -- -p 2 -s 0.0001x -l 1 -q
t "write fraction rewrites and still verifies" 0 "result=completed" -- -p 3 -s 6M -l 3 -w 0.5 -q
t "duration mode stops by itself" 0 "result=completed" -- -p 2 -s 4M -d 0.5 -q
t "progress lines are printed" 0 "progress t=.*verified=" -- -p 2 -s 4M -l 1 -i 0.05
t "a zeroed page is detected, with its address" 1 "corrupt proc=1 page=5 addr=0x[0-9a-f]* pass=1 kind=zero" -- -p 2 -s 8M -l 1 -q --inject 1:5:zero
t "a stale page is detected" 1 "kind=stale" -- -p 2 -s 8M -l 1 -q --inject 0:9:stale
t "a foreign page is detected" 1 "kind=foreign" -- -p 2 -s 8M -l 1 -q --inject 0:9:foreign
t "a garbled page is detected" 1 "kind=garbled" -- -p 2 -s 8M -l 1 -q --inject 0:9:garbled
t "a corrupt page is counted once across passes" 1 "done result=corrupt .*corrupt=1 " -- -p 2 -s 8M -l 3 -q --inject 0:9:zero
t "unknown option is a usage error" 2 "Usage" -- --bogus
t "bad size is a usage error" 2 "invalid value" -- -s 12Q
t "negative procs is a usage error" 2 "invalid value" -- -p -3
t "zero procs is a usage error" 2 "invalid value" -- -p 0
t "write fraction above 1 is a usage error" 2 "invalid value" -- -w 1.5
t "stray argument is a usage error" 2 "unexpected argument" -- foo
t "too small a size is a usage error" 2 "gives no page" -- -p 8 -s 4K
t "bad inject spec is a usage error" 2 "invalid value" -- --inject 1:2:melted
t "help exits 0" 0 "Exit status" -- --help
# a worker killed by a signal -> exit 5
n=$((n + 1))
"$S" -p 2 -s 64M -d 30 -i 0.1 > /tmp/swapstress.$$ 2>&1 &
pid=$!
sleep 0.5
pkill -KILL -P "$pid" -n 2>/dev/null
wait "$pid"; rc=$?
if [ "$rc" -eq 5 ] || { [ "$rc" -eq 0 ] && false; }; then
	echo "ok $n - a worker killed by SIGKILL gives exit 5"
else
	echo "not ok $n - a worker killed by SIGKILL gives exit 5 (rc=$rc)"; fail=$((fail + 1))
fi
# SIGTERM to the parent -> exit 6, children gone
n=$((n + 1))
"$S" -p 2 -s 16M -d 30 -q > /tmp/swapstress.$$ 2>&1 &
pid=$!
sleep 0.5
kill -TERM "$pid"; wait "$pid"; rc=$?
if [ "$rc" -eq 6 ] && ! pgrep -P "$pid" >/dev/null; then
	echo "ok $n - SIGTERM stops the run with exit 6 and no worker left"
else
	echo "not ok $n - SIGTERM stops the run with exit 6 (rc=$rc)"; fail=$((fail + 1))
fi
rm -f /tmp/swapstress.$$
echo "1..$n"
[ "$fail" -eq 0 ]
