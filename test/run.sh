#!/bin/bash
# netswap test suite: runs test/cases/*.sh in order (kselftest style: exit 0 =
# pass, 4 = skip, anything else = fail), one log per case under
# $NETSWAP_OUT/test/, and ends with the line "N passed, N failed".
#
#   test/run.sh [PATTERN...]     run the cases whose file name contains PATTERN
set -u
cd "$(dirname "$0")/.." || exit 2
. rig/common.sh
export NETSWAP_OUT=${NETSWAP_OUT:-$NETSWAP_ROOT/out}
logdir="$NETSWAP_OUT/test"
mkdir -p "$logdir"

cases=()
for f in test/cases/*.sh; do
	if [ $# -eq 0 ]; then cases+=("$f"); continue; fi
	for p in "$@"; do case "$f" in *"$p"*) cases+=("$f"); break ;; esac; done
done

pass=0 fail=0 skip=0 n=0
start=$(date +%s)
echo "TAP version 13"
echo "1..${#cases[@]}"
for c in "${cases[@]}"; do
	n=$((n + 1))
	name=$(basename "$c" .sh)
	log="$logdir/$name.log"
	t0=$(date +%s)
	echo "# [$(date +%H:%M:%S)] $name: running (log: $log)"
	# the case's own progress lines (starting with '# ') are shown live
	bash "$c" > >(tee "$log" | grep --line-buffered '^# ' | sed -u 's/^/  /') 2>&1
	rc=$?
	sleep 0.2
	dt=$(( $(date +%s) - t0 ))
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "ok $n - $name (${dt}s)"
	elif [ $rc -eq 4 ]; then
		skip=$((skip + 1)); echo "ok $n - $name # SKIP $(grep -m1 '^SKIP' "$log" | cut -c6-)"
	else
		fail=$((fail + 1)); echo "not ok $n - $name (${dt}s, exit $rc)"
		tail -n 25 "$log" | sed 's/^/#   /'
	fi
done
echo "# total $(( $(date +%s) - start ))s, $skip skipped"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
