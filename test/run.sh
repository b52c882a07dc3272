#!/bin/bash
# netswap test suite: runs test/cases/*.sh in order, one log per case under
# $NETSWAP_OUT/test/, and prints KTAP (Documentation/dev-tools/ktap.rst): one
# result per case, each with its own results nested under it, a "# Totals:"
# line, and last the line "N passed, N failed". The whole output parses with
# the tree's tools/testing/kunit/kunit.py parse.
#
#   test/run.sh [PATTERN...]         run the cases whose file name contains PATTERN
#   test/run.sh --long [PATTERN...]  the same for test/long/*.sh (make test-long):
#                                    cases kept out of make test's time budget
#
# A case is a bash script (test/new writes one from the template):
#   exit 0 pass, 4 skip (the reason on a line "SKIP: reason"), else fail;
#   lines starting "ok "/"not ok " are its own results (nested here, numbered
#   in order), lines starting "# " are progress, shown live;
#   header lines declare what it needs and how long it may take:
#     # REQUIRES: root nft tun      (see requires() below)
#     # TIMEOUT: 900                (seconds; default 1800)
# A case that runs past its timeout is stopped (SIGTERM to its process group:
# the rig stops QEMU and nbd-server on it) and reported "not ok ... # TIMEOUT".
set -u
cd "$(dirname "$0")/.." || exit 2
. rig/common.sh
export NETSWAP_OUT=${NETSWAP_OUT:-$NETSWAP_ROOT/out}
logdir="$NETSWAP_OUT/test"
mkdir -p "$logdir"
DEFAULT_TIMEOUT=1800

dir=test/cases
if [ "${1:-}" = --long ]; then dir=test/long; shift; fi
cases=()
for f in "$dir"/*.sh; do
	if [ $# -eq 0 ]; then cases+=("$f"); continue; fi
	for p in "$@"; do case "$f" in *"$p"*) cases+=("$f"); break ;; esac; done
done

header() { # FILE KEY -> the value of "# KEY: value" in the file's first lines
	sed -n "1,30s/^# $2: *//p" "$1" | head -1
}

# requires REQ... -> nothing if all are met, else the first one missing
requires() {
	local r
	for r in "$@"; do
		case "$r" in
		root) [ "$(id -u)" -eq 0 ] || { echo "needs root"; return; } ;;
		nft) command -v nft >/dev/null || { echo "needs nft (package nftables)"; return; } ;;
		tun) [ -c /dev/net/tun ] || { echo "needs /dev/net/tun"; return; } ;;
		unshare) unshare --net true 2>/dev/null || { echo "cannot unshare a network namespace"; return; } ;;
		tc) command -v tc >/dev/null || { echo "needs tc (package iproute2)"; return; } ;;
		*) echo "unknown requirement '$r' (see test/run.sh)"; return ;;
		esac
	done
}

# keep_failed NAME: copy a failed case's log and its run folders (consoles,
# results; not the initramfs images) to $NETSWAP_CACHE/failed/, which outlives
# the clone: CI runs a clean clone that is deleted after it, on a machine whose
# cache the next session reads. The last 20 are kept.
keep_failed() {
	local dst
	dst="$NETSWAP_CACHE/failed/$(date +%Y%m%d-%H%M%S)-$1"
	mkdir -p "$dst" || return
	cp "$logdir/$1.log" "$dst/" 2>/dev/null
	[ -d "$logdir/$1.d" ] &&
		tar -C "$logdir/$1.d" -cf - --exclude='*.img' --exclude='*.qcow2' \
			--exclude='*.raw' . 2>/dev/null | tar -C "$dst" -xf - 2>/dev/null
	git rev-parse HEAD > "$dst/commit" 2>/dev/null
	find "$NETSWAP_CACHE/failed" -mindepth 1 -maxdepth 1 -type d | sort | head -n -20 | xargs -r rm -rf
	echo "$dst"
}

pass=0 fail=0 skip=0 n=0 failed=()
start=$(date +%s)
# a copy of everything printed, for the parser check at the end
exec > >(tee "$logdir/suite.ktap")
echo "KTAP version 1"
echo "1..${#cases[@]}"
for c in "${cases[@]}"; do
	n=$((n + 1))
	name=$(basename "$c" .sh)
	log="$logdir/$name.log"
	: > "$log"
	t0=$(date +%s)
	timeout=$(header "$c" TIMEOUT)
	timeout=${timeout:-$DEFAULT_TIMEOUT}
	read -ra reqs <<< "$(header "$c" REQUIRES)"
	missing=$(requires "${reqs[@]}")
	if [ -n "$missing" ]; then
		echo "SKIP: $missing" > "$log"
		rc=4
	else
		echo "# [$(date +%H:%M:%S)] $name: running (log: $log, timeout ${timeout}s)"
		# the case's own progress lines (starting with '# ') are shown live;
		# timeout signals the whole process group, so the rig inside it stops
		# what it started
		timeout --kill-after=60 "$timeout" bash "$c" \
			> >(tee "$log" | grep --line-buffered '^# ' | sed -u 's/^/  /') 2>&1
		rc=$?
		sleep 0.2
	fi
	dt=$(( $(date +%s) - t0 ))
	# the case's own results, nested
	mapfile -t sub < <(grep -E '^(not )?ok [0-9]+ ' "$log")
	if [ "${#sub[@]}" -gt 0 ]; then
		echo "    KTAP version 1"
		echo "    # Subtest: $name"
		echo "    1..${#sub[@]}"
		i=0
		for l in "${sub[@]}"; do
			i=$((i + 1))
			echo "    $l" | sed -E "s/^    (not )?ok [0-9]+ /    \1ok $i /"
		done
	fi
	if [ $rc -eq 0 ] && printf '%s\n' "${sub[@]}" | grep -q '^not ok '; then
		rc=1     # a case that reports a failed result has failed, whatever it exits with
	fi
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "ok $n $name # time ${dt}s"
	elif [ $rc -eq 4 ]; then
		skip=$((skip + 1)); echo "ok $n $name # SKIP $(grep -m1 '^SKIP' "$log" | cut -c7-)"
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		fail=$((fail + 1)); echo "not ok $n $name # TIMEOUT after ${timeout}s"
		tail -n 15 "$log" | sed 's/^/# /'
		failed+=("$name")
	else
		fail=$((fail + 1)); echo "not ok $n $name # exit $rc after ${dt}s"
		tail -n 25 "$log" | sed 's/^/# /'
		failed+=("$name")
	fi
done
# what failed, again at the end where a truncated log still shows it: each
# failed case's failed results, and where its log and consoles were kept
for name in "${failed[@]}"; do
	echo "# failed: $name"
	grep -E '^not ok [0-9]+ ' "$logdir/$name.log" | head -n 6 | sed 's/^/#   /'
	echo "#   kept in $(keep_failed "$name")"
done
echo "# total $(( $(date +%s) - start ))s"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
# The output must be KTAP the kernel's own parser reads without complaint
# (any "[ERROR]" from it: a missing or wrong plan, a result out of order).
# Its exit status only says whether some test failed, which the counts say.
kp="$NETSWAP_CACHE/linux/tools/testing/kunit/kunit.py"
if [ -f "$kp" ]; then
	parsed=$(python3 "$kp" parse "$logdir/suite.ktap" 2>&1)
	errs=$(echo "$parsed" | grep -E '\[ERROR\]|\[CRASHED\]|Could not find any KTAP')
	if [ -n "$errs" ]; then
		fail=$((fail + 1))
		echo "# kunit.py parse: the suite's KTAP does not parse cleanly:"
		echo "$errs" | head -10 | sed 's/^/#   /'
	else
		echo "# kunit.py parse: $(echo "$parsed" | grep -o 'Ran [0-9]* tests.*' | tail -1)"
	fi
else
	echo "# kunit.py parse: not run (no kernel tree at $NETSWAP_CACHE/linux yet)"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
