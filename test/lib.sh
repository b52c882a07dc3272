# Helpers for test cases. Sourced.
# shellcheck shell=bash
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
. rig/common.sh
export NETSWAP_OUT=${NETSWAP_OUT:-$NETSWAP_ROOT/out}
RUN=rig/netswap-run
# guest RAM of the debug kernel (series-debug): KASAN's shadow takes 1/8 of
# memory and its quarantine holds freed objects (docs/debug-kernel.md)
export DEBUG_RAM=${NETSWAP_DEBUG_RAM:-256M}
# The debug kernel's settings: its variant, its RAM, and the soft-lockup
# watchdog at 2 x 60 s instead of 2 x 10 s: under TCG, with KASAN and lockdep,
# the boot's ACPI scan ran 26 s without a reschedule on a loaded host (a
# soft-lockup report in code nobody changed, caused by the emulation's
# speed); a real lockup is still reported, after 120 s.
# shellcheck disable=SC2034  # used by the cases that source this file
DEBUG_SETS=(--set variant=series-debug --set ram="$DEBUG_RAM" --set kernel_args=watchdog_thresh=60)

# Results: lines "ok N name" / "not ok N name # detail" (test/run.sh nests
# and numbers them); "# " lines are progress.
fail() { echo "not ok 0 $*"; exit 1; }
pass() { echo "ok 0 $*"; exit 0; }
skip() { echo "SKIP: $*"; exit 4; }
note() { echo "# $*"; }
ok() { echo "ok 0 $*"; }
notok() { echo "not ok 0 $*"; }

# Judge result records with named checks (rig/netswap/checks.py); their KTAP
# results become this case's. Returns verify's status: 0 passed, 1 failed,
# 3 could not be judged.
# Judge the results with named checks (rig/netswap/checks.py). RECORDS (1
# unless the case sets it) is how many runs the file must hold: a run that
# wrote no record fails the case instead of shrinking the sample.
verify() { # SPEC [RESULTS-FILE] [verify options]
	local spec=$1 file=${2:-$RESULTS}
	shift; [ $# -gt 0 ] && shift
	"$RUN" verify "$spec" "$file" --records "${RECORDS:-1}" "$@" | grep -E '^(not )?ok [0-9]+ '
	return "${PIPESTATUS[0]}"
}

# A scratch output folder of this case; the runner writes its runs there.
case_out() {
	local d; d="$NETSWAP_OUT/test/$(basename "$0" .sh).d"
	rm -rf "$d"; mkdir -p "$d"; echo "$d"
}

# Processes whose command line mentions PATH (QEMU, nbd-server of that folder).
leftovers() { pgrep -af -- "$1" | grep -v -e pgrep -e "bash .*test/cases" -e "bash .*test/long" || true; }

assert_nothing_left() {
	local left; left=$(leftovers "$1")
	[ -z "$left" ] || fail "processes left running: $left"
}

# Field of the last JSON result line in a results file.
result_field() { # FILE FIELD
	python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]; v=r
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"
}

# Run one scenario into this case's folder; progress lines are shown live.
# Sets RESULTS (the JSON-lines file), RUNDIR (the last run's folder) and
# RUN_RC (the runner's exit status); fails if something was left running
# or no result was written.
run_scenario() { # SCENARIO [runner args...]
	local out; out=$(case_out)
	RESULTS="$out/results.jsonl"
	"$RUN" run "$@" --out "$out" --results "$RESULTS" 2>&1 | sed -u 's/^\[netswap/# [netswap/'
	RUN_RC=${PIPESTATUS[0]}
	assert_nothing_left "$out"
	[ -f "$RESULTS" ] || fail "no result line written (runner exit $RUN_RC)"
	RUNDIR=$(result_field "$RESULTS" rundir)
	case "$RUNDIR" in /*) ;; *) RUNDIR="$NETSWAP_ROOT/$RUNDIR" ;; esac
}
