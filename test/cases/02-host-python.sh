#!/bin/bash
# Host unit tests of the rig's Python side: scenario parser, console parsing
# and verdicts, kernel reports, checks, reports (one KTAP result per test).
# TIMEOUT: 600
. "$(dirname "$0")/../lib.sh"
PYTHONPATH=rig python3 test/host/ktap.py 2>&1 || fail "python unit tests"
pass "python unit tests"
