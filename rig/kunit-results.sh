#!/bin/bash
# Parse the KUnit (KTAP) results of a guest console log with the tree's own
# parser (tools/testing/kunit/kunit.py parse). Prints its report and a last
# line "kunit: N passed, N failed, N skipped"; exits non-zero when a test
# failed, when no KTAP was found, or when the parser could not run.
#   rig/kunit-results.sh CONSOLE_LOG [JSON_OUT]
set -uo pipefail
. "$(dirname "$0")/common.sh"
log=${1:?usage: rig/kunit-results.sh CONSOLE_LOG [JSON_OUT]}
json=${2:-$(mktemp)}
[ -f "$log" ] || die "no console log $log"
grep -q "KTAP version\|TAP version" "$log" || die "no KTAP output in $log (is CONFIG_KUNIT built in?)"
parser="$NETSWAP_CACHE/linux/tools/testing/kunit/kunit.py"
[ -f "$parser" ] || die "kunit.py not found in $NETSWAP_CACHE/linux (run: make kernel)"
python3 "$parser" parse --json="$json" "$log"
rc=$?
python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
counts = {"PASS": 0, "FAIL": 0, "SKIP": 0, "ERROR": 0}
def walk(cases):
    for c in cases:
        st = c.get("status", "")
        counts[st] = counts.get(st, 0) + 1
suites = d.get("test_cases") or d.get("sub_groups") or []
# kunit.py's JSON: sub_groups (suites) each with test_cases
for g in d.get("sub_groups", []):
    walk(g.get("test_cases", []))
print(f"kunit: {counts['PASS']} passed, {counts['FAIL'] + counts['ERROR']} failed, {counts['SKIP']} skipped")
PY
exit $rc
